// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"sync"
	"sync/atomic"
)

// ntbDev is the data path NCM and MBIM share: frames from the link
// aggregated into NTB16s for bulk IN, NTB16s from bulk OUT taken apart
// onto the link, both at the link's rate.
type ntbDev struct {
	batching
	link    Link
	ndpSig  uint32
	inMax   int // dwNtbInMaxSize the device offers
	outMax  int
	div     int
	rx      chan []byte
	pending []byte // a frame that did not fit the last NTB
	inPace  *pacer
	outPace *pacer
	faults  *Faults
	// unwrap/wrap turn a link frame into a datagram and back (MBIM's raw
	// IP); nil for Ethernet.
	toDatagram func([]byte) []byte
	toFrame    func([]byte) []byte

	mu          sync.Mutex
	hostInMax   int // what the host set (SET_NTB_INPUT_SIZE)
	hostInDgram int
	seq         uint16
	cnt         counters
}

type counters struct {
	framesIn, framesOut, ntbsIn, ntbsOut, badOut, linkErrors atomic.Uint64
	bad                                                      sync.Map // kind -> *atomic.Uint64
}

func (c *counters) badKind(kind string) {
	v, _ := c.bad.LoadOrStore(kind, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

func (c *counters) snapshot() map[string]uint64 {
	m := map[string]uint64{"frames_to_host": c.framesIn.Load(), "frames_from_host": c.framesOut.Load(),
		"aggregates_to_host": c.ntbsIn.Load(), "aggregates_from_host": c.ntbsOut.Load(),
		"bad_aggregates_from_host": c.badOut.Load(), "link_errors": c.linkErrors.Load()}
	c.bad.Range(func(k, v any) bool {
		m["hostile_"+k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return m
}

// rxWaiting is how many frames the device holds for the host.
func (d *ntbDev) rxWaiting() int { return len(d.rx) }

func newNTBDev(l Link, mbit int, f *Faults) *ntbDev {
	d := &ntbDev{link: l, ndpSig: ndpSigNCM, inMax: 32768, outMax: 32768, div: 4, rx: make(chan []byte, 1024),
		inPace: newPacer(mbit), outPace: newPacer(mbit), faults: f}
	d.hostInMax = d.inMax
	go d.readLink()
	return d
}

// readLink feeds frames from the link to the bulk IN side; when that side
// falls behind, the link's own queue (the tap's) backs up and drops, as a
// switch port in front of a slower NIC does.
func (d *ntbDev) readLink() {
	for {
		f, err := d.link.ReadFrame()
		if err != nil {
			close(d.rx)
			return
		}
		d.rx <- f
	}
}

func (d *ntbDev) reset() {
	d.mu.Lock()
	d.hostInMax, d.hostInDgram = d.inMax, 0
	d.mu.Unlock()
}

// bulkIn waits for at least one frame, then takes every frame already
// waiting that fits the block: the aggregation a device does while the
// host's next request is on its way.
func (d *ntbDev) bulkIn(limit int, done <-chan struct{}) []byte {
	d.mu.Lock()
	limit = min(limit, d.hostInMax)
	maxDg := d.hostInDgram
	d.mu.Unlock()
	var dgs [][]byte
	var lens []int
	take := func(f []byte) bool {
		dg := f
		if d.toDatagram != nil {
			if dg = d.toDatagram(f); dg == nil {
				return true // not for this device (say, an IPv6 neighbour solicitation on a raw-IP link)
			}
		}
		if len(dgs) > 0 && (ntbSize(append(lens, len(dg)), d.div) > limit || (maxDg > 0 && len(dgs) >= maxDg)) {
			return false
		}
		dgs, lens = append(dgs, dg), append(lens, len(f))
		return true
	}
	if !gather(d.rx, &d.pending, d.batch, take, func() bool { return len(dgs) > 0 }, done) {
		return nil
	}
	d.inPace.take(lens...)
	d.mu.Lock()
	d.seq++
	seq := d.seq
	d.mu.Unlock()
	b, lay := buildNTB16(seq, d.ndpSig, dgs, d.div)
	d.cnt.ntbsIn.Add(1)
	d.cnt.framesIn.Add(uint64(len(dgs)))
	if kind, ok := d.faults.bad(len(ntbMutations)); ok {
		m := ntbMutations[kind]
		b = m.apply(b, lay)
		d.cnt.badKind(m.name)
	}
	return b
}

// bulkOut takes an NTB the host sent apart onto the link.
func (d *ntbDev) bulkOut(b []byte) {
	dgs, _, err := parseNTB16(b)
	d.cnt.ntbsOut.Add(1)
	if err != nil {
		d.cnt.badOut.Add(1)
		return
	}
	lens := make([]int, len(dgs))
	for i, dg := range dgs {
		f := dg
		if d.toFrame != nil {
			f = d.toFrame(dg)
		}
		lens[i] = len(f)
		if d.link.WriteFrame(f) != nil {
			d.cnt.linkErrors.Add(1)
		}
	}
	d.cnt.framesOut.Add(uint64(len(dgs)))
	d.outPace.take(lens...)
}
