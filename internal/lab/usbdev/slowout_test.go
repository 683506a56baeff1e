// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"reflect"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// TestSlowOutHoldsOnlyOut: a bulk OUT transfer the slow-OUT fault holds
// is answered after its hold, and those behind it after it; meanwhile
// control requests, bulk IN and the interrupt endpoint are answered -
// what leaves a driver's TX URBs in flight while it stops the device.
func TestSlowOutHoldsOnlyOut(t *testing.T) {
	const hold = 1500 * time.Millisecond
	f := &Faults{Seed: 1, SlowOutPerMille: 1000, MaxDelay: hold}
	if d := (&Faults{Seed: 1, SlowOutPerMille: 1000, MaxDelay: hold}).onOut(); d < 400*time.Millisecond {
		t.Fatalf("seed 1 holds the first transfer %s: the test wants one of 400 ms or more", d)
	}
	l := newMemLink()
	m := NewAQC111(l, 0, testMAC, nil)
	h := startAQ(t, m, f)
	sent := time.Now()
	h.id++
	out := h.id
	if err := h.c.SendBulkOut(out, 0x03, aqTx(tcpFrame([6]byte{2, 0, 0, 0, 0, 9}, 1, 100, true), 0, 0)); err != nil {
		t.Fatal(err)
	}
	h.id++
	if err := h.c.SendBulkOut(h.id, 0x03, aqTx(tcpFrame([6]byte{2, 0, 0, 0, 0, 9}, 2, 100, true), 0, 0)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// the control pipe: the driver's aqc111_stop while the OUT is held
	if r := h.read(0x22, 2); r[1]&0x01 == 0 {
		t.Errorf("medium mode % x: receive enable lost", r)
	}
	h.phyOps(1<<19 | 0x0f | 1<<18)
	if w := h.status(false); w&0x8000 != 0 {
		t.Errorf("status %#x: the interrupt endpoint did not say link down while the OUT was held", w)
	}
	h.phyOps(1<<19 | 0x0f)
	h.status(true)
	h.linkReset()
	l.toDev <- tcpFrame(testMAC, 3, 200, true)
	if b, agg := h.bulkIn(0x82, 16384); b.Status != 0 || len(agg) == 0 {
		t.Fatalf("bulk IN while the OUT is held: status %d, %d bytes", b.Status, len(agg))
	}
	if time.Since(sent) >= hold/4 {
		t.Logf("the requests above took %s", time.Since(sent))
	}
	first := h.next(usbredir.TypeBulkPacket)
	second := h.next(usbredir.TypeBulkPacket)
	if first.ID != out || second.ID != out+1 || time.Since(sent) < 400*time.Millisecond {
		t.Fatalf("OUT answers %d then %d after %s: want %d first, after its hold", first.ID, second.ID, time.Since(sent), out)
	}
	if st := h.s.Stats(); st.OutHeld != 2 || st.OutHeldNs == 0 || st.OutTransfers != 2 {
		t.Errorf("stats %+v: want both transfers held and counted", st)
	}
}

// TestSlowOutRepeatable: the same seed holds the same transfers for the
// same time, another seed others; none without the fault.
func TestSlowOutRepeatable(t *testing.T) {
	draws := func(f *Faults) []time.Duration {
		var d []time.Duration
		for i := 0; i < 2000; i++ {
			d = append(d, f.onOut())
		}
		return d
	}
	mk := func(seed int64) *Faults {
		return &Faults{Seed: seed, SlowOutPerMille: 20, MaxDelay: time.Second, StallPerMille: 500}
	}
	a, c := mk(5), mk(5)
	for i := 0; i < 100; i++ {
		c.onIn() // IN's draws in between do not move OUT's
	}
	da, dc, db := draws(a), draws(c), draws(mk(6))
	if !reflect.DeepEqual(da, dc) {
		t.Fatalf("seed 5 twice held different transfers")
	}
	if reflect.DeepEqual(da, db) {
		t.Errorf("seeds 5 and 6 held the same transfers")
	}
	held := 0
	for _, d := range da {
		if d > 0 {
			held++
			if d > time.Second {
				t.Errorf("held %s, past --max-delay", d)
			}
		}
	}
	if held < 20 || held > 70 {
		t.Errorf("20 per 1000 of 2000: %d held", held)
	}
	for _, f := range []*Faults{nil, {Seed: 5, MaxDelay: time.Second}, {Seed: 5, SlowOutPerMille: 1000}} {
		if d := f.onOut(); d != 0 {
			t.Errorf("%+v holds %s", f, d)
		}
	}
}
