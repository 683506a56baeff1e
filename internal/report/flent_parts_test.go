// SPDX-License-Identifier: Apache-2.0

package report

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// TestSumAvg: at each grid point the sum and mean of the per-stream
// series that have a value there; other series are not counted; nil
// where no stream has a value.
func TestSumAvg(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	results := map[string][]*float64{
		"TCP upload::1":  {v(10), v(20), nil},
		"TCP upload::2":  {v(30), nil, nil},
		"Ping (ms) ICMP": {v(1000), v(1000), v(1000)},
	}
	sum, avg := sumAvg(results, "TCP upload::", 3)
	if *sum[0] != 40 || *avg[0] != 20 || *sum[1] != 20 || *avg[1] != 20 || sum[2] != nil || avg[2] != nil {
		t.Errorf("sum %v avg %v", sum, avg)
	}
}

// TestICMPSeries: the answered replies of the ICMP probe, at absolute
// times; a run without one says so, one whose replies were all lost has
// the series, empty.
func TestICMPSeries(t *testing.T) {
	abs := func(s float64) float64 { return 1000 + s }
	run := &bench.Run{Probes: []bench.ProbeSeries{
		{Kind: "udp", RTTs: []bench.RTT{{T: 1, Ms: 9}}},
		{Kind: "icmp", RTTs: []bench.RTT{{T: 1, Ms: 2}, {T: 2, Lost: true}, {T: 3, Ms: 4}}},
	}}
	pts, ok := icmpSeries(run, abs)
	if !ok || len(pts) != 2 || pts[0] != (flentRawV{1001, 2}) || pts[1] != (flentRawV{1003, 4}) {
		t.Errorf("icmp series %v, %v", pts, ok)
	}
	if _, ok := icmpSeries(&bench.Run{Probes: run.Probes[:1]}, abs); ok {
		t.Error("a UDP probe taken for ICMP")
	}
	if pts, ok := icmpSeries(&bench.Run{Probes: []bench.ProbeSeries{{Kind: "icmp", RTTs: []bench.RTT{{T: 1, Lost: true}}}}}, abs); !ok || len(pts) != 0 {
		t.Errorf("all lost: %v, %v", pts, ok)
	}
}

// TestPhaseRTTs: a series' round trips of one kind split into the idle
// phase (before 0 on the load clock) and the load after the omitted
// seconds; the omitted ones, other kinds and other variants are left out;
// lost probes are counted per phase.
func TestPhaseRTTs(t *testing.T) {
	r := &bench.Result{Settings: bench.Settings{IdleS: 2, OmitS: 1, DurationS: 4}, Runs: []bench.Run{
		{Variant: "a", Probes: []bench.ProbeSeries{
			{Kind: "icmp", RTTs: []bench.RTT{{T: -1.5, Ms: 1}, {T: -0.5, Lost: true}, {T: 0.5, Ms: 50}, {T: 1.5, Ms: 7}, {T: 2, Lost: true}, {T: 5.5, Ms: 9}}},
			{Kind: "udp", RTTs: []bench.RTT{{T: 1.5, Ms: 3}}},
		}},
		{Variant: "b", Probes: []bench.ProbeSeries{{Kind: "icmp", RTTs: []bench.RTT{{T: 1.5, Ms: 99}}}}},
	}}
	idle, load, lostI, lostL := phaseRTTs(series{in: Input{R: r}, variant: "a"}, "icmp")
	if len(idle) != 1 || idle[0] != 1 || len(load) != 1 || load[0] != 7 || lostI != 1 || lostL != 1 {
		t.Errorf("idle %v load %v lost %d/%d", idle, load, lostI, lostL)
	}
}
