// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"encoding/binary"
	"testing"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// axHost plays ax88179_178a over the test host: its vendor requests as
// the driver issues them (drivers/net/usb/ax88179_178a.c).
type axHost struct{ *testHost }

func (h axHost) macRead(reg, n uint16) []byte {
	h.t.Helper()
	st, b := h.control(0xc0, axAccessMAC, reg, n, n, nil)
	if st != usbredir.StatusSuccess || len(b) != int(n) {
		h.t.Fatalf("MAC read %#x/%d: status %d, %d bytes", reg, n, st, len(b))
	}
	return b
}

func (h axHost) macWrite(reg uint16, data ...byte) {
	h.t.Helper()
	n := uint16(len(data))
	if st, _ := h.control(0x40, axAccessMAC, reg, n, n, data); st != usbredir.StatusSuccess {
		h.t.Fatalf("MAC write %#x: status %d", reg, st)
	}
}

func (h axHost) phyRead(reg uint16) uint16 {
	h.t.Helper()
	st, b := h.control(0xc0, axAccessPHY, axPhyID, reg, 2, nil)
	if st != usbredir.StatusSuccess || len(b) != 2 {
		h.t.Fatalf("PHY read %#x: status %d", reg, st)
	}
	return binary.LittleEndian.Uint16(b)
}

func (h axHost) phyWrite(reg, v uint16) {
	h.t.Helper()
	if st, _ := h.control(0x40, axAccessPHY, axPhyID, reg, 2, binary.LittleEndian.AppendUint16(nil, v)); st != 0 {
		h.t.Fatalf("PHY write %#x: status %d", reg, st)
	}
}

// bind is ax88179_bind's ax88179_reset: PHY power-up, clocks, the
// EEPROM and eFuse checks (blank: the driver's defaults), the MAC, the
// bulk-in set-up, checksum offloads, RX control, medium mode, LEDs, EEE
// off, autoneg restarted.
func (h axHost) bind() {
	t := h.t
	t.Helper()
	h.macWrite(axPhyPwrRstCtl, 0, 0)
	h.macWrite(axPhyPwrRstCtl, axPwrIPRL, 0)
	h.macWrite(0x33, 0x03)
	if _, b := h.control(0xc0, axAccessEEPROM, 0x43, 1, 2, nil); binary.LittleEndian.Uint16(b) != 0xffff {
		t.Errorf("EEPROM 0x43 reads % x; blank is ff ff (no auto-detach)", b)
	}
	if mac := h.macRead(axNodeID, 6); string(mac) != string(testMAC[:]) {
		t.Errorf("node ID % x, want % x", mac, testMAC)
	}
	h.macWrite(axNodeID, testMAC[:]...)
	h.macWrite(axBulkInQCtrl, 7, 0x4f, 0, 0x12, 0xff)
	h.macWrite(0x55, 0x34)
	h.macWrite(0x54, 0x52)
	h.macWrite(axRxCOE, 0x67)
	h.macWrite(axTxCOE, 0x67)
	h.macWrite(axRxCtl, 0xba, 0x03) // DROPCRCERR IPE START AP AMALL AB
	h.macWrite(0x24, 0x64)
	h.macWrite(axMediumStatus, 0x33, 0x01)
	h.macRead(0x24, 1)
	if g := h.macRead(axGeneralStatus, 1); g[0]&0x04 == 0 {
		t.Logf("UA1 revision: the driver writes the GPIOs")
	}
	h.macWrite(0x07, 0) // SROM address
	h.macWrite(axSROMCmd, 0x04)
	if c := h.macRead(axSROMCmd, 1); c[0]&axSROMBusy != 0 {
		t.Fatalf("the EEPROM stays busy: the driver times out")
	}
	if d := h.macRead(axSROMDataLow, 2); d[0] != 0xff {
		t.Errorf("EEPROM word 0 % x; blank is ff", d)
	}
	if st, e := h.control(0xc0, axAccessEFuse, 0, 64, 64, nil); st != 0 || len(e) != 64 || e[0] != 0xff {
		t.Errorf("eFuse: status %d, % x", st, e)
	}
	h.phyWrite(phyPageSelect, 7)
	h.phyWrite(0x1e, 0x2c)
	h.phyWrite(0x1a, h.phyRead(0x1a)|0x10)
	h.phyWrite(0x1c, h.phyRead(0x1c)|0x44)
	h.phyWrite(phyPageSelect, 0)
	h.phyWrite(miiMMDCtrl, 3) // EEE ability (PCS, register 20), indirect
	h.phyWrite(miiMMDData, 20)
	h.phyWrite(miiMMDCtrl, 3|0x4000)
	if v := h.phyRead(miiMMDData); v != 0 {
		t.Errorf("EEE ability %#x: the device offers no EEE", v)
	}
	bmcr := h.phyRead(miiBMCR)
	if bmcr&0x1000 == 0 {
		t.Fatalf("BMCR %#x: autoneg off, mii_nway_restart would not restart it", bmcr)
	}
	h.phyWrite(miiBMCR, bmcr|bmcrANRestart)
}

// linkReset is ax88179_link_reset after the link-up interrupt: RX
// control again, the USB TX FIFO state, link and PHY status, the bulk-in
// size for the speed, the medium mode.
func (h axHost) linkReset() {
	t := h.t
	t.Helper()
	h.macWrite(axRxCtl, 0, 0)
	h.macWrite(axRxCtl, 0x88, 0x02) // START AB IPE, as ax88179_set_multicast
	if st, b := h.control(0xc0, axAccessUSB, 0x8c, 0, 4, nil); st != 0 || binary.LittleEndian.Uint32(b)&0x40000000 != 0 {
		t.Fatalf("USB register 0x8c: status %d % x (bit 30 set: the driver spins)", st, b)
	}
	if l := h.macRead(axPhysLinkStatus, 1); l[0]&axUSBSuper == 0 {
		t.Errorf("link status %#x: not SuperSpeed, the driver picks the high-speed bulk-in size", l[0])
	}
	if v := h.phyRead(phyPHYSR); v&0xc000 != 0x8000 || v&0x2000 == 0 || v&0x0400 == 0 {
		t.Fatalf("PHYSR %#x: want link, 1000, full duplex", v)
	}
	h.macWrite(axBulkInQCtrl, 7, 0x4f, 0, 0x12, 0xff)
	h.macWrite(axMediumStatus, 0x3b, 0x01)
	if m := h.macRead(axMediumStatus, 2); m[0] != 0x3b || m[1] != 0x01 {
		t.Errorf("medium mode reads % x after writing 3b 01", m)
	}
}

// startAX plugs an AX88179 in and runs the driver's bind, open and link
// reset; it returns once the link-up interrupt came.
func startAX(t *testing.T, m *AX88179, f *Faults) axHost {
	h := axHost{startHost(t, m, f)}
	dc := h.plugged()
	if binary.LittleEndian.Uint16(dc.Hdr[4:]) != 0x0b95 || binary.LittleEndian.Uint16(dc.Hdr[6:]) != 0x1790 {
		t.Fatalf("device_connect % x: want 0b95:1790", dc.Hdr)
	}
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.bind()
	h.request(usbredir.TypeStartInterruptReceiving, usbredir.TypeInterruptReceivingStatus, axEPIntr)
	it := h.next(usbredir.TypeInterruptPacket)
	if len(it.Data) != 8 || binary.LittleEndian.Uint32(it.Data)&(1<<16) == 0 {
		t.Fatalf("interrupt % x: want 8 bytes with the link bit (16)", it.Data)
	}
	h.linkReset()
	return h
}

// TestAX88179Binds: the descriptors ax88179_178a matches and the
// register traffic of its bind, open and link reset, answered as the
// driver needs.
func TestAX88179Binds(t *testing.T) {
	m := NewAX88179(newMemLink(), 1000, testMAC, nil)
	h := startAX(t, m, nil)
	_, head := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, 9, nil)
	_, cfg := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, binary.LittleEndian.Uint16(head[2:]), nil)
	var eps []string
	for p := 0; p < len(cfg); p += int(cfg[p]) {
		switch d := cfg[p : p+int(cfg[p])]; d[1] {
		case dtInterface:
			if d[5] != 0xff || d[6] != 0xff || d[7] != 0 {
				t.Errorf("interface class %02x/%02x/%02x, want ff/ff/00", d[5], d[6], d[7])
			}
		case dtEndpoint:
			eps = append(eps, string(rune('0'+d[3]))+"@"+string(rune('0'+d[2]&0x0f)))
		}
	}
	if got := len(eps); got != 3 || eps[0] != "3@1" || eps[1] != "2@2" || eps[2] != "2@3" {
		t.Errorf("endpoints %v: want interrupt 1, bulk 2 and 3", eps)
	}
	if st, _ := h.control(0xc0, 0x42, 0, 0, 2, nil); st != usbredir.StatusStall {
		t.Errorf("an unknown vendor request answered (status %d)", st)
	}
	c := m.Counters()
	if c["vendor_requests_stalled"] != 1 || c["link_interrupts"] != 1 {
		t.Errorf("counts %v", c)
	}
}
