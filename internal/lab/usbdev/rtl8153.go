// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
	"sync/atomic"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// The RTL8153's vendor protocol as r8152 drives it (read from Linux
// 7.3.4's drivers/net/usb/r8152.c and include/linux/usb/r8152.h; 6.12's
// does the same for this chip): one request, 0x05, reads (0xc0) or writes
// (0x40) the chip's OCP address space - wValue the address, 4-byte
// aligned, wIndex the space (0x0100 the PLA, the MAC; 0x0000 the USB
// side) ORed with a byte-enable mask for writes: its low nibble says
// which bytes of the first dword to write, its high nibble which of the
// last. The PHY's OCP registers are a window: the driver writes the
// upper 4 bits of a PHY address to PLA 0xe86c and reaches the rest at PLA
// 0xb000-0xbfff; the IEEE registers sit at PHY 0xa400 + 2*reg.
const (
	rtlReqRegs     = 0x05
	rtlSpacePLA    = 0x0100
	rtlSpaceMask   = 0xff00
	rtlVersion     = 0x5c00 // RTL_VER_03: the first RTL8153, no firmware patch to load
	rtlVersionMask = 0x7cf0

	rtlPlaIDR       = 0xc000 // the node ID
	rtlPlaRCR       = 0xc010 // bit 0 all, 1 physical match, 2 multicast, 3 broadcast
	rtlPlaBackup    = 0xd000 // the permanent MAC, read at probe
	rtlPlaExtra     = 0xe000 // bit 8: ALDPS off, waited for
	rtlPlaBoot      = 0xe004 // bit 1: autoload done, waited for
	rtlPlaTCR0      = 0xe610 // bit 11: TX empty, waited for; TCR1 (0xe612) holds the version
	rtlPlaCR        = 0xe813 // bit 4 reset (self-clearing), 3 RX enable, 2 TX enable
	rtlPlaOOB       = 0xe84f // bit 1 link list ready, 4 and 5 the FIFOs empty: waited for
	rtlPlaCPCR      = 0xe854 // bit 6: VLAN tags stripped on receive
	rtlPlaMisc1     = 0xe85a // bit 3: RX DMA gated
	rtlPlaPhyBase   = 0xe86c
	rtlPlaPhyStat   = 0xe908 // the link: bit 1 up, 0 full duplex, 4/3/2 1000/100/10
	rtlPhyWindow    = 0xb000
	rtlPhyMII       = 0xa400
	rtlPhyStatus    = 0xa420 // bits 0-2: 3 LAN on, 5 powered down
	rtlIntrLink     = 0x0004 // the interrupt's link bit
	rtlCRReset      = 0x10
	rtlCRRxEnable   = 0x08
	rtlRxGated      = 0x0008
	rtlStripVLAN    = 0x0040
	rtlBmcrPDown    = 0x0800
	rtlEPBulkIn     = 0x81
	rtlEPBulkOut    = 0x02
	rtlEPIntr       = 0x83
	rtlIntrSize     = 2
	rtlIntrInterval = 8 // as the real adapter's descriptor: 2^7 x 125 us
)

// RTL8153 is a Realtek RTL8153 USB 3 gigabit adapter (r8152, which runs
// its own NAPI and GRO, not usbnet): one vendor-specific interface with
// a bulk pair carrying rx_desc/tx_desc aggregates and an interrupt
// endpoint for the link; the MAC, the USB side and the PHY are OCP
// registers the driver reads and writes with vendor requests.
type RTL8153 struct {
	macDev
	pla          [1 << 16]byte
	usb          [1 << 16]byte
	phy          map[uint16]uint16 // PHY OCP words by address
	linkUp       bool
	vlanStripped atomic.Uint64
}

// NewRTL8153 is an RTL8153 on link, paced to mbit (0: as fast as the
// bus; the PHY says 1000 either way), with permanent MAC mac, malformed
// as f says.
func NewRTL8153(l Link, mbit int, mac [6]byte, f *Faults) *RTL8153 {
	r := &RTL8153{}
	r.init(l, mbit, mac, f)
	r.Reset()
	go feedMAC(l, r.rx, r.drop)
	go repeatStatus(r.sendIfUp, &r.mc.statusRepeats)
	return r
}

// Name implements Model.
func (r *RTL8153) Name() string { return "rtl8153" }

// Info implements Model: Realtek's ids (0bda:8153), which r8152 binds by.
func (r *RTL8153) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x0bda, ProductID: 0x8153, BcdDevice: 0x3000,
		Manufacturer: "wirespeed", Product: "usbdev RTL8153", Serial: fmt.Sprintf("%x", r.mac)}
}

// Function implements Model: the vendor configuration alone (the real
// adapter's second, CDC ECM, is the one r8152's configuration selector
// steers away from), its endpoints in the order r8152 takes them - it
// finds the interrupt endpoint as the third and wants bulk IN 1, bulk
// OUT 2 and interrupt 3.
func (r *RTL8153) Function() Function {
	return Function{Interfaces: []Alt{{Number: 0, Class: 0xff, Subclass: 0xff, Endpoints: []EP{
		{Address: rtlEPBulkIn, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
		{Address: rtlEPBulkOut, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
		{Address: rtlEPIntr, Type: usbredir.XferInterrupt, MaxPacket: rtlIntrSize, Interval: rtlIntrInterval}}}}}
}

// Reset implements Model: the register file as at power-on - the MAC in
// the node ID and the backup, the PHY powered down (link down) until the
// driver powers it up and starts autoneg.
func (r *RTL8153) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pla, r.usb = [1 << 16]byte{}, [1 << 16]byte{}
	copy(r.pla[rtlPlaIDR:], r.mac[:])
	copy(r.pla[rtlPlaBackup:], r.mac[:])
	r.phy = map[uint16]uint16{}
	for reg, v := range gigaPHY() {
		r.phy[rtlPhyMII+2*reg] = v // the IEEE registers at their OCP addresses
	}
	r.phy[rtlPhyMII] |= rtlBmcrPDown
	r.linkUp = false
	r.pending = nil
}

// Control implements Model: OCP reads and writes; any other request
// stalls, as do accesses the driver never makes (unaligned, or past the
// space).
func (r *RTL8153) Control(s usbredir.Control, data []byte) ([]byte, bool) {
	r.mc.controls.Add(1)
	space := s.Index & rtlSpaceMask
	if s.RequestType&typeMask != 0x40 || s.Request != rtlReqRegs || s.Value&3 != 0 || s.Length&3 != 0 ||
		s.Length == 0 || int(s.Value)+int(s.Length) > 1<<16 || (space != rtlSpacePLA && space != 0) {
		r.mc.unknownControls.Add(1)
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.In() {
		b := make([]byte, s.Length)
		for i := 0; i < len(b); i += 2 {
			le.PutUint16(b[i:], r.read16(space, int(s.Value)+i))
		}
		return b, true
	}
	if len(data) != int(s.Length) {
		r.mc.unknownControls.Add(1)
		return nil, false
	}
	en := byte(s.Index)
	for i := 0; i < len(data); i += 2 {
		m := byteMask(en, i, len(data))
		if m == 0 {
			continue
		}
		r.write16(space, int(s.Value)+i, le.Uint16(data[i:]), m)
	}
	return nil, true
}

// byteMask is which bytes (bit 0 the low, bit 1 the high) of the word at
// offset i of a write of n bytes the byte enables en let through: the
// low nibble for the first dword, the high one for the last, all of the
// dwords in between. (r8152 sends either one dword, its mask in both
// nibbles, or whole dwords, 0xff.)
func byteMask(en byte, i, n int) byte {
	var nib byte = 0x0f
	switch {
	case i < 4:
		nib = en & 0x0f
	case i >= n-4:
		nib = en >> 4
	}
	return nib >> (i & 2) & 3
}

// Counters implements Model.
func (r *RTL8153) Counters() map[string]uint64 {
	return r.counts(map[string]*atomic.Uint64{"rx_vlan_stripped": &r.vlanStripped})
}
