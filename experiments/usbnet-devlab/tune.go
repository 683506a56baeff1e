// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/stats"
	"github.com/wirespeed/wirespeed/internal/tune"
)

// tuneRuns are devlab-rx.sh's ax-virt-rt-tune runs (issue 42: tune apply
// on the emulated AX88179 after the bench), by table id.
var tuneRuns = map[string]struct {
	dir, phase string
	boots      []string // variant-rep
}{
	"tune-ax-virt-rt-7.3": {"tune-ax-7.3.4-2026-11-28", "ax-virt-rt-tune", []string{"stock-1", "stock-2", "ours-1", "ours-2"}},
}

// tuneTables adds each tune run's verdict table to out.
func tuneTables(dir string, out map[string]string) error {
	for id, r := range tuneRuns {
		d := filepath.Join(dir, "data", r.dir)
		if !exists(d) {
			continue
		}
		var rows [][]string
		boots := r.boots
		for _, b := range boots {
			rs, err := tuneRows(filepath.Join(d, r.phase+"-"+b), b)
			if err != nil {
				return err
			}
			rows = append(rows, rs...)
		}
		out[id] = kit.Table([]string{"boot", "bench receive Mbit/s", "TX watchdog reports (dmesg)", "doctor's findings before tune",
			"action", "value", "receive before (mean Mbit/s)", "receive after", "ratio (geo. mean of pairs)",
			"per-pair ratios", "p (one-sided)", "verdict"}, rows)
		t, err := replugTable(d, r.phase, boots)
		if err != nil {
			return err
		}
		out[id+"-replug"] = t
	}
	return nil
}

// replugSteps are the tune step's RPS snapshots (tune.sh's ws_rps), in order.
var replugSteps = []struct{ file, label string }{
	{"rps-before.txt", "before tune"}, {"rps-after-tune.txt", "after tune apply (measured)"},
	{"rps-after-static.txt", "after doctor's actions unmeasured"}, {"rps-replug-no-udevd.txt", "re-plug, no udevd"},
	{"rps-replug-udevd.txt", "re-plug, udevd reading persist's rule"}, {"rps-after-revert.txt", "after tune revert --all"},
}

// replugTable is the adapter's rx-0 rps_cpus at each step of each boot's
// tune step ("-": the step did not run).
func replugTable(d, phase string, boots []string) (string, error) {
	header := []string{"step"}
	cols := make([][]string, len(boots))
	for i, b := range boots {
		header = append(header, b)
		for _, st := range replugSteps {
			v := "-"
			raw, err := kit.ReadRaw(filepath.Join(d, phase+"-"+b, st.file))
			if err == nil {
				for _, l := range strings.Split(string(raw), "\n") {
					if k, val, _ := strings.Cut(l, "="); strings.HasSuffix(k, "/rx-0/rps_cpus") {
						v = val
					}
				}
			}
			cols[i] = append(cols[i], v)
		}
	}
	var rows [][]string
	for j, st := range replugSteps {
		row := []string{st.label}
		for i := range boots {
			row = append(row, cols[i][j])
		}
		rows = append(rows, row)
	}
	return kit.Table(header, rows), nil
}

// tuneRows are one boot's rows: one per trial of its tune-apply.json, the
// goal's figures recomputed from the measurements.
func tuneRows(run, boot string) ([][]string, error) {
	side, ok, err := axDirection(run, "receive")
	if err != nil {
		return nil, err
	}
	bench := "-"
	if ok {
		bench = kit.F(side.mbit, 1)
	}
	dmesg, err := kit.ReadRaw(filepath.Join(run, "dmesg.txt"))
	if err != nil {
		return nil, err
	}
	stalls := strconv.Itoa(strings.Count(string(dmesg), "NETDEV WATCHDOG"))
	var rep doctor.Report
	if err := kit.ReadJSON(filepath.Join(run, "doctor-before.json"), &rep); err != nil {
		return nil, err
	}
	var ids []string
	for _, f := range rep.Findings {
		ids = append(ids, f.ID)
	}
	var a struct {
		Trials []tune.Trial `json:"trials"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "tune-apply.json"), &a); err != nil {
		return nil, err
	}
	var rows [][]string
	for _, t := range a.Trials {
		row := []string{boot, bench, stalls, strings.Join(ids, ", "), t.Action.ID, t.Action.Value}
		if t.Goal == nil {
			rows = append(rows, append(row, "-", "-", "-", "-", "-", string(t.Verdict)+": "+shortReason(t.Reason)))
			continue
		}
		g, err := tuneGoal(*t.Goal)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", run, t.Action.ID, err)
		}
		verdict := string(t.Verdict)
		for _, o := range t.Others {
			if o.Worse {
				verdict += fmt.Sprintf(" (%s worse: %.2fx, p %.3f)", o.Metric, o.Ratio, o.P)
			}
		}
		rows = append(rows, append(append(row, g...), verdict))
	}
	return rows, nil
}

// tuneGoal recomputes a trial's goal figures from its measurements: the
// means, the geometric mean of the per-pair ratios, the ratios, and the
// one-sided p of the paired t-test on the logarithms (as tune judges);
// it fails when tune's own figures differ.
func tuneGoal(m tune.MetricDelta) ([]string, error) {
	if len(m.Before) != len(m.After) || len(m.Before) < 2 {
		return nil, fmt.Errorf("%s: %d before, %d after measurements", m.Metric, len(m.Before), len(m.After))
	}
	pairs := stats.PairedRatios(m.Before, m.After)
	s := stats.SummarizeRatios(pairs)
	p := s.P / 2
	if diff := s.GeoMean/m.Ratio - 1; diff > 1e-6 || diff < -1e-6 {
		return nil, fmt.Errorf("%s: ratio %.4f recomputed, %.4f in the file", m.Metric, s.GeoMean, m.Ratio)
	}
	if diff := p - m.P; diff > 1e-6 || diff < -1e-6 {
		return nil, fmt.Errorf("%s: p %.4f recomputed, %.4f in the file", m.Metric, p, m.P)
	}
	var pr []string
	for _, r := range pairs {
		pr = append(pr, kit.F(r, 2))
	}
	return []string{kit.F(stats.Mean(m.Before), 1), kit.F(stats.Mean(m.After), 1), kit.F(s.GeoMean, 3),
		strings.Join(pr, " "), kit.F(p, 3)}, nil
}

// shortReason keeps of a failed measurement's reason what the bench said,
// without the command line and the hint to start a server.
func shortReason(r string) string {
	if i := strings.LastIndex(r, "wirespeed bench: "); i >= 0 {
		r = "the bench failed: " + r[i+len("wirespeed bench: "):]
	}
	r, _, _ = strings.Cut(r, " (start one")
	return r
}
