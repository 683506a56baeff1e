// SPDX-License-Identifier: Apache-2.0

package selfbench

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// writeJSON writes v to dir/name, gzipped when name ends in .gz.
func writeJSON(t *testing.T, dir, name string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".gz") {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b = z.Bytes()
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeEnv(t *testing.T, dir, load string) {
	t.Helper()
	writeJSON(t, dir, "env.json", map[string]any{"before": map[string]any{"loadavg": load, "commit": "abc1234"}})
}

// ticks is one CPU's /proc/stat deltas over a fixture's 20 s load window
// (2000 ticks of USER_HZ per CPU).
type ticks struct{ user, sys, irq, soft, idle, iowait, steal uint64 }

// benchResult is a one-run bench result: rate cap (0: none), delivered
// Mbit/s, and per CPU its ticks between the samples at the window's ends.
func benchResult(capMbit, mbit float64, cpus ...ticks) bench.Result {
	run := bench.Run{Variant: "lab", Rep: 1, Complete: true, Metrics: map[string]float64{"send_mbit": mbit},
		Load: &bench.LoadSummary{From: 1.0004, To: 21.0004}}
	a := bench.Sample{T: 1.0004}
	mid := bench.Sample{T: 11}
	b := bench.Sample{T: 21.0004}
	for i, c := range cpus {
		base := procfs.CPUTimes{CPU: i, User: 7, System: 7, Idle: 1000, Steal: 3}
		a.CPU = append(a.CPU, base)
		mid.CPU = append(mid.CPU, base)
		b.CPU = append(b.CPU, procfs.CPUTimes{CPU: i, User: base.User + c.user, System: base.System + c.sys, IRQ: c.irq,
			SoftIRQ: c.soft, Idle: base.Idle + c.idle, IOWait: c.iowait, Steal: base.Steal + c.steal})
	}
	run.Samples = []bench.Sample{{T: 0}, a, mid, b}
	return bench.Result{Schema: bench.Schema, Complete: true, Settings: bench.Settings{RateMbit: capMbit}, Runs: []bench.Run{run}}
}

// TestCPUTable: busy CPU per Gbit (steal left out), the paired ratios, and
// a run below its cap flagged.
func TestCPUTable(t *testing.T) {
	d := t.TempDir()
	writeEnv(t, d, "0.10 0.20 0.30")
	// off: 0.6 CPU busy at 3 Gbit/s = 200 ms per Gbit: busy is the wall
	// time less idle and steal (600 ticks each); the tick-sampled fields
	// say 120 ticks (0.06 CPU); steal 0.3 CPU
	writeJSON(t, d, "rate-off-1.json.gz", benchResult(3000, 3000,
		ticks{user: 20, sys: 40, soft: 20, idle: 800, steal: 600}, ticks{user: 10, sys: 10, soft: 20, idle: 1400}))
	// off: 0.75 CPU at 3 Gbit/s = 250 ms per Gbit
	writeJSON(t, d, "rate-off-2.json.gz", benchResult(3000, 3000, ticks{idle: 1200}, ticks{idle: 1300}))
	// light-x: 1.04 x 200 = 208 ms per Gbit (0.624 CPU at 3 Gbit/s)
	writeJSON(t, d, "rate-light-x-1.json.gz", benchResult(3000, 3000, ticks{idle: 752}, ticks{idle: 2000}))
	// light-x: 1.06 x 250 = 265 ms per Gbit, at 2.9 Gbit/s (3.3% below the
	// cap): 0.7685 CPU, iowait idle too
	writeJSON(t, d, "rate-light-x-2.json.gz", benchResult(3000, 2900, ticks{idle: 1000}, ticks{idle: 1400, iowait: 63}))
	// light-y: 1.5 x light-x in each repetition: 312 ms per Gbit (0.936 CPU at
	// 3 Gbit/s), then 397.5 (1.1925 CPU at 3 Gbit/s)
	writeJSON(t, d, "rate-light-y-1.json.gz", benchResult(3000, 3000, ticks{idle: 128}, ticks{idle: 2000}))
	writeJSON(t, d, "rate-light-y-2.json.gz", benchResult(3000, 3000, ticks{idle: 0}, ticks{idle: 1615}))
	got, err := cpuTable(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| valid (idle before the run) | - | yes |",
		"| rate cap (`--bitrate`), Mbit/s | - | 3000 |",
		"| **no** (1 of 6 runs): light-x-2 2900 Mbit/s |",
		"| `off`: busy CPU per Gbit delivered | - | median 225.0 ms (2 runs; means: busy 0.675 of 2 CPUs, tick-sampled 0.030, steal 0.150, 3000 Mbit/s) |",
		// geometric mean of 1.04 and 1.06: 1.04995
		"| `light-x` against `off`: CPU per Gbit | <= 3% more | +5.0% (95% CI ",
		"median +5.0%; ratios 1.040, 1.060) |",
		"| `light-x` against `light-y`: CPU per Gbit | - | -33.3% (95% CI -33.3% .. -33.3%; median -33.3%; ratios 0.667, 0.667) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}

	// bad input: a run without --bitrate is not a fixed-rate run
	writeJSON(t, d, "rate-off-3.json.gz", benchResult(0, 9000, ticks{}))
	if _, err := cpuTable(d); err == nil || !strings.Contains(err.Error(), "not a fixed-rate run") {
		t.Fatalf("a run without a cap: err %v", err)
	}
}

// TestHostVerdict: the README's rule, each way.
func TestHostVerdict(t *testing.T) {
	for _, c := range []struct {
		mbit, hash []float64
		want       string
	}{
		{[]float64{10, 11, 12, 13, 14}, []float64{20, 22, 24, 26, 28}, "**yes**"},     // ratio flat
		{[]float64{10, 11, 12, 13, 14}, []float64{20.1, 20, 20, 20, 20}, "**no**"},    // canary flat
		{[]float64{10, 11, 12, 13, 14}, []float64{20, 21.5, 21, 23, 22}, "undecided"}, // partly
		{[]float64{10, 11}, []float64{20, 22}, "undecided: too few"},
	} {
		if got := hostVerdict(c.mbit, c.hash); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v / %v: %q, want %s...", c.mbit, c.hash, got, c.want)
		}
	}
}

func TestPearson(t *testing.T) {
	// x 1..5, y 2 4 5 4 5: r = 6/sqrt(10*6) = 0.7746; t = 2.1213 at 3 df, p = 0.124
	r, p := Pearson([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 5, 4, 5})
	if math.Abs(r-6/math.Sqrt(60)) > 1e-12 || math.Abs(p-0.124) > 0.001 {
		t.Fatalf("r %v p %v, want 0.7746 and 0.124", r, p)
	}
	if r, _ := Pearson([]float64{1, 2}, []float64{1, 2}); !math.IsNaN(r) {
		t.Fatalf("two points: r %v, want NaN", r)
	}
	if r, _ := Pearson([]float64{1, 2, 3}, []float64{5, 5, 5}); !math.IsNaN(r) {
		t.Fatalf("a constant series: r %v, want NaN", r)
	}
}

// TestCanaryTable: throughput that follows the canary exactly - the ratio
// is flat (CoV 0) while throughput spreads, r = +1.
func TestCanaryTable(t *testing.T) {
	d := t.TempDir()
	writeEnv(t, d, "0.10 0.20 0.30")
	hashes := []float64{20000, 22000, 24000}
	for i, h := range hashes {
		rep := string(rune('1' + i))
		writeJSON(t, d, "bench-off-"+rep+".json.gz", benchResult(0, h/2, ticks{}))
		// before and after straddle h: their mean is h
		writeJSON(t, d, "canary-off-"+rep+".json", map[string]any{
			"before": map[string]any{"iterations_per_s": h - 100, "copy_mbyte_per_s": 20000},
			"after":  map[string]any{"iterations_per_s": h + 100, "copy_mbyte_per_s": 20000}})
	}
	got, err := canaryTable(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| off runs: throughput / canary hashes per s, each run in order | - | 10000/20000, 11000/22000, 12000/24000 |",
		"| off runs: CoV of throughput | - | 9.1% |", // sd 1000 / mean 11000
		"| off runs: CoV of throughput / canary (hash) | - | 0.0% |",
		"| off runs: is the drift the host's speed? | the README's rule | **yes**: ",
		"| off runs: throughput vs canary (hash), Pearson | - | r = +1.00 (n = 3, p = 0.00) |",
		"| off runs: CoV of the canary (memory copy) | - | 0.0% |",
		"| off runs: throughput vs canary (memory copy), Pearson | - | - (n = 3) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}

	// bad input: a canary file with no bench run beside it
	writeJSON(t, d, "canary-off-9.json", map[string]any{"before": map[string]any{"iterations_per_s": 1}, "after": map[string]any{"iterations_per_s": 1}})
	if _, err := canaryTable(d); err == nil || !strings.Contains(err.Error(), "no bench-off-9.json.gz") {
		t.Fatalf("a canary without its run: err %v", err)
	}
}

// TestProgramSetsTable: per program set, only the programs the statistics
// run loaded count (not those in the list taken just before it).
func TestProgramSetsTable(t *testing.T) {
	d := t.TempDir()
	prog := func(id int, name string, cnt, ns float64) map[string]any {
		return map[string]any{"id": id, "name": name, "run_cnt": cnt, "run_time_ns": ns}
	}
	for _, set := range []string{"btf", "classic"} {
		writeJSON(t, d, "bpfprogs-"+set+"-0.json.gz", map[string]any{"time": 0, "progs": []any{prog(5, "sd_devices", 0, 0)}})
		writeJSON(t, d, "bpfprogs-"+set+"-1.json.gz", map[string]any{"time": 10, "progs": []any{
			prog(5, "sd_devices", 100, 1000), prog(10, "a_"+set, 0, 0), prog(11, "b_"+set, 1000, 100000)}})
		// over 2 s: a 2000 events at 100 ns, b 1000 events at 300 ns; sd_devices ran too but is not ours
		writeJSON(t, d, "bpfprogs-"+set+"-2.json.gz", map[string]any{"time": 12, "progs": []any{
			prog(5, "sd_devices", 900, 90000), prog(10, "a_"+set, 2000, 200000), prog(11, "b_"+set, 2000, 400000)}})
	}
	got, err := programSetsTable(d)
	if err != nil {
		t.Fatal(err)
	}
	want := "| program set | program (light, continuous) | events/s | ns per event | % of one CPU |\n" +
		"|---|---|---|---|---|\n" +
		"| btf | `a_btf` | 1000 | 100 | 0.01% |\n" +
		"| btf | `b_btf` | 500 | 300 | 0.01% |\n" +
		"| btf | all | 1500 | 167 | 0.03% |\n" +
		"| classic | `a_classic` | 1000 | 100 | 0.01% |\n" +
		"| classic | `b_classic` | 500 | 300 | 0.01% |\n" +
		"| classic | all | 1500 | 167 | 0.03% |\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestValidity: the load rule, and the rule of no tracing program attached
// at the start (a cgroup program is not one).
func TestValidity(t *testing.T) {
	d := t.TempDir()
	writeEnv(t, d, "0.10 0.20 0.30")
	if _, v, err := validity(d); err != nil || v != "yes" {
		t.Fatalf("idle, no program list: %q %v", v, err)
	}
	writeJSON(t, d, "bpfprogs-start.json", []any{map[string]any{"name": "sd_devices", "type": "cgroup_device"}})
	if _, v, err := validity(d); err != nil || v != "yes" {
		t.Fatalf("idle, a cgroup program: %q %v", v, err)
	}
	writeEnv(t, d, "0.70 0.20 0.30")
	writeJSON(t, d, "bpfprogs-start.json.gz", []any{map[string]any{"name": "sd_devices", "type": "cgroup_device"},
		map[string]any{"name": "btf_napi_poll", "type": "tracing"}})
	want := "**no**: load average 0.70 before the run (the rule: below 0.5); 1 tracing BPF programs attached at the start (`btf_napi_poll`; the rule: none)"
	if _, v, err := validity(d); err != nil || v != want {
		t.Fatalf("loaded, a tracing program:\n%q\nwant\n%q (%v)", v, want, err)
	}
}
