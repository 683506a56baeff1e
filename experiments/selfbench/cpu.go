// SPDX-License-Identifier: Apache-2.0

package selfbench

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/stats"
)

// RateTolerance is how far a fixed-rate run's delivered throughput may be
// from its cap and still count as run at that rate (the rule written before
// the first run). Outside it the table flags the run; it is not dropped.
const RateTolerance = 0.02

// rateRun is one fixed-rate bench run, reduced to what the CPU table uses.
type rateRun struct {
	CapMbit     float64 // --bitrate
	Mbit        float64 // delivered (iperf3's received rate)
	BusyCPU     float64 // CPU-seconds per second, all CPUs: wall - idle - iowait - steal
	TickBusyCPU float64 // the same from /proc/stat's tick-sampled fields user+nice+system+irq+softirq
	StealCPU    float64 // CPU-seconds per second, all CPUs: steal
	CPUs        int
	CPUPerGbitS float64 // BusyCPU per Gbit/s delivered: CPU-seconds per Gbit
}

// userHZ is the unit of /proc/stat's times (USER_HZ: 100 on every Linux
// architecture).
const userHZ = 100

// readRateRuns reads d/rate-MODE-N.json.gz: the runs by mode and repetition.
func readRateRuns(d string) (map[string]map[int]rateRun, error) {
	files, err := kit.Glob(filepath.Join(d, "rate-*.json.gz"))
	if err != nil {
		return nil, err
	}
	out := map[string]map[int]rateRun{}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "rate-"), ".json.gz")
		i := strings.LastIndexByte(name, '-')
		rep, err := strconv.Atoi(name[i+1:])
		if i <= 0 || err != nil {
			return nil, fmt.Errorf("%s: not rate-MODE-N.json.gz", f)
		}
		mode := name[:i]
		b, err := kit.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r, err := bench.Decode(b, f)
		if err != nil {
			return nil, err
		}
		rr, err := reduceRateRun(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if out[mode] == nil {
			out[mode] = map[int]rateRun{}
		}
		out[mode][rep] = rr
	}
	if len(out["off"]) == 0 {
		return nil, fmt.Errorf("no rate-off-N.json.gz")
	}
	return out, nil
}

// reduceRateRun: busy CPU over bench's load window (after the omitted
// seconds), from its own per-CPU /proc/stat samples at the window's ends,
// summed over the CPUs, in CPU-seconds per second.
//
// Busy is the wall time less idle, iowait and steal. Not the sum of user,
// nice, system, irq and softirq: on a kernel with tick-based CPU accounting
// (CONFIG_TICK_CPU_ACCOUNTING, no IRQ_TIME_ACCOUNTING, as on this VM) those
// are sampled at the timer tick, while idle and iowait are measured (NO_HZ
// idle sleep time). Under a rate-paced load the work runs in bursts locked
// to timers, and the tick samples miss or over-count it: a 3 Gbit/s run had
// 7 busy ticks of 301 on a CPU whose measured idle was 229 (the fields
// summed to 236). The tick-sampled figure is kept beside it
// (TickBusyCPU) to show the gap. Steal (the hypervisor running someone else
// while this CPU wanted to run) is not busy - counted, it would charge the
// host's neighbours to observe; it is kept apart.
func reduceRateRun(r *bench.Result) (rateRun, error) {
	if len(r.Runs) != 1 || !r.Runs[0].Complete {
		return rateRun{}, fmt.Errorf("want one complete run")
	}
	run := r.Runs[0]
	rr := rateRun{CapMbit: r.Settings.RateMbit}
	if rr.CapMbit <= 0 {
		return rr, fmt.Errorf("no --bitrate: not a fixed-rate run")
	}
	var ok bool
	if rr.Mbit, ok = run.Metrics["send_mbit"]; !ok || rr.Mbit <= 0 {
		return rr, fmt.Errorf("no send_mbit")
	}
	if run.Load == nil {
		return rr, fmt.Errorf("no load window")
	}
	var a, b *bench.Sample
	for i := range run.Samples {
		switch run.Samples[i].T {
		case run.Load.From:
			a = &run.Samples[i]
		case run.Load.To:
			b = &run.Samples[i]
		}
	}
	if a == nil || b == nil || b.T <= a.T || len(a.CPU) == 0 || len(a.CPU) != len(b.CPU) {
		return rr, fmt.Errorf("no CPU samples at the load window's ends (%.3f, %.3f s)", run.Load.From, run.Load.To)
	}
	dt := b.T - a.T
	d := func(x, y uint64) float64 { return float64(y) - float64(x) }
	for i := range a.CPU {
		x, y := a.CPU[i], b.CPU[i]
		if x.CPU != y.CPU {
			return rr, fmt.Errorf("CPU samples out of step (cpu %d vs %d)", x.CPU, y.CPU)
		}
		steal := d(x.Steal, y.Steal) / userHZ / dt
		idle := (d(x.Idle, y.Idle) + d(x.IOWait, y.IOWait)) / userHZ / dt
		rr.BusyCPU += 1 - idle - steal
		rr.StealCPU += steal
		rr.TickBusyCPU += (d(x.User, y.User) + d(x.Nice, y.Nice) + d(x.System, y.System) + d(x.IRQ, y.IRQ) +
			d(x.SoftIRQ, y.SoftIRQ)) / userHZ / dt
	}
	rr.CPUs = len(a.CPU)
	rr.CPUPerGbitS = rr.BusyCPU / (rr.Mbit / 1000)
	return rr, nil
}

// pairedRatios returns on/off for each repetition both have, in order.
func pairedRatios(off, on map[int]float64) []float64 {
	return stats.PairedRatios(stats.PairByKey(off, on))
}

// pct is a ratio as a change in percent.
func pct(q float64) string { return fmt.Sprintf("%+.1f%%", (q-1)*100) }

// ratioCell: the geometric mean of the paired ratios - 1 with its 95% t
// interval, the median ratio - 1, and each ratio.
func ratioCell(q []float64) string {
	var each []string
	for _, x := range q {
		each = append(each, fmt.Sprintf("%.3f", x))
	}
	s := stats.SummarizeRatios(q)
	switch s.N {
	case 0:
		return "- (no pairs)"
	case 1:
		return fmt.Sprintf("%s (one pair: no interval)", pct(s.GeoMean))
	}
	return fmt.Sprintf("%s (95%% CI %s .. %s; median %+.1f%%; ratios %s)", pct(s.GeoMean), pct(s.GeoLow), pct(s.GeoHigh),
		(s.Median-1)*100, strings.Join(each, ", "))
}

// cpuTable: observe's CPU cost at a fixed rate - busy CPU per Gbit/s of
// each mode, and each light mode's paired ratio to off.
func cpuTable(d string) (string, error) {
	env, valid, err := validity(d)
	if err != nil {
		return "", err
	}
	runs, err := readRateRuns(d)
	if err != nil {
		return "", err
	}
	modes := rateModes(runs)
	capText, rate := rateRule(modes, runs)
	rows := [][]string{
		{"valid (idle before the run)", "-", valid},
		{"rate cap (`--bitrate`), Mbit/s", "-", strings.Join(capText, ", ")},
		{fmt.Sprintf("every run at its cap (delivered within %.0f%%)", RateTolerance*100), "all", rate},
	}
	per := map[string]map[int]float64{}
	for _, m := range modes {
		var row []string
		row, per[m] = modeRow(m, runs[m])
		rows = append(rows, row)
	}
	rows = append(rows, pairedRows(modes, per)...)
	return kit.Table([]string{"figure (fixed rate)", "goal", "now (" + env.Before.Commit + ")"}, rows), nil
}

// rateModes are the modes of runs: off first, then the others by name.
func rateModes(runs map[string]map[int]rateRun) []string {
	modes := []string{"off"}
	for m := range runs {
		if m != "off" {
			modes = append(modes, m)
		}
	}
	sort.Strings(modes[1:])
	return modes
}

// rateRule checks the rate rule: every run delivered its cap (within
// RateTolerance), and all runs had the same cap. It returns the caps seen
// and the verdict for the table.
func rateRule(modes []string, runs map[string]map[int]rateRun) (capText []string, rate string) {
	var caps []float64
	var off []string
	n := 0
	for _, m := range modes {
		var reps []int
		for r := range runs[m] {
			reps = append(reps, r)
		}
		sort.Ints(reps)
		for _, r := range reps {
			x := runs[m][r]
			n++
			if !containsFloat(caps, x.CapMbit) {
				caps = append(caps, x.CapMbit)
			}
			if math.Abs(x.Mbit/x.CapMbit-1) > RateTolerance {
				off = append(off, fmt.Sprintf("%s-%d %.0f Mbit/s", m, r, x.Mbit))
			}
		}
	}
	for _, c := range caps {
		capText = append(capText, fmt.Sprintf("%.0f", c))
	}
	rate = fmt.Sprintf("yes: all %d runs within %.0f%% of the cap", n, RateTolerance*100)
	if len(caps) > 1 {
		off = append(off, "caps differ between runs")
	}
	if len(off) > 0 {
		rate = fmt.Sprintf("**no** (%d of %d runs): %s", len(off), n, strings.Join(off, "; "))
	}
	return capText, rate
}

// modeRow is mode m's table row - the median busy CPU per Gbit delivered
// over its runs, with the means beside it - and its CPU per Gbit/s by
// repetition, for the paired ratios.
func modeRow(m string, runs map[int]rateRun) ([]string, map[int]float64) {
	per := map[int]float64{}
	var v, busy, tick, steal, mbit []float64
	cpus := 0
	for r, x := range runs {
		per[r] = x.CPUPerGbitS
		v = append(v, x.CPUPerGbitS)
		busy = append(busy, x.BusyCPU)
		tick = append(tick, x.TickBusyCPU)
		steal = append(steal, x.StealCPU)
		mbit = append(mbit, x.Mbit)
		cpus = max(cpus, x.CPUs)
	}
	return []string{fmt.Sprintf("`%s`: busy CPU per Gbit delivered", m), "-",
		fmt.Sprintf("median %.1f ms (%d runs; means: busy %.3f of %d CPUs, tick-sampled %.3f, steal %.3f, %.0f Mbit/s)",
			stats.Percentile(v, 50)*1000, len(v), stats.Mean(busy), cpus, stats.Mean(tick), stats.Mean(steal), stats.Mean(mbit))}, per
}

// pairedRows are the paired-ratio rows: each light mode against off, then
// the program sets against each other (btf against classic).
func pairedRows(modes []string, per map[string]map[int]float64) [][]string {
	var rows [][]string
	for _, m := range modes[1:] {
		rows = append(rows, []string{fmt.Sprintf("`%s` against `off`: CPU per Gbit", m), "<= 3% more",
			ratioCell(pairedRatios(per["off"], per[m]))})
	}
	for i, a := range modes[1:] {
		for _, b := range modes[i+2:] {
			rows = append(rows, []string{fmt.Sprintf("`%s` against `%s`: CPU per Gbit", a, b), "-",
				ratioCell(pairedRatios(per[b], per[a]))})
		}
	}
	return rows
}

func containsFloat(xs []float64, x float64) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
