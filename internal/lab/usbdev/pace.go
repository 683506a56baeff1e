// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
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

// Batch holds a bulk IN transfer back until it carries Frames frames or
// Wait has passed since its first one: at low rates frames otherwise go
// out one per transfer as they come, and a driver that splits a transfer
// into clones of its URB skb (rndis_host, cdc_eem) hands GRO several
// segments of one flow in one transfer only by chance. Frames <= 1 is
// off: the device sends what is waiting when the host asks.
type Batch struct {
	Frames int           `json:"frames,omitempty"`
	Wait   time.Duration `json:"wait_ns,omitempty"`
	// Transfers > 1 answers the host's bulk IN requests that many at a
	// time, back to back (the session's part, transfer.go): its driver
	// then finds several completed at once and takes them in one NAPI
	// poll, where GRO holds a flow across transfers.
	Transfers int `json:"transfers,omitempty"`
}

// MaxBatch is the most frames a batch waits for: a transfer of any
// model holds fewer of the smallest frames than that.
const MaxBatch = 64

// Check says what is wrong with a batch, for the command line.
func (b Batch) Check() error {
	switch {
	case b.Frames < 0 || b.Frames > MaxBatch:
		return fmt.Errorf("--batch %d: want 0-%d frames per transfer (0 or 1: no batching)", b.Frames, MaxBatch)
	case b.Wait < 0:
		return fmt.Errorf("--batch-wait %s cannot be negative", b.Wait)
	case b.Transfers < 0 || b.Transfers > inCredit:
		return fmt.Errorf("--burst %d: want 0-%d transfers answered together (the answers the host may have out)", b.Transfers, inCredit)
	case (b.Frames > 1 || b.Transfers > 1) && b.Wait <= 0:
		return fmt.Errorf("--batch %d --burst %d needs --batch-wait DUR (how long a transfer or a burst may wait for its frames, at most %s)", b.Frames, b.Transfers, maxBatchWait)
	case b.Frames <= 1 && b.Transfers <= 1 && b.Wait != 0:
		return fmt.Errorf("--batch-wait %s without --batch N or --burst N (2 or more) does nothing", b.Wait)
	case b.Wait > maxBatchWait:
		return fmt.Errorf("--batch-wait %s: at most %s (the host's TCP would time out waiting)", b.Wait, maxBatchWait)
	}
	return nil
}

// maxBatchWait bounds the hold: longer would stall a flow's few last
// segments past TCP's delayed-ACK and retransmission timers.
const maxBatchWait = 200 * time.Millisecond

func (b Batch) on() bool { return b.Frames > 1 && b.Wait > 0 }

// batching is what a model embeds to take a Batch (NewModel sets it
// before the first transfer).
type batching struct{ batch Batch }

func (b *batching) setBatch(x Batch) { b.batch = x }

// gather is how every model fills a bulk IN transfer: the frame left
// over from the last transfer first, then it waits until take has
// accepted a frame (got says so; false when done closes first or the
// link ends), then it offers every frame already waiting - the
// aggregation a device does while the host's next request is on its
// way - and, with a batch on, goes on waiting for frames until the
// transfer has b.Frames or b.Wait has passed since the first. A frame
// take refuses (it does not fit) waits in *pending for the next
// transfer and ends this one; take returns true for a frame it drops.
func gather(rx <-chan []byte, pending *[]byte, b Batch, take func([]byte) bool, got func() bool, done <-chan struct{}) bool {
	n := 0
	offer := func(f []byte) bool {
		if !take(f) {
			*pending = f
			return false
		}
		n++
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
	if b.on() && n < b.Frames {
		return gatherBatch(rx, b, offer, &n, done)
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

// gatherBatch waits for the rest of a batch: until *n frames were taken,
// one did not fit, the link ended, done closed or the wait passed.
func gatherBatch(rx <-chan []byte, b Batch, offer func([]byte) bool, n *int, done <-chan struct{}) bool {
	t := time.NewTimer(b.Wait)
	defer t.Stop()
	for *n < b.Frames {
		select {
		case f, ok := <-rx:
			if !ok || !offer(f) {
				return true
			}
		case <-t.C:
			return true
		case <-done:
			return true
		}
	}
	return true
}

// gatherFrames is gather for a model whose aggregate only has to fit:
// it waits for the first frame (always taken), then takes the frames
// already waiting (or, batching, coming) while fits says the lengths so
// far still fit what the host set. ok is false when done closed first.
func gatherFrames(rx <-chan []byte, pending *[]byte, b Batch, fits func(lens []int) bool, done <-chan struct{}) (frames [][]byte, lens []int, ok bool) {
	take := func(f []byte) bool {
		if len(frames) > 0 && !fits(append(lens, len(f))) {
			return false
		}
		frames, lens = append(frames, f), append(lens, len(f))
		return true
	}
	ok = gather(rx, pending, b, take, func() bool { return len(frames) > 0 }, done)
	return frames, lens, ok
}
