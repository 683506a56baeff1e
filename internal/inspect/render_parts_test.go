// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strings"
	"testing"
)

// TestOffloadItems: on/off with [fixed], n/a for a feature the kernel does
// not know, ? for one that could not be read, unknown state as ?.
func TestOffloadItems(t *testing.T) {
	on, off := true, false
	got := strings.Join(offloadItems([]Offload{
		{Name: "rx-gro", Active: &on},
		{Name: "tso", Active: &off, Fixed: true},
		{Name: "rx-gro-list", Error: "not known to this kernel"},
		{Name: "gso", Error: "operation not permitted"},
		{Name: "lro"},
	}), "|")
	if want := "rx-gro on|tso off [fixed]|rx-gro-list n/a|gso ?|lro ?"; got != want {
		t.Errorf("offloads %q, want %q", got, want)
	}
}

// TestLinkLine: unknown speed, carrier and numbers read as ?, a missing state or qdisc as -.
func TestLinkLine(t *testing.T) {
	speed, carrier := 1000, true
	if got, want := linkLine(Link{Operstate: "up", SpeedMbps: &speed, Duplex: "full", Carrier: &carrier, Qdisc: "fq_codel"}),
		"up, carrier yes, 1000 Mbit/s full, mtu ?, txqueuelen ?, qdisc fq_codel"; got != want {
		t.Errorf("link %q, want %q", got, want)
	}
	if got, want := linkLine(Link{}), "-, carrier ?, speed ?, mtu ?, txqueuelen ?, qdisc -"; got != want {
		t.Errorf("empty link %q, want %q", got, want)
	}
}

// TestNamesCannotDriveTheTerminal (issue 40): a device named with an
// escape sequence (legal in the kernel) is printed with the escape
// written out, not sent to the terminal.
func TestNamesCannotDriveTheTerminal(t *testing.T) {
	var b strings.Builder
	s := &Snapshot{Devices: []Device{{Name: "e\x1b[31mx", Ifindex: 3}}}
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\r") || !strings.Contains(b.String(), `e\x1b[31mx`) {
		t.Errorf("a device name with an escape:\n%q", b.String())
	}
}
