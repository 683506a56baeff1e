// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/wirespeed/wirespeed/internal/stats"
)

// Headline is what a person wants from a comparison in five seconds: how
// a variant's throughput compares with the base's (a ratio with its 95%
// interval), its latency under load, what its CPU paid per Mbit, and one
// sentence saying whether the data decide.
type Headline struct {
	Variant string `json:"variant"`
	Base    string `json:"base,omitempty"` // "" for the base itself
	N       int    `json:"n"`              // runs (or pairs) behind the ratio
	Paired  bool   `json:"paired"`         // ratio from interleaved pairs

	Mbit     float64 `json:"mbit"`      // mean total throughput (all directions)
	BaseMbit float64 `json:"base_mbit"` // of the base
	// CoV is the coefficient of variation of the variant's throughput over
	// its runs (stdev / mean; 0 with fewer than two runs): how much one
	// run of this setup wobbles, and so how far a verdict can be trusted.
	CoV  float64 `json:"cov,omitempty"`
	Runs int     `json:"runs,omitempty"` // the variant's runs behind Mbit and CoV
	// Ratio is the geometric mean of throughput(variant)/throughput(base);
	// RatioLow/High bound its 95% interval (0 when there is none, n < 2).
	Ratio     float64 `json:"ratio,omitempty"`
	RatioLow  float64 `json:"ratio_ci95_low,omitempty"`
	RatioHigh float64 `json:"ratio_ci95_high,omitempty"`
	// Significant: the interval excludes 1.
	Significant bool `json:"significant"`
	// NeedRepeat estimates the repetitions at which the observed
	// difference and spread would make the interval exclude 1 (0 = not
	// estimated, -1 = more than MaxRepeatAdvice).
	NeedRepeat int `json:"need_repeat,omitempty"`

	Probe         string  `json:"probe,omitempty"` // "icmp" or "udp"
	LoadP50Ms     float64 `json:"load_p50_ms,omitempty"`
	LoadP99Ms     float64 `json:"load_p99_ms,omitempty"`
	BaseLoadP50Ms float64 `json:"base_load_p50_ms,omitempty"`
	BaseLoadP99Ms float64 `json:"base_load_p99_ms,omitempty"`
	// CPUMsPerMbit is busy CPU time (ms, all CPUs) per Mbit moved.
	CPUMsPerMbit     float64 `json:"cpu_ms_per_mbit,omitempty"`
	BaseCPUMsPerMbit float64 `json:"base_cpu_ms_per_mbit,omitempty"`

	Verdict string `json:"verdict"`

	p, how string // the test's p-value (formatted) and its kind, for Rename
	state  int    // verdict kind: see verdictText
}

const (
	noData = iota
	noInterval
	significant
	undecided
	noDifference
)

// MaxRepeatAdvice bounds the repetitions a verdict suggests.
const MaxRepeatAdvice = 30

// runTotals is what a headline needs from one run.
type runTotals struct {
	rep       int
	mbit      float64 // sum of the *_mbit metrics
	busy      float64 // busy CPUs (NaN when unknown)
	p50, p99  float64
	probeKind string
}

func totalsOf(run *Run) (runTotals, bool) {
	t := runTotals{rep: run.Rep, busy: math.NaN(), p50: math.NaN(), p99: math.NaN()}
	found := false
	for k, v := range run.Metrics {
		if strings.HasSuffix(k, "_mbit") && !math.IsNaN(v) {
			t.mbit += v
			found = true
		}
	}
	if !found || t.mbit <= 0 {
		return t, false
	}
	if busy, ok := run.BusyCPUs(); ok {
		t.busy = busy
	}
	for _, kind := range []string{"icmp", "udp"} {
		if p, ok := run.Metrics[kind+"_load_p50_ms"]; ok {
			t.probeKind, t.p50 = kind, p
			if q, ok := run.Metrics[kind+"_load_p99_ms"]; ok {
				t.p99 = q
			}
			break
		}
	}
	return t, true
}

func totals(r *Result, variant string) []runTotals {
	var out []runTotals
	for i := range r.Runs {
		if variant != "" && r.Runs[i].Variant != variant {
			continue
		}
		if t, ok := totalsOf(&r.Runs[i]); ok {
			out = append(out, t)
		}
	}
	return out
}

func meanOf(ts []runTotals, f func(runTotals) float64) float64 {
	var xs []float64
	for _, t := range ts {
		if x := f(t); !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return stats.Mean(xs)
}

// BusyCPUs is how many CPUs' worth of time the run kept busy in its loaded
// window: the mean busy share of the CPUs its samples read, times their
// number. The count is the run's own (every CPU of /proc/stat), not
// runtime.NumCPU, which follows the process's affinity. False when the run
// has no CPU samples.
func (run *Run) BusyCPUs() (float64, bool) {
	idle, ok := run.Metrics["cpu_idle_pct"]
	if !ok || run.Load == nil || len(run.Load.CPUs) == 0 {
		return 0, false
	}
	return (100 - idle) / 100 * float64(len(run.Load.CPUs)), true
}

// CPUMsPerMbit is wirespeed's one definition of "CPU per Mbit": busy CPU
// time in milliseconds, all of the run's CPUs together, per Mbit moved -
// busy CPUs (BusyCPUs) over Mbit/s, times 1000. 0 when nothing moved.
// bench's headline and tune's cpu goal both use it.
func CPUMsPerMbit(busyCPUs, mbit float64) float64 {
	if mbit <= 0 {
		return 0
	}
	return busyCPUs * 1000 / mbit
}

// cpuPerMbit is CPU per Mbit over the runs that know their CPU: total busy
// CPUs over total Mbit/s.
func cpuPerMbit(ts []runTotals) float64 {
	var busy, mbit float64
	for _, t := range ts {
		if !math.IsNaN(t.busy) {
			busy += t.busy
			mbit += t.mbit
		}
	}
	return CPUMsPerMbit(busy, mbit)
}

// HeadlineOf compares variant bv of b with variant av of a ("" = all runs).
// paired takes the runs as interleaved repetitions (same rep number = one
// pair), as in one bench run with several variants.
func HeadlineOf(a *Result, av string, b *Result, bv string, paired bool) Headline {
	ta, tb := totals(a, av), totals(b, bv)
	h := Headline{Variant: bv, Base: av, Paired: paired}
	h.Mbit = meanOf(tb, func(t runTotals) float64 { return t.mbit })
	h.CoV, h.Runs = throughputCoV(tb)
	h.BaseMbit = meanOf(ta, func(t runTotals) float64 { return t.mbit })
	h.CPUMsPerMbit = cpuPerMbit(tb)
	h.BaseCPUMsPerMbit = cpuPerMbit(ta)
	h.LoadP50Ms = meanOf(tb, func(t runTotals) float64 { return t.p50 })
	h.LoadP99Ms = meanOf(tb, func(t runTotals) float64 { return t.p99 })
	h.BaseLoadP50Ms = meanOf(ta, func(t runTotals) float64 { return t.p50 })
	h.BaseLoadP99Ms = meanOf(ta, func(t runTotals) float64 { return t.p99 })
	for _, t := range tb {
		if t.probeKind != "" {
			h.Probe = t.probeKind
			break
		}
	}
	if len(ta) == 0 || len(tb) == 0 {
		h.state = noData
		h.Verdict = h.verdictText()
		return h
	}
	la, lb, w, err := throughputTest(ta, tb, paired)
	h.N = min(len(la), len(lb))
	if err != nil {
		// Fewer than two runs (or pairs): a ratio of means, no interval.
		if h.BaseMbit > 0 {
			h.Ratio = h.Mbit / h.BaseMbit
		}
		h.NeedRepeat = 3
		h.state = noInterval
		h.Verdict = h.verdictText()
		return h
	}
	h.Ratio, h.RatioLow, h.RatioHigh = math.Exp(w.Diff), math.Exp(w.CILow), math.Exp(w.CIHigh)
	h.Significant = w.P < Alpha
	h.how, h.p = "paired", fmt.Sprintf("%.2g", w.P)
	if !paired {
		h.how = "Welch"
	}
	switch {
	case h.Significant:
		h.state = significant
	default:
		h.NeedRepeat = needRepeat(la, lb, paired, w.Diff)
		h.state = undecided
		if h.NeedRepeat < 0 {
			h.state = noDifference
		}
	}
	h.Verdict = h.verdictText()
	return h
}

// throughputTest compares the runs' throughput on the logarithmic scale
// and returns the logarithms it compared. Paired (interleaved
// repetitions): the paired ratios of stats.SummarizeRatios - the geometric
// mean of variant/base per repetition with its interval, as tune judges
// its pairs - in a TTest whose Diff and interval are on the log scale.
// Between files: Welch's test on the logarithms.
func throughputTest(ta, tb []runTotals, paired bool) (la, lb []float64, w stats.TTest, err error) {
	if !paired {
		for _, t := range ta {
			la = append(la, math.Log(t.mbit))
		}
		for _, t := range tb {
			lb = append(lb, math.Log(t.mbit))
		}
		w, err = stats.Welch(la, lb)
		return la, lb, w, err
	}
	a, b := map[int]float64{}, map[int]float64{}
	for _, t := range ta {
		a[t.rep] = t.mbit
	}
	for _, t := range tb {
		b[t.rep] = t.mbit
	}
	as, bs := stats.PairByKey(a, b)
	for i := range as {
		la, lb = append(la, math.Log(as[i])), append(lb, math.Log(bs[i]))
	}
	if len(as) < 2 {
		return la, lb, w, stats.ErrTooFew
	}
	s := stats.SummarizeRatios(stats.PairedRatios(as, bs))
	w = stats.TTest{Diff: math.Log(s.GeoMean), CILow: math.Log(s.GeoLow), CIHigh: math.Log(s.GeoHigh), P: s.P, DF: float64(s.N - 1)}
	return la, lb, w, nil
}

// throughputCoV is stdev/mean of the runs' throughput and the runs counted.
func throughputCoV(ts []runTotals) (float64, int) {
	var xs []float64
	for _, t := range ts {
		if t.mbit > 0 {
			xs = append(xs, t.mbit)
		}
	}
	if len(xs) < 2 {
		return 0, len(xs)
	}
	return stats.Stdev(xs) / stats.Mean(xs), len(xs)
}

// Rename sets the names the headline uses for the two sides (file names,
// "A"/"B") and words the verdict with them.
func (h *Headline) Rename(base, variant string) {
	h.Base, h.Variant = base, variant
	h.Verdict = h.verdictText()
}

func (h *Headline) verdictText() string {
	b, v := h.Base, h.Variant
	if b == "" {
		b = "A"
	}
	if v == "" {
		v = "B"
	}
	switch h.state {
	case noData:
		return "no throughput to compare"
	case noInterval:
		return fmt.Sprintf("%s: %s throughput vs %s from n=%d, no interval; run --repeat 3 or more to decide", v, pct(h.Ratio), b, h.N)
	case significant:
		return fmt.Sprintf("%s: %s throughput vs %s, significant at n=%d (%s, p=%s)", v, pct(h.Ratio), b, h.N, h.how, h.p)
	case undecided:
		return fmt.Sprintf("%s: %s throughput vs %s, not yet significant at n=%d; run --repeat %d to decide", v, pct(h.Ratio), b, h.N, h.NeedRepeat)
	}
	return fmt.Sprintf("%s: no throughput difference shown vs %s at n=%d (%s, interval %s to %s); a difference this small against this noise would take more than %d repetitions",
		v, b, h.N, pct(h.Ratio), pct(h.RatioLow), pct(h.RatioHigh), MaxRepeatAdvice)
}

// needRepeat is the smallest n whose 95% interval, with the spread seen so
// far, would exclude zero for the difference seen so far; -1 above
// MaxRepeatAdvice.
func needRepeat(la, lb []float64, paired bool, diff float64) int {
	var v float64
	if paired {
		d := make([]float64, len(la))
		for i := range la {
			d[i] = lb[i] - la[i]
		}
		v = stats.Variance(d)
	} else {
		v = stats.Variance(la) + stats.Variance(lb)
	}
	if diff == 0 {
		return -1
	}
	for n := max(len(la), 2) + 1; n <= MaxRepeatAdvice; n++ {
		if stats.TQuantile(0.975, float64(n-1))*math.Sqrt(v/float64(n)) < math.Abs(diff) {
			return n
		}
	}
	return -1
}

// pct formats a ratio as a signed percent change.
func pct(ratio float64) string {
	if ratio <= 0 || math.IsNaN(ratio) {
		return "?"
	}
	return fmt.Sprintf("%+.0f%%", 100*(ratio-1))
}

// Headlines compares every variant of r with its first, as paired
// interleaved repetitions; the first variant's line has no ratio.
func Headlines(r *Result) []Headline {
	if len(r.Variants) == 0 {
		return nil
	}
	base := r.Variants[0].Name
	var out []Headline
	for i, v := range r.Variants {
		if i == 0 {
			h := HeadlineOf(r, base, r, base, true)
			h.Base, h.Ratio, h.RatioLow, h.RatioHigh, h.Significant, h.NeedRepeat = "", 0, 0, 0, false, 0
			h.N = len(totals(r, base))
			h.Verdict = fmt.Sprintf("%s: the base the others are compared with", base)
			if len(r.Variants) == 1 {
				h.Verdict = ""
			}
			out = append(out, h)
			continue
		}
		out = append(out, HeadlineOf(r, base, r, v.Name, true))
	}
	return out
}

// Measured says whether both sides of the headline have throughput.
func (h Headline) Measured() bool { return h.state != noData }

// WriteHeadlines prints one short block per variant.
func WriteHeadlines(w io.Writer, hs []Headline) {
	if len(hs) == 0 {
		return
	}
	for _, h := range hs {
		name := h.Variant
		if name == "" {
			name = "all runs"
		}
		if h.Runs == 0 || h.Mbit <= 0 || math.IsNaN(h.Mbit) {
			// Missing is said to be missing, never printed as 0 Mbit/s.
			fmt.Fprintf(w, "%-10s no throughput measured: its runs hold no throughput figure (a run that broke, or a damaged file)\n", name+":")
			if h.Verdict != "" && h.Base != "" {
				fmt.Fprintf(w, "           %s\n", h.Verdict)
			}
			continue
		}
		line := fmt.Sprintf("%-10s %s Mbit/s", name+":", fmtNum(h.Mbit))
		if h.CoV > 0 {
			line += fmt.Sprintf(" (CoV %.1f%% over %d runs)", 100*h.CoV, h.Runs)
		}
		if h.Base != "" && h.Ratio > 0 {
			line += fmt.Sprintf(" = %.2fx %s", h.Ratio, h.Base)
			if h.RatioHigh > 0 {
				line += fmt.Sprintf(" [%.2f-%.2f]", h.RatioLow, h.RatioHigh)
			}
		}
		if h.Probe != "" && h.LoadP50Ms > 0 {
			line += fmt.Sprintf("; %s RTT under load p50 %s ms, p99 %s ms", h.Probe, fmtNum(h.LoadP50Ms), fmtNum(h.LoadP99Ms))
		}
		if h.CPUMsPerMbit > 0 {
			line += fmt.Sprintf("; CPU %.3f ms/Mbit", h.CPUMsPerMbit)
		}
		fmt.Fprintln(w, line)
		if h.Verdict != "" && h.Base != "" {
			fmt.Fprintf(w, "           %s\n", h.Verdict)
		}
	}
	fmt.Fprintln(w, "(throughput ratio: geometric mean with its 95% interval; CoV: how much the runs of one setup vary, stdev/mean; CPU: busy time of all CPUs per Mbit moved)")
}
