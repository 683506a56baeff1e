// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
	"sync/atomic"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// The AQC111's vendor protocol as aqc111 drives it (read from Linux
// 7.3.4's drivers/net/usb/aqc111.{c,h}): register access is request
// 0x01 with the register in wValue and its size in wIndex and wLength;
// the permanent MAC is request 0x20 (6 bytes); the PHY is the firmware's,
// driven by one 32-bit word (request 0x61: power, low power, the speeds to
// advertise), and the firmware reports the link on the interrupt
// endpoint. The MAC's receive registers sit where the AX88179's do (RX
// control 0x0b, node ID 0x10, medium mode 0x22, checksum controls 0x34 and
// 0x35) with the same bits; the model uses those constants.
const (
	aqAccessMAC  = 0x01
	aqFlashParam = 0x20 // the permanent MAC
	aqPhyPower   = 0x31
	aqWolCfg     = 0x60
	aqPhyOps     = 0x61
	aqFWMajor    = 0xda
	aqFWMinor    = 0xdb
	aqFWRev      = 0xdc

	aqAdv100M    = 1 << 0
	aqAdv1G      = 1 << 1
	aqAdv2G5     = 1 << 2
	aqAdv5G      = 1 << 3
	aqLowPower   = 1 << 18
	aqPhyPowerEn = 1 << 19

	aqLinkUp     = 0x8000 // the status word's link bit; the speed code in bits 8-14
	aqSpeed5G    = 0x0f
	aqSpeed2G5   = 0x10
	aqSpeed1G    = 0x11
	aqSpeed100M  = 0x13
	aqEPIntr     = 0x81
	aqEPBulkIn   = 0x82
	aqEPBulkOut  = 0x03
	aqURBSize    = 62 * 1024 // the driver's rx_urb_size: no aggregate is longer
	aqStatusSize = 8
)

// aqFirmware is the version the model reports (3.1.6, as shipped adapters
// report it; the driver only prints it).
var aqFirmware = [3]byte{3, 1, 6}

// AQC111 is an Aquantia AQC111U USB 3 multi-gigabit adapter (aqc111): a
// vendor-specific interface with an interrupt endpoint for the link
// status and a bulk pair carrying the chip's own aggregates; the MAC's
// registers and the PHY's configuration word are vendor requests.
type AQC111 struct {
	macDev
	speed  uint8 // the speed code the PHY links at (of those advertised)
	regs   [256]byte
	phyCfg uint32
	linkAt uint8 // the speed code while the link is up, 0 while down
	phyOps atomic.Uint64
}

// NewAQC111 is an AQC111 on link, paced to mbit (0: as fast as the bus;
// the PHY then links at 1000, the rate the lab's other gigabit model
// claims), with permanent MAC mac, malformed as f says.
func NewAQC111(l Link, mbit int, mac [6]byte, f *Faults) *AQC111 {
	q := &AQC111{speed: aqSpeedFor(mbit)}
	q.init(l, mbit, mac, f)
	q.Reset()
	go q.readLink()
	go repeatStatus(q.sendIfUp, &q.mc.statusRepeats)
	return q
}

// aqSpeedFor is the speed code of a paced rate: the fastest the chip
// has that the pace does not undercut.
func aqSpeedFor(mbit int) uint8 {
	switch {
	case mbit >= 5000:
		return aqSpeed5G
	case mbit >= 2500:
		return aqSpeed2G5
	case mbit <= 0 || mbit >= 1000:
		return aqSpeed1G
	}
	return aqSpeed100M
}

// Name implements Model.
func (q *AQC111) Name() string { return "aqc111" }

// Info implements Model: Aquantia's ids (2eca:c101), which aqc111 binds by
// (it matches vendor and product, then the interface class).
func (q *AQC111) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x2eca, ProductID: 0xc101, BcdDevice: 0x0101, Class: 0xff, Subclass: 0xff,
		Manufacturer: "wirespeed", Product: "usbdev AQC111", Serial: fmt.Sprintf("%x", q.mac)}
}

// Function implements Model: one vendor-specific interface (the driver's
// bind wants configuration 1 and finds the endpoints by type) with the
// 8-byte status endpoint and the bulk pair.
func (q *AQC111) Function() Function {
	return Function{Interfaces: []Alt{{Number: 0, Class: 0xff, Subclass: 0xff, Endpoints: []EP{
		{Address: aqEPIntr, Type: usbredir.XferInterrupt, MaxPacket: aqStatusSize, Interval: axIntrInterval},
		{Address: aqEPBulkIn, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
		{Address: aqEPBulkOut, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15}}}}}
}

// Reset implements Model: registers cleared but the node ID and the
// firmware version, the PHY unpowered (link down).
func (q *AQC111) Reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.regs = [256]byte{}
	copy(q.regs[axNodeID:], q.mac[:])
	q.regs[aqFWMajor], q.regs[aqFWMinor], q.regs[aqFWRev] = aqFirmware[0], aqFirmware[1], aqFirmware[2]
	q.phyCfg, q.linkAt = 0, 0
	q.pending = nil
}

// Control implements Model: the vendor requests the driver sends; any
// other request stalls.
func (q *AQC111) Control(s usbredir.Control, data []byte) ([]byte, bool) {
	q.mc.controls.Add(1)
	if s.RequestType&typeMask != 0x40 {
		q.mc.unknownControls.Add(1)
		return nil, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case s.Request == aqAccessMAC && s.In():
		b := make([]byte, s.Length)
		if int(s.Value) < len(q.regs) {
			copy(b, q.regs[s.Value:])
		}
		return b, true
	case s.Request == aqAccessMAC:
		q.writeRegs(int(s.Value), data)
		return nil, true
	case s.Request == aqFlashParam && s.In():
		return append([]byte(nil), q.mac[:]...), true
	case s.Request == aqPhyOps && !s.In() && len(data) >= 4:
		q.phyOps.Add(1)
		q.phyCfg = le.Uint32(data)
		q.setLink(q.phyLinkSpeed())
		return nil, true
	case (s.Request == aqWolCfg || s.Request == aqPhyPower) && !s.In():
		return nil, true // the suspend path's wake-up set-up: taken
	}
	q.mc.unknownControls.Add(1)
	return nil, false
}

// writeRegs stores what the driver writes; the firmware version is
// read-only.
func (q *AQC111) writeRegs(reg int, data []byte) {
	for i, v := range data {
		if r := reg + i; r < len(q.regs) && (r < aqFWMajor || r > aqFWRev) {
			q.regs[r] = v
		}
	}
}

// phyLinkSpeed is the speed code the firmware's PHY links at for the
// configuration word: none while unpowered or in low power, else the
// fastest advertised speed up to the model's own.
func (q *AQC111) phyLinkSpeed() uint8 {
	if q.phyCfg&aqPhyPowerEn == 0 || q.phyCfg&aqLowPower != 0 {
		return 0
	}
	for _, s := range []struct {
		adv  uint32
		code uint8
	}{{aqAdv5G, aqSpeed5G}, {aqAdv2G5, aqSpeed2G5}, {aqAdv1G, aqSpeed1G}, {aqAdv100M, aqSpeed100M}} {
		// the codes run 0x0f (5G) to 0x13 (100M): a larger code is slower
		if q.phyCfg&s.adv != 0 && s.code >= q.speed {
			return s.code
		}
	}
	return 0
}

// setLink changes the link (speed code, 0: down) and reports it on the
// interrupt endpoint.
func (q *AQC111) setLink(code uint8) {
	if q.linkAt == code {
		return
	}
	q.linkAt = code
	if q.sendStatus(code) {
		q.mc.intrs.Add(1)
	}
}

// sendStatus queues the 8-byte status word: the link bit and the speed
// code, what aqc111_status reads.
func (q *AQC111) sendStatus(code uint8) bool {
	msg := make([]byte, aqStatusSize)
	if code != 0 {
		le.PutUint64(msg, aqLinkUp|uint64(code)<<8)
	}
	select {
	case q.intr <- Interrupt{Endpoint: aqEPIntr, Data: msg}:
		return true
	default:
		return false
	}
}

// sendIfUp repeats the status while the link is up, as the chip answers
// its interrupt endpoint's polls with it.
func (q *AQC111) sendIfUp() bool {
	q.mu.Lock()
	code := q.linkAt
	q.mu.Unlock()
	return code != 0 && q.sendStatus(code)
}

// Counters implements Model.
func (q *AQC111) Counters() map[string]uint64 {
	return q.counts(map[string]*atomic.Uint64{"phy_ops": &q.phyOps})
}
