// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// RNDIS (Microsoft's Remote NDIS 1.0, and its USB binding): NDIS messages
// carried in CDC encapsulated commands and responses on endpoint 0, an
// interrupt endpoint saying a response is available, and Ethernet frames
// each inside a REMOTE_NDIS_PACKET_MSG on the bulk pair.
const (
	classWirelessCtl = 0xe0 // Wireless Controller, subclass 1 (RF), protocol 3 (RNDIS)
	reqSendEncap     = 0x00 // SEND_ENCAPSULATED_COMMAND
	reqGetEncap      = 0x01 // GET_ENCAPSULATED_RESPONSE

	rndisMsgPacket    = 0x00000001
	rndisMsgInit      = 0x00000002
	rndisMsgHalt      = 0x00000003
	rndisMsgQuery     = 0x00000004
	rndisMsgSet       = 0x00000005
	rndisMsgReset     = 0x00000006
	rndisMsgIndicate  = 0x00000007
	rndisMsgKeepalive = 0x00000008
	rndisCompletion   = 0x80000000

	rndisStatusSuccess      = 0x00000000
	rndisStatusFailure      = 0xc0000001
	rndisStatusNotSupported = 0xc00000bb
	rndisStatusInvalidData  = 0xc0010015
	rndisStatusMediaConnect = 0x4001000b

	rndisPacketHdrLen = 44    // REMOTE_NDIS_PACKET_MSG up to its data
	rndisMaxXfer      = 16384 // the largest OUT transfer the device takes
	rndisMaxPackets   = 8     // packets per OUT transfer the device takes
	rndisAlignShift   = 2     // the device's packets start at multiples of 4
	rndisHostMax      = 1025  // GET_ENCAPSULATED_RESPONSE's buffer (the RNDIS spec's 1 KB, and one)
	rndisRespQueue    = 16
)

// RNDIS is an RNDIS adapter as a phone's USB tethering presents it
// (rndis_host): a Wireless Controller control interface with the CDC
// header, call management, ACM and union descriptors and an 8-byte
// notification endpoint, and a CDC data interface with the bulk pair in
// its only setting.
// rxWaiting is how many frames the device holds for the host.
func (r *RNDIS) rxWaiting() int { return len(r.rx) }

type RNDIS struct {
	batching
	link    Link
	mac     [6]byte
	mbit    int
	intr    chan Interrupt
	rx      chan []byte
	pending []byte
	inPace  *pacer
	outPace *pacer
	faults  *Faults
	cnt     counters
	ctl     rndisCounters

	mu       sync.Mutex
	resp     [][]byte // encapsulated responses waiting for GET_ENCAPSULATED_RESPONSE
	inited   bool
	hostMax  int // the host's MaxTransferSize (INITIALIZE): the longest IN transfer it takes
	filter   uint32
	dataOn   atomic.Bool // the packet filter is set: frames flow
	mcastLen int
}

type rndisCounters struct {
	commands, responses, notifications, indications, badCommands, unsupported, dropped, multi atomic.Uint64
}

// NewRNDIS is an RNDIS adapter on link, paced to mbit Mbit/s (0: as fast
// as the bus), giving the host MAC address mac, malformed as f says.
func NewRNDIS(l Link, mbit int, mac [6]byte, f *Faults) *RNDIS {
	r := &RNDIS{link: l, mac: mac, mbit: mbit, intr: make(chan Interrupt, 16), rx: make(chan []byte, 1024),
		inPace: newPacer(mbit), outPace: newPacer(mbit), faults: f}
	go r.readLink()
	return r
}

// readLink feeds frames from the link to bulk IN; while the host has not
// set a packet filter the device passes nothing (RNDIS 1.0: data flows
// once the filter is non-zero).
func (r *RNDIS) readLink() {
	for {
		f, err := r.link.ReadFrame()
		if err != nil {
			close(r.rx)
			return
		}
		if !r.dataOn.Load() {
			r.ctl.dropped.Add(1)
			continue
		}
		r.rx <- f
	}
}

// Name implements Model.
func (r *RNDIS) Name() string { return "rndis" }

// Info implements Model: no class of its own, as a phone's tethering
// function alone in its configuration.
func (r *RNDIS) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x1209, ProductID: 0x0003, BcdDevice: 0x0100,
		Manufacturer: "wirespeed", Product: "usbdev RNDIS", Serial: fmt.Sprintf("%x", r.mac)}
}

// ExtraStrings implements Model.
func (r *RNDIS) ExtraStrings() []string { return nil }

// Function implements Model: interface 0 (class 0xe0/1/3) with the CDC
// header, call management (no capabilities, data on interface 1), ACM
// (no capabilities: rndis_host refuses a 2/2/0xff function with some)
// and union descriptors and the notification endpoint; interface 1, CDC
// data with the bulk pair at setting 0 (rndis_host does not select one).
func (r *RNDIS) Function() Function {
	return Function{Interfaces: []Alt{
		{Number: 0, Class: classWirelessCtl, Subclass: 1, Protocol: 3, Extra: [][]byte{
			{5, dtCSInterface, 0x00, 0x10, 0x01}, // header, CDC 1.10
			{5, dtCSInterface, 0x01, 0x00, 1},    // call management
			{4, dtCSInterface, 0x02, 0x00},       // ACM
			{5, dtCSInterface, 0x06, 0, 1},       // union: control 0, data 1
		}, Endpoints: []EP{{Address: epNotify, Type: usbredir.XferInterrupt, MaxPacket: 8, Interval: 9}}},
		{Number: 1, Class: classData, Endpoints: []EP{
			{Address: epBulkIn, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
			{Address: epBulkOut, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15}}},
	}}
}

// Control implements Model: SEND_ENCAPSULATED_COMMAND takes an RNDIS
// message and queues its answer, GET_ENCAPSULATED_RESPONSE gives the
// oldest answer (or, with none, the one zero byte the USB binding says).
func (r *RNDIS) Control(s usbredir.Control, data []byte) ([]byte, bool) {
	if s.RequestType&typeMask != 0x20 || s.Index != 0 {
		return nil, false
	}
	switch {
	case s.Request == reqSendEncap && !s.In():
		return nil, r.command(data)
	case s.Request == reqGetEncap && s.In():
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.resp) == 0 {
			return []byte{0}, true
		}
		b := r.resp[0]
		r.resp = r.resp[1:]
		return b, true
	}
	return nil, false
}

// respond queues an encapsulated response and says so on the interrupt
// endpoint: RESPONSE_AVAILABLE, 8 bytes (notification 1, reserved 0).
func (r *RNDIS) respond(b []byte) {
	r.mu.Lock()
	r.resp = append(r.resp, b)
	if len(r.resp) > rndisRespQueue {
		r.resp = r.resp[len(r.resp)-rndisRespQueue:]
	}
	r.mu.Unlock()
	r.ctl.responses.Add(1)
	select {
	case r.intr <- Interrupt{Endpoint: epNotify, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0}}:
		r.ctl.notifications.Add(1)
	default:
	}
}

// SetAlt implements Model: RNDIS has no settings to select.
func (r *RNDIS) SetAlt(iface, alt uint8) {}

// Reset implements Model: the device forgets INITIALIZE, the filter and
// what it had to say.
func (r *RNDIS) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resp, r.inited, r.hostMax, r.filter = nil, false, 0, 0
	r.dataOn.Store(false)
}

// Interrupts implements Model.
func (r *RNDIS) Interrupts() <-chan Interrupt { return r.intr }

// Counters implements Model: the data path's counts and the control
// channel's.
func (r *RNDIS) Counters() map[string]uint64 {
	m := r.cnt.snapshot()
	for k, v := range map[string]*atomic.Uint64{"rndis_commands": &r.ctl.commands, "rndis_responses": &r.ctl.responses,
		"rndis_notifications": &r.ctl.notifications, "rndis_indications": &r.ctl.indications,
		"rndis_bad_commands": &r.ctl.badCommands, "rndis_unsupported_oids": &r.ctl.unsupported,
		"frames_dropped_no_filter": &r.ctl.dropped, "transfers_to_host_multi": &r.ctl.multi} {
		m[k] = v.Load()
	}
	return m
}
