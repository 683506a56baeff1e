// SPDX-License-Identifier: Apache-2.0

package usbredir

import "fmt"

// EPIndex is the protocol's endpoint index: IN endpoints 16-31, OUT 0-15.
func EPIndex(addr uint8) int { return int(addr&0x80)>>3 | int(addr&0x0f) }

// DeviceConnect announces a device.
type DeviceConnect struct {
	Speed                     uint8
	Class, Subclass, Protocol uint8
	VendorID, ProductID       uint16
	BcdDevice                 uint16
}

// SendDeviceConnect sends device_connect.
func (c *Conn) SendDeviceConnect(d DeviceConnect) error {
	h := make([]byte, typeHeaderLen(TypeDeviceConnect, c.both))
	h[0], h[1], h[2], h[3] = d.Speed, d.Class, d.Subclass, d.Protocol
	le.PutUint16(h[4:], d.VendorID)
	le.PutUint16(h[6:], d.ProductID)
	if len(h) > deviceConnectBaseLen {
		le.PutUint16(h[8:], d.BcdDevice)
	}
	return c.Send(TypeDeviceConnect, 0, h, nil)
}

// Interface is one interface of the active configuration.
type Interface struct{ Number, Class, Subclass, Protocol uint8 }

// SendInterfaceInfo sends interface_info for the active configuration.
func (c *Conn) SendInterfaceInfo(ifs []Interface) error {
	if len(ifs) > maxInterfaces {
		return fmt.Errorf("usbredir: %d interfaces, the protocol carries %d", len(ifs), maxInterfaces)
	}
	h := make([]byte, interfaceInfoLen)
	le.PutUint32(h, uint32(len(ifs)))
	for i, f := range ifs {
		h[4+i], h[36+i], h[68+i], h[100+i] = f.Number, f.Class, f.Subclass, f.Protocol
	}
	return c.Send(TypeInterfaceInfo, 0, h, nil)
}

// Endpoint is one endpoint as ep_info describes it.
type Endpoint struct {
	Address, Type, Interval, Interface uint8
	MaxPacketSize                      uint16 // in bytes, not wMaxPacketSize's encoding
}

// SendEPInfo sends ep_info: the given endpoints, every other one invalid.
// Endpoint 0 is control.
func (c *Conn) SendEPInfo(eps []Endpoint) error {
	h := make([]byte, typeHeaderLen(TypeEPInfo, c.both))
	for i := 0; i < maxEndpoints; i++ {
		h[i] = XferInvalid
	}
	h[EPIndex(0x00)], h[EPIndex(0x80)] = XferControl, XferControl
	for _, e := range eps {
		i := EPIndex(e.Address)
		h[i], h[32+i], h[64+i] = e.Type, e.Interval, e.Interface
		if c.both&(1<<CapEPInfoMaxPacketSize) != 0 {
			le.PutUint16(h[96+2*i:], e.MaxPacketSize)
		}
	}
	return c.Send(TypeEPInfo, 0, h, nil)
}

// Control is a control_packet's header: the setup packet plus status and
// the data length.
type Control struct {
	Endpoint, Request, RequestType, Status uint8
	Value, Index, Length                   uint16
}

// In says whether the request reads from the device.
func (s Control) In() bool { return s.RequestType&0x80 != 0 }

// ParseControl decodes a control_packet's header.
func ParseControl(h []byte) Control {
	return Control{Endpoint: h[0], Request: h[1], RequestType: h[2], Status: h[3],
		Value: le.Uint16(h[4:]), Index: le.Uint16(h[6:]), Length: le.Uint16(h[8:])}
}

// SendControl answers control packet id: status, and for an IN request
// the data (its length is the header's).
func (c *Conn) SendControl(id uint64, s Control, status uint8, data []byte) error {
	h := make([]byte, controlPacketLen)
	h[0], h[1], h[2], h[3] = s.Endpoint, s.Request, s.RequestType, status
	le.PutUint16(h[4:], s.Value)
	le.PutUint16(h[6:], s.Index)
	n := len(data)
	if !s.In() {
		n, data = int(s.Length), nil // an OUT request's answer says how much was taken
		if status != StatusSuccess {
			n = 0
		}
	}
	le.PutUint16(h[8:], uint16(n))
	return c.Send(TypeControlPacket, id, h, data)
}

// Bulk is a bulk_packet's header.
type Bulk struct {
	Endpoint, Status uint8
	Length           uint32
	StreamID         uint32
}

// ParseBulk decodes a bulk_packet's header.
func ParseBulk(h []byte) Bulk {
	b := Bulk{Endpoint: h[0], Status: h[1], Length: uint32(le.Uint16(h[2:])), StreamID: le.Uint32(h[4:])}
	if len(h) >= bulkPacketBaseLen+2 {
		b.Length |= uint32(le.Uint16(h[8:])) << 16
	}
	return b
}

// SendBulk answers bulk packet id. For IN the data is the transfer; for
// OUT length says how much was taken.
func (c *Conn) SendBulk(id uint64, ep, status uint8, length uint32, data []byte) error {
	h := make([]byte, typeHeaderLen(TypeBulkPacket, c.both))
	if len(h) == bulkPacketBaseLen && length > 0xffff {
		return fmt.Errorf("usbredir: a bulk transfer of %d bytes needs 32-bit bulk lengths, which the peer lacks", length)
	}
	h[0], h[1] = ep, status
	le.PutUint16(h[2:], uint16(length))
	if len(h) > bulkPacketBaseLen {
		le.PutUint16(h[8:], uint16(length>>16))
	}
	return c.Send(TypeBulkPacket, id, h, data)
}

// SendInterrupt sends an interrupt_packet: for an IN endpoint whose
// receiving was started, data the device has for the host.
func (c *Conn) SendInterrupt(id uint64, ep, status uint8, data []byte) error {
	h := make([]byte, interruptPacketLen)
	h[0], h[1] = ep, status
	le.PutUint16(h[2:], uint16(len(data)))
	return c.Send(TypeInterruptPacket, id, h, data)
}

// SendStatus answers a request whose answer is a status and a few bytes
// (configuration_status, alt_setting_status,
// interrupt_receiving_status): t is the answer's type.
func (c *Conn) SendStatus(t uint32, id uint64, status uint8, rest ...uint8) error {
	return c.Send(t, id, append([]byte{status}, rest...), nil)
}
