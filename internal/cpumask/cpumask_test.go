// SPDX-License-Identifier: Apache-2.0

package cpumask

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseMask(t *testing.T) {
	cases := []struct {
		in   string
		want []int
	}{
		{"f", []int{0, 1, 2, 3}},
		{"00000000,0000000f", []int{0, 1, 2, 3}},
		{"1,00000001", []int{0, 32}},
		{"0", []int{}},
		{"4", []int{2}},
	}
	for _, c := range cases {
		got, err := ParseMask(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseMask(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "xyz", "123456789", "f,,f"} {
		if _, err := ParseMask(bad); err == nil {
			t.Errorf("ParseMask(%q) accepted a bad mask", bad)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, cpus := range [][]int{{0}, {0, 1, 2, 3}, {1, 33}, {0, 2, 3, 4, 9}} {
		m := FormatMask(cpus)
		back, err := ParseMask(m)
		if err != nil || !reflect.DeepEqual(back, cpus) {
			t.Errorf("mask round trip %v -> %q -> %v (%v)", cpus, m, back, err)
		}
		l := FormatList(cpus)
		back, err = ParseList(l)
		if err != nil || !reflect.DeepEqual(back, cpus) {
			t.Errorf("list round trip %v -> %q -> %v (%v)", cpus, l, back, err)
		}
	}
	if got := FormatList([]int{0, 1, 2, 3, 5, 8, 9}); got != "0-3,5,8-9" {
		t.Errorf("FormatList = %q", got)
	}
	if got := FormatMask([]int{1, 33}); got != "2,00000002" {
		t.Errorf("FormatMask = %q", got)
	}
	if _, err := ParseList("3-1"); err == nil {
		t.Error("ParseList accepted a reversed range")
	}
}

// TestBounds: lists and masks from untrusted files cannot ask for more CPUs
// than Linux can have.
func TestBounds(t *testing.T) {
	for _, s := range []string{"0-999999999", "8192", "0-8192"} {
		if _, err := ParseList(s); err == nil {
			t.Errorf("ParseList(%q) accepted", s)
		}
	}
	if c, err := ParseList("8191"); err != nil || len(c) != 1 {
		t.Errorf("ParseList(8191): %v %v", c, err)
	}
	if _, err := ParseMask(strings.Repeat("1,", 256) + "1"); err == nil {
		t.Errorf("a 257-group mask was accepted")
	}
}
