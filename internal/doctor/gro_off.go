// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// Rule gro-off: a device with a NAPI has GRO turned off.

func init() {
	register(Rule{
		ID:       "gro-off",
		Summary:  "GRO off on a device with a NAPI",
		Findings: []string{"gro-off"},
		Check:    checkGROOff,
	})
}

func checkGROOff(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if d.Datapath.OwnNAPI.State != datapath.Yes {
			continue
		}
		on, fixed := offload(d, "rx-gro")
		if on != nil && !*on && !fixed {
			a := ethtoolAction(d.Name, "rx-gro", "on")
			out = append(out, Finding{
				ID: "gro-off", Severity: Warn, Impact: 60, Devices: []string{d.Name},
				Title: fmt.Sprintf("%s has a NAPI but GRO is off", d.Name),
				Evidence: []Evidence{
					snapEv(devField(d, "offloads[rx-gro].active"), "false"),
					snapEv(devField(d, "datapath.own_napi"), "%s (%s)", d.Datapath.OwnNAPI.State, d.Datapath.OwnNAPI.Evidence),
				},
				Why: "without GRO every TCP segment is a separate trip through the stack; with it NAPI merges ~30 segments into one " +
					"(measured here: 1.77 M segments into 60 k skbs on a veth receiver, 8.0 -> 10.9 Gbit/s).",
				Fix:    &Fix{Commands: []string{a.Command}, Actions: []Action{a}},
				Verify: verifyRX(d.Name),
			})
		}
	}
	return out, nil
}
