// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// A variant whose runs saw different RX paths lists each once, in the
// order seen; a path from another version is shown as it was written.
func TestRXPathsAcrossRuns(t *testing.T) {
	for _, c := range []struct {
		second string // the second gro run's rx_path for ws-rcv
		want   string
	}{
		{"NAPI + GRO", "NAPI + GRO"},
		{"NAPI, no GRO", "NAPI + GRO / NAPI, no GRO"},
		{"NAPI + GRO + XDP", "NAPI + GRO / NAPI + GRO + XDP"},
	} {
		r := loadFixture(t)
		seen := 0
		for i := range r.Runs {
			run := &r.Runs[i]
			if run.Variant != "gro" || len(run.Observe) == 0 {
				continue
			}
			seen++
			var o observe.Observation
			if err := json.Unmarshal(run.Observe, &o); err != nil {
				t.Fatal(err)
			}
			for j := range o.Devices {
				if o.Devices[j].Name != "ws-rcv" {
					continue
				}
				if o.Devices[j].RXPath != observe.PathNAPIGRO {
					t.Fatalf("fixture: ws-rcv's path %q", o.Devices[j].RXPath)
				}
				if seen == 2 {
					o.Devices[j].RXPath = datapath.ParsePath(c.second)
				}
			}
			b, err := json.Marshal(&o)
			if err != nil {
				t.Fatal(err)
			}
			run.Observe = b
		}
		if seen < 2 {
			t.Fatalf("fixture: %d observed gro runs", seen)
		}
		rep, err := Build([]Input{{Name: "lab.json", R: r}})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, row := range rep.RXPaths {
			if row.Device == "ws-rcv" && row.Variant == "gro" {
				got = row.RXPath
			}
		}
		if got != c.want {
			t.Errorf("second run %q: row %q, want %q", c.second, got, c.want)
		}
	}
}
