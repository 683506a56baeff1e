// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/stats"
)

// WriteText prints a human summary of r: the settings and a headline per
// variant; all adds every metric, the per-CPU table and the napi threads.
func WriteText(w io.Writer, r *Result, all bool) {
	status := "complete"
	if !r.Complete {
		status = "INCOMPLETE: " + r.Incomplete
	}
	peer := "host lab (veth between two namespaces)"
	if r.Settings.Peer != "" {
		peer = "peer " + r.Settings.Peer
	}
	fmt.Fprintf(w, "wirespeed bench: %s, %s\n", peer, status)
	s := r.Settings
	fmt.Fprintf(w, "load: iperf3 %s %s, %d streams in %d process(es), %gs (first %gs omitted), direction %s",
		r.Iperf3.Version, strings.ToUpper(s.Protocol), s.Streams, r.Iperf3.Processes, s.DurationS, s.OmitS, s.Direction)
	if s.RateMbit > 0 {
		fmt.Fprintf(w, ", capped at %g Mbit/s", s.RateMbit)
	}
	fmt.Fprintf(w, "; %d repetition(s)\n", s.Repeat)
	if r.Iperf3.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Iperf3.Note)
	}
	fmt.Fprintf(w, "probe: every %gms, TOS %#x, priority %d; idle %gs before the load\n", s.ProbeInterval, s.ProbeTOS, s.ProbePriority, s.IdleS)
	for _, v := range r.Variants {
		if v.Lab != nil {
			fmt.Fprintf(w, "variant %-10s %s\n", v.Name+":", LabString(v))
		}
	}
	fmt.Fprintln(w)
	WriteHeadlines(w, Headlines(r))
	if all {
		fmt.Fprintln(w)
		writeTables(w, r)
	}
	for _, run := range r.Runs {
		if run.Error != "" {
			fmt.Fprintf(w, "run %s #%d: %s\n", run.Variant, run.Rep, run.Error)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func writeTables(w io.Writer, r *Result) {
	base := ""
	if len(r.Summary) > 0 {
		base = r.Summary[0].Variant
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "metric\t"
	for _, vs := range r.Summary {
		header += fmt.Sprintf("%s (n=%d)\t", vs.Variant, vs.Runs)
		if vs.Variant != base {
			header += "ratio\t"
		}
	}
	fmt.Fprintln(tw, header)
	for _, m := range r.MetricNames() {
		if !showMetric(m) {
			continue
		}
		line := m + "\t"
		bm, bok := lookup(r.Summary, base, m)
		for _, vs := range r.Summary {
			sm, ok := vs.Metrics[m]
			if !ok || sm.N == 0 {
				line += "-\t"
			} else {
				line += fmtSummary(sm) + "\t"
			}
			if vs.Variant != base {
				if ok && bok && bm.Mean != 0 && sm.N > 0 {
					line += fmt.Sprintf("%.2fx\t", sm.Mean/bm.Mean)
				} else {
					line += "-\t"
				}
			}
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	// Where the CPU went, per variant (mean over runs).
	fmt.Fprintln(w, "\nper-CPU load during the load (mean over runs; % of each CPU):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tcpu\tusr\tsys\tirq\tsoftirq\tidle\tNET_RX/s\tNET_TX/s\t")
	for _, v := range r.Variants {
		for _, c := range meanCPULoad(r, v.Name) {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%.0f\t\n", v.Name, c.CPU, c.UserPct, c.SysPct, c.IRQPct, c.SoftPct, c.IdlePct, c.NetRXPerS, c.NetTXPerS)
		}
	}
	tw.Flush()
	for _, run := range r.Runs {
		if run.Load == nil || len(run.Load.NAPI) == 0 {
			continue
		}
		var parts []string
		for _, t := range run.Load.NAPI {
			if t.CPUPct >= 0.5 {
				parts = append(parts, fmt.Sprintf("%s %.0f%% on CPU %v", t.Comm, t.CPUPct, t.RanOn))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "napi threads (%s #%d): %s\n", run.Variant, run.Rep, strings.Join(parts, "; "))
		}
	}
}

func showMetric(m string) bool {
	return !strings.HasSuffix(m, "_p90_ms") || strings.Contains(m, "_load_")
}

func lookup(sum []VariantSummary, variant, metric string) (stats.Summary, bool) {
	for _, vs := range sum {
		if vs.Variant == variant {
			s, ok := vs.Metrics[metric]
			return s, ok && s.N > 0
		}
	}
	return stats.Summary{}, false
}

func fmtSummary(s stats.Summary) string {
	if s.N < 2 {
		return fmtNum(s.Mean)
	}
	return fmt.Sprintf("%s ±%s", fmtNum(s.Mean), fmtNum((s.CIHigh-s.CILow)/2))
}

// FormatNum prints a figure with the digits its size deserves.
func FormatNum(x float64) string { return fmtNum(x) }

func fmtNum(x float64) string {
	a := math.Abs(x)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

func meanCPULoad(r *Result, variant string) []CPULoad {
	var loads []*LoadSummary
	for _, run := range r.Runs {
		if run.Variant == variant {
			loads = append(loads, run.Load)
		}
	}
	return MeanCPULoads(loads)
}

// MeanCPULoads averages per-CPU load shares over runs (nil entries are
// skipped), by CPU number.
func MeanCPULoads(loads []*LoadSummary) []CPULoad {
	acc := map[int]*CPULoad{}
	cnt := map[int]float64{}
	for _, l := range loads {
		if l == nil {
			continue
		}
		for _, c := range l.CPUs {
			a := acc[c.CPU]
			if a == nil {
				a = &CPULoad{CPU: c.CPU}
				acc[c.CPU] = a
			}
			a.UserPct += c.UserPct
			a.SysPct += c.SysPct
			a.IRQPct += c.IRQPct
			a.SoftPct += c.SoftPct
			a.IdlePct += c.IdlePct
			a.NetRXPerS += c.NetRXPerS
			a.NetTXPerS += c.NetTXPerS
			cnt[c.CPU]++
		}
	}
	var out []CPULoad
	for cpu, a := range acc {
		n := cnt[cpu]
		out = append(out, CPULoad{CPU: cpu, UserPct: a.UserPct / n, SysPct: a.SysPct / n, IRQPct: a.IRQPct / n,
			SoftPct: a.SoftPct / n, IdlePct: a.IdlePct / n, NetRXPerS: a.NetRXPerS / n, NetTXPerS: a.NetTXPerS / n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CPU < out[j].CPU })
	return out
}

// LabString describes a variant's lab knobs in one line.
func LabString(v Variant) string {
	c := v.Lab
	if c == nil {
		return "peer"
	}
	onoff := map[bool]string{true: "on", false: "off"}
	s := fmt.Sprintf("receiver gro %s, threaded %s, sender tso/gso/gro %s", onoff[c.GRO], onoff[c.Threaded], onoff[!c.SenderOffloadsOff])
	if c.RPSMask != "" {
		s += ", rps " + c.RPSMask
	}
	if c.SenderQdisc != "" {
		s += ", sender qdisc " + c.SenderQdisc
	}
	if c.RateMbit > 0 {
		s += fmt.Sprintf(", shaped to %g Mbit/s (tbf)", c.RateMbit)
	}
	if c.PinSender != nil {
		s += fmt.Sprintf(", client on CPU %d", *c.PinSender)
	}
	if c.PinReceiver != nil {
		s += fmt.Sprintf(", server on CPU %d", *c.PinReceiver)
	}
	return s
}

// Delta compares one metric between two sets of runs.
type Delta struct {
	Metric  string        `json:"metric"`
	A       stats.Summary `json:"a"`
	B       stats.Summary `json:"b"`
	DiffPct float64       `json:"diff_pct"` // (B-A)/A in percent
	Welch   *stats.TTest  `json:"welch,omitempty"`
	// Paired is the paired t-test over repetitions, for two variants of one
	// interleaved run (rep i of A next to rep i of B); it decides then.
	Paired      *stats.TTest `json:"paired,omitempty"`
	Significant bool         `json:"significant"` // p < Alpha
	Better      string       `json:"better"`      // "a", "b" or "" (not significant)
	Note        string       `json:"note,omitempty"`
}

// Alpha is the significance level of compare.
const Alpha = 0.05

// Compare computes per-metric deltas of runs of variant av in a against runs
// of variant bv in b ("" = all runs of that file).
func Compare(a *Result, av string, b *Result, bv string) []Delta {
	names := map[string]bool{}
	for _, m := range a.MetricNames() {
		names[m] = true
	}
	var out []Delta
	for _, m := range b.MetricNames() {
		if !names[m] {
			continue
		}
		xa, xb := a.MetricValues(av, m), b.MetricValues(bv, m)
		if len(xa) == 0 || len(xb) == 0 {
			continue
		}
		d := Delta{Metric: m, A: stats.Summarize(xa), B: stats.Summarize(xb)}
		if d.A.Mean != 0 {
			d.DiffPct = 100 * (d.B.Mean - d.A.Mean) / math.Abs(d.A.Mean)
		}
		w, err := stats.Welch(xa, xb)
		if err != nil {
			d.Note = "n<2: no test"
		} else {
			wc := w
			d.Welch = &wc
			if a == b && av != bv {
				if pa, pb := pairs(a, av, bv, m); len(pa) >= 2 {
					if pt, err := stats.PairedT(pa, pb); err == nil {
						d.Paired = &pt
						w = pt
					}
				}
			}
			d.Significant = w.P < Alpha
			if d.Significant && w.Diff != 0 {
				if (w.Diff > 0) == HigherIsBetter(m) {
					d.Better = "b"
				} else {
					d.Better = "a"
				}
			}
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return metricRank(out[i].Metric) < metricRank(out[j].Metric) })
	return out
}

// pairs returns metric m of variants av and bv for the repetitions that
// have both.
func pairs(r *Result, av, bv, m string) (xa, xb []float64) {
	byRep := map[int][2]*float64{}
	for i := range r.Runs {
		run := &r.Runs[i]
		x, ok := run.Metrics[m]
		if !ok || math.IsNaN(x) {
			continue
		}
		p := byRep[run.Rep]
		switch run.Variant {
		case av:
			p[0] = &x
		case bv:
			p[1] = &x
		}
		byRep[run.Rep] = p
	}
	reps := make([]int, 0, len(byRep))
	for k := range byRep {
		reps = append(reps, k)
	}
	sort.Ints(reps)
	for _, k := range reps {
		if p := byRep[k]; p[0] != nil && p[1] != nil {
			xa, xb = append(xa, *p[0]), append(xb, *p[1])
		}
	}
	return xa, xb
}

// WriteCompare prints deltas as a table.
func WriteCompare(w io.Writer, nameA, nameB string, ds []Delta) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	paired := false
	for _, d := range ds {
		paired = paired || d.Paired != nil
	}
	if paired {
		fmt.Fprintf(tw, "metric\tA: %s\tB: %s\tB-A\tp (Welch)\tp (paired)\tverdict\t\n", nameA, nameB)
	} else {
		fmt.Fprintf(tw, "metric\tA: %s\tB: %s\tB-A\tp (Welch)\tverdict\t\n", nameA, nameB)
	}
	for _, d := range ds {
		p, verdict := "-", d.Note
		if d.Welch != nil {
			p = fmt.Sprintf("%.3g", d.Welch.P)
		}
		if paired {
			if d.Paired != nil {
				p += fmt.Sprintf("\t%.3g", d.Paired.P)
			} else {
				p += "\t-"
			}
		}
		if d.Welch != nil {
			switch {
			case !d.Significant:
				verdict = "no significant difference"
			case d.Better == "b":
				verdict = "B better"
			case d.Better == "a":
				verdict = "B worse"
			}
		}
		diff := "-"
		if d.A.Mean != 0 {
			diff = fmt.Sprintf("%+.1f%%", d.DiffPct)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", d.Metric, fmtSummary(d.A), fmtSummary(d.B), diff, p, verdict)
	}
	tw.Flush()
	if paired {
		fmt.Fprintf(w, "(mean ±95%% CI half-width; significant when p < %g, by the paired test over interleaved repetitions)\n", Alpha)
		return
	}
	fmt.Fprintf(w, "(mean ±95%% CI half-width; significant when p < %g)\n", Alpha)
}

// MergeSides builds one result from two lists of result files (A and B),
// so that results of separate runs - a VM lab booted once per repetition,
// stock and patched modules interleaved - compare like one interleaved
// bench: A's runs become variant "A", B's "B", and the i-th file of each
// side is repetition i, so Compare pairs them. variantA/variantB pick one
// variant of each file ("" = all runs).
func MergeSides(a, b []*Result, variantA, variantB string) *Result {
	m := &Result{Variants: []Variant{{Name: "A"}, {Name: "B"}}}
	add := func(rs []*Result, variant, label string) {
		for i, r := range rs {
			for _, run := range r.Runs {
				if variant != "" && run.Variant != variant {
					continue
				}
				run.Variant = label
				run.Rep = i*1000 + run.Rep
				m.Runs = append(m.Runs, run)
			}
		}
	}
	add(a, variantA, "A")
	add(b, variantB, "B")
	m.Summarize()
	return m
}
