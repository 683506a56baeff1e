// SPDX-License-Identifier: Apache-2.0

// Package selfbench computes the table of each make self-bench run
// (self-bench.sh; issue 20): what wirespeed's instruments cost and how much
// bench wobbles, from the raw files under data/RUN/.
package selfbench

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/stats"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "selfbench", Tables: Tables})
}

// MaxLoadBefore is the validity rule written before the runs: a run counts
// only when the 1-minute load average before it was below this (an idle
// 2-CPU machine).
const MaxLoadBefore = 0.5

// RefreshSeconds and ScrapeIntervalSeconds give the amortised scrape cost:
// one scrape in RefreshSeconds/ScrapeIntervalSeconds takes a full snapshot
// (exporter.DefaultRefresh; 15 s is the scrape interval of Prometheus's
// example configuration).
const (
	RefreshSeconds        = 300
	ScrapeIntervalSeconds = 15
)

// Tables returns the tables of each run directory under dir/data: RUN (the
// figures), RUN-programs (observe's programs), and, in runs that have their
// files, RUN-cpu (observe's CPU cost at a fixed rate) and RUN-canary (bench's
// throughput against the host-speed canary).
func Tables(dir string) (map[string]string, error) {
	runs, err := kit.Glob(filepath.Join(dir, "data", "*", "env.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, env := range runs {
		d := filepath.Dir(env)
		if err := runTables(d, out); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
	}
	return out, nil
}

func runTables(d string, out map[string]string) error {
	base := filepath.Base(d)
	t, err := runTable(d)
	if err != nil {
		return err
	}
	out[base] = t
	if exists(filepath.Join(d, "bpfprogs-1.json.gz")) { // the runs before program sets
		t, err = programsTable(d)
	} else {
		t, err = programSetsTable(d)
	}
	if err != nil {
		return err
	}
	out[base+"-programs"] = t
	if files, _ := kit.Glob(filepath.Join(d, "rate-*.json.gz")); len(files) > 0 {
		if out[base+"-cpu"], err = cpuTable(d); err != nil {
			return err
		}
	}
	if files, _ := kit.Glob(filepath.Join(d, "canary-*.json")); len(files) > 0 {
		if out[base+"-canary"], err = canaryTable(d); err != nil {
			return err
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := kit.Stat(path)
	return err == nil
}

type envFile struct {
	Before struct {
		Loadavg string `json:"loadavg"`
		Commit  string `json:"commit"`
		CPUs    int    `json:"cpus"`
		Kernel  string `json:"kernel"`
	} `json:"before"`
	After struct {
		Loadavg string `json:"loadavg"`
	} `json:"after"`
}

// Scrapes is scrapeload's file (only what the table uses).
type Scrapes struct {
	Scrapers int `json:"scrapers"`
	Runs     []struct {
		Name          string    `json:"name"`
		SerialCPUNs   []float64 `json:"serial_cpu_ns"`
		ConcLatencyMs []float64 `json:"concurrent_latency_ms"`
		ConcCPUNs     float64   `json:"concurrent_cpu_ns"`
		ConcErrors    int       `json:"concurrent_errors"`
	} `json:"runs"`
}

// throughputs reads bench-MODE-N.json.gz: Mbit/s by repetition.
func throughputs(d, mode string) (map[int]float64, error) {
	files, err := kit.Glob(filepath.Join(d, "bench-"+mode+"-*.json.gz"))
	if err != nil {
		return nil, err
	}
	out := map[int]float64{}
	for _, f := range files {
		rep, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "bench-"+mode+"-"), ".json.gz"))
		if err != nil {
			return nil, fmt.Errorf("%s: not bench-MODE-N.json.gz", f)
		}
		b, err := kit.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r, err := bench.Decode(b, f)
		if err != nil {
			return nil, err
		}
		if len(r.Runs) != 1 || !r.Runs[0].Complete {
			return nil, fmt.Errorf("%s: want one complete run", f)
		}
		v, ok := r.Runs[0].Metrics["send_mbit"]
		if !ok {
			return nil, fmt.Errorf("%s: no send_mbit", f)
		}
		out[rep] = v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no bench-%s-N.json.gz", mode)
	}
	return out, nil
}

// cost is the throughput cost of mode against "off", paired by repetition:
// 1 - geometric mean of the ratios, with its 95% interval, and the ratios.
func cost(off, on map[int]float64) string {
	q := pairedRatios(off, on)
	var ratios []string
	for _, x := range q {
		ratios = append(ratios, fmt.Sprintf("%.3f", x))
	}
	s := stats.SummarizeRatios(q)
	if s.N < 2 {
		return fmt.Sprintf("ratios %s (one pair: no interval)", strings.Join(ratios, ", "))
	}
	return fmt.Sprintf("%s (95%% CI %s .. %s; ratios %s)", pct(s.GeoMean), pct(s.GeoLow), pct(s.GeoHigh), strings.Join(ratios, ", "))
}

func cov(xs map[int]float64) string {
	var v []float64
	for _, x := range xs {
		v = append(v, x)
	}
	s := stats.Summarize(v)
	if s.N < 2 {
		return fmt.Sprintf("- (%d run, %.0f Mbit/s)", s.N, s.Mean)
	}
	return fmt.Sprintf("%.1f%% (%d runs, mean %.0f Mbit/s)", s.Stdev/s.Mean*100, s.N, s.Mean)
}

func ms(ns float64) string { return fmt.Sprintf("%.2f ms", ns/1e6) }

// validity reads the run's env.json and applies the validity rule: "yes",
// or why not.
func validity(d string) (envFile, string, error) {
	var env envFile
	if err := kit.ReadJSON(filepath.Join(d, "env.json"), &env); err != nil {
		return env, "", err
	}
	load, err := strconv.ParseFloat(strings.Fields(env.Before.Loadavg + " x")[0], 64)
	if err != nil {
		return env, "", fmt.Errorf("env.json: load average %q", env.Before.Loadavg)
	}
	var why []string
	if load >= MaxLoadBefore {
		why = append(why, fmt.Sprintf("load average %.2f before the run (the rule: below %.1f)", load, MaxLoadBefore))
	}
	// bpfprogs-start.json.gz: from the runs with program sets on
	start := filepath.Join(d, "bpfprogs-start.json.gz")
	if !exists(start) {
		start = strings.TrimSuffix(start, ".gz") // a run not gzipped
	}
	if exists(start) {
		var progs []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		if err := kit.ReadJSON(start, &progs); err != nil {
			return env, "", err
		}
		var names []string
		for _, p := range progs {
			if tracingProgTypes[p.Type] {
				names = append(names, "`"+p.Name+"`")
			}
		}
		if len(names) > 0 {
			why = append(why, fmt.Sprintf("%d tracing BPF programs attached at the start (%s; the rule: none)",
				len(names), strings.Join(names, ", ")))
		}
	}
	if len(why) > 0 {
		return env, "**no**: " + strings.Join(why, "; "), nil
	}
	return env, "yes", nil
}

// tracingProgTypes are bpftool's types of the programs an observe (or any
// tracer) attaches: one of them loaded when a run starts makes it invalid.
var tracingProgTypes = map[string]bool{"tracepoint": true, "raw_tracepoint": true, "raw_tracepoint_writable": true,
	"tracing": true, "kprobe": true, "perf_event": true}

func runTable(d string) (string, error) {
	env, valid, err := validity(d)
	if err != nil {
		return "", err
	}
	mode := map[string]map[int]float64{}
	for _, m := range []string{"off", "light", "sampled"} {
		if mode[m], err = throughputs(d, m); err != nil {
			return "", err
		}
	}
	var sc Scrapes
	if err := kit.ReadJSON(filepath.Join(d, "scrapes.json"), &sc); err != nil {
		return "", err
	}
	serial := map[string][]float64{}
	conc := map[string][]float64{}
	concCPU := map[string][2]float64{}
	for _, r := range sc.Runs {
		if r.ConcErrors > 0 {
			return "", fmt.Errorf("scrapes.json: %s: %d failed scrapes", r.Name, r.ConcErrors)
		}
		serial[r.Name] = append(serial[r.Name], r.SerialCPUNs...)
		conc[r.Name] = append(conc[r.Name], r.ConcLatencyMs...)
		c := concCPU[r.Name]
		concCPU[r.Name] = [2]float64{c[0] + r.ConcCPUNs, c[1] + float64(len(r.ConcLatencyMs))}
	}
	med := func(n string) float64 { return stats.Percentile(serial[n], 50) }
	scrapeCell := func(n string) string {
		if len(serial[n]) == 0 {
			return "-"
		}
		return ms(med(n)) + " median of " + strconv.Itoa(len(serial[n]))
	}
	concCell := func(n string) string {
		if len(conc[n]) == 0 {
			return "-"
		}
		return fmt.Sprintf("p50 %.0f ms, p99 %.0f ms (%d scrapes, %s CPU each)", stats.Percentile(conc[n], 50),
			stats.Percentile(conc[n], 99), len(conc[n]), ms(concCPU[n][0]/concCPU[n][1]))
	}
	amort := med("now") + med("now-full")*ScrapeIntervalSeconds/RefreshSeconds
	rows := [][]string{
		{"valid (idle before the run)", "-", valid, "-"},
		{"`observe --light`, continuous, full veth rate: throughput", "<= 3% less", cost(mode["off"], mode["light"]), "-"},
		{"`observe --sample 10%`: throughput against off", "<= 1% less, and how sure", cost(mode["off"], mode["sampled"]), "-"},
		{"exporter, one scrape between full snapshots: CPU", "<= 2 ms", scrapeCell("now"), scrapeCell("before")},
		{"exporter, one scrape with a full snapshot (`--refresh 0`): CPU", "-", scrapeCell("now-full"), "-"},
		{fmt.Sprintf("exporter, per scrape at a %d s interval (one full snapshot per %d s)", ScrapeIntervalSeconds, RefreshSeconds), "<= 2 ms", ms(amort), "-"},
		{fmt.Sprintf("exporter, %d concurrent scrapers on loopback: latency", sc.Scrapers), "p99 <= 50 ms", concCell("now"), concCell("before")},
		{"bench repeatability, GRO on, observation off: CoV", "<= 3%", cov(mode["off"]), "-"},
		{"bench repeatability, GRO on, bench's default (sampled 10%): CoV", "<= 3%", cov(mode["sampled"]), "-"},
	}
	return kit.Table([]string{"figure", "goal", "now (" + env.Before.Commit + ")", "before (`BEFORE` binary)"}, rows), nil
}

type progSample struct {
	Time  float64 `json:"time"`
	Progs []struct {
		ID        int     `json:"id"`
		Name      string  `json:"name"`
		RunTimeNs float64 `json:"run_time_ns"`
		RunCnt    float64 `json:"run_cnt"`
	} `json:"progs"`
}

// programsTable: each of observe's programs (named tp_*) in the statistics
// run - events per second, ns per event, share of one CPU - from the two
// bpftool samples. The layout of the runs before program sets
// (bpfprogs-1.json.gz, bpfprogs-2.json.gz).
func programsTable(d string) (string, error) {
	rows, err := programRows(filepath.Join(d, "bpfprogs"), func(id int, name string) bool { return strings.HasPrefix(name, "tp_") })
	if err != nil {
		return "", err
	}
	return kit.Table([]string{"program (light, continuous)", "events/s", "ns per event", "% of one CPU"}, rows), nil
}

// programSetsTable: the same for each program set P of the run
// (bpfprogs-P-0,1,2.json.gz). Observe's programs are those that were not
// loaded in sample 0, taken just before the statistics run started: the
// set's own names, whatever they are.
func programSetsTable(d string) (string, error) {
	files, err := kit.Glob(filepath.Join(d, "bpfprogs-*-0.json.gz"))
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no bpfprogs-1.json.gz nor bpfprogs-P-0.json.gz")
	}
	sort.Strings(files)
	var rows [][]string
	for _, f := range files {
		set := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "bpfprogs-"), "-0.json.gz")
		var before progSample
		if err := kit.ReadJSON(f, &before); err != nil {
			return "", err
		}
		loaded := map[int]bool{}
		for _, p := range before.Progs {
			loaded[p.ID] = true
		}
		r, err := programRows(filepath.Join(d, "bpfprogs-"+set), func(id int, name string) bool { return !loaded[id] })
		if err != nil {
			return "", fmt.Errorf("program set %s: %w", set, err)
		}
		for _, row := range r {
			rows = append(rows, append([]string{set}, row...))
		}
	}
	return kit.Table([]string{"program set", "program (light, continuous)", "events/s", "ns per event", "% of one CPU"}, rows), nil
}

// programRows reads PREFIX-1.json.gz and PREFIX-2.json.gz, two bpftool
// samples under load, and returns a row per program name that ran between
// them and that ours accepts, then an "all" row: events per second, ns per
// event, share of one CPU.
func programRows(prefix string, ours func(id int, name string) bool) ([][]string, error) {
	var a, b progSample
	if err := kit.ReadJSON(prefix+"-1.json.gz", &a); err != nil {
		return nil, err
	}
	if err := kit.ReadJSON(prefix+"-2.json.gz", &b); err != nil {
		return nil, err
	}
	dt := b.Time - a.Time
	if dt <= 0 {
		return nil, fmt.Errorf("bpfprogs: samples %.3f and %.3f out of order", a.Time, b.Time)
	}
	type delta struct{ cnt, ns float64 }
	before := map[int]delta{}
	for _, p := range a.Progs {
		before[p.ID] = delta{p.RunCnt, p.RunTimeNs}
	}
	sum := map[string]delta{}
	var names []string
	for _, p := range b.Progs {
		w, ok := before[p.ID]
		if !ok || !ours(p.ID, p.Name) || p.RunCnt == w.cnt {
			continue
		}
		if _, seen := sum[p.Name]; !seen {
			names = append(names, p.Name)
		}
		s := sum[p.Name]
		sum[p.Name] = delta{s.cnt + p.RunCnt - w.cnt, s.ns + p.RunTimeNs - w.ns}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("bpfprogs: none of observe's programs ran between the samples (kernel.bpf_stats_enabled off?)")
	}
	sort.Strings(names)
	var rows [][]string
	var tot delta
	for _, n := range names {
		s := sum[n]
		tot.cnt += s.cnt
		tot.ns += s.ns
		rows = append(rows, []string{"`" + n + "`", fmt.Sprintf("%.0f", s.cnt/dt), fmt.Sprintf("%.0f", s.ns/s.cnt),
			fmt.Sprintf("%.2f%%", s.ns/dt/1e9*100)})
	}
	rows = append(rows, []string{"all", fmt.Sprintf("%.0f", tot.cnt/dt), fmt.Sprintf("%.0f", tot.ns/tot.cnt),
		fmt.Sprintf("%.2f%%", tot.ns/dt/1e9*100)})
	return rows, nil
}
