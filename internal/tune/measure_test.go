// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// TestBenchArgv: every measurement carries -P and the user's bench flags
// after tune's own, and CheckBenchArgs lets a flag's value through.
func TestBenchArgv(t *testing.T) {
	extra := []string{"--port", "5300", "--probe-interval=20ms"}
	if err := CheckBenchArgs(extra); err != nil {
		t.Fatalf("valid --bench-args refused: %v", err)
	}
	b := Bench{Prefix: []string{"ip", "netns", "exec", "x"}, Peer: "198.18.0.2", Duration: "3s", Direction: "receive", Streams: 2, Extra: extra}
	got := strings.Join(b.argv("/ws"), " ")
	want := "ip netns exec x /ws bench --peer 198.18.0.2 -t 3s --omit 1s --idle 0s --observe off --no-inspect --out - --json --direction receive -P 2 --port 5300 --probe-interval=20ms"
	if got != want {
		t.Errorf("argv\n got %s\nwant %s", got, want)
	}
}

// TestNoReexecOfTestBinary: tune's measurements and its supervisor run
// tune's own binary again. In a test binary that would run every test
// again (and a test reaching a measurement would start another copy): they
// must refuse instead, before starting anything.
func TestNoReexecOfTestBinary(t *testing.T) {
	if c, err := groupCommand(context.Background(), "true"); err == nil {
		t.Fatalf("groupCommand would run this test binary: %v", c.Args)
	}
	b := Bench{Peer: "198.18.0.2", Duration: "1s", Direction: "receive", Streams: 1}
	if m, err := b.Measurer()(context.Background()); err == nil || !strings.Contains(err.Error(), "Go test binary") {
		t.Fatalf("Measurer in a test binary: %v, %v; want a refusal", m, err)
	}
}

// TestBenchCPUIsBenchsHeadline: tune's cpu goal is the number bench's
// headline prints for the same run - same unit, and the CPUs the run
// sampled, not runtime.NumCPU (the run has more CPUs than this process may
// use, as on a host where tune runs pinned).
func TestBenchCPUIsBenchsHeadline(t *testing.T) {
	for _, dir := range []string{bench.DirSend, bench.DirReceive} {
		run := bench.Run{Variant: "x", Rep: 1,
			Metrics: map[string]float64{dir + "_mbit": 940, "cpu_idle_pct": 62.5, "icmp_load_p99_ms": 1.5},
			Load:    &bench.LoadSummary{CPUs: make([]bench.CPULoad, runtime.NumCPU()+3)}}
		r := &bench.Result{Schema: bench.Schema, Variants: []bench.Variant{{Name: "x"}}, Runs: []bench.Run{run}}
		want := bench.Headlines(r)[0].CPUMsPerMbit
		m := benchMetrics(&r.Runs[0], dir)
		if got, ok := m[MetricCPU]; !ok || want <= 0 || math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: tune's CPU per Mbit %g (%v), bench's headline %g", dir, got, ok, want)
		}
		if m[MetricThroughput] != 940 || m[MetricLatencyP99] != 1.5 {
			t.Errorf("%s: metrics %v", dir, m)
		}
	}
	// Without CPU samples there is no CPU metric (not a zero, which would
	// look like the best possible value).
	m := benchMetrics(&bench.Run{Metrics: map[string]float64{"send_mbit": 10, "cpu_idle_pct": 50}}, bench.DirSend)
	if _, ok := m[MetricCPU]; ok {
		t.Errorf("CPU per Mbit without CPU samples: %v", m)
	}
}
