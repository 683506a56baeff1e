// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// TestInCredit: with many IN requests held and frames for all of them,
// the device answers inCredit of them and then one per new request - the
// host's event ring never has more completions than that to take.
func TestInCredit(t *testing.T) {
	l := newMemLink()
	r := NewRNDIS(l, 0, testMAC, nil)
	r.dataOn.Store(true)
	h := startHost(t, r, nil)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	const held = inCredit + 40
	for i := 0; i < held; i++ {
		h.id++
		if err := h.c.SendBulkRequest(h.id, epBulkIn, 2048); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // all held before any answer: none counts as the host asking again
	for i := 0; i < held+1; i++ {
		l.toDev <- frame(i, 1500) // one per 2048-byte transfer
	}
	answers := func(wait time.Duration) int {
		n := 0
		for deadline := time.After(wait); ; {
			select {
			case m := <-h.msgs:
				if m.Type == usbredir.TypeBulkPacket {
					n++
				}
			case <-deadline:
				return n
			}
		}
	}
	if n := answers(300 * time.Millisecond); n != inCredit {
		t.Fatalf("%d requests held, frames for all: %d answered, want %d", held, n, inCredit)
	}
	h.id++
	if err := h.c.SendBulkRequest(h.id, epBulkIn, 2048); err != nil {
		t.Fatal(err)
	}
	if n := answers(200 * time.Millisecond); n != 1 {
		t.Errorf("a new request let %d more answers out, want 1", n)
	}
}
