// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"encoding/binary"
	"testing"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// rtlHost plays r8152 over the test host: its OCP accesses as the driver
// makes them (drivers/net/usb/r8152.c) - reads of whole dwords, writes of
// one dword with a byte-enable mask in both nibbles of wIndex's low byte,
// longer writes split into a masked first dword, whole middle dwords and
// a masked last one - and the PHY through its window, the base cached as
// the driver caches it.
type rtlHost struct {
	*testHost
	base uint16
}

const (
	tPLA = 0x0100
	tUSB = 0x0000
)

func (h *rtlHost) read(space, addr, n uint16) []byte {
	h.t.Helper()
	st, b := h.control(0xc0, 0x05, addr, space, n, nil)
	if st != usbredir.StatusSuccess || len(b) != int(n) {
		h.t.Fatalf("OCP read %#x/%d in %#x: status %d, %d bytes", addr, n, space, st, len(b))
	}
	return b
}

func (h *rtlHost) put(space, addr uint16, en byte, data []byte) {
	h.t.Helper()
	if st, _ := h.control(0x40, 0x05, addr, space|uint16(en), uint16(len(data)), data); st != usbredir.StatusSuccess {
		h.t.Fatalf("OCP write %#x in %#x: status %d", addr, space, st)
	}
}

// write is generic_ocp_write: en's low nibble for the first dword, its
// high nibble for the last.
func (h *rtlHost) write(space, addr uint16, en byte, data []byte) {
	h.t.Helper()
	if first := en & 0x0f; first != 0x0f {
		h.put(space, addr, first|first<<4, data[:4])
		addr, data = addr+4, data[4:]
	}
	if len(data) == 0 {
		return
	}
	last := en >> 4
	if last != 0x0f {
		h.put(space, addr, 0xff, data[:len(data)-4])
		h.put(space, addr+uint16(len(data)-4), last|last<<4, data[len(data)-4:])
		return
	}
	h.put(space, addr, 0xff, data)
}

func (h *rtlHost) word(space, addr uint16) uint16 {
	h.t.Helper()
	return uint16(binary.LittleEndian.Uint32(h.read(space, addr&^3, 4)) >> (8 * (addr & 2)))
}

func (h *rtlHost) setWord(space, addr, v uint16) {
	h.t.Helper()
	sh := addr & 2
	h.put(space, addr&^3, 0x33<<sh, binary.LittleEndian.AppendUint32(nil, uint32(v)<<(8*sh)))
}

func (h *rtlHost) byteAt(space, addr uint16) byte {
	h.t.Helper()
	return h.read(space, addr&^3, 4)[addr&3]
}

func (h *rtlHost) setByte(space, addr uint16, v byte) {
	h.t.Helper()
	sh := addr & 3
	h.put(space, addr&^3, 0x11<<sh, binary.LittleEndian.AppendUint32(nil, uint32(v)<<(8*sh)))
}

func (h *rtlHost) phyWord(pa uint16) uint16 {
	h.t.Helper()
	h.phyBase(pa)
	return h.word(tPLA, 0xb000|pa&0x0fff)
}

func (h *rtlHost) setPhyWord(pa, v uint16) {
	h.t.Helper()
	h.phyBase(pa)
	h.setWord(tPLA, 0xb000|pa&0x0fff, v)
}

func (h *rtlHost) phyBase(pa uint16) {
	if pa&0xf000 != h.base {
		h.setWord(tPLA, 0xe86c, pa&0xf000)
		h.base = pa & 0xf000
	}
}

// bind is r8152's probe for an RTL8153 (version 0x5c00): the version,
// r8153_init's polls (autoload, the PHY status before and after powering
// the PHY up), U1/U2 off with a six-byte mask, the permanent MAC and the
// node ID set from it, then the PHY work's BMCR reset and autoneg.
func (h *rtlHost) bind() {
	t := h.t
	t.Helper()
	if v := binary.LittleEndian.Uint32(h.read(tPLA, 0xe610, 4)) >> 16 & 0x7cf0; v != 0x5c00 {
		t.Fatalf("version %#x, want 0x5c00 (RTL_VER_03)", v)
	}
	h.write(tUSB, 0xd490, 0xff, []byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa})
	h.write(tUSB, 0xd490, 0x3f, make([]byte, 8)) // r8153_u1u2en(false)
	if b := h.read(tUSB, 0xd490, 8); b[0] != 0 || b[5] != 0 || b[6] != 0xaa || b[7] != 0xaa {
		t.Errorf("USB_TOLERANCE after a six-byte write of zeros: % x, want bytes 6 and 7 kept", b)
	}
	if h.word(tPLA, 0xe004)&0x0002 == 0 {
		t.Fatal("autoload never done: r8153_init waits 10 s")
	}
	if s := h.phyWord(0xa420) & 7; s != 5 {
		t.Errorf("PHY status %d before power-up, want 5 (powered down)", s)
	}
	bmcr := h.phyWord(0xa400)
	h.setPhyWord(0xa400, bmcr&^0x0800)
	if s := h.phyWord(0xa420) & 7; s != 3 {
		t.Fatalf("PHY status %d after power-up, want 3 (LAN on): r8153_init waits 10 s", s)
	}
	if mac := h.read(tPLA, 0xd000, 8); string(mac[:6]) != string(testMAC[:]) {
		t.Errorf("PLA_BACKUP % x, want the MAC % x", mac, testMAC)
	}
	h.setByte(tPLA, 0xe81c, 0xc0)
	h.write(tPLA, 0xc000, 0x3f, append(testMAC[:], 0, 0))
	h.setByte(tPLA, 0xe81c, 0)
	h.setPhyWord(0xa400, 0x1000|0x0200|0x8000) // autoneg, restart, reset
	if v := h.phyWord(0xa400); v&0x8000 != 0 {
		t.Fatalf("BMCR %#x: the reset never clears", v)
	}
}

// open is rtl8153_up's polls and the carrier-on path: the NIC reset, the
// link list and FIFOs, the link in BMSR and PLA_PHYSTATUS, the receiver
// started with the filter set_rx_mode writes.
func (h *rtlHost) open() {
	t := h.t
	t.Helper()
	h.setByte(tPLA, 0xe813, 0x10)
	if h.byteAt(tPLA, 0xe813)&0x10 != 0 {
		t.Fatal("CR_RST never clears")
	}
	if o := h.byteAt(tPLA, 0xe84f); o&0x32 != 0x32 {
		t.Fatalf("OOB control %#x: link list or FIFOs never ready", o)
	}
	if h.word(tPLA, 0xe610)&0x0800 == 0 {
		t.Fatal("TCR0: TX never empty")
	}
	if h.word(tPLA, 0xe000)&0x0100 == 0 {
		t.Error("ALDPS never reads off")
	}
	h.setWord(tPLA, 0xe612, 0x0300) // rtl_set_ifg's IFG_96NS into TCR1
	if v := binary.LittleEndian.Uint32(h.read(tPLA, 0xe610, 4)) >> 16 & 0x7cf0; v != 0x5c00 {
		t.Errorf("the version reads %#x after a TCR1 write", v)
	}
	if b := h.phyWord(0xa402); b&0x0024 != 0x0024 {
		t.Fatalf("BMSR %#x: no link, or autoneg not complete", b)
	}
	// what mii_ethtool_get_link_ksettings makes the speed of: autoneg on,
	// 1000 full in CTRL1000 and in the partner's STAT1000, 100 in both
	// ADVERTISE and LPA
	bmcr, ctrl, stat := h.phyWord(0xa400), h.phyWord(0xa412), h.phyWord(0xa414)
	if bmcr&0x1000 == 0 || ctrl&(stat>>2)&0x0200 == 0 || h.phyWord(0xa408)&h.phyWord(0xa40a)&0x0100 == 0 {
		t.Fatalf("BMCR %#x CTRL1000 %#x STAT1000 %#x: ethtool would not say 1000 full", bmcr, ctrl, stat)
	}
	if s := h.word(tPLA, 0xe908); s&0x13 != 0x13 {
		t.Fatalf("PHYSTATUS %#x: want link, 1000, full duplex", s)
	}
	h.write(tPLA, 0xc010, 0xff, binary.LittleEndian.AppendUint32(nil, 0x0a)) // RCR_AB | RCR_APM
	h.setByte(tPLA, 0xe813, 0x0c)                                            // RX and TX enable
	h.setWord(tPLA, 0xe85a, h.word(tPLA, 0xe85a)&^0x0008)                    // RX DMA ungated
}

// startRTL plugs an RTL8153 in and runs bind and open; it returns once
// the link-up interrupt came.
func startRTL(t *testing.T, m *RTL8153, f *Faults) *rtlHost {
	h := &rtlHost{testHost: startHost(t, m, f)}
	dc := h.plugged()
	if binary.LittleEndian.Uint16(dc.Hdr[4:]) != 0x0bda || binary.LittleEndian.Uint16(dc.Hdr[6:]) != 0x8153 {
		t.Fatalf("device_connect % x: want 0bda:8153", dc.Hdr)
	}
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.bind()
	h.request(usbredir.TypeStartInterruptReceiving, usbredir.TypeInterruptReceivingStatus, rtlEPIntr)
	it := h.next(usbredir.TypeInterruptPacket)
	if len(it.Data) != 2 || binary.LittleEndian.Uint16(it.Data)&0x0004 == 0 {
		t.Fatalf("interrupt % x: want 2 bytes with the link bit (2)", it.Data)
	}
	h.open()
	return h
}

// TestRTL8153Binds: the descriptors r8152 checks (vendor class; bulk IN
// 1, bulk OUT 2, interrupt 3 and third) and the register traffic of its
// probe and open, answered so that every poll ends at once; requests it
// never makes stall.
func TestRTL8153Binds(t *testing.T) {
	m := NewRTL8153(newMemLink(), 1000, testMAC, nil)
	h := startRTL(t, m, nil)
	_, head := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, 9, nil)
	_, cfg := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, binary.LittleEndian.Uint16(head[2:]), nil)
	var eps []byte
	for p := 0; p < len(cfg); p += int(cfg[p]) {
		switch d := cfg[p : p+int(cfg[p])]; d[1] {
		case dtInterface:
			if d[5] != 0xff {
				t.Errorf("interface class %#x, want vendor-specific", d[5])
			}
		case dtEndpoint:
			eps = append(eps, d[2], d[3])
		}
	}
	if string(eps) != string([]byte{0x81, 2, 0x02, 2, 0x83, 3}) {
		t.Errorf("endpoints % x: want bulk 0x81, bulk 0x02, interrupt 0x83 in that order", eps)
	}
	for _, c := range []struct {
		typ, req     uint8
		value, index uint16
		n            uint16
	}{{0xc0, 0x06, 0xe610, tPLA, 4}, {0xc0, 0x05, 0xe612, tPLA, 4}, {0xc0, 0x05, 0xe610, tPLA, 6},
		{0xc0, 0x05, 0xfffc, tPLA, 8}, {0xc0, 0x05, 0xe610, 0x0200, 4}} {
		if st, _ := h.control(c.typ, c.req, c.value, c.index, c.n, nil); st != usbredir.StatusStall {
			t.Errorf("request %#x %#x at %#x/%d in %#x answered (status %d)", c.typ, c.req, c.value, c.n, c.index, st)
		}
	}
	if c := m.Counters(); c["vendor_requests_stalled"] != 5 || c["link_interrupts"] != 1 {
		t.Errorf("counts %v", c)
	}
}
