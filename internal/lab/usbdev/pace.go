// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"sync"
	"time"
)

// ethOverhead are the bytes an Ethernet frame takes on the wire beyond
// what a tap carries: preamble and start delimiter (8), FCS (4) and the
// inter-frame gap (12).
const ethOverhead = 24

// pacer holds a direction of the link to its rate: taking n bytes waits
// until the link would have carried them. It lends no more than burst of
// credit, so an idle link does not bank time.
type pacer struct {
	mu    sync.Mutex
	mbit  int
	next  time.Time
	burst time.Duration
}

func newPacer(mbit int) *pacer { return &pacer{mbit: mbit, burst: 2 * time.Millisecond} }

// take accounts frames of the given lengths and waits for the link.
func (p *pacer) take(lens ...int) {
	if p == nil || p.mbit <= 0 {
		return
	}
	bits := 0
	for _, l := range lens {
		bits += 8 * (l + ethOverhead)
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now.Add(-p.burst)) {
		p.next = now.Add(-p.burst)
	}
	p.next = p.next.Add(time.Duration(bits) * time.Microsecond / time.Duration(p.mbit))
	wait := time.Until(p.next)
	p.mu.Unlock()
	if wait > 0 {
		time.Sleep(wait)
	}
}

// gather is how every model fills a bulk IN transfer: the frame left
// over from the last transfer first, then it waits until take has
// accepted a frame (got says so; false when done closes first or the
// link ends), then it offers every frame already waiting - the
// aggregation a device does while the host's next request is on its
// way. A frame take refuses (it does not fit) waits in *pending for the
// next transfer; take returns true for a frame it drops.
func gather(rx <-chan []byte, pending *[]byte, take func([]byte) bool, got func() bool, done <-chan struct{}) bool {
	offer := func(f []byte) bool {
		if !take(f) {
			*pending = f
			return false
		}
		return true
	}
	if p := *pending; p != nil {
		*pending = nil
		offer(p)
	}
	for !got() {
		select {
		case f, ok := <-rx:
			if !ok {
				<-done
				return false
			}
			offer(f)
		case <-done:
			return false
		}
	}
	for {
		select {
		case f, ok := <-rx:
			if !ok || !offer(f) {
				return true
			}
		default:
			return true
		}
	}
}

// gatherFrames is gather for a model whose aggregate only has to fit:
// it waits for the first frame (always taken), then takes the frames
// already waiting while fits says the lengths so far still fit what the
// host set. ok is false when done closed first.
func gatherFrames(rx <-chan []byte, pending *[]byte, fits func(lens []int) bool, done <-chan struct{}) (frames [][]byte, lens []int, ok bool) {
	take := func(f []byte) bool {
		if len(frames) > 0 && !fits(append(lens, len(f))) {
			return false
		}
		frames, lens = append(frames, f), append(lens, len(f))
		return true
	}
	ok = gather(rx, pending, take, func() bool { return len(frames) > 0 }, done)
	return frames, lens, ok
}
