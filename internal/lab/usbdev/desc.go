// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"encoding/binary"
	"unicode/utf16"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

var le = binary.LittleEndian

// Descriptor types (USB 3.2, table 9-6).
const (
	dtDevice       = 1
	dtConfig       = 2
	dtString       = 3
	dtInterface    = 4
	dtEndpoint     = 5
	dtBOS          = 15
	dtDeviceCap    = 16
	dtSSCompanion  = 48
	dtCSInterface  = 0x24
	superMaxPacket = 1024 // a SuperSpeed bulk endpoint's max packet size
)

// DeviceInfo is what the device descriptor says of a device.
type DeviceInfo struct {
	VendorID, ProductID, BcdDevice uint16
	Class, Subclass, Protocol      uint8
	Manufacturer, Product, Serial  string
}

// Function is the part of a configuration a model describes: its
// interfaces with their class descriptors and endpoints.
type Function struct {
	Interfaces []Alt
}

// Alt is one alternate setting of an interface.
type Alt struct {
	Number, Setting           uint8
	Class, Subclass, Protocol uint8
	Extra                     [][]byte // class-specific descriptors after the interface descriptor
	Endpoints                 []EP
}

// EP is an endpoint of an alternate setting.
type EP struct {
	Address, Type uint8
	MaxPacket     uint16
	Interval      uint8
	MaxBurst      uint8
}

func deviceDescriptor(d DeviceInfo) []byte {
	b := make([]byte, 18)
	b[0], b[1] = 18, dtDevice
	le.PutUint16(b[2:], 0x0320) // USB 3.2
	b[4], b[5], b[6] = d.Class, d.Subclass, d.Protocol
	b[7] = 9 // 2^9 = 512 bytes: endpoint 0 at SuperSpeed
	le.PutUint16(b[8:], d.VendorID)
	le.PutUint16(b[10:], d.ProductID)
	le.PutUint16(b[12:], d.BcdDevice)
	b[14], b[15], b[16] = 1, 2, 3 // the strings of Strings below
	b[17] = 1                     // one configuration
	return b
}

// bosDescriptor: a USB 2.0 extension (no LPM) and the SuperSpeed
// capability, as a SuperSpeed device must have (USB 3.2, 9.6.2).
func bosDescriptor() []byte {
	usb2 := []byte{7, dtDeviceCap, 2, 0, 0, 0, 0}
	ss := []byte{10, dtDeviceCap, 3, 0, 0x0e, 0x00, 1, 0x0a, 0xff, 0x07}
	b := []byte{5, dtBOS, 0, 0, 2}
	b = append(append(b, usb2...), ss...)
	le.PutUint16(b[2:], uint16(len(b)))
	return b
}

func configDescriptor(f Function) []byte {
	var body []byte
	nif := map[uint8]bool{}
	for _, a := range f.Interfaces {
		nif[a.Number] = true
		body = append(body, 9, dtInterface, a.Number, a.Setting, uint8(len(a.Endpoints)), a.Class, a.Subclass, a.Protocol, 0)
		for _, x := range a.Extra {
			body = append(body, x...)
		}
		for _, e := range a.Endpoints {
			body = append(body, 7, dtEndpoint, e.Address, e.Type, byte(e.MaxPacket), byte(e.MaxPacket>>8), e.Interval)
			bpi := uint16(0)
			if e.Type == usbredir.XferInterrupt {
				bpi = e.MaxPacket
			}
			body = append(body, 6, dtSSCompanion, e.MaxBurst, 0, byte(bpi), byte(bpi>>8))
		}
	}
	h := []byte{9, dtConfig, 0, 0, uint8(len(nif)), 1, 0, 0xc0, 0x32}
	b := append(h, body...)
	le.PutUint16(b[2:], uint16(len(b)))
	return b
}

func stringDescriptor(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := []byte{uint8(2 + 2*len(u)), dtString}
	for _, r := range u {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

// langIDs is string descriptor 0: US English.
var langIDs = []byte{4, dtString, 0x09, 0x04}

// activeInterfaces are the interfaces of the configuration, as
// interface_info gives them (alternate setting 0's class).
func activeInterfaces(f Function) []usbredir.Interface {
	var out []usbredir.Interface
	seen := map[uint8]bool{}
	for _, a := range f.Interfaces {
		if seen[a.Number] {
			continue
		}
		seen[a.Number] = true
		out = append(out, usbredir.Interface{Number: a.Number, Class: a.Class, Subclass: a.Subclass, Protocol: a.Protocol})
	}
	return out
}

// endpointsOf lists every endpoint of every alternate setting: ep_info
// is per address, and a model's addresses never repeat across settings.
func endpointsOf(f Function) []usbredir.Endpoint {
	var out []usbredir.Endpoint
	for _, a := range f.Interfaces {
		for _, e := range a.Endpoints {
			out = append(out, usbredir.Endpoint{Address: e.Address, Type: e.Type, Interval: e.Interval,
				Interface: a.Number, MaxPacketSize: e.MaxPacket})
		}
	}
	return out
}
