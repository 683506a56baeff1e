// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// stateMeasurer derives metrics from the files of the tree, with a little
// spread that differs per call, so the paired test has noise to see through.
func stateMeasurer(t *testing.T, s *System) Measurer {
	n := 0
	return func(context.Context) (Metrics, error) {
		n++
		jitter := float64(n%3) * 0.5
		m := Metrics{MetricThroughput: 100 + jitter, MetricCPU: 1 + jitter/100}
		if strings.TrimSpace(s.mustRead(t, rps)) == "3" {
			m[MetricThroughput] += 50 // RPS helps
		}
		if strings.TrimSpace(s.mustRead(t, "/sys/class/net/eth9/threaded")) == "1" {
			m[MetricThroughput] -= 20 // threaded hurts here
		}
		if strings.TrimSpace(s.mustRead(t, "/proc/sys/net/core/netdev_budget")) == "600" {
			m[MetricThroughput] += 10 // helps throughput, costs CPU
			m[MetricCPU] += 1
		}
		return m, nil
	}
}

func TestLoopKeepsOnlyWhatHelps(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	acts := []doctor.Action{
		rpsAction("3"),
		{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"},
		{ID: "budget/host", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"},
		rpsAction("3"),
	}
	trials, err := tu.Loop(context.Background(), acts, LoopConfig{Goal: "throughput", Pairs: 3, Measure: stateMeasurer(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	want := []Verdict{VerdictKept, VerdictReverted, VerdictReverted, VerdictAlready}
	for i, tr := range trials {
		if tr.Verdict != want[i] {
			t.Errorf("%s: %s (%s), want %s", tr.Action.ID, tr.Verdict, tr.Reason, want[i])
		}
	}
	if !strings.Contains(trials[2].Reason, MetricCPU) {
		t.Errorf("budget was not reverted for its CPU cost: %s", trials[2].Reason)
	}
	if trials[0].Goal == nil || trials[0].Goal.Ratio < 1.4 || len(trials[0].Goal.PairRatios) != 3 {
		t.Errorf("rps goal delta: %+v", trials[0].Goal)
	}
	for p, want := range map[string]string{rps: "3", "/sys/class/net/eth9/threaded": "0\n", "/proc/sys/net/core/netdev_budget": "300\n"} {
		if got := s.mustRead(t, p); got != want {
			t.Errorf("%s after the loop: %q, want %q", p, got, want)
		}
	}
	st := StatusOf(context.Background(), s, tu.Store.J)
	if len(st) != 1 || !st[0].Kept || st[0].Action.ID != "rps/eth9/rx-0" {
		t.Errorf("status after the loop: %+v", st)
	}
}

// TestLoopGuards: netdev_budget 600 buys throughput with CPU. Guarding every
// metric reverts it; guarding none, or only latency, keeps it and says
// what got worse.
func TestLoopGuards(t *testing.T) {
	budget := doctor.Action{ID: "budget/host", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"}
	for _, c := range []struct {
		guard string
		want  Verdict
	}{{"all", VerdictReverted}, {"cpu", VerdictReverted}, {"none", VerdictKept}, {"latency", VerdictKept}} {
		s := tree(t)
		tu := newTuner(t, s)
		guards, err := ParseGuards(c.guard)
		if err != nil {
			t.Fatal(err)
		}
		trials, err := tu.Loop(context.Background(), []doctor.Action{budget}, LoopConfig{Goal: "throughput", Pairs: 3, Guards: guards, Measure: stateMeasurer(t, s)})
		if err != nil {
			t.Fatal(err)
		}
		if trials[0].Verdict != c.want {
			t.Errorf("--guard %s: %s (%s), want %s", c.guard, trials[0].Verdict, trials[0].Reason, c.want)
		}
		if c.want == VerdictKept && !strings.Contains(trials[0].Reason, MetricCPU+" got worse") {
			t.Errorf("--guard %s: kept without saying CPU got worse: %s", c.guard, trials[0].Reason)
		}
	}
	for _, bad := range []string{"speed", "cpu,", "throughput,fast"} {
		if _, err := ParseGuards(bad); err == nil {
			t.Errorf("ParseGuards(%q) accepted", bad)
		}
	}
}

// TestJudgeOneSided: GRO's three pairs from tuner-quality run 7 (quiet host
// lab, 2 s measurements): two-sided p 0.077, one-sided 0.038 - better. The
// same numbers the other way round are worse, not better.
func TestJudgeOneSided(t *testing.T) {
	before, after := []float64{3779, 4137, 4419}, []float64{6860, 5685, 5535}
	d := judge(MetricThroughput, before, after)
	if !d.Better || d.Worse || d.P < 0.035 || d.P > 0.04 {
		t.Errorf("GRO's pairs: better %v worse %v p %.4f, want better at p ~0.038", d.Better, d.Worse, d.P)
	}
	d = judge(MetricThroughput, after, before)
	if d.Better || !d.Worse {
		t.Errorf("reversed: better %v worse %v", d.Better, d.Worse)
	}
	d = judge(MetricLatencyP99, before, after)
	if d.Better || !d.Worse {
		t.Errorf("latency up: better %v worse %v", d.Better, d.Worse)
	}
}

func TestParseVerifyOutput(t *testing.T) {
	m, err := ParseVerifyOutput([]byte("warming up\n 941.5\n"), MetricThroughput)
	if err != nil || m[MetricThroughput] != 941.5 {
		t.Fatalf("%v %v", m, err)
	}
	m, err = ParseVerifyOutput([]byte(`{"latency_p99_ms": 2.5, "throughput_mbit": 10}`), MetricThroughput)
	if err != nil || m[MetricLatencyP99] != 2.5 || m[MetricThroughput] != 10 {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"", "fast", `{"x":1}`, `{"throughput_mbit":"a"}`, "NaN", "-5", `{"throughput_mbit": -5}`, `{"latency_p99_ms": -0.1}`} {
		if _, err := ParseVerifyOutput([]byte(bad), MetricThroughput); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseVerifyOutput(f *testing.F) {
	f.Add([]byte("12.5\n"))
	f.Add([]byte(`{"throughput_mbit": 1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseVerifyOutput(b, MetricThroughput)
		if err == nil && len(m) == 0 {
			t.Fatal("no error and no metric")
		}
		for k, v := range m {
			if v < 0 {
				t.Fatalf("%s = %v accepted", k, v)
			}
		}
	})
}

// Noise that scales with the value: the same 1.5x in every pair, at very
// different levels, is a consistent gain.
func TestJudgeOnRatios(t *testing.T) {
	d := judge(MetricThroughput, []float64{100, 1000, 3000}, []float64{151, 1490, 4520})
	if !d.Better || d.Worse || d.P >= Alpha {
		t.Fatalf("%+v: want a significant gain", d)
	}
	d = judge(MetricLatencyP99, []float64{1, 2, 3}, []float64{2, 4.1, 5.9})
	if !d.Worse || d.Better {
		t.Fatalf("%+v: doubled latency not worse", d)
	}
	// The ratio is the one the test is on, as bench's headlines: the
	// geometric mean of the per-pair ratios (2x and 1x: 1.41x), not the
	// ratio of the means (1200/1100: 1.09x).
	d = judge(MetricThroughput, []float64{100, 1000}, []float64{200, 1000})
	if math.Abs(d.Ratio-math.Sqrt2) > 1e-9 || d.MedianRatio != 1.5 {
		t.Fatalf("%+v: ratio %v, median %v; want %v and 1.5", d, d.Ratio, d.MedianRatio, math.Sqrt2)
	}
}

// Ctrl-C in the middle of an action's pairs: the action is reverted, and
// an action that failed before its first apply is no error of its own.
func TestLoopInterruptedReverts(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	inner := stateMeasurer(t, s)
	n := 0
	measure := func(c context.Context) (Metrics, error) {
		n++
		if n == 4 { // pair 2, without it: the action was applied once
			cancel()
			return nil, c.Err()
		}
		return inner(c)
	}
	trials, err := tu.Loop(ctx, []doctor.Action{rpsAction("3")}, LoopConfig{Goal: "throughput", Pairs: 3, Measure: measure})
	if err == nil || len(trials) != 1 || trials[0].Verdict != VerdictReverted {
		t.Fatalf("trials %+v, err %v", trials, err)
	}
	if got := s.mustRead(t, rps); got != "00000000\n" {
		t.Fatalf("rps_cpus after an interrupted loop: %q", got)
	}
	failing := func(context.Context) (Metrics, error) { return nil, errors.New("no load") }
	fresh := doctor.Action{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"}
	_, err = tu.Loop(context.Background(), []doctor.Action{fresh}, LoopConfig{Goal: "throughput", Pairs: 2, Measure: failing})
	if err == nil || strings.Contains(err.Error(), "no change with id") {
		t.Fatalf("a measurement failing before the first apply: %v", err)
	}
}

// TestLoopSkipsWhatNeedsARevertedAction: RFS (rps_flow_cnt) is useful only
// with RPS; when RPS is reverted, the loop does not measure RFS alone.
func TestLoopSkipsWhatNeedsARevertedAction(t *testing.T) {
	flow := doctor.Action{ID: "rps_flow_cnt/eth9/rx-0", Kind: doctor.KindSysfs, Device: "eth9",
		Target: "/sys/class/net/eth9/queues/rx-0/rps_flow_cnt", Value: "4096", Needs: []string{"rps/eth9/rx-0"}}
	for _, c := range []struct {
		rps  string
		want []Verdict
		flow string
	}{
		{"1", []Verdict{VerdictReverted, VerdictSkipped}, "0\n"}, // RPS on CPU0 only does not help here
		{"3", []Verdict{VerdictKept, VerdictReverted}, "0\n"},    // RPS helps; RFS is measured (and does nothing)
	} {
		s := tree(t)
		tu := newTuner(t, s)
		trials, err := tu.Loop(context.Background(), []doctor.Action{rpsAction(c.rps), flow},
			LoopConfig{Goal: "throughput", Pairs: 3, Measure: stateMeasurer(t, s)})
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range trials {
			if tr.Verdict != c.want[i] {
				t.Errorf("rps %s: %s %s (%s), want %s", c.rps, tr.Action.ID, tr.Verdict, tr.Reason, c.want[i])
			}
		}
		if got := s.mustRead(t, flow.Target); got != c.flow {
			t.Errorf("rps %s: rps_flow_cnt after the loop %q, want %q", c.rps, got, c.flow)
		}
	}
}

// TestLoopLeftoverOfKilledRun: a tune killed between apply and verdict
// leaves an active, undecided entry. The next loop must not call that
// change "already in force before tune started" (tune put it there, and the
// value it printed was the old one): it says the change is a leftover of
// an interrupted run, puts the old value back, and measures it like any
// other action.
func TestLoopLeftoverOfKilledRun(t *testing.T) {
	for _, c := range []struct {
		name    string
		act     doctor.Action
		verdict Verdict
		final   string
	}{
		{"helps", rpsAction("3"), VerdictKept, "3"},
		{"hurts", doctor.Action{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"}, VerdictReverted, "0\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tree(t)
			dir := t.TempDir()
			killed, err := New(dir, s)
			if err != nil {
				t.Fatal(err)
			}
			if o, err := killed.Apply(context.Background(), c.act); err != nil || o.State != StateApplied {
				t.Fatalf("apply: %+v %v", o, err)
			}
			killed.Close() // killed before its verdict: nothing reverted, nothing kept
			tu, err := New(dir, s)
			if err != nil {
				t.Fatal(err)
			}
			defer tu.Close()
			var said []string
			trials, err := tu.Loop(context.Background(), []doctor.Action{c.act}, LoopConfig{Goal: "throughput", Pairs: 3,
				Measure: stateMeasurer(t, s), Progress: func(m string) { said = append(said, m) }})
			if err != nil {
				t.Fatal(err)
			}
			tr := trials[0]
			if tr.Verdict != c.verdict || tr.Goal == nil {
				t.Errorf("verdict %s (%s), goal %+v; want %s, measured", tr.Verdict, tr.Reason, tr.Goal, c.verdict)
			}
			if !strings.Contains(tr.Leftover, "interrupted") || !strings.Contains(strings.Join(said, "\n"), "interrupted") {
				t.Errorf("the leftover is not reported: leftover %q, progress %q", tr.Leftover, said)
			}
			if strings.Contains(tr.Reason, "before tune started") {
				t.Errorf("reason %q", tr.Reason)
			}
			if got := s.mustRead(t, c.act.Target); got != c.final {
				t.Errorf("%s after the loop: %q, want %q", c.act.Target, got, c.final)
			}
		})
	}
}

// TestLoopAlreadySaysTheValueInForce: an action whose value the host
// already has is reported with that value, not the one before it.
func TestLoopAlreadySaysTheValueInForce(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	trials, err := tu.Loop(context.Background(), []doctor.Action{rpsAction("3"), rpsAction("3")}, LoopConfig{Goal: "throughput", Pairs: 3, Measure: stateMeasurer(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	if trials[1].Verdict != VerdictAlready || !strings.Contains(trials[1].Reason, "tried: 3 (kept by wirespeed") {
		t.Errorf("second rps: %s (%s)", trials[1].Verdict, trials[1].Reason)
	}
}

// TestLoopFailedMeasurementKeepsEarlierRuns: a change an earlier run kept
// is not undone when a later run's measurement fails before it applied
// anything; and a run whose every action failed does not succeed.
func TestLoopFailedMeasurementKeepsEarlierRuns(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	trials, err := tu.Loop(context.Background(), []doctor.Action{rpsAction("3")}, LoopConfig{Goal: "throughput", Pairs: 3, Measure: stateMeasurer(t, s)})
	if err != nil || trials[0].Verdict != VerdictKept {
		t.Fatalf("first run: %+v %v", trials, err)
	}
	failing := func(context.Context) (Metrics, error) { return nil, errors.New("the load broke") }
	trials, err = tu.Loop(context.Background(), []doctor.Action{rpsAction("3")}, LoopConfig{Goal: "throughput", Pairs: 3, Measure: failing})
	if err == nil || len(trials) != 1 || trials[0].Verdict != VerdictFailed {
		t.Fatalf("second run with a broken load: %+v %v", trials, err)
	}
	if got := s.mustRead(t, rps); got != "3" {
		t.Fatalf("the broken run reverted the kept change: rps_cpus %q", got)
	}
	gone := doctor.Action{ID: "threaded/eth9", Kind: doctor.KindSysfs, Device: "eth9", Target: "/sys/class/net/eth9/threaded", Value: "1"}
	os.Remove(s.path("/sys/class/net/eth9/threaded"))
	trials, err = tu.Loop(context.Background(), []doctor.Action{gone}, LoopConfig{Goal: "throughput", Pairs: 2, Measure: stateMeasurerNoThreaded(t, s)})
	if err == nil || !strings.Contains(err.Error(), "1 of 1 actions failed") || trials[0].Verdict != VerdictFailed {
		t.Fatalf("a run whose only action failed: %+v %v", trials, err)
	}
}

// stateMeasurerNoThreaded measures a tree whose threaded file is gone.
func stateMeasurerNoThreaded(t *testing.T, s *System) Measurer {
	return func(context.Context) (Metrics, error) {
		return Metrics{MetricThroughput: 100}, nil
	}
}

// TestVerdictJSON: the typed verdicts are written as the strings tune's
// JSON always carried, and read back.
func TestVerdictJSON(t *testing.T) {
	for v, want := range map[Verdict]string{VerdictKept: "kept", VerdictReverted: "reverted", VerdictAlready: "already",
		VerdictRefused: "refused", VerdictFailed: "failed", VerdictSkipped: "skipped"} {
		b, err := json.Marshal(Trial{Verdict: v})
		if err != nil || !strings.Contains(string(b), `"verdict":"`+want+`"`) {
			t.Errorf("%s: %s, %v", want, b, err)
		}
		var back Trial
		if err := json.Unmarshal(b, &back); err != nil || back.Verdict != v {
			t.Errorf("%s read back as %q, %v", want, back.Verdict, err)
		}
	}
}

// TestJudgeTrial: the keep/revert decision on measured pairs alone - the
// goal must improve significantly and no guarded metric get worse; an
// unguarded one that got worse is named in the reason; a metric missing
// from a pair is not judged.
func TestJudgeTrial(t *testing.T) {
	up := []float64{100, 101, 99, 100}
	upAfter := []float64{150, 152, 149, 151}
	same := []float64{100, 101, 99, 100}
	worseCPU := []float64{2, 2.1, 1.9, 2}
	worseCPUAfter := []float64{4, 4.2, 3.9, 4.1}
	for _, c := range []struct {
		name          string
		guards        []string
		before, after map[string][]float64
		keep          bool
		reason        string
	}{
		{"no goal metric", nil, map[string][]float64{MetricCPU: worseCPU}, map[string][]float64{MetricCPU: worseCPU}, false, "has no " + MetricThroughput},
		{"goal worse", nil, map[string][]float64{MetricThroughput: upAfter}, map[string][]float64{MetricThroughput: up}, false, "got worse"},
		{"goal unchanged", nil, map[string][]float64{MetricThroughput: same}, map[string][]float64{MetricThroughput: same}, false, "did not improve significantly"},
		{"goal better", nil, map[string][]float64{MetricThroughput: up}, map[string][]float64{MetricThroughput: upAfter}, true, "improved (ratio 1.5"},
		{"guarded metric worse", nil, map[string][]float64{MetricThroughput: up, MetricCPU: worseCPU},
			map[string][]float64{MetricThroughput: upAfter, MetricCPU: worseCPUAfter}, false, "improved but " + MetricCPU + " got worse"},
		{"unguarded metric worse", []string{}, map[string][]float64{MetricThroughput: up, MetricCPU: worseCPU},
			map[string][]float64{MetricThroughput: upAfter, MetricCPU: worseCPUAfter}, true, MetricCPU + " got worse (ratio 2.0"},
		{"metric short of a pair", nil, map[string][]float64{MetricThroughput: up, MetricCPU: worseCPU[:3]},
			map[string][]float64{MetricThroughput: upAfter, MetricCPU: worseCPUAfter[:3]}, true, "improved (ratio"},
	} {
		var tr Trial
		keep := judgeTrial(&tr, MetricThroughput, c.guards, 4, c.before, c.after)
		if keep != c.keep || !strings.Contains(tr.Reason, c.reason) {
			t.Errorf("%s: keep %v (%s), want %v with %q", c.name, keep, tr.Reason, c.keep, c.reason)
		}
		if c.name == "metric short of a pair" && len(tr.Others) != 0 {
			t.Errorf("%s: judged %+v", c.name, tr.Others)
		}
	}
}

// TestKilledTrialMentioned (issue 40): a change a killed trial left in
// force, and that the next run's plan does not touch, was mentioned only
// by a measured run with progress shown; a static apply (or --json) left
// it unmentioned. LeftoverNotes names it and the revert that puts it back.
func TestKilledTrialMentioned(t *testing.T) {
	s := tree(t)
	tu := newTuner(t, s)
	// what a trial leaves when killed between applying and deciding
	if o, err := tu.Apply(context.Background(), rpsAction("3")); err != nil || o.State != StateApplied {
		t.Fatalf("%+v %v", o, err)
	}
	other := doctor.Action{ID: "budget/host", Kind: doctor.KindSysctl, Target: "net.core.netdev_budget", Value: "600"}
	notes := tu.LeftoverNotes([]doctor.Action{other})
	if len(notes) != 1 || !strings.Contains(notes[0], "rps/eth9/rx-0") || !strings.Contains(notes[0], "tune revert rps/eth9/rx-0") {
		t.Fatalf("notes = %q", notes)
	}
	if n := tu.LeftoverNotes([]doctor.Action{rpsAction("3")}); len(n) != 0 {
		t.Errorf("the plan's own leftover is put back by the run, not noted: %q", n)
	}
	if err := tu.Keep("rps/eth9/rx-0"); err != nil {
		t.Fatal(err)
	}
	if n := tu.LeftoverNotes([]doctor.Action{other}); len(n) != 0 {
		t.Errorf("a kept change is no leftover: %q", n)
	}
}
