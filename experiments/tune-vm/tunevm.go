// SPDX-License-Identifier: Apache-2.0

// Package tunevm recomputes docs/results.md's tables of tune in the VM lab
// (issue 11): tune apply's verdicts per action and run, and what persist's
// rule restored after a re-plug, from each run's raw files under data/.
package tunevm

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/stats"
	"github.com/wirespeed/wirespeed/internal/tune"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "tune-vm", Tables: tables})
}

const runs = 6

func tables(dir string) (map[string]string, error) {
	d := filepath.Join(dir, "data")
	v, err := verdicts(d)
	if err != nil {
		return nil, err
	}
	r, err := replug(d)
	if err != nil {
		return nil, err
	}
	return map[string]string{"verdicts": v, "replug": r}, nil
}

func table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n")
	b.WriteString(strings.Repeat("|---", len(header)) + "|\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// p2 prints a p value to two significant digits, as the table does.
func p2(p float64) string {
	if p >= 0.1 {
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	return strconv.FormatFloat(p, 'f', 1-int(math.Floor(math.Log10(p))), 64)
}

// delta recomputes a trial's figures from its measurements: means, ratio
// of means, per-pair ratios and their median, and the paired t-test on the
// logarithms that tune runs (two-sided p, as tune printed it at the
// runs' commits; tune now halves it for its one-sided questions).
type delta struct {
	before, after, ratio, median, p float64
	pairs                           []float64
}

func recompute(m tune.MetricDelta) (delta, error) {
	if len(m.Before) != len(m.After) || len(m.Before) < 2 {
		return delta{}, fmt.Errorf("%s: %d before, %d after measurements", m.Metric, len(m.Before), len(m.After))
	}
	d := delta{before: stats.Mean(m.Before), after: stats.Mean(m.After)}
	d.ratio = d.after / d.before
	d.pairs = stats.PairedRatios(m.Before, m.After)
	s := stats.SummarizeRatios(d.pairs)
	d.median, d.p = s.Median, s.P
	return d, nil
}

var short = map[string]string{
	"rps_cpus:usb0:rx-0":                    "rps_cpus",
	"sysctl:net.core.rps_sock_flow_entries": "rps_sock_flow_entries",
	"rps_flow_cnt:usb0:rx-0":                "rps_flow_cnt",
}

func verdicts(d string) (string, error) {
	var rows [][]string
	for run := 1; run <= runs; run++ {
		b, err := kit.ReadRaw(filepath.Join(d, fmt.Sprintf("run%d", run), "tune-apply.json"))
		if err != nil {
			return "", err
		}
		var a struct {
			Pairs  int          `json:"pairs"`
			Trials []tune.Trial `json:"trials"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			return "", fmt.Errorf("run%d/tune-apply.json: %w", run, err)
		}
		for _, t := range a.Trials {
			if t.Goal == nil {
				continue
			}
			g, err := recompute(*t.Goal)
			if err != nil {
				return "", fmt.Errorf("run%d %s: %w", run, t.Action.ID, err)
			}
			name, ok := short[t.Action.ID]
			if !ok {
				return "", fmt.Errorf("run%d: unexpected action %s", run, t.Action.ID)
			}
			if name == "rps_cpus" {
				name += "=" + t.Action.Value
				if a.Pairs != 3 {
					name += fmt.Sprintf(" (%d pairs)", a.Pairs)
				}
			}
			var pr []string
			for _, r := range g.pairs {
				pr = append(pr, strconv.FormatFloat(r, 'f', 2, 64))
			}
			verdict := string(t.Verdict)
			for _, o := range t.Others {
				if !o.Worse {
					continue
				}
				od, err := recompute(o)
				if err != nil {
					return "", err
				}
				if o.Metric != "cpu_per_mbit" {
					return "", fmt.Errorf("run%d: worse %s: no label for it", run, o.Metric)
				}
				verdict += fmt.Sprintf(" (CPU/Mbit worse: %.2f, p %.3f)", od.ratio, od.p)
			}
			rows = append(rows, []string{strconv.Itoa(run), name, fmt.Sprintf("%.1f", g.before), fmt.Sprintf("%.1f", g.after),
				fmt.Sprintf("%.3f", g.ratio), strings.Join(pr, " "), fmt.Sprintf("%.3f", g.median), p2(g.p), verdict})
		}
	}
	return table([]string{"run", "action", "before", "after", "ratio", "per-pair ratios", "median pair ratio", "p", "verdict"}, rows), nil
}

// knobs reads an rps-*.txt: rps_cpus, rps_flow_cnt, rps_sock_flow_entries.
func knobs(path string) ([3]string, error) {
	var out [3]string
	b, err := kit.ReadRaw(path)
	if err != nil {
		return out, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(l), "=")
		switch {
		case strings.HasSuffix(k, "/rps_cpus"):
			out[0] = v
		case strings.HasSuffix(k, "/rps_flow_cnt"):
			out[1] = v
		case k == "net.core.rps_sock_flow_entries":
			out[2] = v
		}
	}
	for i, v := range out {
		if v == "" {
			return out, fmt.Errorf("%s: knob %d missing", path, i)
		}
	}
	return out, nil
}

func replug(d string) (string, error) {
	files := []string{"rps-before.txt", "rps-after-static.txt", "rps-replug-no-udevd.txt", "rps-replug-udevd.txt"}
	var used []string
	var vals [4][3]string
	for run := 1; run <= runs; run++ {
		rd := filepath.Join(d, fmt.Sprintf("run%d", run))
		if _, err := kit.Stat(filepath.Join(rd, "rps-after-static.txt")); err != nil {
			continue // runs 1-2 had no static apply
		}
		for i, f := range files {
			k, err := knobs(filepath.Join(rd, f))
			if err != nil {
				return "", err
			}
			if len(used) > 0 && k != vals[i] {
				return "", fmt.Errorf("run%d/%s: %v, not %v as in run %s", run, f, k, vals[i], used[0])
			}
			vals[i] = k
		}
		used = append(used, strconv.Itoa(run))
	}
	if len(used) == 0 {
		return "", fmt.Errorf("%s: no run with a static apply", d)
	}
	b := func(s string) string { return "**" + s + "**" }
	rows := [][]string{
		{"before tune", vals[0][0], vals[0][1], vals[0][2]},
		{"applied (static)", vals[1][0], vals[1][1], vals[1][2]},
		{"re-plug, no udevd (busybox has none; mdev does not read udev rules)", b(vals[2][0]), b(vals[2][1]), vals[2][2] + " (global, not per device)"},
		{"re-plug with the host's systemd-udevd 252 running in the guest, reading persist's rule", b(vals[3][0]), b(vals[3][1]), vals[3][2]},
	}
	return table([]string{"runs " + strings.Join(used, ", "), "rps_cpus", "rps_flow_cnt", "net.core.rps_sock_flow_entries"}, rows), nil
}
