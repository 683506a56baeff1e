// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// diagnose is doctor.Diagnose; tests stand in rules of their own (doctor's
// registry is private to it).
var diagnose = doctor.Diagnose

// doctorCollector exports doctor's findings over this reading's snapshot
// and the latest observation interval. The report is kept until inspect
// takes a full snapshot anew or a new observation interval ends: between
// those its input has not changed but for counters, and doctor's rules
// read rates from observations.
type doctorCollector struct {
	rep *doctor.Report // nil: none kept (none yet, or the last failed)
	gen uint64         // the snapshot generation rep is for
	obs *observe.Observation
}

var (
	mFinding = gaugeMetric("doctor_finding", "A finding of wirespeed doctor; 1 while it holds.", "id", "device", "severity")
	mRules   = gaugeMetric("doctor_rules", "Doctor rules that ran.")
)

func (*doctorCollector) metrics() []*metric { return []*metric{mFinding, mRules} }

// update exports one gauge per finding and device (a finding on no device
// has device="").
func (c *doctorCollector) update(ch chan<- prometheus.Metric, r *reading) error {
	if r.snap == nil {
		return errNoSnapshot
	}
	if c.rep == nil || c.gen != r.gen || c.obs != r.obs {
		rep, err := diagnose(&doctor.Input{Snap: r.snap, Obs: r.obs})
		if err != nil {
			c.rep = nil
			return err
		}
		c.rep, c.gen, c.obs = rep, r.gen, r.obs
	}
	mRules.send(ch, float64(len(c.rep.Rules)))
	seen := map[[3]string]bool{}
	for _, f := range c.rep.Findings {
		devs := f.Devices
		if len(devs) == 0 {
			devs = []string{""}
		}
		for _, d := range devs {
			k := [3]string{f.ID, d, string(f.Severity)}
			if seen[k] {
				continue
			}
			seen[k] = true
			mFinding.send(ch, 1, k[:]...)
		}
	}
	return nil
}
