// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"
)

// What the models of vendor-register Ethernet chips share (AX88179,
// AQC111, RTL8153): a MAC that takes frames off the link only while the
// driver has receiving on and its address filter passes them, a link
// status the chip repeats on its interrupt endpoint, and TX offloads
// (TSO, checksums, VLAN tag insertion) done in the device.

// macFilter is a MAC's receive address filter as its registers set it:
// everything, broadcasts, multicasts (a multicast hash is taken as
// passing every group) and frames to node.
type macFilter struct {
	node                           []byte
	promisc, bcast, mcast, unicast bool
}

var broadcastAddr = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func (m macFilter) accepts(f []byte) bool {
	switch {
	case len(f) < 14:
		return false
	case m.promisc:
		return true
	case bytes.Equal(f[:6], broadcastAddr):
		return m.bcast
	case f[0]&1 != 0:
		return m.mcast
	}
	return m.unicast && bytes.Equal(f[:6], m.node)
}

// feedMAC feeds the frames the MAC takes off l, as they arrive, to rx
// (closed when the link ends); drop says, per frame, which count a frame
// the MAC does not take goes to (nil: it takes it).
func feedMAC(l Link, rx chan<- []byte, drop func(f []byte) *atomic.Uint64) {
	for {
		f, err := l.ReadFrame()
		if err != nil {
			close(rx)
			return
		}
		if c := drop(f); c != nil {
			c.Add(1)
			continue
		}
		rx <- f
	}
}

// statusEvery is how often a chip's link status is repeated while the
// link is up.
const statusEvery = time.Second

// repeatStatus repeats the link status every statusEvery, as the chips
// answer their interrupt endpoint's polls with it (far less often here:
// the drivers act only on a change); sendIfUp sends it if the link is up
// and says whether it did. A status the host missed - seen in the lab
// under load: the first one sent, the link reset never run - is made
// good within a second.
func repeatStatus(sendIfUp func() bool, repeats *atomic.Uint64) {
	for range time.Tick(statusEvery) {
		if sendIfUp() {
			repeats.Add(1)
		}
	}
}

// txPath is a device's way from a frame the host sent to the link, with
// the counts of what its offloads did.
type txPath struct {
	link                         Link
	cnt                          *counters
	pace                         *pacer
	tso, segs, csums, vlanTagged *atomic.Uint64
}

// send puts one frame on the link: cut into segments of mss payload bytes
// (0: no TSO), each checksummed as the checksum bits coe say (every
// checksum, for a segmented frame, whatever coe says), tag (4 bytes, or
// nil) inserted after the addresses; counted, then paced.
func (t txPath) send(f []byte, mss int, coe byte, tag []byte) {
	segs := [][]byte{f}
	if mss > 0 {
		if s := tsoSegment(f, mss); s != nil {
			segs = s
			t.tso.Add(1)
			t.segs.Add(uint64(len(s)))
			coe = 0xff
		}
	}
	lens := make([]int, len(segs))
	for i, s := range segs {
		if txChecksum(s, coe) {
			t.csums.Add(1)
		}
		if tag != nil {
			s = append(append(append([]byte(nil), s[:12]...), tag...), s[12:]...)
			t.vlanTagged.Add(1)
		}
		lens[i] = len(s)
		if t.link.WriteFrame(s) != nil {
			t.cnt.linkErrors.Add(1)
		}
	}
	t.cnt.framesOut.Add(uint64(len(segs)))
	t.pace.take(lens...)
}

// addCounts adds a model's own counts to the shared ones in m.
func addCounts(m map[string]uint64, own map[string]*atomic.Uint64) map[string]uint64 {
	for k, v := range own {
		m[k] = v.Load()
	}
	return m
}

// rxWaiting is how many frames the device holds for the host (see
// Session.noteRXWaiting).
func (d *macDev) rxWaiting() int { return len(d.rx) }

// macDev is what a vendor-register model is besides its registers: the
// link and the frames the MAC took off it, the interrupt endpoint's
// messages, the paces, the TX path and the counts.
type macDev struct {
	batching
	link    Link
	mac     [6]byte
	faults  *Faults
	intr    chan Interrupt
	rx      chan []byte
	pending []byte // a frame that did not fit the last aggregate
	inPace  *pacer
	outPace *pacer
	tx      txPath
	mu      sync.Mutex // the model's registers
	cnt     counters
	mc      macCounts
}

// macCounts are what the vendor-register models count besides the
// transfers.
type macCounts struct {
	controls, unknownControls, tsoFrames, tsoSegments, txCsum, vlanTagged, rxCsumGood, rxCsumBad,
	rxFiltered, rxStopped, intrs, statusRepeats atomic.Uint64
}

func (d *macDev) init(l Link, mbit int, mac [6]byte, f *Faults) {
	d.link, d.mac, d.faults = l, mac, f
	d.intr, d.rx = make(chan Interrupt, 16), make(chan []byte, 1024)
	d.inPace, d.outPace = newPacer(mbit), newPacer(mbit)
	d.tx = txPath{link: l, cnt: &d.cnt, pace: d.outPace, tso: &d.mc.tsoFrames, segs: &d.mc.tsoSegments,
		csums: &d.mc.txCsum, vlanTagged: &d.mc.vlanTagged}
}

// ExtraStrings implements Model.
func (d *macDev) ExtraStrings() []string { return nil }

// SetAlt implements Model: one interface, one setting.
func (d *macDev) SetAlt(iface, alt uint8) {}

// Interrupts implements Model.
func (d *macDev) Interrupts() <-chan Interrupt { return d.intr }

// counts are the model's counts, the shared ones with its own (extra).
func (d *macDev) counts(extra map[string]*atomic.Uint64) map[string]uint64 {
	own := map[string]*atomic.Uint64{"vendor_requests": &d.mc.controls,
		"vendor_requests_stalled": &d.mc.unknownControls, "tso_frames_from_host": &d.mc.tsoFrames,
		"tso_segments": &d.mc.tsoSegments, "tx_checksums_filled": &d.mc.txCsum,
		"tx_vlan_tagged": &d.mc.vlanTagged, "rx_checksum_good": &d.mc.rxCsumGood,
		"rx_checksum_bad": &d.mc.rxCsumBad, "rx_filtered": &d.mc.rxFiltered,
		"rx_dropped_stopped": &d.mc.rxStopped, "link_interrupts": &d.mc.intrs, "status_repeats": &d.mc.statusRepeats}
	for k, v := range extra {
		own[k] = v
	}
	return addCounts(d.cnt.snapshot(), own)
}

// checksummed counts a receive checksum verdict (1 good, -1 bad, 0 none
// checked).
func (d *macDev) checksummed(verdict int) {
	switch {
	case verdict > 0:
		d.mc.rxCsumGood.Add(1)
	case verdict < 0:
		d.mc.rxCsumBad.Add(1)
	}
}

// mutation turns a well-formed aggregate, laid out as L says, into one a
// broken or malicious adapter sends: the driver must drop what is wrong
// and never read outside the transfer.
type mutation[L any] struct {
	name  string
	apply func(b []byte, lay L) []byte
}

// sendAggregate counts an aggregate of n frames going to the host and,
// as the hostile mode draws, malforms it with one of muts.
func sendAggregate[L any](d *macDev, n int, muts []mutation[L], b []byte, lay L) []byte {
	d.cnt.ntbsIn.Add(1)
	d.cnt.framesIn.Add(uint64(n))
	if kind, ok := d.faults.bad(len(muts)); ok {
		m := muts[kind]
		b = m.apply(b, lay)
		d.cnt.badKind(m.name)
	}
	return b
}
