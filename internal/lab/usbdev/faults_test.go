// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// TestMutationsAreMalformed: every hostile aggregate is one a careful
// host must refuse, or (out-of-order) one whose datagrams are not the
// ones sent in the order sent.
func TestMutationsAreMalformed(t *testing.T) {
	frames := [][]byte{frame(1, 300), frame(2, 700), frame(3, 90)}
	for _, m := range ntbMutations {
		b, lay := buildNTB16(7, ndpSigNCM, frames, 4)
		if got, err := strictNTB16(b); err != nil || !reflect.DeepEqual(got, frames) {
			t.Fatalf("the well-formed NTB does not parse: %v", err)
		}
		bad := m.apply(b, lay)
		got, err := strictNTB16(bad)
		if err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: the NTB is still well-formed", m.name)
		}
	}
}

// TestHostileRepeatable: the same seed malforms the same aggregates the
// same way, each kind is counted, and a malformed aggregate still goes
// out (the host has to cope with it).
func TestHostileRepeatable(t *testing.T) {
	checkHostileRepeatable(t, func(seed int64) map[string]uint64 {
		l := newMemLink()
		d := newNTBDev(l, 0, &Faults{Seed: seed, BadPerMille: 500})
		done := make(chan struct{})
		defer close(done)
		for i := 0; i < 400; i++ {
			l.toDev <- frame(i, 200)
			if b := d.bulkIn(32768, done); len(b) == 0 {
				t.Fatal("no aggregate")
			}
		}
		return d.cnt.snapshot()
	}, len(ntbMutations)/2)
}

// checkHostileRepeatable: run's counts for seeds 3, 3 and 4, each of 400
// aggregates with 500 of 1000 malformed - the same seed malforms the same
// aggregates the same way, another seed others; about half are
// malformed, in at least minKinds kinds; every aggregate still goes out.
func checkHostileRepeatable(t *testing.T, run func(seed int64) map[string]uint64, minKinds int) {
	t.Helper()
	a, b, c := run(3), run(3), run(4)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("seed 3 twice: %v vs %v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 3 and 4 malformed the same aggregates: %v", a)
	}
	var bad uint64
	kinds := 0
	for k, v := range a {
		if strings.HasPrefix(k, "hostile_") {
			bad, kinds = bad+v, kinds+1
		}
	}
	if bad < 150 || bad > 250 || kinds < minKinds || a["aggregates_to_host"] != 400 {
		t.Errorf("500 per 1000 of 400 aggregates: %d malformed in %d kinds, want %d or more (%v)", bad, kinds, minKinds, a)
	}
}

// hostileRun sends model m, on l, 400 frames (frame i made by mk), taking
// a transfer of at most max bytes from ep after each; it returns m's
// counts.
func hostileRun(t *testing.T, m Model, l *memLink, ep uint8, max int, mk func(i int) []byte) map[string]uint64 {
	t.Helper()
	done := make(chan struct{})
	defer close(done)
	for i := 0; i < 400; i++ {
		l.toDev <- mk(i)
		if b := m.BulkIn(ep, max, done); len(b) == 0 {
			t.Fatal("no transfer")
		}
	}
	return m.Counters()
}

// TestCancelStallReplug: a held request the host cancels is answered as
// cancelled; a stalled answer moves nothing and the data goes with the
// next request; an unplug waits for QEMU's acknowledgement and plugs
// in again with the announcement.
func TestCancelStallReplug(t *testing.T) {
	l := newMemLink()
	f := &Faults{Seed: 1, StallPerMille: 1000}
	h := startHost(t, NewNCM(l, 0, testMAC, nil), f)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.request(usbredir.TypeSetAltSetting, usbredir.TypeAltSettingStatus, 1, 1)
	h.id++
	held := h.id
	if err := h.c.SendBulkRequest(held, epBulkIn, 32768); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := h.c.SendRequest(usbredir.TypeCancelDataPacket, held); err != nil {
		t.Fatal(err)
	}
	if m := h.next(usbredir.TypeBulkPacket); m.ID != held || usbredir.ParseBulk(m.Hdr).Status != usbredir.StatusCancelled {
		t.Fatalf("cancel answered id %d status %d", m.ID, usbredir.ParseBulk(m.Hdr).Status)
	}
	l.toDev <- frame(9, 400)
	if b, data := h.bulkIn(epBulkIn, 32768); b.Status != usbredir.StatusStall || len(data) != 0 {
		t.Fatalf("stall: status %d, %d bytes", b.Status, len(data))
	}
	f.mu.Lock()
	f.StallPerMille = 0
	f.mu.Unlock()
	if _, data := h.bulkIn(epBulkIn, 32768); !bytes.Contains(data, frame(9, 400)) {
		t.Fatalf("after the stall the frame is lost (%d bytes)", len(data))
	}
	errc := make(chan error, 1)
	go func() { errc <- h.s.Replug(10 * time.Millisecond) }()
	h.next(usbredir.TypeDeviceDisconnect)
	if err := h.c.SendRequest(usbredir.TypeDeviceDisconnectAck, 0); err != nil {
		t.Fatal(err)
	}
	h.plugged()
	if err := <-errc; err != nil || h.s.Stats().Replugs != 1 {
		t.Fatalf("re-plug: %v, %d", err, h.s.Stats().Replugs)
	}
}

// TestReplugWaitsForOpen: --replug-every unplugs only while the host's
// driver has the interface open (a bulk IN request waiting), never while
// it is still configuring the device - QEMU's xHCI would leave each
// control transfer of a probe cut by an unplug to its timeout.
func TestReplugWaitsForOpen(t *testing.T) {
	l := newMemLink()
	f := &Faults{Seed: 1, ReplugEvery: 5 * time.Millisecond}
	h := startHost(t, NewNCM(l, 0, testMAC, nil), f)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.request(usbredir.TypeSetAltSetting, usbredir.TypeAltSettingStatus, 1, 1)
	// a probe's worth of control requests, lasting many periods
	for i := 0; i < 40; i++ {
		if st, _ := h.control(0x80, reqGetDescriptor, uint16(dtDevice)<<8, 0, 18, nil); st != usbredir.StatusSuccess {
			t.Fatalf("descriptor read %d: status %d", i, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
	h.id++
	if err := h.c.SendBulkRequest(h.id, epBulkIn, 32768); err != nil {
		t.Fatal(err)
	}
	h.next(usbredir.TypeDeviceDisconnect)
	if err := h.c.SendRequest(usbredir.TypeDeviceDisconnectAck, 0); err != nil {
		t.Fatal(err)
	}
	h.plugged()
	if st := h.s.Stats(); st.Replugs != 1 || st.ReplugWaits == 0 {
		t.Fatalf("replugs %d, waits for the open interface %d", st.Replugs, st.ReplugWaits)
	}
}

// TestRXWaiting: the session samples the device's RX FIFO before it
// builds a transfer - frames the link delivered while the host had no
// request out count as waiting - and every model can be sampled.
func TestRXWaiting(t *testing.T) {
	for _, name := range Models {
		m, err := NewModel(Options{Model: name}, newMemLink())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(rxWaiter); !ok {
			t.Errorf("model %s does not say how many frames it holds (rxWaiting)", name)
		}
	}
	l := newMemLink()
	h := startHost(t, NewNCM(l, 0, testMAC, nil), nil)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	h.request(usbredir.TypeSetAltSetting, usbredir.TypeAltSettingStatus, 1, 1)
	for i := 0; i < 8; i++ {
		l.toDev <- frame(i, 200)
	}
	for deadline := time.Now().Add(5 * time.Second); len(l.toDev) > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the last one from the link into the FIFO
	if b, _ := h.bulkIn(epBulkIn, 32768); b.Status != usbredir.StatusSuccess {
		t.Fatalf("bulk IN status %d", b.Status)
	}
	if st := h.s.Stats(); st.RXWaitingSamples == 0 || st.RXWaitingMax < 8 || st.RXWaitingSum < 8 {
		t.Fatalf("rx waiting: %d samples, max %d, sum %d; want 8 frames seen waiting", st.RXWaitingSamples, st.RXWaitingMax, st.RXWaitingSum)
	}
}
