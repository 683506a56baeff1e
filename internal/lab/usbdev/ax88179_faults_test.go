// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"reflect"
	"testing"
)

// TestAX88179MutationsAreMalformed: every hostile aggregate is one the
// strict parser refuses, or whose frames are not the ones sent.
func TestAX88179MutationsAreMalformed(t *testing.T) {
	frames := [][]byte{frame(1, 300), frame(2, 1514), frame(3, 61)}
	flags := []uint32{0, axRxTypeTCP, 0}
	for _, m := range axMutations {
		b, lay := buildAX(frames, flags, 2)
		if got, _, err := strictAX(b); err != nil || !reflect.DeepEqual(got, frames) {
			t.Fatalf("the well-formed aggregate does not parse: %v", err)
		}
		got, _, err := strictAX(m.apply(b, lay))
		if err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: the aggregate is still well-formed", m.name)
		}
	}
}

// TestAX88179HostileRepeatable: the same seed malforms the same
// aggregates the same way, each kind is counted, and a malformed
// aggregate still goes out.
func TestAX88179HostileRepeatable(t *testing.T) {
	checkHostileRepeatable(t, func(seed int64) map[string]uint64 {
		l := newMemLink()
		a := NewAX88179(l, 0, testMAC, &Faults{Seed: seed, BadPerMille: 500})
		a.mu.Lock()
		a.linkUp = true
		copy(a.regs[axRxCtl:], []byte{0x88, 0x02})
		copy(a.regs[axMediumStatus:], []byte{0x33, 0x01})
		a.mu.Unlock()
		return hostileRun(t, a, l, axEPBulkIn, 20480, func(i int) []byte { return tcpFrame(testMAC, uint32(i), 200, true) })
	}, len(axMutations)/2)
}
