// SPDX-License-Identifier: Apache-2.0

package bench

import "testing"

func oneRun(variant string, mbit float64) *Result {
	return &Result{
		Variants: []Variant{{Name: variant}},
		Runs:     []Run{{Variant: variant, Metrics: map[string]float64{"receive_mbit": mbit}}},
	}
}

// Separate runs merged per side compare like one interleaved bench: the
// i-th file of A pairs with the i-th of B.
func TestMergeSidesPairs(t *testing.T) {
	a := []*Result{oneRun("gadget", 100), oneRun("gadget", 200), oneRun("gadget", 150)}
	b := []*Result{oneRun("gadget", 160), oneRun("gadget", 310), oneRun("gadget", 230)}
	m := MergeSides(a, b, "", "")
	if len(m.Runs) != 6 || len(m.Summary) != 2 || m.Summary[1].Runs != 3 {
		t.Fatalf("merged %d runs, summary %+v", len(m.Runs), m.Summary)
	}
	ds := Compare(m, "A", m, "B")
	if len(ds) != 1 || ds[0].Paired == nil {
		t.Fatalf("deltas %+v", ds)
	}
	// Per-pair gains 60, 110, 80: paired mean difference 83.3.
	if d := ds[0].Paired.Diff; d < 83.3 || d > 83.4 {
		t.Errorf("paired difference %v, want 83.33", d)
	}
	if !ds[0].Significant || ds[0].Better != "b" {
		t.Errorf("a consistent +50%% should be significant for B: %+v", ds[0])
	}
	// A variant filter that matches nothing leaves that side empty.
	if ds := Compare(MergeSides(a, b, "other", ""), "A", MergeSides(a, b, "other", ""), "B"); len(ds) != 0 {
		t.Errorf("filtered side still compared: %+v", ds)
	}
}
