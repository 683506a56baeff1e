// SPDX-License-Identifier: Apache-2.0

// Package usbdev is the device lab's USB network adapter: a device that
// lives outside the guest, on the host, and reaches the guest's xHCI
// through QEMU's usb-redir (the usbredir protocol, internal/usbredir).
// The guest runs only what a host with real hardware runs - xhci-hcd,
// usbcore, the minidriver, usbnet and the stack - while the device's
// Ethernet side is a tap (or tun) in a host namespace of the lab's.
//
// A Model is one kind of adapter (CDC-NCM, MBIM, RNDIS): its descriptors,
// its class requests and its data format. A Session runs a model over one
// usbredir connection: enumeration requests, bulk transfers held until
// the device has data (bulk IN is a request the device answers when a
// frame arrives), interrupt notifications, unplug and re-plug.
package usbdev

import (
	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// Model is one kind of USB network adapter.
type Model interface {
	// Name is the model's name on the command line (ncm, mbim, rndis).
	Name() string
	Info() DeviceInfo
	Function() Function
	// ExtraStrings are the string descriptors from index 4 on (1-3 are
	// the manufacturer, product and serial of Info).
	ExtraStrings() []string
	// Control answers a class or vendor request; ok false stalls it. An
	// IN answer longer than the request's length is cut to it.
	Control(s usbredir.Control, data []byte) (resp []byte, ok bool)
	// SetAlt is called when the host selects an alternate setting (and
	// with 0 for every interface on a configuration change or reset).
	SetAlt(iface, alt uint8)
	// Reset puts the model back to its state at plug-in.
	Reset()
	// BulkOut takes one transfer the host sent on ep; it returns when the
	// device has taken it (at the link's pace).
	BulkOut(ep uint8, data []byte)
	// BulkIn returns the next transfer of at most max bytes for the IN
	// endpoint ep, waiting until there is one; nil once done is closed.
	BulkIn(ep uint8, max int, done <-chan struct{}) []byte
	// Interrupts carries what the device sends on its interrupt IN
	// endpoint (notifications), with the endpoint's address.
	Interrupts() <-chan Interrupt
	// Counters are the model's own counts (frames, aggregates, faults
	// sent), for the device's result file.
	Counters() map[string]uint64
}

// Interrupt is one message for an interrupt IN endpoint.
type Interrupt struct {
	Endpoint uint8
	Data     []byte
}

// Link is the device's Ethernet (or, for raw-IP models, IP) side.
type Link interface {
	// ReadFrame returns the next frame the network sends to the device.
	ReadFrame() ([]byte, error)
	// WriteFrame sends a frame from the device to the network.
	WriteFrame([]byte) error
	Close() error
}

// Setup request codes (USB 3.2, table 9-4).
const (
	reqGetStatus     = 0x00
	reqClearFeature  = 0x01
	reqSetFeature    = 0x03
	reqGetDescriptor = 0x06
	reqSetSel        = 0x30
	reqSetIsochDelay = 0x31
	featureEPHalt    = 0
	typeMask         = 0x60 // bmRequestType's type: 0 standard, 0x20 class, 0x40 vendor
	recipientMask    = 0x1f
	recipientEP      = 2
)
