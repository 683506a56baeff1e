// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// trickle sends n frames of size bytes to l, one every gap.
func trickle(l *memLink, n, size int, gap time.Duration) {
	go func() {
		for i := 0; i < n; i++ {
			time.Sleep(gap)
			l.toDev <- frame(i, size)
		}
	}()
}

// TestBatchHoldsTransfers: with frames arriving 15 ms apart, a model
// without a batch sends each alone; with --batch 4 every transfer of the
// models waits for 4 (gather: rndis, ncm and mbim; gatherFrames: eem,
// ax88179 and aqc111); a batch the link cannot fill goes out
// when its wait has passed; a frame that does not fit ends it early.
func TestBatchHoldsTransfers(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	models := map[string]func(*memLink) Model{
		"rndis": func(l *memLink) Model { r := NewRNDIS(l, 0, testMAC, nil); r.dataOn.Store(true); return r },
		"eem":   func(l *memLink) Model { return NewEEM(l, 0, testMAC, nil) },
		"ncm":   func(l *memLink) Model { return NewNCM(l, 0, testMAC, nil) },
	}
	for name, mk := range models {
		for _, b := range []Batch{{}, {Frames: 4, Wait: 150 * time.Millisecond}} {
			l := newMemLink()
			m := mk(l)
			m.(interface{ setBatch(Batch) }).setBatch(b)
			trickle(l, 8, 200, 15*time.Millisecond)
			var sizes []int
			for n := 0; n < 8; {
				before := m.Counters()["frames_to_host"]
				if m.BulkIn(epBulkIn, 16384, done) == nil {
					t.Fatalf("%s: no transfer", name)
				}
				got := int(m.Counters()["frames_to_host"] - before)
				sizes, n = append(sizes, got), n+got
			}
			want := []int{1, 1, 1, 1, 1, 1, 1, 1}
			if b.Frames == 4 {
				want = []int{4, 4}
			}
			if len(sizes) != len(want) {
				t.Errorf("%s with batch %d: frames per transfer %v, want %v", name, b.Frames, sizes, want)
			}
		}
	}
	l := newMemLink()
	r := NewRNDIS(l, 0, testMAC, nil)
	r.dataOn.Store(true)
	r.setBatch(Batch{Frames: 8, Wait: 60 * time.Millisecond})
	trickle(l, 2, 200, time.Millisecond)
	start := time.Now()
	r.BulkIn(epBulkIn, 2048, done)
	if d, c := time.Since(start), r.Counters(); d < 60*time.Millisecond || d > time.Second || c["frames_to_host"] != 2 {
		t.Errorf("a batch of 8 with 2 frames coming: sent after %s with %d frames, want 2 after the 60ms wait", d, c["frames_to_host"])
	}
	trickle(l, 3, 900, time.Millisecond)
	r.BulkIn(epBulkIn, 2048, done)
	if c := r.Counters(); c["frames_to_host"] != 4 {
		t.Errorf("900-byte frames in 2048-byte transfers with a batch of 8: %d frames, want 2 (the third does not fit)", c["frames_to_host"]-2)
	}
}

// TestBatchCheck: a batch the command line refuses, and what it says.
func TestBatchCheck(t *testing.T) {
	for _, c := range []struct {
		b    Batch
		want string
	}{
		{Batch{}, ""},
		{Batch{Frames: 1}, ""},
		{Batch{Frames: 6, Wait: 20 * time.Millisecond}, ""},
		{Batch{Frames: -1}, "--batch -1"},
		{Batch{Frames: 65, Wait: time.Millisecond}, "want 0-64"},
		{Batch{Frames: 4}, "needs --batch-wait"},
		{Batch{Transfers: 4}, "needs --batch-wait"},
		{Batch{Transfers: 17, Wait: time.Millisecond}, "--burst 17"},
		{Batch{Transfers: 4, Wait: 20 * time.Millisecond}, ""},
		{Batch{Wait: time.Millisecond}, "without --batch"},
		{Batch{Frames: 4, Wait: -time.Millisecond}, "cannot be negative"},
		{Batch{Frames: 4, Wait: time.Second}, "at most 200ms"},
	} {
		err := c.b.Check()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.b, err, c.want)
		}
	}
}

// TestBurstAnswersTogether: with --burst 3 the device answers nothing
// until it has built three transfers for the requests waiting, then the
// three back to back; a burst the frames do not fill goes out when its
// wait has passed (a burst short of requests, at once). Without a burst each is answered as it is built.
func TestBurstAnswersTogether(t *testing.T) {
	for _, b := range []Batch{{Transfers: 3, Wait: 300 * time.Millisecond}, {}} {
		l := newMemLink()
		h := startHostWith(t, NewEEM(l, 0, testMAC, nil), nil, func(s *Session) { s.Burst(b) })
		h.plugged()
		h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
		for i := 0; i < 6; i++ { // a burst takes only requests waiting: the guest keeps 16
			h.id++
			if err := h.c.SendBulkRequest(h.id, epBulkIn, 1524); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		trickle(l, 3, 200, 40*time.Millisecond)
		var at []time.Duration
		for i := 0; i < 3; i++ {
			h.next(usbredir.TypeBulkPacket)
			at = append(at, time.Since(start))
		}
		if b.Transfers == 3 && (at[0] < 100*time.Millisecond || at[2]-at[0] > 20*time.Millisecond) {
			t.Errorf("burst of 3: answers at %v, want all three after the third frame (120ms), together", at)
		}
		if b.Transfers == 0 && at[1]-at[0] < 20*time.Millisecond {
			t.Errorf("no burst: answers at %v, want each as its frame came (40ms apart)", at)
		}
		start = time.Now()
		l.toDev <- frame(9, 100)
		h.next(usbredir.TypeBulkPacket)
		if d := time.Since(start); b.Transfers == 3 && (d < 300*time.Millisecond || d > 2*time.Second) {
			t.Errorf("a burst of one frame answered after %s, want its 300ms wait", d)
		}
	}
}
