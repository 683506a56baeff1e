// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"strings"
	"testing"
)

// TestHistLabel: the four shapes of a work-per-poll bin's label.
func TestHistLabel(t *testing.T) {
	for b, want := range map[HistBin]string{{0, 0, 1}: "0", {65, 0, 1}: ">64", {7, 7, 1}: "7", {1, 4, 1}: "1-4"} {
		if got := histLabel(b); got != want {
			t.Errorf("%v: %q, want %q", b, got, want)
		}
	}
}

// TestWriteIRQsTopTen: ten IRQs are printed, the rest counted.
func TestWriteIRQsTopTen(t *testing.T) {
	var irqs []IRQ
	for i := range 12 {
		irqs = append(irqs, IRQ{IRQ: 30 + i, Count: uint64(100 - i), PerCPU: []uint64{1, 2}, Name: "eth0"})
	}
	var b strings.Builder
	writeIRQs(&b, irqs)
	out := b.String()
	if !strings.Contains(out, "\n39 ") || strings.Contains(out, "\n40 ") || !strings.Contains(out, "(2 more)") || !strings.Contains(out, " 1/2 ") {
		t.Errorf("top ten:\n%s", out)
	}
	b.Reset()
	writeIRQs(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no IRQs printed %q", b.String())
	}
}
