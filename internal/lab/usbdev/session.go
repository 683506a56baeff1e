// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// Session runs a model over one usbredir connection.
type Session struct {
	c      *usbredir.Conn
	m      Model
	logf   func(string, ...any)
	faults *Faults
	burst  Batch // Transfers: bulk IN answers sent together

	mu        sync.Mutex
	cond      *sync.Cond
	inQ       map[uint8][]inReq // pending bulk IN requests, oldest first
	inOwed    map[uint8]int     // IN answers the host has not asked again for (see inCredit)
	carry     map[uint8][]byte  // a transfer built for a request cancelled meanwhile
	intrOn    map[uint8]bool
	intrHeld  []Interrupt
	attached  bool
	ackCh     chan struct{}
	outCh     chan outReq
	done      chan struct{}
	stats     Stats
	configVal uint8
	alts      map[uint8]uint8
}

type inReq struct {
	id     uint64
	length uint32
}

type outReq struct {
	id   uint64
	ep   uint8
	data []byte
}

// Stats are the session's counts, for the device's result file.
type Stats struct {
	InTransfers  uint64 `json:"in_transfers"`
	InBytes      uint64 `json:"in_bytes"`
	OutTransfers uint64 `json:"out_transfers"`
	OutBytes     uint64 `json:"out_bytes"`
	Cancelled    uint64 `json:"cancelled"`
	Stalled      uint64 `json:"stalled"`
	Replugs      uint64 `json:"replugs"`
	Controls     uint64 `json:"controls"`
	Interrupts   uint64 `json:"interrupts"`
	// InWaitingSum adds up, at each bulk IN answer, how many IN requests
	// the host had waiting (the one answered included): divided by
	// InTransfers, how many URBs the guest's driver keeps in flight
	// on average; InWaitingMax is the most; InRequestMax the largest
	// request (the driver's URB size).
	InWaitingSum uint64 `json:"in_waiting_sum"`
	InWaitingMax uint64 `json:"in_waiting_max"`
	InRequestMax uint64 `json:"in_request_max"`
	// OutHeld bulk OUT transfers were held by the hostile mode's slow
	// OUT, OutHeldNs in all.
	OutHeld   uint64 `json:"out_held"`
	OutHeldNs uint64 `json:"out_held_ns"`
	// ReplugWaits counts the times --replug-every waited for the host's
	// driver to open the interface (see replugLoop).
	ReplugWaits uint64 `json:"replug_waits"`
	// RXWaitingSum adds up, before each bulk IN transfer is built, the
	// frames the device holds for the host (its RX FIFO: the link's
	// frames not yet in a transfer); divided by RXWaitingSamples, the
	// FIFO's mean depth, RXWaitingMax its deepest.
	RXWaitingSum     uint64 `json:"rx_waiting_sum"`
	RXWaitingSamples uint64 `json:"rx_waiting_samples"`
	RXWaitingMax     uint64 `json:"rx_waiting_max"`
}

// NewSession prepares a session; Serve runs it.
func NewSession(c *usbredir.Conn, m Model, f *Faults, logf func(string, ...any)) *Session {
	s := &Session{c: c, m: m, logf: logf, faults: f, inQ: map[uint8][]inReq{}, inOwed: map[uint8]int{}, carry: map[uint8][]byte{},
		intrOn: map[uint8]bool{}, alts: map[uint8]uint8{}, outCh: make(chan outReq, 4096), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	return s
}

// Burst makes the session answer bulk IN requests b.Transfers at a time
// (within b.Wait); call it before Serve.
func (s *Session) Burst(b Batch) { s.burst = b }

// Stats returns a copy of the counts.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Serve shakes hands, plugs the device in and answers the host until the
// connection ends or ctx is done. A connection QEMU closes is not an
// error.
func (s *Session) Serve(ctx context.Context) error {
	defer s.stop()
	go func() {
		select {
		case <-ctx.Done():
			s.c.Close()
		case <-s.done:
		}
	}()
	if err := s.c.Handshake(); err != nil {
		return err
	}
	s.logf("usbdev: connected to %q", s.c.PeerVersion)
	if err := s.plug(); err != nil {
		return err
	}
	for _, e := range endpointsOf(s.m.Function()) {
		switch {
		case e.Type == usbredir.XferBulk && e.Address&0x80 != 0:
			go s.inPump(e.Address)
		}
	}
	go s.outWorker()
	go s.interruptForwarder()
	if s.faults != nil && s.faults.ReplugEvery > 0 {
		go s.replugLoop(s.faults.ReplugEvery)
	}
	for {
		m, err := s.c.ReadMsg()
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := s.handle(m); err != nil {
			return err
		}
	}
}

func (s *Session) stop() {
	s.mu.Lock()
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}

// plug announces the device: interface_info and ep_info first (QEMU
// checks a device against them when it connects), then device_connect.
func (s *Session) plug() error {
	f := s.m.Function()
	if err := s.c.SendInterfaceInfo(activeInterfaces(f)); err != nil {
		return err
	}
	if err := s.c.SendEPInfo(endpointsOf(f)); err != nil {
		return err
	}
	i := s.m.Info()
	s.mu.Lock()
	s.attached = true
	s.mu.Unlock()
	return s.c.SendDeviceConnect(usbredir.DeviceConnect{Speed: usbredir.SpeedSuper, Class: i.Class,
		Subclass: i.Subclass, Protocol: i.Protocol, VendorID: i.VendorID, ProductID: i.ProductID, BcdDevice: i.BcdDevice})
}

// Replug unplugs the device (device_disconnect, waiting for QEMU's
// acknowledgement), puts the model back to its plug-in state and plugs
// it in again after gap.
func (s *Session) Replug(gap time.Duration) error {
	s.mu.Lock()
	s.attached = false
	s.ackCh = make(chan struct{})
	ack := s.ackCh
	for ep := range s.inQ {
		s.inQ[ep] = nil // QEMU treats every packet in flight as cancelled
	}
	s.inOwed = map[uint8]int{}
	s.intrOn = map[uint8]bool{}
	s.stats.Replugs++
	s.mu.Unlock()
	if err := s.c.Send(usbredir.TypeDeviceDisconnect, 0, nil, nil); err != nil {
		return err
	}
	select {
	case <-ack:
	case <-time.After(2 * time.Second):
		s.logf("usbdev: no device_disconnect_ack in 2s; plugging in again anyway")
	case <-s.done:
		return nil
	}
	s.m.Reset()
	select {
	case <-time.After(gap):
	case <-s.done:
		return nil
	}
	return s.plug()
}

// replugLoop unplugs and plugs the device in again about every `every`
// of its use: the time counts from when the host's driver has the
// interface open (bulk IN requests waiting), and the unplug waits for
// that too. An unplug while a driver probes is one QEMU cannot show as a
// host would see it: its xHCI drops the transfers in flight at a detach
// without completing them (xhci_detach_slot nukes them and reports
// nothing) and does not complete those sent to the gone slot after it, so
// every register access of the probe waits out its 5 s timeout - a
// vendor-register driver's dozens of them held the guest's hub_wq for
// minutes (the staged ax88179 KASAN stress boots of 2026-11-28) - where
// a real controller fails them at once.
func (s *Session) replugLoop(every time.Duration) {
	for s.waitOpen() {
		select {
		case <-time.After(s.faults.jitter(every)):
		case <-s.done:
			return
		}
		if !s.waitOpen() {
			return
		}
		if err := s.Replug(s.faults.jitter(500 * time.Millisecond)); err != nil {
			s.logf("usbdev: re-plug: %v", err)
			return
		}
	}
}

// waitOpen waits until the device is attached with a bulk IN request of
// the host's waiting, and says false if the session ended first.
func (s *Session) waitOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	waited := false
	for !s.closed() && !(s.attached && s.inWaiting()) {
		waited = true
		s.cond.Wait()
	}
	if waited {
		s.stats.ReplugWaits++
	}
	return !s.closed()
}

// inWaiting says whether the host has a bulk IN request waiting (s.mu held).
func (s *Session) inWaiting() bool {
	for _, q := range s.inQ {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

func (s *Session) handle(m *usbredir.Msg) error {
	switch m.Type {
	case usbredir.TypeReset:
		s.m.Reset()
	case usbredir.TypeSetConfiguration:
		return s.setConfiguration(m)
	case usbredir.TypeGetConfiguration:
		return s.c.SendStatus(usbredir.TypeConfigurationStatus, m.ID, usbredir.StatusSuccess, s.configVal)
	case usbredir.TypeSetAltSetting:
		s.setAlt(m.Hdr[0], m.Hdr[1])
		return s.c.SendStatus(usbredir.TypeAltSettingStatus, m.ID, usbredir.StatusSuccess, m.Hdr[0], m.Hdr[1])
	case usbredir.TypeGetAltSetting:
		s.mu.Lock()
		alt := s.alts[m.Hdr[0]]
		s.mu.Unlock()
		return s.c.SendStatus(usbredir.TypeAltSettingStatus, m.ID, usbredir.StatusSuccess, m.Hdr[0], alt)
	case usbredir.TypeStartInterruptReceiving, usbredir.TypeStopInterruptReceiving:
		s.mu.Lock()
		s.intrOn[m.Hdr[0]] = m.Type == usbredir.TypeStartInterruptReceiving
		s.mu.Unlock()
		s.cond.Broadcast()
		if err := s.c.SendStatus(usbredir.TypeInterruptReceivingStatus, m.ID, usbredir.StatusSuccess, m.Hdr[0]); err != nil {
			return err
		}
		if m.Type == usbredir.TypeStartInterruptReceiving {
			return s.flushHeld(m.Hdr[0])
		}
	case usbredir.TypeCancelDataPacket:
		return s.cancel(m.ID)
	case usbredir.TypeDeviceDisconnectAck:
		s.mu.Lock()
		if s.ackCh != nil {
			close(s.ackCh)
			s.ackCh = nil
		}
		s.mu.Unlock()
	case usbredir.TypeControlPacket:
		return s.control(m)
	case usbredir.TypeBulkPacket:
		return s.bulk(m)
	default:
		s.logf("usbdev: ignoring %s (type %d, %d bytes)", usbredir.TypeName(m.Type), m.Type, len(m.Hdr)+len(m.Data))
	}
	return nil
}

func (s *Session) setConfiguration(m *usbredir.Msg) error {
	v := m.Hdr[0]
	status := uint8(usbredir.StatusSuccess)
	if v > 1 {
		status = usbredir.StatusStall
	} else {
		s.configVal = v
		for _, f := range activeInterfaces(s.m.Function()) {
			s.setAlt(f.Number, 0)
		}
	}
	return s.c.SendStatus(usbredir.TypeConfigurationStatus, m.ID, status, s.configVal)
}

func (s *Session) setAlt(iface, alt uint8) {
	s.mu.Lock()
	s.alts[iface] = alt
	s.mu.Unlock()
	s.m.SetAlt(iface, alt)
}

func (s *Session) cancel(id uint64) error {
	s.mu.Lock()
	for ep, q := range s.inQ {
		for i, r := range q {
			if r.id == id {
				s.inQ[ep] = append(q[:i:i], q[i+1:]...)
				s.stats.Cancelled++
				s.mu.Unlock()
				return s.c.SendBulk(id, ep, usbredir.StatusCancelled, 0, nil)
			}
		}
	}
	s.mu.Unlock()
	return nil // answered already, or an OUT transfer the worker will answer
}

func (s *Session) bulk(m *usbredir.Msg) error {
	b := usbredir.ParseBulk(m.Hdr)
	if b.Endpoint&0x80 == 0 {
		s.outCh <- outReq{id: m.ID, ep: b.Endpoint, data: m.Data}
		return nil
	}
	s.mu.Lock()
	s.inQ[b.Endpoint] = append(s.inQ[b.Endpoint], inReq{id: m.ID, length: b.Length})
	s.stats.InRequestMax = max(s.stats.InRequestMax, uint64(b.Length))
	if s.inOwed[b.Endpoint] > 0 {
		s.inOwed[b.Endpoint]--
	}
	s.mu.Unlock()
	s.cond.Broadcast()
	return nil
}

func (s *Session) fail(what string, err error) {
	if err != nil {
		s.logf("usbdev: %s: %v", what, err)
		s.c.Close()
	}
}

// String describes the session for logs.
func (s *Session) String() string { return fmt.Sprintf("usbdev %s", s.m.Name()) }
