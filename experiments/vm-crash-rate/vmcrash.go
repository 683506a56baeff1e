// SPDX-License-Identifier: Apache-2.0

// Package vmcrashrate recomputes docs/results.md's tables of the x86 VM
// lab's crash rate under its default accel (issue 23) from the boots.jsonl
// files vm-crash-rate.sh wrote (one line a boot) and the crashed boots'
// console logs.
package vmcrashrate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
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
	experiments.Register(experiments.Experiment{Name: "vm-crash-rate", Tables: tables})
}

// boot is one line of boots.jsonl.
type boot struct {
	Config   string               `json:"config"`
	Scenario string               `json:"scenario"`
	Dir      string               `json:"dir"`
	Accel    string               `json:"accel"`
	OK       bool                 `json:"ok"`
	Kind     string               `json:"kind"`
	Mbit     map[string][]float64 `json:"mbit"`
	Exec     string               `json:"exec"`
}

func readBoots(dir string) ([]boot, error) {
	f, err := kit.Open(filepath.Join(dir, "boots.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []boot
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" {
			continue
		}
		var b boot
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			return nil, fmt.Errorf("%s/boots.jsonl:%d: %w", dir, n, err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s/boots.jsonl: no boots", dir)
	}
	return out, sc.Err()
}

// configs returns the configurations in the order they first boot.
func configs(bs []boot) []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range bs {
		if !seen[b.Config] {
			seen[b.Config] = true
			out = append(out, b.Config)
		}
	}
	return out
}

func accelOf(bs []boot, config string) string {
	set := map[string]bool{}
	for _, b := range bs {
		if b.Config == config {
			set[b.Accel] = true
		}
	}
	var a []string
	for k := range set {
		a = append(a, k)
	}
	sort.Strings(a)
	return strings.Join(a, ",")
}

// ClopperPearson is the exact 95% interval of a binomial proportion k/n,
// from the regularized incomplete beta function: the lower bound solves
// I_p(k, n-k+1) = 0.025, the upper I_p(k+1, n-k) = 0.975.
func ClopperPearson(k, n int) (lo, hi float64) {
	solve := func(a, b, target float64) float64 {
		l, h := 0.0, 1.0
		for i := 0; i < 100; i++ {
			m := (l + h) / 2
			if stats.RegIncBeta(m, a, b) < target {
				l = m
			} else {
				h = m
			}
		}
		return (l + h) / 2
	}
	lo, hi = 0, 1
	if k > 0 {
		lo = solve(float64(k), float64(n-k+1), 0.025)
	}
	if k < n {
		hi = solve(float64(k+1), float64(n-k), 0.975)
	}
	return lo, hi
}

func rate(k, n int) string {
	lo, hi := ClopperPearson(k, n)
	return fmt.Sprintf("%.0f%% (%.0f-%.0f%%)", 100*float64(k)/float64(n), 100*lo, 100*hi)
}

// A crash is kernel trouble on the console: any guard; timeouts and guest
// failures are other failures.
func crashed(b boot) bool {
	switch b.Kind {
	case "none", "timeout", "guest", "no-vm.json":
		return false
	}
	return true
}

func tables(dir string) (map[string]string, error) {
	d := filepath.Join(dir, "data")
	rateBoots, err := readBoots(filepath.Join(d, "rate"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{"rate": rateTable(rateBoots)}
	if out["toggle"], err = toggleTable(d); err != nil {
		return nil, err
	}
	if out["cost"], err = costTable(rateBoots); err != nil {
		return nil, err
	}
	return out, nil
}

var accelLabel = map[string]string{"tcg": "tcg (multi-threaded)"}

func rateTable(bs []boot) string {
	var rows [][]string
	for _, c := range configs(bs) {
		var n, ok, crash, int3, other int
		for _, b := range bs {
			if b.Config != c {
				continue
			}
			n++
			if b.OK {
				ok++
			}
			switch {
			case crashed(b):
				crash++
				if b.Kind == "int3" {
					int3++
				}
			case b.Kind != "none":
				other++
			}
		}
		a := accelOf(bs, c)
		if l, ok := accelLabel[a]; ok {
			a = l
		}
		rows = append(rows, []string{c, a, strconv.Itoa(n), strconv.Itoa(ok), fmt.Sprintf("%d (%d)", crash, int3),
			strconv.Itoa(other), rate(crash, n)})
	}
	return kit.Table([]string{"config", "accel", "boots", "ok", "crashes (`Oops: int3`)", "other failures", "crash rate (95% CI)"}, rows)
}

var (
	execRe = regexp.MustCompile(`toggles=(\d+) from=([0-9.]+) to=([0-9.]+)`)
	turnRe = regexp.MustCompile(`textpoke-toggle: (\d+) turns`)
)

// crashTurn reads a crashed boot's console for the last progress line of
// vm-textpoke-toggle.sh (every 25 turns): the crash came after it.
func crashTurn(run string) (string, error) {
	b, err := kit.ReadRaw(filepath.Join(run, "console.log"))
	if err != nil {
		return "", err
	}
	last := 0
	for _, m := range turnRe.FindAllSubmatch(b, -1) {
		last, _ = strconv.Atoi(string(m[1]))
	}
	if last == 0 {
		return "before 25", nil
	}
	return fmt.Sprintf("%d-%d", last, last+25), nil
}

func perS(x float64) string {
	if x >= 10 {
		return kit.F(x, 0)
	}
	return kit.F(x, 1)
}

func toggleTable(d string) (string, error) {
	var rows [][]string
	for _, run := range []struct{ label, dir string }{
		{"300 turns / 90 s", "toggle"},
		{"2000 turns / 100 s", "toggle2"},
	} {
		bs, err := readBoots(filepath.Join(d, run.dir))
		if err != nil {
			return "", err
		}
		for _, c := range configs(bs) {
			var n, turns, finished int
			var at []string
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, b := range bs {
				if b.Config != c {
					continue
				}
				n++
				if crashed(b) {
					if b.Kind != "int3" {
						return "", fmt.Errorf("%s %s: a %s crash; the table counts int3", run.dir, b.Dir, b.Kind)
					}
					t, err := crashTurn(filepath.Join(d, run.dir, "runs", b.Dir))
					if err != nil {
						return "", err
					}
					at = append(at, t)
					continue
				}
				m := execRe.FindStringSubmatch(b.Exec)
				if m == nil {
					continue
				}
				k, _ := strconv.Atoi(m[1])
				from, _ := strconv.ParseFloat(m[2], 64)
				to, _ := strconv.ParseFloat(m[3], 64)
				turns += k
				finished++
				r := float64(k) / (to - from)
				lo, hi = math.Min(lo, r), math.Max(hi, r)
			}
			sort.Slice(at, func(i, j int) bool { return turnStart(at[i]) < turnStart(at[j]) })
			cr := strconv.Itoa(len(at))
			if len(at) == 1 {
				cr += " (at turn " + at[0] + ")"
			} else if len(at) > 1 {
				cr += " (at turns " + strings.Join(at, ", ") + ")"
			}
			done := "-"
			if finished > 0 {
				done = fmt.Sprintf("%d (%d boots, %s-%s turns/s)", turns, finished, perS(lo), perS(hi))
			}
			rows = append(rows, []string{run.label, accelOf(bs, c), strconv.Itoa(n), cr, rate(len(at), n), done})
		}
	}
	return kit.Table([]string{"run", "config", "boots", "crashed (`Oops: int3`)", "boot crash rate (95% CI)", "turns done without a crash (boots that finished, turns/s)"}, rows), nil
}

func costTable(bs []boot) (string, error) {
	cs := configs(bs)
	if len(cs) != 2 {
		return "", fmt.Errorf("rate: %d configurations, the table compares 2", len(cs))
	}
	a0, a1 := accelOf(bs, cs[0]), accelOf(bs, cs[1])
	scen := map[string]bool{}
	for _, b := range bs {
		scen[b.Scenario] = true
	}
	var names []string
	for s := range scen {
		names = append(names, s)
	}
	sort.Strings(names)
	var rows [][]string
	for _, sc := range names {
		for _, dir := range []string{"send", "receive"} {
			// per configuration, the k-th boot of the scenario (NaN: failed)
			per := map[string][]float64{}
			for _, b := range bs {
				if b.Scenario != sc {
					continue
				}
				v := math.NaN()
				if b.OK && len(b.Mbit[dir]) > 0 {
					v = stats.Mean(b.Mbit[dir])
				}
				per[b.Config] = append(per[b.Config], v)
			}
			vals := map[string][]float64{}
			for _, c := range cs {
				for _, v := range per[c] {
					if !math.IsNaN(v) {
						vals[c] = append(vals[c], v)
					}
				}
			}
			if len(vals[cs[0]]) == 0 {
				continue
			}
			var pairs []float64
			for i := 0; i < len(per[cs[0]]) && i < len(per[cs[1]]); i++ {
				a, b := per[cs[0]][i], per[cs[1]][i]
				if !math.IsNaN(a) && !math.IsNaN(b) {
					pairs = append(pairs, b/a)
				}
			}
			m0, m1 := kit.Median(vals[cs[0]]), kit.Median(vals[cs[1]])
			pr := "-"
			if len(pairs) > 0 {
				s := append([]float64(nil), pairs...)
				sort.Float64s(s)
				pr = fmt.Sprintf("%.2f (%.2f-%.2f), %d pairs", kit.Median(pairs), s[0], s[len(s)-1], len(pairs))
			}
			rows = append(rows, []string{sc, dir, fmt.Sprintf("%.1f (%d)", m0, len(vals[cs[0]])), fmt.Sprintf("%.1f (%d)", m1, len(vals[cs[1]])),
				kit.F(m1/m0, 2), pr})
		}
	}
	return kit.Table([]string{"scenario", "direction", a0 + " median Mbit/s (n)", a1 + " median Mbit/s (n)",
		a1 + "/" + a0 + ", medians", "per-pair ratios, median (range)"}, rows), nil
}

// turnStart orders crashTurn's text: "before 25" first, then by turn.
func turnStart(s string) int {
	n, _ := strconv.Atoi(strings.SplitN(s, "-", 2)[0])
	return n
}
