// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"
)

// interleaved builds a result with variants a and b, rep i of each next to
// the other; CPU fully busy on 2 CPUs so CPU per Mbit is 2000/Mbit ms.
func interleaved(a, b []float64) *Result {
	r := &Result{Schema: Schema, Variants: []Variant{{Name: "nogro"}, {Name: "gro"}}}
	add := func(v string, xs []float64) {
		for i, x := range xs {
			r.Runs = append(r.Runs, Run{Variant: v, Rep: i + 1,
				Metrics: map[string]float64{"send_mbit": x, "cpu_idle_pct": 0, "icmp_load_p50_ms": 0.5, "icmp_load_p99_ms": 2},
				Load:    &LoadSummary{CPUs: []CPULoad{{CPU: 0}, {CPU: 1}}}})
		}
	}
	add("nogro", a)
	add("gro", b)
	return r
}

func TestHeadlineDecides(t *testing.T) {
	// gro is 1.5x nogro in every pair although the pairs differ a lot:
	// the paired ratio sees through the shared noise.
	r := interleaved([]float64{1000, 2000, 3000}, []float64{1500, 3000, 4500})
	hs := Headlines(r)
	if len(hs) != 2 || hs[0].Base != "" || hs[1].Base != "nogro" {
		t.Fatalf("headlines: %+v", hs)
	}
	h := hs[1]
	if math.Abs(h.Ratio-1.5) > 1e-9 || !h.Significant || h.N != 3 || !h.Paired {
		t.Errorf("ratio %g significant %v n %d", h.Ratio, h.Significant, h.N)
	}
	if want := "gro: +50% throughput vs nogro, significant at n=3 (paired"; !strings.HasPrefix(h.Verdict, want) {
		t.Errorf("verdict %q, want %q...", h.Verdict, want)
	}
	if math.Abs(h.CPUMsPerMbit-2000/3000.0) > 1e-9 || math.Abs(h.BaseCPUMsPerMbit-1) > 1e-9 {
		t.Errorf("cpu ms/Mbit %g (base %g)", h.CPUMsPerMbit, h.BaseCPUMsPerMbit)
	}
	if h.Probe != "icmp" || h.LoadP50Ms != 0.5 || h.LoadP99Ms != 2 {
		t.Errorf("latency %s %g %g", h.Probe, h.LoadP50Ms, h.LoadP99Ms)
	}
	// Unpaired (as two files), the spread between repetitions hides it.
	u := HeadlineOf(r, "nogro", r, "gro", false)
	if u.Significant || u.NeedRepeat == 0 || !strings.Contains(u.Verdict, "not yet significant at n=3; run --repeat") {
		t.Errorf("unpaired: %+v", u)
	}
}

func TestHeadlineUndecided(t *testing.T) {
	// +51% at n=2 with pairs that disagree: not yet; more repetitions
	// would decide if the spread stays.
	r := interleaved([]float64{1000, 1000}, []float64{1300, 1750})
	h := Headlines(r)[1]
	if h.Significant || h.RatioLow >= 1 || h.RatioHigh <= 1 {
		t.Fatalf("interval [%g, %g] significant %v", h.RatioLow, h.RatioHigh, h.Significant)
	}
	if h.NeedRepeat < 3 || h.NeedRepeat > MaxRepeatAdvice {
		t.Errorf("need repeat %d", h.NeedRepeat)
	}
	if !strings.HasPrefix(h.Verdict, "gro: +51% throughput vs nogro, not yet significant at n=2; run --repeat ") {
		t.Errorf("verdict %q", h.Verdict)
	}
	// No difference at all against a noisy base: no advice to repeat.
	r = interleaved([]float64{1000, 1200, 900}, []float64{1010, 1180, 905})
	h = Headlines(r)[1]
	if h.Significant || h.NeedRepeat != -1 || !strings.Contains(h.Verdict, "no throughput difference shown") {
		t.Errorf("no difference: %+v", h)
	}
	// One run each: a ratio, no interval.
	r = interleaved([]float64{1000}, []float64{1200})
	h = Headlines(r)[1]
	if h.RatioHigh != 0 || math.Abs(h.Ratio-1.2) > 1e-9 || !strings.Contains(h.Verdict, "no interval; run --repeat 3") {
		t.Errorf("n=1: %+v", h)
	}
	var b bytes.Buffer
	WriteHeadlines(&b, Headlines(r))
	if !strings.Contains(b.String(), "gro:       1200 Mbit/s = 1.20x nogro;") {
		t.Errorf("text:\n%s", b.String())
	}
	// Rename words the verdict with other names.
	h.Rename("a.json", "b.json")
	if !strings.HasPrefix(h.Verdict, "b.json: +20% throughput vs a.json") {
		t.Errorf("renamed: %q", h.Verdict)
	}
}

// TestBusyCPUsCountsTheRunsCPUs: busy CPUs come from the CPUs the run
// sampled, not from the CPUs this process may run on (runtime.NumCPU
// follows its affinity), and a headline of one run is CPUMsPerMbit of it.
func TestBusyCPUsCountsTheRunsCPUs(t *testing.T) {
	n := runtime.NumCPU() + 3
	run := Run{Variant: "a", Rep: 1, Metrics: map[string]float64{"send_mbit": 400, "cpu_idle_pct": 75},
		Load: &LoadSummary{CPUs: make([]CPULoad, n)}}
	busy, ok := run.BusyCPUs()
	if !ok || math.Abs(busy-float64(n)/4) > 1e-9 {
		t.Fatalf("busy CPUs %g %v, want %g", busy, ok, float64(n)/4)
	}
	want := float64(n) / 4 * 1000 / 400
	if got := CPUMsPerMbit(busy, 400); math.Abs(got-want) > 1e-9 {
		t.Errorf("CPUMsPerMbit %g, want %g", got, want)
	}
	r := &Result{Schema: Schema, Variants: []Variant{{Name: "a"}}, Runs: []Run{run}}
	if h := Headlines(r)[0]; math.Abs(h.CPUMsPerMbit-want) > 1e-9 {
		t.Errorf("headline CPU %g ms/Mbit, want %g", h.CPUMsPerMbit, want)
	}
	if _, ok := (&Run{Metrics: map[string]float64{"cpu_idle_pct": 50}}).BusyCPUs(); ok {
		t.Error("a run without CPU samples has busy CPUs")
	}
	if got := CPUMsPerMbit(1, 0); got != 0 {
		t.Errorf("CPU per Mbit of nothing moved: %g, want 0", got)
	}
}

// TestHeadlineCoV: each variant's runs' spread, stdev/mean, is in its
// headline and its line; one run has none.
func TestHeadlineCoV(t *testing.T) {
	r := interleaved([]float64{900, 1000, 1100}, []float64{2000, 2000, 2000})
	hs := Headlines(r)
	if want := 100.0 / 1000; math.Abs(hs[0].CoV-want) > 1e-9 || hs[0].Runs != 3 {
		t.Errorf("base CoV %g over %d runs, want %g over 3", hs[0].CoV, hs[0].Runs, want)
	}
	if hs[1].CoV != 0 || hs[1].Runs != 3 {
		t.Errorf("steady variant: CoV %g over %d runs, want 0 over 3", hs[1].CoV, hs[1].Runs)
	}
	var b bytes.Buffer
	WriteHeadlines(&b, hs)
	if !strings.Contains(b.String(), "1000 Mbit/s (CoV 10.0% over 3 runs)") {
		t.Errorf("the base line lacks its CoV:\n%s", b.String())
	}
	if one := Headlines(interleaved([]float64{1000}, []float64{2000})); one[0].CoV != 0 {
		t.Errorf("one run: CoV %g, want none", one[0].CoV)
	}
}
