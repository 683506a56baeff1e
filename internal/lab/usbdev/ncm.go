// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// CDC class codes and requests (USB CDC 1.2, CDC NCM 1.0).
const (
	classComm          = 0x02
	classData          = 0x0a
	subclassNCM        = 0x0d
	subclassMBIM       = 0x0e
	protoNCMData       = 0x01
	protoMBIMData      = 0x02
	reqSetEthMcast     = 0x40
	reqSetEthFilter    = 0x43
	reqGetNTBParams    = 0x80
	reqGetNTBFormat    = 0x83
	reqSetNTBFormat    = 0x84
	reqGetNTBInSize    = 0x85
	reqSetNTBInSize    = 0x86
	reqGetMaxDatagram  = 0x87
	reqSetMaxDatagram  = 0x88
	reqGetCRCMode      = 0x89
	reqSetCRCMode      = 0x8a
	notifyConnection   = 0x00
	notifySpeedChange  = 0x2a
	epNotify           = 0x81
	epBulkIn           = 0x82
	epBulkOut          = 0x01
	maxSegment         = 1514
	ncmCapsFilter      = 1 << 0 // SetEthernetPacketFilter
	ncmCapsMaxDatagram = 1 << 3 // Get/SetMaxDatagramSize
	ncmCapsInSize8     = 1 << 5 // 8-byte SET_NTB_INPUT_SIZE
)

// NCM is a CDC-NCM adapter (cdc_ncm): a phone's or a 2.5G dongle's
// network function.
type NCM struct {
	*ntbDev
	mac  [6]byte
	mbit int
	intr chan Interrupt
}

// NewNCM is a CDC-NCM adapter on link, paced to mbit Mbit/s (0: as fast
// as the bus), with host MAC address mac, malformed as f says (nil: never).
func NewNCM(l Link, mbit int, mac [6]byte, f *Faults) *NCM {
	return &NCM{ntbDev: newNTBDev(l, mbit, f), mac: mac, mbit: mbit, intr: make(chan Interrupt, 16)}
}

// Name implements Model.
func (n *NCM) Name() string { return "ncm" }

// Info implements Model: the pid.codes test vendor's id, no class of its
// own (the interfaces have it).
func (n *NCM) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x1209, ProductID: 0x0001, BcdDevice: 0x0100,
		Manufacturer: "wirespeed", Product: "usbdev CDC-NCM", Serial: fmt.Sprintf("%x", n.mac)}
}

// ExtraStrings implements Model: string 4 is iMACAddress.
func (n *NCM) ExtraStrings() []string { return []string{fmt.Sprintf("%X", n.mac)} }

// Function implements Model: a communication interface with the CDC
// header, union, Ethernet networking and NCM descriptors and its
// notification endpoint, and a data interface whose alternate setting 1
// has the bulk pair.
func (n *NCM) Function() Function {
	return ntbFunction(subclassNCM, protoNCMData, [][]byte{
		{5, dtCSInterface, 0x00, 0x10, 0x01}, // header, CDC 1.10
		{5, dtCSInterface, 0x06, 0, 1},       // union: control 0, data 1
		{13, dtCSInterface, 0x0f, 4, 0, 0, 0, 0, maxSegment & 0xff, maxSegment >> 8, 0, 0, 0},
		{6, dtCSInterface, 0x1a, 0x00, 0x01, ncmCapsFilter | ncmCapsMaxDatagram | ncmCapsInSize8},
	})
}

func ntbFunction(sub, dataProto uint8, cs [][]byte) Function {
	return Function{Interfaces: []Alt{
		{Number: 0, Class: classComm, Subclass: sub, Extra: cs,
			Endpoints: []EP{{Address: epNotify, Type: usbredir.XferInterrupt, MaxPacket: 16, Interval: 9}}},
		{Number: 1, Setting: 0, Class: classData, Protocol: dataProto},
		{Number: 1, Setting: 1, Class: classData, Protocol: dataProto, Endpoints: []EP{
			{Address: epBulkIn, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
			{Address: epBulkOut, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15}}},
	}}
}

// ntbParameters is GET_NTB_PARAMETERS' answer: NTB16 only, the block
// sizes, datagrams at multiples of 4.
func (d *ntbDev) ntbParameters() []byte {
	b := make([]byte, 28)
	le.PutUint16(b, 28)
	le.PutUint16(b[2:], 1)
	le.PutUint32(b[4:], uint32(d.inMax))
	le.PutUint16(b[8:], uint16(d.div))
	le.PutUint16(b[12:], 4)
	le.PutUint32(b[16:], uint32(d.outMax))
	le.PutUint16(b[20:], uint16(d.div))
	le.PutUint16(b[24:], 4)
	return b
}

// ntbControl answers the NCM requests NCM and MBIM share.
func (d *ntbDev) ntbControl(s usbredir.Control, data []byte) ([]byte, bool) {
	switch s.Request {
	case reqGetNTBParams:
		return d.ntbParameters(), true
	case reqGetNTBFormat, reqGetCRCMode:
		return []byte{0, 0}, true
	case reqSetNTBFormat, reqSetCRCMode:
		return nil, s.Value == 0 // NTB16, no CRC
	case reqGetNTBInSize:
		d.mu.Lock()
		defer d.mu.Unlock()
		return le.AppendUint32(nil, uint32(d.hostInMax)), true
	case reqSetNTBInSize:
		if len(data) < 4 {
			return nil, false
		}
		size := int(le.Uint32(data))
		if size < 2048 || size > d.inMax {
			return nil, false
		}
		d.mu.Lock()
		d.hostInMax = size
		if len(data) >= 8 {
			d.hostInDgram = int(le.Uint16(data[4:]))
		}
		d.mu.Unlock()
		return nil, true
	case reqGetMaxDatagram:
		return []byte{maxSegment & 0xff, maxSegment >> 8}, true
	case reqSetMaxDatagram, reqSetEthFilter, reqSetEthMcast:
		return nil, true
	}
	return nil, false
}

// Control implements Model.
func (n *NCM) Control(s usbredir.Control, data []byte) ([]byte, bool) { return n.ntbControl(s, data) }

// SetAlt implements Model: selecting the data interface's bulk pair
// connects the link, which the device says with a speed change and a
// network connection notification, as a real adapter does.
func (n *NCM) SetAlt(iface, alt uint8) {
	if iface == 1 && alt == 1 {
		connectNotifications(n.intr, n.mbit)
	}
}

// connectNotifications queues the speed and connection notifications of
// a link that came up (USB CDC 1.2, 6.3). An unpaced device has no link
// rate to report, so it sends only the connection.
func connectNotifications(ch chan Interrupt, mbit int) {
	var msgs [][]byte
	if mbit > 0 {
		bps := uint32(min(int64(mbit)*1e6, 1<<32-1))
		speed := []byte{0xa1, notifySpeedChange, 0, 0, 0, 0, 8, 0}
		msgs = append(msgs, le.AppendUint32(le.AppendUint32(speed, bps), bps))
	}
	msgs = append(msgs, []byte{0xa1, notifyConnection, 1, 0, 0, 0, 0, 0})
	for _, m := range msgs {
		select {
		case ch <- Interrupt{Endpoint: epNotify, Data: m}:
		default:
		}
	}
}

// Reset implements Model.
func (n *NCM) Reset() { n.reset() }

// BulkOut implements Model.
func (n *NCM) BulkOut(ep uint8, data []byte) { n.bulkOut(data) }

// BulkIn implements Model.
func (n *NCM) BulkIn(ep uint8, max int, done <-chan struct{}) []byte { return n.bulkIn(max, done) }

// Interrupts implements Model.
func (n *NCM) Interrupts() <-chan Interrupt { return n.intr }

// Counters implements Model.
func (n *NCM) Counters() map[string]uint64 { return n.cnt.snapshot() }
