// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
	"sync/atomic"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// The AX88179's vendor protocol as ax88179_178a drives it (read from
// Linux's drivers/net/usb/ax88179_178a.c, 6.12 and 7.3 alike): bRequest
// says what is accessed; for the MAC wValue is the register and wIndex
// and wLength its size, for the PHY wValue is the PHY address and wIndex
// the MII register, for the EEPROM and eFuse wValue is the address.
const (
	axAccessMAC    = 0x01
	axAccessPHY    = 0x02
	axAccessEEPROM = 0x04
	axAccessEFuse  = 0x05
	axReloadEEPROM = 0x06
	axAccessUSB    = 0x81 // the USB side's registers: 0x8c's bit 30 is "TX FIFO busy"
	axPhyID        = 0x03

	axPhysLinkStatus = 0x02 // bit 2 SuperSpeed, bit 1 high speed
	axGeneralStatus  = 0x03 // bit 2 set: the UA2 revision
	axSROMDataLow    = 0x08
	axSROMDataHigh   = 0x09
	axSROMCmd        = 0x0a // bit 4 busy
	axRxCtl          = 0x0b // 2 bytes
	axNodeID         = 0x10 // 6 bytes
	axMediumStatus   = 0x22 // 2 bytes
	axPhyPwrRstCtl   = 0x26 // 2 bytes; bit 5 (IPRL) releases the PHY from reset
	axBulkInQCtrl    = 0x2e // 5 bytes: ctrl, timer low, timer high, size (KiB - 2), IFG
	axRxCOE          = 0x34
	axTxCOE          = 0x35

	axUSBSuper     = 0x04
	axUA2          = 0x04
	axSROMBusy     = 0x10
	axRxCtlStart   = 0x0080
	axRxCtlIPE     = 0x0200 // the 2-byte pad in front of each frame
	axRxCtlPRO     = 0x0001
	axRxCtlAMALL   = 0x0002
	axRxCtlAB      = 0x0008
	axRxCtlAM      = 0x0010
	axMediumRxEn   = 0x0100
	axPwrIPRL      = 0x0020
	axIntLink      = 1 << 16 // in the interrupt's first word
	axEPIntr       = 0x81
	axEPBulkIn     = 0x82
	axEPBulkOut    = 0x03
	axIntrInterval = 11 // as the real adapter's descriptor: 2^10 x 125 us
)

// AX88179 is an ASIX AX88179 USB 3 gigabit adapter (ax88179_178a): a
// vendor-specific interface with an interrupt endpoint for the link
// status and a bulk pair carrying the chip's own aggregates; the MAC and
// PHY are registers the driver reads and writes with vendor requests.
type AX88179 struct {
	macDev
	mbit   int
	regs   [256]byte         // the MAC's registers
	phy    map[uint16]uint16 // page<<8 | register; page 0 is the IEEE set
	mmd    map[uint32]uint16 // devad<<16 | address, through registers 13 and 14
	mmdCtl uint16
	mmdAdr uint16
	linkUp bool
}

// NewAX88179 is an AX88179 on link, paced to mbit (0: as fast as the
// bus; the PHY then says 1000), with node ID mac, malformed as f says.
func NewAX88179(l Link, mbit int, mac [6]byte, f *Faults) *AX88179 {
	a := &AX88179{mbit: mbit}
	a.init(l, mbit, mac, f)
	a.Reset()
	go a.readLink()
	go repeatStatus(a.sendIfUp, &a.mc.statusRepeats)
	return a
}

// readLink feeds the frames the MAC takes, as they arrive, to the bulk
// IN side: none while the driver has receiving stopped (RX control's
// start bit, the medium mode's receive enable, the link), and only those
// its address filter passes.
func (a *AX88179) readLink() {
	feedMAC(a.link, a.rx, func(f []byte) *atomic.Uint64 {
		switch st := a.rxState(0); {
		case !st.on:
			return &a.mc.rxStopped
		case !axFilter(st.ctl, st.node).accepts(f):
			return &a.mc.rxFiltered
		}
		return nil
	})
}

// Name implements Model.
func (a *AX88179) Name() string { return "ax88179" }

// Info implements Model: ASIX's ids, vendor class, as the real adapter.
func (a *AX88179) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x0b95, ProductID: 0x1790, BcdDevice: 0x0100, Class: 0xff, Subclass: 0xff,
		Manufacturer: "wirespeed", Product: "usbdev AX88179", Serial: fmt.Sprintf("%x", a.mac)}
}

// Function implements Model: one vendor-specific interface (ff/ff/00,
// what ax88179_178a matches) with the 8-byte status endpoint and the
// bulk pair.
func (a *AX88179) Function() Function {
	return Function{Interfaces: []Alt{{Number: 0, Class: 0xff, Subclass: 0xff, Endpoints: []EP{
		{Address: axEPIntr, Type: usbredir.XferInterrupt, MaxPacket: 8, Interval: axIntrInterval},
		{Address: axEPBulkIn, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
		{Address: axEPBulkOut, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15}}}}}
}

// Reset implements Model: the registers as at power-on, the PHY in
// reset (link down) until the driver releases it and starts autoneg.
func (a *AX88179) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.regs = [256]byte{}
	a.regs[axPhysLinkStatus] = axUSBSuper
	a.regs[axGeneralStatus] = axUA2
	a.regs[axSROMDataLow], a.regs[axSROMDataHigh] = 0xff, 0xff // no EEPROM: the driver's defaults
	copy(a.regs[axNodeID:], a.mac[:])
	a.phy = gigaPHY()
	a.mmd = map[uint32]uint16{} // EEE: not supported (PCS EEE ability reads 0)
	a.mmdCtl, a.mmdAdr, a.linkUp = 0, 0, false
	a.pending = nil
}

// Control implements Model: the vendor requests; anything else stalls.
func (a *AX88179) Control(s usbredir.Control, data []byte) ([]byte, bool) {
	a.mc.controls.Add(1)
	if s.RequestType&typeMask != 0x40 {
		a.mc.unknownControls.Add(1)
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := int(s.Length)
	switch s.Request {
	case axAccessMAC:
		if s.In() {
			return a.readMAC(int(s.Value), n), true
		}
		a.writeMAC(int(s.Value), data)
		return nil, true
	case axAccessPHY:
		if s.In() {
			v := uint16(0xffff) // no PHY answers at another address
			if s.Value == axPhyID {
				v = a.phyRead(s.Index)
			}
			return le.AppendUint16(nil, v), true
		}
		if s.Value == axPhyID && len(data) >= 2 {
			a.phyWrite(s.Index, le.Uint16(data))
		}
		return nil, true
	case axAccessEEPROM, axAccessEFuse:
		if s.In() {
			return fill(n, 0xff), true // blank: the driver uses its defaults
		}
		return nil, true // writes to a blank part are taken and forgotten
	case axReloadEEPROM:
		return nil, !s.In()
	case axAccessUSB:
		if s.In() {
			return make([]byte, n), true // TX FIFO idle
		}
	}
	a.mc.unknownControls.Add(1)
	return nil, false
}

func fill(n int, v byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	return b
}

func (a *AX88179) readMAC(reg, n int) []byte {
	b := make([]byte, n)
	if reg < len(a.regs) {
		copy(b, a.regs[reg:])
	}
	if reg <= axSROMCmd && reg+n > axSROMCmd {
		b[axSROMCmd-reg] &^= axSROMBusy // a read completes at once
	}
	return b
}

// writeMAC stores what the driver writes; the status registers are
// read-only. Releasing the PHY from reset or powering it down takes the
// link down until autoneg runs again.
func (a *AX88179) writeMAC(reg int, data []byte) {
	for i, v := range data {
		switch r := reg + i; r {
		case axPhysLinkStatus, axGeneralStatus, axSROMDataLow, axSROMDataHigh:
		default:
			if r < len(a.regs) {
				a.regs[r] = v
			}
		}
	}
	if reg == axPhyPwrRstCtl && len(data) > 0 && data[0]&axPwrIPRL == 0 {
		a.setLink(false)
	}
}

func (a *AX88179) reg16(r int) uint16 { return le.Uint16(a.regs[r:]) }

// setLink changes the link state and says so on the interrupt endpoint
// (held by the session until QEMU receives on it).
func (a *AX88179) setLink(up bool) {
	if a.linkUp == up {
		return
	}
	a.linkUp = up
	if a.sendStatus(up) {
		a.mc.intrs.Add(1)
	}
}

// Counters implements Model.
func (a *AX88179) Counters() map[string]uint64 { return a.counts(nil) }
