// SPDX-License-Identifier: Apache-2.0

package cpumask

import (
	"slices"
	"testing"
)

// ok reports whether cpus is what a parser may return: sorted, distinct,
// each in [0, MaxCPUs).
func ok(cpus []int) bool {
	for i, c := range cpus {
		if c < 0 || c >= MaxCPUs || (i > 0 && cpus[i-1] >= c) {
			return false
		}
	}
	return true
}

// FuzzParseMask: masks come from sysfs, snapshots and users' --mask flags.
// Accepted masks give sorted CPUs below MaxCPUs that FormatMask writes back
// to the same set.
func FuzzParseMask(f *testing.F) {
	for _, s := range []string{"3", "ff", "00000000,00000001", "0x10", "f0f0f0f0,0f0f0f0f,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseMask(s)
		if err != nil {
			return
		}
		if !ok(cpus) {
			t.Fatalf("%q -> %v", s, cpus)
		}
		back, err := ParseMask(FormatMask(cpus))
		if err != nil || !slices.Equal(back, cpus) {
			t.Fatalf("%q -> %v -> %q -> %v %v", s, cpus, FormatMask(cpus), back, err)
		}
	})
}

// FuzzParseList: CPU lists ("0-3,8") from sysfs and users; the same rules,
// and FormatList round-trips.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "0-3", "0-1,4-5", "1,3,5", "0-8191"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseList(s)
		if err != nil {
			return
		}
		if !ok(cpus) {
			t.Fatalf("%q -> %v", s, cpus)
		}
		back, err := ParseList(FormatList(cpus))
		if len(cpus) > 0 && (err != nil || !slices.Equal(back, cpus)) {
			t.Fatalf("%q -> %v -> %q -> %v %v", s, cpus, FormatList(cpus), back, err)
		}
	})
}
