// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

func (s *Session) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// inCredit is how many bulk IN answers of an endpoint may be out before
// the host asks again. A driver with many small receive URBs in flight
// (rndis_host: about 220 of 2 KB at SuperSpeed) would otherwise have them
// all completed at once, and QEMU's xHCI, whose event ring holds 256
// events, drops the events past a full ring (a real controller stops
// until there is room): the driver then never sees those URBs complete
// ("ERROR unknown event type 37", "not part of TD") and receives nothing
// more. Each new request stands for one completion the host has taken -
// but the guest's xhci-hcd tells the controller what it took (ERDP) only
// every 128 events or at the end of its handler, so the room QEMU sees
// lags: 64 still overflowed on 6.12 (receive stopped), 16 did not.
const inCredit = 16

// inPump answers the bulk IN requests of ep in order: it waits for a
// request, asks the model for a transfer that fits it (the model waits
// for frames: the request is held until the device has data), and sends
// it. A transfer built for a request cancelled meanwhile is kept for the
// next one. With a burst (Batch.Transfers) it builds that many transfers
// for the requests waiting before it answers any, then answers them back
// to back, so that the host's driver finds them completed together (one
// NAPI poll takes several); a burst the frames do not fill within
// Batch.Wait of its first transfer goes out as it is.
func (s *Session) inPump(ep uint8) {
	var ready [][]byte
	var deadline chan struct{} // closed Batch.Wait after a burst's first transfer
	for {
		s.mu.Lock()
		for (len(s.inQ[ep]) <= len(ready) || s.inOwed[ep]+len(ready) >= inCredit) && !s.closed() && len(ready) == 0 {
			s.cond.Wait()
		}
		if s.closed() {
			s.mu.Unlock()
			return
		}
		more := len(s.inQ[ep]) > len(ready) && s.inOwed[ep]+len(ready) < inCredit
		var limit int
		var data []byte
		if more {
			limit = int(s.inQ[ep][len(ready)].length)
			data = s.carry[ep]
			s.carry[ep] = nil
		}
		s.mu.Unlock()
		if more && (data == nil || len(data) > limit) {
			s.noteRXWaiting()
			data = s.m.BulkIn(ep, limit, s.burstDone(len(ready) > 0, deadline))
		}
		if data != nil {
			if len(ready) == 0 && s.burst.Transfers > 1 {
				dl := make(chan struct{})
				time.AfterFunc(s.burst.Wait, func() { close(dl) })
				deadline = dl
			}
			ready = append(ready, data)
		} else if s.closed() {
			return
		}
		if data != nil && len(ready) < s.burst.Transfers {
			continue
		}
		for _, d := range ready {
			s.answerIn(ep, d)
		}
		ready, deadline = nil, nil
	}
}

// rxWaiter is a model that says how many frames it holds for the host.
type rxWaiter interface{ rxWaiting() int }

// noteRXWaiting samples the model's RX FIFO before a transfer is built:
// a queue there is time every frame waits in the device (in the lab, the
// host side of the link), which a probe's RTT counts as well.
func (s *Session) noteRXWaiting() {
	w, ok := s.m.(rxWaiter)
	if !ok {
		return
	}
	n := uint64(w.rxWaiting())
	s.mu.Lock()
	s.stats.RXWaitingSum += n
	s.stats.RXWaitingSamples++
	s.stats.RXWaitingMax = max(s.stats.RXWaitingMax, n)
	s.mu.Unlock()
}

// burstDone is what a transfer of a burst waits for frames until: the
// session's end, and for the burst's later transfers its deadline.
func (s *Session) burstDone(later bool, deadline chan struct{}) <-chan struct{} {
	if !later || deadline == nil {
		return s.done
	}
	c := make(chan struct{})
	go func() {
		select {
		case <-deadline:
		case <-s.done:
		}
		close(c)
	}()
	return c
}

// answerIn sends one transfer to the oldest request of ep - stalled or
// held as the hostile mode says - or keeps it for the next request when
// the oldest is gone or too short.
func (s *Session) answerIn(ep uint8, data []byte) {
	status := uint8(usbredir.StatusSuccess)
	if s.faults != nil {
		var delay time.Duration
		status, delay = s.faults.onIn()
		if delay > 0 {
			time.Sleep(delay)
		}
	}
	s.mu.Lock()
	if len(s.inQ[ep]) == 0 || !s.attached || len(data) > int(s.inQ[ep][0].length) {
		s.carry[ep] = data
		s.mu.Unlock()
		return
	}
	req := s.inQ[ep][0]
	waiting := uint64(len(s.inQ[ep]))
	s.inQ[ep] = s.inQ[ep][1:]
	if status == usbredir.StatusStall {
		s.carry[ep] = data // a stalled transfer moves nothing
		s.stats.Stalled++
		data = nil
	} else {
		s.stats.InTransfers++
		s.stats.InBytes += uint64(len(data))
		s.stats.InWaitingSum += waiting
		s.stats.InWaitingMax = max(s.stats.InWaitingMax, waiting)
	}
	s.inOwed[ep]++
	s.mu.Unlock()
	s.fail("bulk IN answer", s.c.SendBulk(req.id, ep, status, uint32(len(data)), data))
}

// outWorker gives the model the host's bulk OUT transfers in order and
// answers each once the model took it; the hostile mode's slow OUT holds
// a transfer (and those behind it) first.
func (s *Session) outWorker() {
	for {
		select {
		case r := <-s.outCh:
			if d := s.faults.onOut(); d > 0 {
				s.mu.Lock()
				s.stats.OutHeld++
				s.stats.OutHeldNs += uint64(d)
				s.mu.Unlock()
				select {
				case <-time.After(d):
				case <-s.done:
					return
				}
			}
			s.m.BulkOut(r.ep, r.data)
			s.mu.Lock()
			s.stats.OutTransfers++
			s.stats.OutBytes += uint64(len(r.data))
			s.mu.Unlock()
			s.fail("bulk OUT answer", s.c.SendBulk(r.id, r.ep, usbredir.StatusSuccess, uint32(len(r.data)), nil))
		case <-s.done:
			return
		}
	}
}

// interruptForwarder sends the model's notifications to an interrupt
// endpoint QEMU receives on, and holds the latest few until it does.
func (s *Session) interruptForwarder() {
	for {
		select {
		case it := <-s.m.Interrupts():
			s.mu.Lock()
			on := s.intrOn[it.Endpoint] && s.attached
			if !on {
				s.intrHeld = append(s.intrHeld, it)
				if len(s.intrHeld) > 8 {
					s.intrHeld = s.intrHeld[len(s.intrHeld)-8:]
				}
			} else {
				s.stats.Interrupts++
			}
			s.mu.Unlock()
			if on {
				s.fail("interrupt", s.c.SendInterrupt(0, it.Endpoint, usbredir.StatusSuccess, it.Data))
			}
		case <-s.done:
			return
		}
	}
}

// flushHeld sends what was held for ep, once QEMU receives on it.
func (s *Session) flushHeld(ep uint8) error {
	s.mu.Lock()
	var send, keep []Interrupt
	for _, it := range s.intrHeld {
		if it.Endpoint == ep {
			send = append(send, it)
		} else {
			keep = append(keep, it)
		}
	}
	s.intrHeld = keep
	s.stats.Interrupts += uint64(len(send))
	s.mu.Unlock()
	for _, it := range send {
		if err := s.c.SendInterrupt(0, it.Endpoint, usbredir.StatusSuccess, it.Data); err != nil {
			return err
		}
	}
	return nil
}

// control answers a control request: standard ones here, class and
// vendor ones by the model.
func (s *Session) control(m *usbredir.Msg) error {
	r := usbredir.ParseControl(m.Hdr)
	s.mu.Lock()
	s.stats.Controls++
	s.mu.Unlock()
	var resp []byte
	var ok bool
	if r.RequestType&typeMask == 0 {
		resp, ok = s.standard(r)
	} else {
		resp, ok = s.m.Control(r, m.Data)
	}
	if !ok {
		return s.c.SendControl(m.ID, r, usbredir.StatusStall, nil)
	}
	if r.In() && len(resp) > int(r.Length) {
		resp = resp[:r.Length]
	}
	return s.c.SendControl(m.ID, r, usbredir.StatusSuccess, resp)
}

func (s *Session) standard(r usbredir.Control) ([]byte, bool) {
	switch r.Request {
	case reqGetDescriptor:
		return s.descriptor(uint8(r.Value>>8), uint8(r.Value))
	case reqGetStatus:
		if r.RequestType&recipientMask == 0 {
			return []byte{1, 0}, true // self-powered
		}
		return []byte{0, 0}, true
	case reqClearFeature, reqSetFeature, reqSetSel, reqSetIsochDelay:
		return nil, true // halts clear, link power states and exit latencies are taken
	}
	return nil, false
}

func (s *Session) descriptor(typ, index uint8) ([]byte, bool) {
	switch typ {
	case dtDevice:
		return deviceDescriptor(s.m.Info()), true
	case dtConfig:
		return configDescriptor(s.m.Function()), index == 0
	case dtBOS:
		return bosDescriptor(), true
	case dtString:
		i := s.m.Info()
		strs := append([]string{i.Manufacturer, i.Product, i.Serial}, s.m.ExtraStrings()...)
		switch {
		case index == 0:
			return langIDs, true
		case int(index) <= len(strs):
			return stringDescriptor(strs[index-1]), true
		}
	}
	return nil, false
}
