// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/stats"
)

// Metric names the closed loop judges by.
const (
	MetricThroughput = "throughput_mbit" // higher is better
	MetricLatencyP99 = "latency_p99_ms"  // loaded latency, lower is better
	MetricCPU        = "cpu_per_mbit"    // busy CPU-ms per Mbit (bench.CPUMsPerMbit), lower is better
)

// Metrics is one measurement; a metric the measurer could not take is absent.
type Metrics map[string]float64

// Measurer takes one measurement of the current state.
type Measurer func(ctx context.Context) (Metrics, error)

// ParseGuards reads --guard: "all" (nil: every metric), "none" (the goal
// alone), or a comma-separated list of throughput, latency and cpu.
func ParseGuards(s string) ([]string, error) {
	switch strings.TrimSpace(s) {
	case "", "all":
		return nil, nil
	case "none":
		return []string{}, nil
	}
	out := []string{}
	for _, g := range strings.Split(s, ",") {
		m, err := GoalMetric(strings.TrimSpace(g))
		if err != nil {
			return nil, fmt.Errorf("guard %q: want all, none, or a list of throughput, latency and cpu", g)
		}
		out = append(out, m)
	}
	return out, nil
}

// GoalMetric maps --goal to the metric it improves.
func GoalMetric(goal string) (string, error) {
	switch goal {
	case "throughput":
		return MetricThroughput, nil
	case "latency":
		return MetricLatencyP99, nil
	case "cpu":
		return MetricCPU, nil
	}
	return "", fmt.Errorf("goal %q: want throughput, latency or cpu", goal)
}

func higherIsBetter(m string) bool { return m == MetricThroughput }

// Alpha is the significance level of every decision (one-sided).
const Alpha = 0.05

// MetricDelta is one metric's before/after over the pairs.
type MetricDelta struct {
	Metric string    `json:"metric"`
	Before []float64 `json:"before"`
	After  []float64 `json:"after"`
	// MeanBefore, MeanAfter, MedianRatio (of the per-pair ratios after/before).
	MeanBefore float64 `json:"mean_before"`
	MeanAfter  float64 `json:"mean_after"`
	// Ratio is the geometric mean of the per-pair ratios after/before
	// (stats.SummarizeRatios, as bench's headlines), MeanAfter/MeanBefore
	// where a value is not positive.
	Ratio       float64   `json:"ratio"`
	PairRatios  []float64 `json:"pair_ratios"`
	MedianRatio float64   `json:"median_ratio"`
	P           float64   `json:"p"` // paired t-test, two-sided
	Better      bool      `json:"better"`
	Worse       bool      `json:"worse"`
}

// Verdict is the closed loop's decision on one action; its JSON and text
// are the constants' strings.
type Verdict string

// The verdicts Loop gives.
const (
	// VerdictKept: the goal got significantly better and no guarded metric
	// worse; the change stays (marked kept in the journal).
	VerdictKept Verdict = "kept"
	// VerdictReverted: measured and not kept, or a measurement failed
	// after the change was made; the old value is back.
	VerdictReverted Verdict = "reverted"
	// VerdictAlready: the value was in force before the action was tried.
	VerdictAlready Verdict = "already"
	// VerdictRefused: the kernel took the write but read back another
	// value (StateRefused); the old value is back.
	VerdictRefused Verdict = "refused"
	// VerdictFailed: the action could not be applied or measured.
	VerdictFailed Verdict = "failed"
	// VerdictSkipped: an action it Needs was not kept.
	VerdictSkipped Verdict = "skipped"
)

// Trial is the closed loop's verdict on one action.
type Trial struct {
	Action  doctor.Action `json:"action"`
	Verdict Verdict       `json:"verdict"`
	Reason  string        `json:"reason"`
	// Leftover says that an interrupted tune had left this change in force
	// (its entry neither kept nor reverted) and that it was put back before
	// the action was measured.
	Leftover string        `json:"leftover,omitempty"`
	Goal     *MetricDelta  `json:"goal,omitempty"`
	Others   []MetricDelta `json:"others,omitempty"`
}

// LoopConfig drives Loop.
type LoopConfig struct {
	Goal  string // throughput, latency, cpu
	Pairs int    // interleaved A/B pairs per action (>= 2)
	// Guards are the metrics (MetricThroughput, ...) that must not get
	// significantly worse for an action to be kept. nil means every
	// measured metric; an empty non-nil slice judges by the goal alone.
	Guards   []string
	Measure  Measurer
	Progress func(string)
}

func judge(metric string, before, after []float64) MetricDelta {
	d := MetricDelta{Metric: metric, Before: before, After: after,
		MeanBefore: stats.Mean(before), MeanAfter: stats.Mean(after), P: 1}
	var pb, pa []float64 // the pairs whose before is not 0
	for i := range before {
		if before[i] != 0 {
			pb, pa = append(pb, before[i]), append(pa, after[i])
		}
	}
	if len(pb) > 0 {
		d.PairRatios = stats.PairedRatios(pb, pa)
		d.MedianRatio = stats.Percentile(d.PairRatios, 50)
	}
	// Noise on a shared machine scales with the value (a busy neighbour
	// costs a share of the throughput), so the ratio and the test are on
	// the logarithms, as bench's headlines: the geometric mean of the
	// per-pair ratios, and whether they are consistently above 1. Where a
	// value is not positive there are no logarithms: the ratio of the
	// means, and the test on the values.
	var r stats.TTest
	var err error
	if lb, la := logs(before), logs(after); lb != nil && la != nil {
		s := stats.SummarizeRatios(stats.PairedRatios(before, after))
		d.Ratio = s.GeoMean
		r, err = stats.PairedT(lb, la)
	} else {
		if d.MeanBefore != 0 {
			d.Ratio = d.MeanAfter / d.MeanBefore
		}
		r, err = stats.PairedT(before, after)
	}
	if err == nil {
		// Each question the loop asks has a direction - did the goal get
		// better? did a guarded metric get worse? - so each is a one-sided
		// test: half the two-sided p, in the direction the mean moved. With
		// 3 pairs (2 degrees of freedom) the two-sided test missed GRO's
		// 1.47x in the quiet host lab (p 0.077, tuner-quality run 7).
		d.P = r.P / 2
		sig := d.P < Alpha
		up := r.Diff > 0
		if higherIsBetter(metric) {
			d.Better, d.Worse = sig && up, sig && !up && r.Diff != 0
		} else {
			d.Better, d.Worse = sig && !up && r.Diff != 0, sig && up
		}
	}
	return d
}

// logs returns the natural logarithms, or nil if a value is not positive.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !(x > 0) {
			return nil
		}
		out[i] = math.Log(x)
	}
	return out
}

// Loop tries each action in order: measure without it, apply, measure with
// it, Pairs times interleaved (A B A B ...); it keeps the action only if the
// goal metric got significantly better and no other metric significantly
// worse, and reverts it at once otherwise. Later actions are tried on top
// of the kept ones.
func (t *Tuner) Loop(ctx context.Context, acts []doctor.Action, cfg LoopConfig) ([]Trial, error) {
	goal, err := GoalMetric(cfg.Goal)
	if err != nil {
		return nil, err
	}
	if cfg.Pairs < 2 {
		return nil, fmt.Errorf("pairs %d: the paired test needs at least 2", cfg.Pairs)
	}
	l := &loop{t: t, cfg: cfg, goal: goal, total: len(acts), notKept: map[string]bool{}}
	var trials []Trial
	for n, a := range acts {
		tr, err := l.trial(ctx, n, a)
		trials = append(trials, tr)
		if err != nil {
			return trials, err
		}
	}
	return trials, failedTrials(trials)
}

// loop is one run of Loop: its settings and the actions it tried and did
// not keep (those that Need them are skipped).
type loop struct {
	t       *Tuner
	cfg     LoopConfig
	goal    string // the goal's metric
	total   int    // actions in the run, for the progress lines
	notKept map[string]bool
}

func (l *loop) say(f string, a ...any) {
	if l.cfg.Progress != nil {
		l.cfg.Progress(fmt.Sprintf(f, a...))
	}
}

// trial tries action n of the run and gives its verdict; an error ends
// the run (the trial is still reported).
func (l *loop) trial(ctx context.Context, n int, a doctor.Action) (Trial, error) {
	tr := Trial{Action: a}
	if dep := firstIn(a.Needs, l.notKept); dep != "" {
		tr.Verdict, tr.Reason = VerdictSkipped, "needs "+dep+", which was not kept"
		l.notKept[a.ID] = true
		l.say("[%d/%d] %s: skipped - %s", n+1, l.total, a.ID, tr.Reason)
		return tr, nil
	}
	if i := l.t.Leftover(a); i >= 0 {
		// A killed tune applied this and never decided on it: what is in
		// force is not the host's own state. Put the old value back and
		// measure the action like any other.
		e := l.t.Store.J.Entries[i]
		o, err := l.t.revertEntry(ctx, i)
		if err != nil {
			tr.Verdict, tr.Reason = VerdictFailed, "putting back a change an interrupted tune left: "+err.Error()
			return tr, fmt.Errorf("%s: %w", a.ID, err)
		}
		tr.Leftover = fmt.Sprintf("%s = %q was left in force by an interrupted tune (journal entry %d, %s, %s); put back to %q before measuring",
			e.Action.Target, trim(e.Action.Value), e.Seq, e.State, e.Time, trim(o.Got))
		l.say("[%d/%d] %s: %s", n+1, l.total, a.ID, tr.Leftover)
	}
	before, after, applied, failed := l.pairs(ctx, n, a, &tr)
	if failed != nil {
		return l.abandon(ctx, a, applied, failed)
	}
	if tr.Verdict != "" {
		if tr.Verdict != VerdictAlready {
			l.notKept[a.ID] = true
		}
		return tr, nil
	}
	keep := judgeTrial(&tr, l.goal, l.cfg.Guards, l.cfg.Pairs, before, after)
	if keep {
		tr.Verdict = VerdictKept
		l.t.markKept(a.ID)
		if err := l.t.Store.Save(); err != nil {
			return tr, err
		}
	} else {
		tr.Verdict = VerdictReverted
		l.notKept[a.ID] = true
		if _, err := l.t.Revert(context.WithoutCancel(ctx), []string{a.ID}, false); err != nil {
			return tr, fmt.Errorf("reverting %s: %w", a.ID, err)
		}
	}
	l.say("[%d/%d] %s: %s - %s", n+1, l.total, a.ID, tr.Verdict, tr.Reason)
	return tr, nil
}

// pairs measures without a and with it, Pairs times interleaved, and
// returns each metric's values before and after. It stops early when a
// does not apply (tr's verdict and reason then say why) or when a revert
// or a measurement fails (failed); applied says whether this trial wrote
// a at least once.
func (l *loop) pairs(ctx context.Context, n int, a doctor.Action, tr *Trial) (before, after map[string][]float64, applied bool, failed error) {
	before, after = map[string][]float64{}, map[string][]float64{}
	for i := 0; i < l.cfg.Pairs; i++ {
		if i > 0 {
			if _, err := l.t.Revert(ctx, []string{a.ID}, false); err != nil {
				return before, after, applied, err
			}
		}
		l.say("[%d/%d] %s: pair %d/%d, measuring without it", n+1, l.total, a.ID, i+1, l.cfg.Pairs)
		if err := l.measure(ctx, before); err != nil {
			return before, after, applied, err
		}
		o, err := l.t.Apply(ctx, a)
		if o.State == StateApplied {
			applied = true
		}
		if err != nil || o.State != StateApplied {
			l.notApplied(tr, a, o, err, i)
			return before, after, applied, nil
		}
		l.say("[%d/%d] %s: pair %d/%d, measuring with it", n+1, l.total, a.ID, i+1, l.cfg.Pairs)
		if err := l.measure(ctx, after); err != nil {
			return before, after, applied, err
		}
	}
	return before, after, applied, nil
}

// measure takes one measurement and adds each metric's value to into.
func (l *loop) measure(ctx context.Context, into map[string][]float64) error {
	m, err := l.cfg.Measure(ctx)
	if err != nil {
		return fmt.Errorf("measuring: %w", err)
	}
	for k, v := range m {
		into[k] = append(into[k], v)
	}
	return nil
}

// notApplied gives the verdict on an action Apply did not apply in pair
// i: already in force (when found so before the first pair), refused by
// the kernel, or failed.
func (l *loop) notApplied(tr *Trial, a doctor.Action, o Outcome, err error, i int) {
	if o.State == StateAlready && i == 0 {
		tr.Verdict, tr.Reason = VerdictAlready, "in force before this action was tried: "+strings.TrimSpace(o.Got)
		if e := l.t.Store.active((&Entry{Action: a, Netns: l.t.Netns}).key()); e >= 0 {
			tr.Reason += fmt.Sprintf(" (kept by wirespeed, journal entry %d; was %q)", l.t.Store.J.Entries[e].Seq, trim(l.t.Store.J.Entries[e].Old))
		}
		return
	}
	tr.Verdict = VerdictFailed
	if o.State == StateRefused {
		tr.Verdict = VerdictRefused
	}
	tr.Reason = o.Note
	if err != nil {
		tr.Reason = err.Error()
	}
}

// abandon ends the run after a failed revert or measurement: a trial that
// wrote nothing failed; one that wrote the action is reverted, even on
// Ctrl-C, so nothing of a half-tried action stays behind.
func (l *loop) abandon(ctx context.Context, a doctor.Action, applied bool, failed error) (Trial, error) {
	if !applied {
		return Trial{Action: a, Verdict: VerdictFailed, Reason: failed.Error()},
			fmt.Errorf("%s: %w (nothing of it was applied)", a.ID, failed)
	}
	_, rerr := l.t.Revert(context.WithoutCancel(ctx), []string{a.ID}, false)
	var ue *UnknownIDError
	if errors.As(rerr, &ue) {
		rerr = nil // never applied
	}
	tr := Trial{Action: a, Verdict: VerdictReverted, Reason: failed.Error()}
	if rerr != nil {
		return tr, fmt.Errorf("%s: %v; and reverting it: %w", a.ID, failed, rerr)
	}
	return tr, fmt.Errorf("%s: %w (the action was reverted)", a.ID, failed)
}

// judgeTrial judges every metric measured in all pairs, puts the goal's
// and the others' deltas and the reason on tr, and says whether to keep
// the action: the goal got significantly better and no guarded metric
// (guards nil: every metric) significantly worse.
func judgeTrial(tr *Trial, goal string, guards []string, pairs int, before, after map[string][]float64) bool {
	metrics := make([]string, 0, len(before))
	for k := range before {
		if len(after[k]) == len(before[k]) && len(before[k]) == pairs {
			metrics = append(metrics, k)
		}
	}
	sort.Strings(metrics)
	for _, k := range metrics {
		d := judge(k, before[k], after[k])
		if k == goal {
			tr.Goal = &d
		} else {
			tr.Others = append(tr.Others, d)
		}
	}
	switch {
	case tr.Goal == nil:
		tr.Reason = "the measurement has no " + goal
		return false
	case tr.Goal.Worse:
		tr.Reason = fmt.Sprintf("%s got worse (ratio %.3f, p %.3g)", goal, tr.Goal.Ratio, tr.Goal.P)
		return false
	case !tr.Goal.Better:
		tr.Reason = fmt.Sprintf("%s did not improve significantly (ratio %.3f, p %.3g)", goal, tr.Goal.Ratio, tr.Goal.P)
		return false
	}
	tr.Reason = fmt.Sprintf("%s improved (ratio %.3f, p %.3g)", goal, tr.Goal.Ratio, tr.Goal.P)
	for _, o := range tr.Others {
		if o.Worse && (guards == nil || slices.Contains(guards, o.Metric)) {
			tr.Reason = fmt.Sprintf("%s improved but %s got worse (ratio %.3f, p %.3g)", goal, o.Metric, o.Ratio, o.P)
			return false
		}
	}
	for _, o := range tr.Others {
		if o.Worse {
			tr.Reason += fmt.Sprintf("; %s got worse (ratio %.3f, p %.3g), not guarded", o.Metric, o.Ratio, o.P)
		}
	}
	return true
}

// failedTrials is an error naming the actions that could not be tried
// (the kernel rejected them, the device vanished), or nil: a tune whose
// actions all failed has not done its job and must not exit 0.
func failedTrials(trials []Trial) error {
	var ids []string
	for _, tr := range trials {
		if tr.Verdict == VerdictFailed {
			ids = append(ids, tr.Action.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d actions failed (%s): see the reasons above", len(ids), len(trials), strings.Join(ids, ", "))
}

// Leftover returns the index of the journal entry for a's target (in this
// network namespace) that a tune killed before its verdict left in force:
// active, and neither kept by a loop nor applied by a static run. -1 if none.
func (t *Tuner) Leftover(a doctor.Action) int {
	i := t.Store.active((&Entry{Action: a, Netns: t.Netns}).key())
	if i >= 0 && !t.Store.J.Entries[i].Kept {
		return i
	}
	return -1
}

// LeftoverNotes says, for each change an interrupted tune (a killed
// trial) left in force in this namespace and that no action of acts
// touches, what it is and how to put it back: a run of other actions,
// static or measured, would otherwise leave it in force unmentioned. The
// leftovers of the actions of acts are put back by the run itself.
func (t *Tuner) LeftoverNotes(acts []doctor.Action) []string {
	var notes []string
	for _, e := range t.leftovers(acts) {
		notes = append(notes, fmt.Sprintf("%s: %s is still %q, left in force by an interrupted tune (journal entry %d, %s) and not in this plan; 'wirespeed tune revert %s' puts back %q, or apply it again to keep it",
			e.Action.ID, e.Action.Target, e.Action.Value, e.Seq, e.Time, e.Action.ID, trim(e.Old)))
	}
	return notes
}

// leftovers lists the undecided entries of this namespace whose target no
// action of acts touches.
func (t *Tuner) leftovers(acts []doctor.Action) []Entry {
	planned := map[string]bool{}
	for _, a := range acts {
		planned[(&Entry{Action: a, Netns: t.Netns}).key()] = true
	}
	var out []Entry
	for _, e := range t.Store.J.Entries {
		if e.Active() && !e.Kept && e.Netns == t.Netns && !planned[e.key()] {
			out = append(out, e)
		}
	}
	return out
}

// Keep marks the active entries of action id as decided on (kept), so a
// later run does not take them for leftovers of an interrupted one.
func (t *Tuner) Keep(id string) error {
	t.markKept(id)
	return t.Store.Save()
}

func (t *Tuner) markKept(id string) {
	for i := range t.Store.J.Entries {
		if e := &t.Store.J.Entries[i]; e.Active() && e.Action.ID == id {
			e.Kept = true
		}
	}
}

// ParseVerifyOutput reads what a --verify-cmd printed: a JSON object with
// any of throughput_mbit, latency_p99_ms, cpu_per_mbit, or a bare number on
// the last non-empty line, taken as the goal metric.
func ParseVerifyOutput(out []byte, goal string) (Metrics, error) {
	s := strings.TrimSpace(string(out))
	if strings.HasPrefix(s, "{") {
		var raw map[string]any
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			return nil, fmt.Errorf("verify command printed JSON that cannot be read: %w", err)
		}
		m := Metrics{}
		for _, k := range []string{MetricThroughput, MetricLatencyP99, MetricCPU} {
			if v, ok := raw[k]; ok {
				f, ok := v.(float64)
				if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, fmt.Errorf("verify command: %s is %v, want a number", k, v)
				}
				if f < 0 {
					return nil, fmt.Errorf("verify command: %s is %v: a throughput, latency or CPU share is never negative; fix the command to print the measured value", k, f)
				}
				m[k] = f
			}
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("verify command printed JSON without %s, %s or %s", MetricThroughput, MetricLatencyP99, MetricCPU)
		}
		return m, nil
	}
	lines := strings.Split(s, "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	f, err := strconv.ParseFloat(last, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("verify command's last line %q is not a number (print the %s value, or a JSON object)", last, goal)
	}
	if f < 0 {
		return nil, fmt.Errorf("verify command's last line %q: a %s value is never negative; fix the command to print the measured value", last, goal)
	}
	return Metrics{goal: f}, nil
}

// firstIn returns the first id of ids that is in set ("" if none).
func firstIn(ids []string, set map[string]bool) string {
	for _, id := range ids {
		if set[id] {
			return id
		}
	}
	return ""
}

// Select returns the actions of plan with the given ids, in the order
// named, and the ids the plan has no action for.
func Select(plan []doctor.Action, ids []string) (sel []doctor.Action, unknown []string) {
	for _, id := range ids {
		i := slices.IndexFunc(plan, func(a doctor.Action) bool { return a.ID == id })
		if i < 0 {
			unknown = append(unknown, id)
			continue
		}
		sel = append(sel, plan[i])
	}
	return sel, unknown
}
