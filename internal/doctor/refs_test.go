// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

var seeRe = regexp.MustCompile(`see finding ([a-z0-9-]+)`)

// allFixtures lists every snapshot fixture.
func allFixtures(t *testing.T) []string {
	ents, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".tar.gz"); ok {
			out = append(out, n)
		}
	}
	return out
}

// checkRefs: every "see finding X" in a finding names a finding of the
// same report about the same device, and no unresolved reference leaks.
func checkRefs(t *testing.T, what string, rep *Report) {
	t.Helper()
	for _, f := range rep.Findings {
		texts := append([]string{f.Title, f.Why, f.Verify}, f.Unchecked...)
		if f.Fix != nil {
			texts = append(append(texts, f.Fix.Caveat), f.Fix.Commands...)
		}
		for _, s := range texts {
			if strings.Contains(s, refOpen) {
				t.Errorf("%s: %s: unresolved reference in %q", what, f.ID, s)
			}
			for _, m := range seeRe.FindAllStringSubmatch(s, -1) {
				found := false
				for _, g := range rep.Findings {
					if g.ID == m[1] && (len(f.Devices) == 0 || sharesDevice(f, g)) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: %s points at finding %s, which the report does not hold for %v", what, f.ID, m[1], f.Devices)
				}
			}
		}
	}
}

func sharesDevice(a, b Finding) bool {
	for _, x := range a.Devices {
		for _, y := range b.Devices {
			if x == y {
				return true
			}
		}
	}
	return false
}

// TestReferencesResolve: on every fixture, whole and device by device, no
// finding points at one the report lacks.
func TestReferencesResolve(t *testing.T) {
	for _, name := range allFixtures(t) {
		s := fixture(t, name)
		rep, err := Diagnose(&Input{Snap: s})
		if err != nil {
			t.Fatal(err)
		}
		checkRefs(t, name, rep)
		for _, d := range s.Devices {
			rep, err := Diagnose(&Input{Snap: fixture(t, name), Ifaces: []string{d.Name}})
			if err != nil {
				t.Fatal(err)
			}
			checkRefs(t, name+"/"+d.Name, rep)
		}
	}
}

// The tethered phone, RPS off: with the xHCI interrupt busy the usbnet
// finding points at irq-stuck-rps-off for the mask; with too few
// interrupts to judge (irq-stuck-rps-off silent) it says where the mask
// goes itself.
func TestUsbnetRPSReference(t *testing.T) {
	got, rep := findings(t, "phone-cdc-ncm", nil)
	checkRefs(t, "busy", rep)
	if !strings.Contains(fixText(got["usbnet-no-gro"]), "see finding irq-stuck-rps-off") {
		t.Errorf("busy: want the reference:\n%s", fixText(got["usbnet-no-gro"]))
	}
	got, rep = findings(t, "phone-cdc-ncm", func(in *Input) {
		d := dev(t, in.Snap, "usb0")
		for i := range d.IRQs {
			d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{12, 0, 0, 0}, 12
		}
	})
	checkRefs(t, "quiet", rep)
	if _, ok := got["irq-stuck-rps-off"]; ok {
		t.Fatal("irq-stuck-rps-off fired on 12 interrupts")
	}
	txt := fixText(got["usbnet-no-gro"])
	if strings.Contains(txt, "see finding") || !strings.Contains(txt, "/sys/class/net/usb0/queues/rx-*/rps_cpus") {
		t.Errorf("quiet: want the mask's place, no reference:\n%s", txt)
	}
}
