// SPDX-License-Identifier: Apache-2.0

// Package usbnetround4 recomputes docs/results.md's tables of usbnet round
// 4 (issue 30: the 2026 kernels): the receive capacity and the stress runs
// of the 7.x series on Debian 13's 7.3.4 and of the 6.18 series on the
// lab's own 6.18.19, each against that kernel's own usbnet, from the
// boots' raw files under data/.
package usbnetround4

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-round4", Tables: tables})
}

func tables(dir string) (map[string]string, error) {
	rx, err := rxCapacity(filepath.Join(dir, "data", "rx-7.3.4-2026-11-26"))
	if err != nil {
		return nil, err
	}
	stress, err := stressRuns(filepath.Join(dir, "data", "stress-7.3.4-2026-11-26"))
	if err != nil {
		return nil, err
	}
	lab618 := filepath.Join(dir, "data", "lab-6.18.19-2026-11-26")
	rx618, err := rxCapacity(filepath.Join(lab618, "rx"))
	if err != nil {
		return nil, err
	}
	stress618, err := stressRuns(filepath.Join(lab618, "stress"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{"rx-7.3": rx, "stress-7.3": stress, "rx-6.18": rx618, "stress-6.18": stress618}
	bql := filepath.Join(dir, "data", "bql-2026-11-26")
	for _, k := range []string{"6.18", "7.3"} {
		if out["bql-"+k], err = bqlMark(filepath.Join(bql, k)); err != nil {
			return nil, err
		}
	}
	if out["bql-7.3-stalls"], err = stallCount(filepath.Join(bql, "7.3"), filepath.Join(bql, "7.3-stall-check")); err != nil {
		return nil, err
	}
	arm := filepath.Join(dir, "data", "arm64-7.3.4-2026-11-26")
	if out["stress-7.3-arm64"], err = stressRuns(filepath.Join(arm, "stress")); err != nil {
		return nil, err
	}
	if out["rx-7.3-arm64"], err = rxCapacity(filepath.Join(arm, "rx-icount")); err != nil {
		return nil, err
	}
	return out, nil
}

// lostOutside are boots that ended for a reason outside the guest, said
// so in PLAN.md's addendum 2 (a git stash removed their directory while
// they ran): they count neither as boots nor as failures.
var lostOutside = map[string]bool{"7.3-stall-check/bql-stock-4": true}

// stallCount counts, per side, the BQL boots whose console shows an RCU
// stall or a soft lockup, and the boots that failed, over the given run
// directories (7.3's marks and the five pairs run only to count them).
func stallCount(dirs ...string) (string, error) {
	type count struct{ boots, stalls, failed int }
	sides := map[string]*count{"stock": {}, "ours": {}}
	var where []string
	for _, d := range dirs {
		for _, side := range []string{"stock", "ours"} {
			reps, err := kit.Reps(d, "bql-"+side)
			if err != nil {
				return "", err
			}
			for _, i := range reps {
				run := filepath.Join(d, fmt.Sprintf("bql-%s-%d", side, i))
				if lostOutside[filepath.Base(d)+"/"+filepath.Base(run)] {
					continue
				}
				c := sides[side]
				c.boots++
				con, err := kit.ReadRaw(filepath.Join(run, "console.log"))
				if err != nil {
					return "", err
				}
				if strings.Contains(string(con), "detected stalls on CPUs") || strings.Contains(string(con), "soft lockup") {
					c.stalls++
					where = append(where, filepath.Base(d)+"/"+filepath.Base(run))
				}
				b, err := kit.ReadRaw(filepath.Join(run, "vm.json"))
				if err != nil {
					return "", err
				}
				var v struct {
					OK bool `json:"ok"`
				}
				if err := json.Unmarshal(b, &v); err != nil {
					return "", fmt.Errorf("%s/vm.json: %w", run, err)
				}
				if !v.OK {
					c.failed++
				}
			}
		}
	}
	var rows [][]string
	for _, side := range []string{"stock", "ours"} {
		c := sides[side]
		rows = append(rows, []string{side, strconv.Itoa(c.boots), strconv.Itoa(c.stalls), strconv.Itoa(c.failed)})
	}
	rows = append(rows, []string{"boots with a stall", "", strings.Join(where, ", "), ""})
	var left []string
	for k := range lostOutside {
		left = append(left, k)
	}
	sort.Strings(left)
	rows = append(rows, []string{"left out (lost outside the guest: PLAN.md addendum 2)", "", strings.Join(left, ", "), ""})
	return kit.Table([]string{"side", "boots", "RCU stall or soft lockup in the console", "boots failed"}, rows), nil
}

// bqlMark is the BQL scenario's table of one kernel: every pair the runs
// made, the ones round 2's rules drop (V1: a boot failed or its bench
// results are incomplete) said so, and the BQL limit of both sides (7.x's
// stock usbnet has BQL of its own; 6.18's reads 0).
func bqlMark(dir string) (string, error) {
	pairs, err := kit.BQLPairs(dir)
	if err != nil {
		return "", err
	}
	reps, err := kit.Reps(dir, "bql-stock")
	if err != nil {
		return "", err
	}
	valid := map[int]kit.BQLPair{}
	for _, p := range pairs {
		valid[p.Pair] = p
	}
	var rows [][]string
	var ex, tp []float64
	for _, i := range reps {
		p, ok := valid[i]
		if !ok {
			rows = append(rows, []string{strconv.Itoa(i), "-", "-", "-", "-", "-", "-", "-", "no (V1: a boot failed or its bench is incomplete)"})
			continue
		}
		stockLim, err := kit.LimitSamples(filepath.Join(dir, fmt.Sprintf("bql-stock-%d", i)))
		if err != nil {
			return "", err
		}
		ex, tp = append(ex, p.ExcessRatio), append(tp, p.TPRatio)
		rows = append(rows, []string{strconv.Itoa(i), kit.F(p.StockMbit, 1), kit.F(p.OursMbit, 1),
			fmt.Sprintf("%.2f -> %.2f", p.StockLoad-p.StockIdle, p.OursLoad-p.OursIdle),
			kit.F(p.ExcessRatio, 3), kit.F(p.TPRatio, 3), nonzeroRange(stockLim), kit.LimitRange(p.Limit), "yes"})
	}
	rows = append(rows, []string{"median", "", "", "", kit.F(kit.Median(ex), 3), kit.F(kit.Median(tp), 3), "", "",
		fmt.Sprintf("%d of %d pairs", len(ex), len(reps))})
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "excess stock -> ours ms", "excess ours/stock",
		"throughput ours/stock", "stock BQL limit", "ours BQL limit", "counted"}, rows), nil
}

// nonzeroRange is LimitRange, or "none" when a side never set a limit
// (a usbnet without BQL leaves the files at 0).
func nonzeroRange(limit []float64) string {
	for _, v := range limit {
		if v != 0 {
			return kit.LimitRange(limit)
		}
	}
	return "none (0)"
}

// minCPUWindow: a boot's CPU figure needs bench's load window (where its
// CPU and device counters are read) to span at least half of the 8 s
// load; throughput, from iperf3, does not depend on it (PLAN.md's
// addendum).
const minCPUWindow = 4.0

// loadWindow is the length in seconds of the load window of the first
// run of a boot's bench-receive.json.
func loadWindow(run string) (float64, error) {
	b, err := kit.ReadRaw(filepath.Join(run, "bench-receive.json"))
	if err != nil {
		return 0, err
	}
	var r struct {
		Runs []struct {
			Load struct {
				From float64 `json:"from_s"`
				To   float64 `json:"to_s"`
			} `json:"load"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, fmt.Errorf("%s: %w", run, err)
	}
	if len(r.Runs) == 0 {
		return 0, fmt.Errorf("%s: no runs", run)
	}
	return r.Runs[0].Load.To - r.Runs[0].Load.From, nil
}

// rxCapacity is the gadget-icount phase of usbnet-rx.sh (PLAN.md's rules:
// kit.RXPhase), a row per valid pair and one of the per-pair medians.
func rxCapacity(dir string) (string, error) {
	pairs, dropped, err := kit.RXPhase(dir, "gadget-icount")
	if err != nil {
		return "", err
	}
	var rows [][]string
	var thr, busy []float64
	for _, p := range pairs {
		thr = append(thr, p.ThroughputRatio())
		sb, ob, br := kit.F(p.Stock.BusyPerMbit, 3), kit.F(p.Ours.BusyPerMbit, 3), kit.F(p.BusyRatio(), 3)
		ws, err := loadWindow(filepath.Join(dir, fmt.Sprintf("gadget-icount-stock-%d", p.Pair)))
		if err != nil {
			return "", err
		}
		wo, err := loadWindow(filepath.Join(dir, fmt.Sprintf("gadget-icount-ours-%d", p.Pair)))
		if err != nil {
			return "", err
		}
		switch {
		case ws < minCPUWindow:
			sb, br = fmt.Sprintf("n/a (load window %.0f ms)", ws*1000), "n/a"
		case wo < minCPUWindow:
			ob, br = fmt.Sprintf("n/a (load window %.0f ms)", wo*1000), "n/a"
		default:
			busy = append(busy, p.BusyRatio())
		}
		rows = append(rows, []string{strconv.Itoa(p.Pair), kit.F(p.Stock.Mbit, 1), kit.F(p.Ours.Mbit, 1), kit.F(p.ThroughputRatio(), 3),
			sb, ob, br, p.Ours.RXPath, kit.F(p.Ours.GRORatio, 1)})
	}
	if len(pairs) > 0 {
		rows = append(rows, []string{"median", "", "", kit.F(kit.Median(thr), 3) + " (of " + strconv.Itoa(len(thr)) + ")", "", "",
			kit.F(kit.Median(busy), 3) + " (of " + strconv.Itoa(len(busy)) + ")", "", ""})
	}
	for _, d := range dropped {
		rows = append(rows, []string{strconv.Itoa(d), "dropped (a boot failed or its bench was incomplete)", "", "", "", "", "", "", ""})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % per Mbit/s",
		"ours busy % per Mbit/s", "busy per Mbit/s ours/stock", "RX path (ours)", "GRO segments per skb (ours)"}, rows), nil
}

// stressRun is what one usbnet-stress boot left: its vm.json, the
// modules' SOURCE file copied beside it (none: the kernel's own), and the
// stress script's summary line.
type stressRun struct {
	name, set, outcome, summary string
	cycles                      int
}

// stressRuns is a row per usbnet-stress boot under dir (every run,
// clean or not: PLAN.md drops none), in the order they were run.
func stressRuns(dir string) (string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return "", err
	}
	type vmJSON struct {
		Started string `json:"started"`
		OK      bool   `json:"ok"`
		Failure string `json:"failure"`
		Options struct {
			Cycles int `json:"cycles"`
		} `json:"options"`
	}
	var runs []stressRun
	started := map[string]string{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(dir, e.Name())
		b, err := kit.ReadRaw(filepath.Join(d, "vm.json"))
		if err != nil {
			return "", err
		}
		var v vmJSON
		if err := json.Unmarshal(b, &v); err != nil {
			return "", fmt.Errorf("%s/vm.json: %w", d, err)
		}
		r := stressRun{name: e.Name(), cycles: v.Options.Cycles, set: "stock (the kernel's own modules)"}
		if src, err := kit.ReadRaw(filepath.Join(d, "modules-SOURCE.txt")); err == nil {
			r.set = "ours: " + strings.TrimSpace(string(src))
		}
		if v.OK {
			r.outcome = "clean"
		} else {
			r.outcome = "FAIL: " + strings.TrimPrefix(v.Failure, "scenario usbnet-stress failed in the guest: usbnet stress: stress: FAIL: ")
		}
		if st, err := kit.ReadRaw(filepath.Join(d, "stress.txt")); err == nil {
			for _, l := range strings.Split(string(st), "\n") {
				if strings.Contains(l, " cycles done: ") {
					_, r.summary, _ = strings.Cut(l, "cycles done: ")
				}
			}
		}
		started[r.name] = v.Started
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool { return started[runs[i].name] < started[runs[j].name] })
	var rows [][]string
	for _, r := range runs {
		rows = append(rows, []string{r.name, r.set, strconv.Itoa(r.cycles), r.outcome, r.summary})
	}
	return kit.Table([]string{"run", "modules", "cycles", "outcome", "steps done (the stress script's count)"}, rows), nil
}
