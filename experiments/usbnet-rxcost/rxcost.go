// SPDX-License-Identifier: Apache-2.0

// Package usbnetrxcost recomputes docs/results.md's tables of issue 33
// (usbnet RX cost): threaded vs softirq polling of the series' NAPI poll
// against stock, from the boots' raw files under data/.
package usbnetrxcost

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/bench"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-rxcost", Tables: tables})
}

func tables(dir string) (map[string]string, error) {
	d := filepath.Join(dir, "data", "threaded-7.3.4-2026-11-26")
	out := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		t, err := threadedTable(filepath.Join(d, arch))
		if err != nil {
			return nil, err
		}
		out["threaded-"+arch] = t
	}
	t, err := pairTable(filepath.Join(dir, "data", "frags-6.18.19-2026-11-26"), "ours", "frags")
	if err != nil {
		return nil, err
	}
	out["frags-6.18"] = t
	ud := filepath.Join(dir, "data", "frags-usbnic-7.3.4-2026-11-26")
	if out["frags-usbnic"], err = pairTableRuns([]string{filepath.Join(ud, "run1"), filepath.Join(ud, "run2"), filepath.Join(ud, "run3")},
		[]string{"run 1 (loaded, base first), pair ", "run 2 (idle, base first), pair ", "run 3 (idle, frags first), pair "}, "base", "frags"); err != nil {
		return nil, err
	}
	if out["threaded-arm64-profile"], err = kit.ProfileRunsTable(filepath.Join(dir, "data", "threaded-profile-arm64-2026-11-26"), "softirq", "threaded"); err != nil {
		return nil, err
	}
	rd := filepath.Join(dir, "data", "rps-7.3.4-arm64-2026-11-26")
	if out["rps-arm64"], err = pairTable(rd, "ours", "rps"); err != nil {
		return nil, err
	}
	if out["rps-arm64-profile"], err = kit.ProfileRunsTable(rd, "prof-ours", "prof-rps"); err != nil {
		return nil, err
	}
	if out["frags-stress"], err = stressTable(filepath.Join(dir, "data"), fragsStressRuns); err != nil {
		return nil, err
	}
	pd := filepath.Join(dir, "data", "profile-7.3.4-2026-11-26")
	for arch, sub := range map[string]string{"amd64": pd, "arm64": filepath.Join(pd, "arm64")} {
		t, err := kit.ProfileRunsTable(sub, "stock", "ours", "frags")
		if err != nil {
			return nil, err
		}
		out["profile-"+arch] = t
	}
	return out, nil
}

// minLoadWindow: a boot's CPU figure needs bench's load window to span at
// least half of the 8 s load (PLAN.md).
const minLoadWindow = 4.0

// boot is one boot's figures, or why it does not count.
type boot struct {
	side  kit.RXSide
	valid bool
	why   string
}

func readBoot(run string) (boot, error) {
	s, ok, err := kit.ReadRXSide(run)
	if err != nil {
		return boot{}, err
	}
	if !ok {
		return boot{why: "failed or incomplete"}, nil
	}
	if !s.HasCPU {
		return boot{why: "no CPU samples"}, nil
	}
	r, err := kit.FirstRun(run, "receive")
	if err != nil {
		return boot{}, err
	}
	if w := loadWindow(r); w < minLoadWindow {
		return boot{why: fmt.Sprintf("load window %.1f s", w)}, nil
	}
	return boot{side: s, valid: true}, nil
}

func loadWindow(r *bench.Run) float64 {
	if r == nil || r.Load == nil {
		return 0
	}
	return r.Load.To - r.Load.From
}

// threadedTable is a row per rep (stock, softirq, threaded) and a row of
// the per-rep ratios' medians.
func threadedTable(dir string) (string, error) {
	reps, err := kit.Reps(dir, "stock")
	if err != nil {
		return "", err
	}
	if len(reps) == 0 {
		return "", fmt.Errorf("%s: no stock-N runs", dir)
	}
	var rows [][]string
	var thrTP, thrCPU, softTP, softCPU []float64
	cell := func(b boot) string {
		if !b.valid {
			return "n/a (" + b.why + ")"
		}
		gro := "-"
		if b.side.GRORatio > 0 {
			gro = kit.F(b.side.GRORatio, 1)
		}
		return fmt.Sprintf("%.1f / %.3f / %s", b.side.Mbit, b.side.BusyPerMbit, gro)
	}
	for _, i := range reps {
		var b [3]boot
		for k, name := range []string{"stock", "softirq", "threaded"} {
			if b[k], err = readBoot(filepath.Join(dir, fmt.Sprintf("%s-%d", name, i))); err != nil {
				return "", err
			}
		}
		st, so, th := b[0], b[1], b[2]
		ratio := func(x, y boot, f func(kit.RXSide) float64, acc *[]float64) string {
			if !x.valid || !y.valid {
				return "n/a"
			}
			v := f(x.side) / f(y.side)
			*acc = append(*acc, v)
			return kit.F(v, 3)
		}
		mbit := func(s kit.RXSide) float64 { return s.Mbit }
		cpu := func(s kit.RXSide) float64 { return s.BusyPerMbit }
		rows = append(rows, []string{strconv.Itoa(i), cell(st), cell(so), cell(th),
			ratio(so, st, mbit, &softTP), ratio(so, st, cpu, &softCPU),
			ratio(th, so, mbit, &thrTP), ratio(th, so, cpu, &thrCPU)})
	}
	rows = append(rows, []string{"median", "", "", "", medianCell(softTP), medianCell(softCPU), medianCell(thrTP), medianCell(thrCPU)})
	return kit.Table([]string{"rep", "stock: Mbit/s / busy % per Mbit/s / GRO segs per skb", "ours softirq: same",
		"ours threaded: same", "throughput softirq/stock", "busy per Mbit/s softirq/stock",
		"throughput threaded/softirq", "busy per Mbit/s threaded/softirq"}, rows), nil
}

// pairTable is a row per interleaved pair of a-N / b-N boots under dir
// (Mbit/s and busy % per Mbit/s each, b/a ratios) and a row of the
// ratios' medians.
func pairTable(dir, a, b string) (string, error) {
	return pairTableRuns([]string{dir}, []string{""}, a, b)
}

// pairTableRuns is pairTable over the pairs of several runs' directories,
// each row's pair named label+N, the medians over all of them.
func pairTableRuns(dirs, labels []string, a, b string) (string, error) {
	var rows [][]string
	var tp, cpu []float64
	for k, dir := range dirs {
		reps, err := kit.Reps(dir, a)
		if err != nil {
			return "", err
		}
		if len(reps) == 0 {
			return "", fmt.Errorf("%s: no %s-N runs", dir, a)
		}
		for _, i := range reps {
			var s [2]boot
			for k, name := range []string{a, b} {
				if s[k], err = readBoot(filepath.Join(dir, fmt.Sprintf("%s-%d", name, i))); err != nil {
					return "", err
				}
			}
			cell := func(x boot) string {
				if !x.valid {
					return "n/a (" + x.why + ")"
				}
				return fmt.Sprintf("%.1f / %.3f", x.side.Mbit, x.side.BusyPerMbit)
			}
			r1, r2c := "n/a", "n/a"
			if s[0].valid && s[1].valid {
				t, c := s[1].side.Mbit/s[0].side.Mbit, s[1].side.BusyPerMbit/s[0].side.BusyPerMbit
				tp, cpu = append(tp, t), append(cpu, c)
				r1, r2c = kit.F(t, 3), kit.F(c, 3)
			}
			rows = append(rows, []string{labels[k] + strconv.Itoa(i), cell(s[0]), cell(s[1]), r1, r2c})
		}
	}
	rows = append(rows, []string{"median", "", "", medianCell(tp), medianCell(cpu)})
	return kit.Table([]string{"pair", a + ": Mbit/s / busy % per Mbit/s", b + ": same",
		"throughput " + b + "/" + a, "busy per Mbit/s " + b + "/" + a}, rows), nil
}

// medianCell is a median row's cell: the median of the ratios and how
// many there were, "-" for none.
func medianCell(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%s (of %d)", kit.F(kit.Median(xs), 3), len(xs))
}
