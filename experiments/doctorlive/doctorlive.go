// SPDX-License-Identifier: Apache-2.0

// Package doctorlive recomputes docs/results.md's "doctor on live hosts"
// tables from the reports doctor wrote: data/hostlab/{before,after}.json
// (doctor-hostlab.sh) and data/vm-usb-nic/{stock,ours}/doctor.json and
// doctor-result.json (doctor --from the guest's snapshot, and --result its
// bench run).
package doctorlive

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/doctor"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "doctorlive", Tables: tables})
}

// The states and module sets, as the plan names them.
var (
	hostStates = []struct{ file, label string }{
		{"before.json", "GRO off, RPS off, all on CPU0"},
		{"after.json", "GRO on, RPS on CPU1 (fixed by hand)"},
	}
	vmModules = []struct{ dir, label string }{
		{"stock", "stock"},
		{"ours", "kernel/usbnet"},
	}
)

func load(path string) (*doctor.Report, error) {
	var r doctor.Report
	if err := kit.ReadJSON(path, &r); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(r.Schema, "wirespeed.doctor/") {
		return nil, fmt.Errorf("%s: schema %q, not a doctor report", path, r.Schema)
	}
	return &r, nil
}

var irqCounts = regexp.MustCompile(`^devices\[[^]]+\]\.irqs\[(\d+)\]\.counts$`)

// findings lists a report's findings as "`id` (severity)"; with deltas, the
// IRQ finding says what the interrupt counters did during the run.
func findings(r *doctor.Report, deltas bool) string {
	var out []string
	for _, f := range r.Findings {
		s := fmt.Sprintf("`%s` (%s", f.ID, f.Severity)
		if deltas {
			for _, e := range f.Evidence {
				if m := irqCounts.FindStringSubmatch(e.Field); m != nil && e.Source == "delta" {
					s += fmt.Sprintf(", IRQ %s: %s during the run", m[1], strings.Replace(e.Value, " on CPU", " interrupts on CPU", 1))
				}
			}
		}
		out = append(out, s+")")
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func tables(dir string) (map[string]string, error) {
	var host [][]string
	for _, s := range hostStates {
		r, err := load(filepath.Join(dir, "data", "hostlab", s.file))
		if err != nil {
			return nil, err
		}
		var shares []string
		for _, x := range r.Source.NetRXShare {
			shares = append(shares, fmt.Sprintf("%.0f%%", 100*x))
		}
		host = append(host, []string{s.label, findings(r, false), strings.Join(shares, " / ")})
	}
	var vm [][]string
	for _, m := range vmModules {
		snap, err := load(filepath.Join(dir, "data", "vm-usb-nic", m.dir, "doctor.json"))
		if err != nil {
			return nil, err
		}
		res, err := load(filepath.Join(dir, "data", "vm-usb-nic", m.dir, "doctor-result.json"))
		if err != nil {
			return nil, err
		}
		vm = append(vm, []string{m.label, findings(snap, false), findings(res, true)})
	}
	return map[string]string{
		"hostlab":    kit.Table([]string{"state", "findings", "NET_RX share CPU0 / CPU1"}, host),
		"vm-usb-nic": kit.Table([]string{"modules", "doctor (snapshot)", "doctor --result (bench run)"}, vm),
	}, nil
}
