// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// CDC EEM (the USB CDC Ethernet Emulation Model 1.0): one interface,
// class 2 subclass 0x0c protocol 7, a bulk pair and nothing else - no
// class requests, no notifications, no MAC address of the device's (the
// host makes one up). Each bulk transfer carries EEM packets back to
// back, each behind a 16-bit little-endian header whose bit 15 says
// data (0) or command (1):
//
//	data:    bits 0-13 the length of what follows (the Ethernet frame
//	         and its 4-byte CRC), bit 14 bmCRC: 1 the CRC is the frame's
//	         Ethernet CRC, 0 it is the sentinel bytes de ad be ef; a
//	         header of 0 is a zero-length packet (padding)
//	command: bits 11-13 the command, bits 0-10 its parameter, bit 14
//	         reserved (0): echo (0) and echo response (1) carry a payload
//	         of the parameter's length, which the response repeats;
//	         suspend hint (2), response hint (3) and response complete
//	         hint (4) go from the device to the host, tickle (5) the other
//	         way.
const (
	subclassEEM  = 0x0c
	protoEEM     = 0x07
	eemHdrLen    = 2
	eemCRCLen    = 4
	eemCmdBit    = 1 << 15
	eemCRCBit    = 1 << 14
	eemLenMask   = 0x3fff
	eemParamMask = 0x7ff
	eemCmdShift  = 11
	eemSentinel  = 0xdeadbeef
	eemMinData   = 14 + eemCRCLen // an Ethernet header and the CRC: cdc_eem drops shorter ones

	eemEcho, eemEchoResponse, eemSuspendHint, eemResponseHint, eemResponseDone, eemTickle = 0, 1, 2, 3, 4, 5

	// eemEchoEvery: one bulk IN transfer in this many starts with an
	// echo command the host must answer (CDC EEM 5.1.2.2.1: responding
	// is mandatory).
	eemEchoEvery = 64
)

// EEM is a CDC EEM adapter (cdc_eem): a gadget's or an embedded board's
// Ethernet function. Its bulk IN transfers carry as many data packets as
// are waiting and fit the host's request (cdc_eem splits them into
// clones of the URB's skb, all but the last), their CRCs alternately the
// Ethernet CRC and the sentinel; every 64th starts with an echo. cdc_eem
// (7.3.4 and before) drops every packet with the Ethernet CRC that is not
// last in its transfer: it checks a clone's CRC before trimming the
// clone, over the rest of the transfer. Linux's EEM gadget sends only the
// sentinel; this model sends both, so that the guest's rx_errors show it.
// rxWaiting is how many packets the device holds for the host.
func (e *EEM) rxWaiting() int { return len(e.rx) }

type EEM struct {
	batching
	link    Link
	mac     [6]byte
	rx      chan []byte // EEM packets for the host: the link's frames, encoded, and echo responses
	pending []byte
	inPace  *pacer
	outPace *pacer
	faults  *Faults
	cnt     counters
	eem     eemCounters

	mu       sync.Mutex
	sent     uint64 // bulk IN transfers built
	frames   uint64 // frames encoded: the odd ones carry the Ethernet CRC
	echoWant []byte // the payload of the echo the host has not answered
}

type eemCounters struct {
	crcReal, crcSentinel, echoSent, echoAnswered, echoWrong, echoFromHost,
	zeroFromHost, tickles, badCommands, badCRC, dropped atomic.Uint64
}

// NewEEM is a CDC EEM adapter on link, paced to mbit Mbit/s (0: as fast
// as the bus), malformed as f says; mac names it (the host picks its own
// address).
func NewEEM(l Link, mbit int, mac [6]byte, f *Faults) *EEM {
	e := &EEM{link: l, mac: mac, rx: make(chan []byte, 1024), inPace: newPacer(mbit), outPace: newPacer(mbit), faults: f}
	go e.readLink()
	return e
}

// readLink encodes the link's frames as data packets for bulk IN. It
// never closes rx (BulkOut queues echo responses there too); once the
// link ends, bulk IN waits until the session does.
func (e *EEM) readLink() {
	for {
		f, err := e.link.ReadFrame()
		if err != nil {
			return
		}
		e.mu.Lock()
		e.frames++
		real := e.frames%2 == 1
		e.mu.Unlock()
		if real {
			e.eem.crcReal.Add(1)
		} else {
			e.eem.crcSentinel.Add(1)
		}
		e.rx <- eemData(f, real)
	}
}

// eemData is a data packet of frame f, with its Ethernet CRC (real) or
// the sentinel.
func eemData(f []byte, real bool) []byte {
	n := len(f) + eemCRCLen
	h := uint16(n)
	if real {
		h |= eemCRCBit
	}
	b := le.AppendUint16(make([]byte, 0, eemHdrLen+n), h)
	b = append(b, f...)
	if real {
		return le.AppendUint32(b, ethCRC(f))
	}
	return append(b, 0xde, 0xad, 0xbe, 0xef)
}

// eemCommand is a command packet: code, and the payload echo and echo
// response carry (its length is the parameter).
func eemCommand(code int, payload []byte) []byte {
	b := le.AppendUint16(nil, uint16(eemCmdBit|code<<eemCmdShift|len(payload)&eemParamMask))
	return append(b, payload...)
}

// Name implements Model.
func (e *EEM) Name() string { return "eem" }

// Info implements Model: a pid.codes test id, the class in the interface.
func (e *EEM) Info() DeviceInfo {
	return DeviceInfo{VendorID: 0x1209, ProductID: 0x0004, BcdDevice: 0x0100,
		Manufacturer: "wirespeed", Product: "usbdev CDC-EEM", Serial: fmt.Sprintf("%x", e.mac)}
}

// ExtraStrings implements Model.
func (e *EEM) ExtraStrings() []string { return nil }

// Function implements Model: the one EEM interface with its bulk pair
// (EEM has no class-specific descriptors).
func (e *EEM) Function() Function {
	return Function{Interfaces: []Alt{{Number: 0, Class: classComm, Subclass: subclassEEM, Protocol: protoEEM,
		Endpoints: []EP{
			{Address: epBulkIn, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15},
			{Address: epBulkOut, Type: usbredir.XferBulk, MaxPacket: superMaxPacket, MaxBurst: 15}}}}}
}

// Control implements Model: EEM has no class requests.
func (e *EEM) Control(s usbredir.Control, data []byte) ([]byte, bool) { return nil, false }

// SetAlt implements Model: one setting, nothing to do.
func (e *EEM) SetAlt(iface, alt uint8) {}

// Reset implements Model: an echo in flight is forgotten.
func (e *EEM) Reset() {
	e.mu.Lock()
	e.echoWant = nil
	e.mu.Unlock()
}

// Interrupts implements Model: EEM has no interrupt endpoint.
func (e *EEM) Interrupts() <-chan Interrupt { return nil }

// Counters implements Model.
func (e *EEM) Counters() map[string]uint64 {
	m := e.cnt.snapshot()
	for k, v := range map[string]*atomic.Uint64{"eem_crc_real": &e.eem.crcReal, "eem_crc_sentinel": &e.eem.crcSentinel,
		"eem_echo_sent": &e.eem.echoSent, "eem_echo_answered": &e.eem.echoAnswered, "eem_echo_wrong": &e.eem.echoWrong,
		"eem_echo_from_host": &e.eem.echoFromHost, "eem_zero_length_from_host": &e.eem.zeroFromHost,
		"eem_tickles": &e.eem.tickles, "eem_bad_commands": &e.eem.badCommands, "eem_bad_crc_from_host": &e.eem.badCRC,
		"eem_answers_dropped": &e.eem.dropped} {
		m[k] = v.Load()
	}
	return m
}
