// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"encoding/binary"
	"testing"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// aqHost plays aqc111 over the test host: its vendor requests as the
// driver issues them (Linux 7.3.4, drivers/net/usb/aqc111.c). The
// numbers are written out here from the driver's header, not taken from
// the model.
type aqHost struct{ *testHost }

func (h aqHost) read(reg, n uint16) []byte {
	h.t.Helper()
	st, b := h.control(0xc0, 0x01, reg, n, n, nil)
	if st != usbredir.StatusSuccess || len(b) != int(n) {
		h.t.Fatalf("register read %#x/%d: status %d, %d bytes", reg, n, st, len(b))
	}
	return b
}

func (h aqHost) write(reg uint16, data ...byte) {
	h.t.Helper()
	n := uint16(len(data))
	if st, _ := h.control(0x40, 0x01, reg, n, n, data); st != usbredir.StatusSuccess {
		h.t.Fatalf("register write %#x: status %d", reg, st)
	}
}

// phyOps is aqc111_write32_cmd(AQ_PHY_OPS): request 0x61, 4 bytes.
func (h aqHost) phyOps(cfg uint32) {
	h.t.Helper()
	if st, _ := h.control(0x40, 0x61, 0, 0, 4, binary.LittleEndian.AppendUint32(nil, cfg)); st != 0 {
		h.t.Fatalf("PHY ops %#x: status %d", cfg, st)
	}
}

// status waits for an interrupt saying the link is up (or down) and
// returns its 64-bit word; the once-a-second repeats of the old state
// are skipped.
func (h aqHost) status(up bool) uint64 {
	h.t.Helper()
	for i := 0; ; i++ {
		it := h.next(usbredir.TypeInterruptPacket)
		if len(it.Data) < 8 {
			h.t.Fatalf("interrupt of %d bytes: aqc111_status ignores less than 8", len(it.Data))
		}
		w := binary.LittleEndian.Uint64(it.Data)
		if (w&0x8000 != 0) == up || i == 3 {
			return w
		}
	}
}

// bind is aqc111_bind (the permanent MAC from the flash parameters, the
// firmware version) and aqc111_reset (PHY powered, node ID, interrupt
// mask, monitor mode, then the PHY word advertising 100M to 5G with pause
// and downshift, as at SuperSpeed).
func (h aqHost) bind() {
	t := h.t
	t.Helper()
	st, mac := h.control(0xc0, 0x20, 0, 0, 6, nil)
	if st != 0 || string(mac) != string(testMAC[:]) {
		t.Fatalf("permanent MAC: status %d, % x, want % x", st, mac, testMAC)
	}
	major, minor, rev := h.read(0xda, 1), h.read(0xdb, 1), h.read(0xdc, 1)
	if major[0]&0x7f == 0 && minor[0] == 0 && rev[0] == 0 {
		t.Errorf("firmware version 0.0.0")
	}
	h.phyOps(1 << 19)
	h.write(0x10, testMAC[:]...)
	h.write(0x41, 0xff)
	h.write(0xb1, 0)
	mon := h.read(0x24, 1)
	h.write(0x24, mon[0]&^0x1f)
	h.phyOps(1<<19 | 1<<16 | 1<<17 | 1<<21 | 3<<24 | 0x0f)
}

// linkReset is aqc111_link_reset on link up (aqc111_configure_rx for
// 1000 at SuperSpeed, then the MAC started).
func (h aqHost) linkReset() {
	h.write(0x0d, 0)
	h.write(0xb2, 0, 0xf8, 0x07)
	h.write(0x2e, 7, 0, 1, 0x1e, 0xff)
	h.write(0x54, 0x10, 0x08)
	h.write(0x2b, 0x10)
	h.write(0x43, 0)
	h.write(0x46, 0)
	h.write(0x9e, 0)
	h.write(0x0b, 0x08, 0x02) // IPE AB
	h.write(0xb7, 0x01)
	h.write(0xb9, 0x02)
	h.write(0x22, 0, 0)
	h.write(0x22, 0x03, 0)
	h.write(0x34, 0x67)
	h.write(0x35, 0x67)
	h.write(0x0b, 0x08, 0x02) // aqc111_set_rx_mode, asynchronous in the driver
	m := h.read(0x22, 2)
	h.write(0x22, m[0]|0x30, m[1]|0x01) // receive enable, flow control
	h.write(0x0b, 0x88, 0x02)           // START
}

// startAQ plugs an AQC111 in and runs the driver's bind, reset and link
// reset; it returns once the link-up interrupt came.
func startAQ(t *testing.T, m *AQC111, f *Faults) aqHost {
	t.Helper()
	h := aqHost{startHost(t, m, f)}
	dc := h.plugged()
	if binary.LittleEndian.Uint16(dc.Hdr[4:]) != 0x2eca || binary.LittleEndian.Uint16(dc.Hdr[6:]) != 0xc101 {
		t.Fatalf("device_connect % x: want 2eca:c101, an id aqc111 binds", dc.Hdr)
	}
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.bind()
	h.request(usbredir.TypeStartInterruptReceiving, usbredir.TypeInterruptReceivingStatus, 0x81)
	if w := h.status(true); w&0x8000 == 0 || w>>8&0x7f != 0x11 {
		t.Fatalf("status %#x: want the link bit (15) and 1G (0x11 in bits 8-14)", w)
	}
	h.linkReset()
	return h
}

// TestAQC111Binds: the descriptors aqc111 matches, the register traffic
// of bind, reset and link reset answered as the driver needs, the link
// down on aqc111_stop and up again on the next reset.
func TestAQC111Binds(t *testing.T) {
	m := NewAQC111(newMemLink(), 0, testMAC, nil)
	h := startAQ(t, m, nil)
	_, head := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, 9, nil)
	_, cfg := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, binary.LittleEndian.Uint16(head[2:]), nil)
	if cfg[5] != 1 {
		t.Errorf("bConfigurationValue %d: aqc111_bind wants 1", cfg[5])
	}
	var eps []string
	for p := 0; p < len(cfg); p += int(cfg[p]) {
		switch d := cfg[p : p+int(cfg[p])]; d[1] {
		case dtInterface:
			if d[5] != 0xff {
				t.Errorf("interface class %02x, want ff (vendor specific)", d[5])
			}
		case dtEndpoint:
			eps = append(eps, string(rune('0'+d[3]))+"@"+string(rune('0'+d[2]&0x0f)))
		}
	}
	if len(eps) != 3 || eps[0] != "3@1" || eps[1] != "2@2" || eps[2] != "2@3" {
		t.Errorf("endpoints %v: want interrupt 1, bulk 2 and 3", eps)
	}
	// aqc111_stop: receive off, RX control 0, the PHY to low power
	me := h.read(0x22, 2)
	h.write(0x22, me[0], me[1]&^0x01)
	h.write(0x0b, 0, 0)
	h.phyOps(1<<19 | 1<<16 | 1<<17 | 1<<21 | 3<<24 | 0x0f | 1<<18)
	if w := h.status(false); w&0x8000 != 0 {
		t.Fatalf("status %#x after low power: want the link down", w)
	}
	h.phyOps(1 << 19) // the next open's aqc111_reset
	h.phyOps(1<<19 | 1<<16 | 1<<17 | 1<<21 | 3<<24 | 0x0f)
	if w := h.status(true); w&0x8000 == 0 {
		t.Fatalf("status %#x after the PHY word again: want the link up", w)
	}
	if st, _ := h.control(0xc0, 0x42, 0, 0, 2, nil); st != usbredir.StatusStall {
		t.Errorf("an unknown vendor request answered (status %d)", st)
	}
	if st, _ := h.control(0xa1, 0, 0, 0, 2, nil); st != usbredir.StatusStall {
		t.Errorf("a class request answered (status %d)", st)
	}
	if c := m.Counters(); c["vendor_requests_stalled"] != 2 || c["link_interrupts"] != 3 {
		t.Errorf("counts %v", c)
	}
}
