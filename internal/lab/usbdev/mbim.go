// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// MBIM is a mobile broadband modem's data function (cdc_mbim): the NCM
// transfer blocks with "IPS" datagram tables carrying raw IP of session
// 0, on a tun (IP packets) instead of a tap. The control plane (MBIM
// messages through cdc-wdm) is not modelled: the data path runs without
// it, as the guest's driver does not wait for it.
type MBIM struct {
	*ntbDev
	mac  [6]byte
	mbim int
	intr chan Interrupt
}

// wMaxControlMessage and the filters of the MBIM functional descriptor:
// what MBIM 1.0 devices commonly give.
const (
	mbimMaxControl = 4096
	mbimMaxSegment = 1500
	mbimCapsInSize = 1 << 5 // 8-byte SET_NTB_INPUT_SIZE
)

// NewMBIM is an MBIM modem's data function on an IP link, paced to mbit.
func NewMBIM(l Link, mbit int, mac [6]byte, f *Faults) *MBIM {
	d := newNTBDev(l, mbit, f)
	d.ndpSig = ndpSigIPS // session 0: "IPS" and a zero byte
	d.toDatagram = ipOnly
	return &MBIM{ntbDev: d, mac: mac, mbim: mbit, intr: make(chan Interrupt, 16)}
}

// ipOnly passes IPv4 and IPv6 packets; a raw-IP link has nothing else.
func ipOnly(p []byte) []byte {
	if len(p) == 0 || (p[0]>>4 != 4 && p[0]>>4 != 6) {
		return nil
	}
	return p
}

// Name implements Model.
func (m *MBIM) Name() string { return "mbim" }

// Info implements Model.
func (m *MBIM) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x1209, ProductID: 0x0002, BcdDevice: 0x0100,
		Manufacturer: "wirespeed", Product: "usbdev MBIM", Serial: fmt.Sprintf("%x", m.mac)}
}

// ExtraStrings implements Model.
func (m *MBIM) ExtraStrings() []string { return nil }

// Function implements Model: the MBIM communication interface (one
// alternate setting, class 2/0x0e) with the header, union and MBIM
// functional descriptors, and the data interface whose alternate
// setting 1 (protocol 2, MBIM's NTB) has the bulk pair.
func (m *MBIM) Function() Function {
	return ntbFunction(subclassMBIM, protoMBIMData, [][]byte{
		{5, dtCSInterface, 0x00, 0x10, 0x01},
		{5, dtCSInterface, 0x06, 0, 1},
		{12, dtCSInterface, 0x1b, 0x00, 0x01, mbimMaxControl & 0xff, mbimMaxControl >> 8, 16, 128,
			mbimMaxSegment & 0xff, mbimMaxSegment >> 8, mbimCapsInSize},
	})
}

// Control implements Model: the NTB requests; the encapsulated MBIM
// messages of the control plane are refused.
func (m *MBIM) Control(s usbredir.Control, data []byte) ([]byte, bool) { return m.ntbControl(s, data) }

// SetAlt implements Model: as NCM, the bulk pair connects the link.
func (m *MBIM) SetAlt(iface, alt uint8) {
	if iface == 1 && alt == 1 {
		connectNotifications(m.intr, m.mbim)
	}
}

// Reset implements Model.
func (m *MBIM) Reset() { m.reset() }

// BulkOut implements Model.
func (m *MBIM) BulkOut(ep uint8, data []byte) { m.bulkOut(data) }

// BulkIn implements Model.
func (m *MBIM) BulkIn(ep uint8, max int, done <-chan struct{}) []byte { return m.bulkIn(max, done) }

// Interrupts implements Model.
func (m *MBIM) Interrupts() <-chan Interrupt { return m.intr }

// Counters implements Model.
func (m *MBIM) Counters() map[string]uint64 { return m.cnt.snapshot() }
