// SPDX-License-Identifier: Apache-2.0

package vmcrashrate

import (
	"math"
	"testing"
)

// Exact binomial intervals from their definition (Clopper and Pearson 1934):
// for 1 of 5 the bounds are 1-(0.975)^(1/5) ... and the root of
// P(X <= 1) = 0.025; for 0 of n the upper bound is 1-0.025^(1/n).
func TestClopperPearson(t *testing.T) {
	lo, hi := ClopperPearson(1, 5)
	if want := 1 - math.Pow(0.975, 1.0/5); math.Abs(lo-want) > 1e-9 {
		t.Errorf("1 of 5: lower %v, want %v", lo, want)
	}
	// P(X <= 1 | n=5, p=hi) must be 0.025
	if c := math.Pow(1-hi, 5) + 5*hi*math.Pow(1-hi, 4); math.Abs(c-0.025) > 1e-9 {
		t.Errorf("1 of 5: upper %v gives P(X<=1) %v, want 0.025", hi, c)
	}
	lo, hi = ClopperPearson(0, 22)
	if want := 1 - math.Pow(0.025, 1.0/22); lo != 0 || math.Abs(hi-want) > 1e-9 {
		t.Errorf("0 of 22: %v-%v, want 0-%v", lo, hi, want)
	}
	if lo, hi = ClopperPearson(4, 4); hi != 1 || math.Abs(lo-math.Pow(0.025, 1.0/4)) > 1e-9 {
		t.Errorf("4 of 4: %v-%v", lo, hi)
	}
}
