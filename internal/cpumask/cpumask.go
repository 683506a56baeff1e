// SPDX-License-Identifier: Apache-2.0

// Package cpumask converts between the kernel's two spellings of a CPU set:
// hex masks ("00000000,0000000f" in smp_affinity, rps_cpus) and lists
// ("0-3,5" in smp_affinity_list, Cpus_allowed_list, cpu/online).
package cpumask

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPU numbers the parsers accept: Linux's NR_CPUS is
// at most 8192. Input from snapshots and results is not trusted; "0-999999999"
// must not allocate a billion entries.
const MaxCPUs = 8192

// ParseMask parses a hex CPU mask as the kernel prints it: 32-bit groups
// separated by commas, most significant first. An all-zero mask yields an
// empty, non-nil slice.
func ParseMask(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, fmt.Errorf("cpumask: empty mask")
	}
	groups := strings.Split(s, ",")
	if len(groups) > MaxCPUs/32 {
		return nil, fmt.Errorf("cpumask: bad mask %q: more than %d CPUs", s, MaxCPUs)
	}
	cpus := []int{}
	for gi := len(groups) - 1; gi >= 0; gi-- {
		g := groups[gi]
		if g == "" || len(g) > 8 {
			return nil, fmt.Errorf("cpumask: bad mask %q: groups are 1-8 hex digits separated by commas", s)
		}
		v, err := strconv.ParseUint(g, 16, 32)
		if err != nil {
			return nil, fmt.Errorf("cpumask: bad mask %q: %q is not hex", s, g)
		}
		base := (len(groups) - 1 - gi) * 32
		for v != 0 {
			b := bits.TrailingZeros64(v)
			cpus = append(cpus, base+b)
			v &^= 1 << uint(b)
		}
	}
	sort.Ints(cpus)
	return cpus, nil
}

// FormatMask renders cpus as a kernel-style hex mask with 32-bit groups.
func FormatMask(cpus []int) string {
	max := 0
	for _, c := range cpus {
		if c > max {
			max = c
		}
	}
	groups := make([]uint32, max/32+1)
	for _, c := range cpus {
		groups[c/32] |= 1 << uint(c%32)
	}
	var parts []string
	for i := len(groups) - 1; i >= 0; i-- {
		if i == len(groups)-1 {
			parts = append(parts, strconv.FormatUint(uint64(groups[i]), 16))
		} else {
			parts = append(parts, fmt.Sprintf("%08x", groups[i]))
		}
	}
	return strings.Join(parts, ",")
}

// ParseList parses a CPU list such as "0-3,5,8-9". An empty string yields
// an empty, non-nil slice.
func ParseList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	cpus := []int{}
	if s == "" {
		return cpus, nil
	}
	// A CPU named twice ("0,0", "0-3,2") counts once: the kernel's lists
	// never repeat one, and repeats must not multiply what "0-8191,0-8191,..."
	// allocates.
	var seen [MaxCPUs]bool
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpumask: bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpumask: bad CPU list %q", s)
			}
		}
		if b >= MaxCPUs {
			return nil, fmt.Errorf("cpumask: bad CPU list %q: CPU numbers end below %d", s, MaxCPUs)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	sort.Ints(cpus)
	return cpus, nil
}

// FormatList renders cpus as a compact list ("0-3,5"); empty gives "".
func FormatList(cpus []int) string {
	c := append([]int(nil), cpus...)
	sort.Ints(c)
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(c[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
