// SPDX-License-Identifier: Apache-2.0

// Package usbnetround3 recomputes docs/results.md's tables of usbnet round 3
// (issue 18): the BQL mark on 6.12 and 6.1 and the usbnet-stress runs, from
// the boots' raw files under data/round3-2026-11-23. DKMS, the build matrix
// and the arm64 cross-build are prose in results.md; their JSON and logs are
// under data/ as well.
package usbnetround3

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/stats"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-round3", Tables: tables})
}

func tables(dir string) (map[string]string, error) {
	d := filepath.Join(dir, "data", "round3-2026-11-23")
	out := map[string]string{}
	var err error
	if out["bql-6.12"], err = bql612(filepath.Join(d, "bql-6.12-icount")); err != nil {
		return nil, err
	}
	if out["bql-6.1"], err = bql61(d); err != nil {
		return nil, err
	}
	if out["stress"], err = stress(d); err != nil {
		return nil, err
	}
	return out, nil
}

func bql612(dir string) (string, error) {
	pairs, err := kit.BQLPairs(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{strconv.Itoa(p.Pair), kit.F(p.StockMbit, 1), kit.F(p.OursMbit, 1),
			fmt.Sprintf("%.2f -> %.2f", p.StockLoad-p.StockIdle, p.OursLoad-p.OursIdle),
			kit.F(p.ExcessRatio, 3), kit.F(p.TPRatio, 3), kit.LimitRange(p.Limit)})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "excess stock -> ours ms", "excess ours/stock",
		"throughput ours/stock", "ours BQL limit (distinct values)"}, rows), nil
}

// The 6.1 runs in the order of PLAN.md's addenda. Host and the decision on
// each run are the plan's (written before the run it governs), not data.
var runs61 = []struct {
	run, dir, host, used string
	bold                 bool
}{
	{"2", "bql-6.1-tcg-single-loaded", "shared (run 1, DKMS, builds)", "no: host load (addendum 1)", false},
	{"2b", "bql-6.1-tcg-single-100", "quiet", "no: CPU-bound, 55-68% of the cap", false},
	{"2c", "bql-6.1-tcg-single-50", "quiet", "no: CPU-bound (V4)", false},
	{"2d", "bql-6.1-tcg-single-20", "quiet", "no: failed V4 as written (addendum 3)", false},
	{"2e", "bql-6.1-tcg-single-20-rerun", "quiet", "yes (V1, V4')", true},
}

func minMax(xs []float64) (float64, float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[0], s[len(s)-1]
}

func medRange(xs []float64) string {
	lo, hi := minMax(xs)
	return fmt.Sprintf("%.3f (%.3f-%.3f)", stats.Percentile(xs, 50), lo, hi)
}

func bql61(d string) (string, error) {
	var rows [][]string
	for _, r := range runs61 {
		dir := filepath.Join(d, r.dir)
		pairs, err := kit.BQLPairs(dir)
		if err != nil {
			return "", err
		}
		var ex, tp []float64
		for _, p := range pairs {
			ex, tp = append(ex, p.ExcessRatio), append(tp, p.TPRatio)
		}
		idle, err := kit.IdlePcts(dir)
		if err != nil {
			return "", err
		}
		lo, hi := minMax(idle)
		cap, err := busRate(filepath.Join(dir, "bql-stock-1"))
		if err != nil {
			return "", err
		}
		row := []string{r.run, strconv.Itoa(cap), r.host, fmt.Sprintf("%.0f-%.0f%%", lo, hi), medRange(ex), medRange(tp), r.used}
		if r.bold {
			for i, c := range row {
				if c != r.host {
					row[i] = "**" + c + "**"
				}
			}
		}
		rows = append(rows, row)
	}
	return kit.Table([]string{"run", "cap", "host", "guest idle in load", "excess ours/stock median (per pair)",
		"throughput ours/stock median (per pair)", "used for the mark"}, rows), nil
}

// vmJSON is the part of a boot's vm.json these tables read.
type vmJSON struct {
	OK      bool   `json:"ok"`
	Failure string `json:"failure"`
	Options struct {
		BusRate int `json:"bus_rate_mbit"`
	} `json:"options"`
	Facts map[string]string `json:"facts"`
}

func readVM(run string) (vmJSON, error) {
	var v vmJSON
	b, err := kit.ReadRaw(filepath.Join(run, "vm.json"))
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("%s/vm.json: %w", run, err)
	}
	return v, nil
}

func busRate(run string) (int, error) {
	v, err := readVM(run)
	return v.Options.BusRate, err
}

// The stress sets: which boots (directories under data/round3-2026-11-23)
// each row counts.
var stressSets = []struct {
	kernel, set string
	runs        []string
	bold        bool
}{
	{"6.1", "stock (Debian's modules), all six", []string{"stress-6.1/s30-stock", "stress-6.1/s30-stock-2", "stress-6.1/s30-stock-3",
		"stress-3/s30-61-stock-1", "stress-3/s30-61-stock-2", "stress-3/s30-61-stock-3", "stress-3/s30-61-stock-4", "stress-3/s30-61-stock-5", "stress-3/s30-61-stock-6"}, false},
	{"6.1", "ours 0001-0007, all six", []string{"stress-6.1/s30-ours", "stress-6.1/s30-ours-2", "stress-6.1/s30-ours-3"}, false},
	{"6.1", "**ours 0001-0008**, all six", []string{"stress-3/s30-61-ours-1", "stress-3/s30-61-ours-2", "stress-3/s30-61-ours-3",
		"stress-3/s30-61-ours-4", "stress-3/s30-61-ours-5", "stress-3/s30-61-ours-6"}, true},
	{"6.1", "ours, avoid (0001-0007; 0001-0008)", []string{"stress-6.1/s30-ours-avoid", "stress-3/s30-61-ours-avoid"}, false},
	{"6.1", "stock, avoid", []string{"stress-6.1/s30-stock-avoid"}, false},
	{"6.12", "**ours 0001-0008**, all six", []string{"stress-3/s30-612-ours-1", "stress-3/s30-612-ours-2"}, true},
	{"6.12", "stock, all six", []string{"stress-3/s30-612-stock-1", "stress-3/s30-612-stock-2"}, false},
	{"6.12", "ours 0001-0008, avoid", []string{"stress-3/s30-612-ours-avoid"}, false},
}

var (
	failRe  = regexp.MustCompile(`FAIL: no ping over usb0 after cycle (\d+) \(([a-z_]+)\)`)
	countRe = regexp.MustCompile(`\b(downsuspend|down-suspended)=(\d+)`)
)

// stepOrder and stepText name the stress's steps as the table does.
var stepOrder = []string{"start", "rebind", "linkflap", "mtu", "reload", "reload_usbnet", "suspend", "downsuspend"}

func stepText(step string, n int) string {
	switch step {
	case "start":
		return "at start"
	case "rebind":
		return "at a rebind"
	case "reload_usbnet":
		return "after reloading usbnet"
	}
	return "at " + step
}

func stress(d string) (string, error) {
	var rows [][]string
	for _, s := range stressSets {
		clean := 0
		fails := map[string][]int{}
		var downs, downed int
		for _, r := range s.runs {
			v, err := readVM(filepath.Join(d, r))
			if err != nil {
				return "", err
			}
			if v.OK {
				clean++
				for _, m := range countRe.FindAllStringSubmatch(v.Facts["stress_result"], -1) {
					n, _ := strconv.Atoi(m[2])
					if m[1] == "downsuspend" {
						downs += n
					} else {
						downed += n
					}
				}
				continue
			}
			m := failRe.FindStringSubmatch(v.Failure)
			if m == nil {
				return "", fmt.Errorf("%s: failed, but not at a ping check: %q", r, v.Failure)
			}
			c, _ := strconv.Atoi(m[1])
			fails[m[2]] = append(fails[m[2]], c)
		}
		var f []string
		for _, step := range stepOrder {
			cs := fails[step]
			if len(cs) == 0 {
				continue
			}
			delete(fails, step)
			sort.Ints(cs)
			t := fmt.Sprintf("%d %s", len(cs), stepText(step, len(cs)))
			if step != "start" {
				var ns []string
				for _, c := range cs {
					ns = append(ns, strconv.Itoa(c))
				}
				word := "cycle"
				if len(cs) > 1 {
					word = "cycles"
				}
				t += fmt.Sprintf(" (%s %s)", word, strings.Join(ns, ", "))
			}
			f = append(f, t)
		}
		if len(fails) > 0 {
			return "", fmt.Errorf("stress set %s %s: failures at unnamed steps %v", s.kernel, s.set, fails)
		}
		failures := strings.Join(f, ", ")
		if failures == "" {
			failures = "-"
			if strings.Contains(s.set, "avoid") && downs > 0 {
				failures += fmt.Sprintf(" (%d of %d suspended with the link down)", downed, downs)
			}
		}
		set, count := s.set, fmt.Sprintf("%d / %d", clean, len(s.runs))
		if s.bold {
			count = "**" + count + "**"
		}
		rows = append(rows, []string{s.kernel, set, count, failures})
	}
	return kit.Table([]string{"kernel", "set", "runs clean / runs", "failures"}, rows), nil
}
