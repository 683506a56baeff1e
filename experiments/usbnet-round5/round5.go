// SPDX-License-Identifier: Apache-2.0

// Package usbnetround5 recomputes docs/results.md's "usbnet round 5" table
// from checks.sh's record of the series' static checks, data/*/checks.json.
package usbnetround5

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-round5", Tables: tables})
}

// record is checks.sh's OUT/checks.json.
type record struct {
	Commit string `json:"wirespeed_commit"`
	Checks []struct {
		Check    string `json:"check"`
		Base     string `json:"base"`
		Exit     int    `json:"exit"`
		Prefixes []struct {
			Patch      int               `json:"patch"`
			Of         int               `json:"of"`
			Build      map[string]string `json:"build"`
			Checkpatch []int             `json:"checkpatch"`
		} `json:"prefixes"`
		Cover []int `json:"cover_checkpatch"`
	} `json:"checks"`
}

// tables: one table per run directory under data/ holding a checks.json,
// its ID the directory's name; the lab runs of lab-7.3.4-2026-11-28.
func tables(dir string) (map[string]string, error) {
	out, err := checkTables(dir)
	if err != nil {
		return nil, err
	}
	lab := filepath.Join(dir, "data", "lab-7.3.4-2026-11-28")
	if _, err := kit.Stat(lab); err != nil {
		return out, nil
	}
	if out["stress-7.3"], err = stressRuns(filepath.Join(lab, "stress")); err != nil {
		return nil, err
	}
	if st := filepath.Join(dir, "data", "stall-7.3.4-2026-11-28"); exists(st) {
		if out["stall-7.3"], err = stallCount(st); err != nil {
			return nil, err
		}
	}
	if st := filepath.Join(dir, "data", "stall2-7.3.4-2026-11-28"); exists(st) {
		if out["stall2-7.3"], err = stallCount(st); err != nil {
			return nil, err
		}
		if out["stall2-ab-7.3"], err = stallAB(filepath.Join(st, "ab")); err != nil {
			return nil, err
		}
		if out["stall2-dumps-7.3"], err = stallDumps(st, filepath.Join(st, "ab"), filepath.Join(dir, "data", "prefix-7.3.4-2026-11-28")); err != nil {
			return nil, err
		}
	}
	if d := filepath.Join(dir, "data", "prefix3-kasan-6.12.117-2026-11-28"); exists(d) {
		if out["prefix3-kasan-6.12"], err = stressRuns(d); err != nil {
			return nil, err
		}
	}
	for id, run := range map[string]string{"prefix3-repeat-6.12": "prefix3-repeat-6.12.117-2026-11-28",
		"linkrace-6.1": "linkrace-6.1.192-2026-11-28", "linkrace-reordered-6.1": "linkrace-reordered-6.1.192-2026-11-28",
		"linkrace-control-6.1": "linkrace-control-6.1.192-2026-11-28"} {
		if d := filepath.Join(dir, "data", run); exists(d) {
			if out[id], err = repeatCounts(d); err != nil {
				return nil, err
			}
		}
	}
	for _, pr := range []string{"prefix-7.3.4-2026-11-28", "prefix-6.12.117-2026-11-28", "prefix-6.18.19-2026-11-28",
		"prefix-6.1.192-2026-11-28", "prefix-7.3.4-arm64-2026-11-28", "prefix-reordered-6.1.192-2026-11-28",
		"prefix-reordered-6.12.117-2026-11-28", "prefix-reordered-6.18.19-2026-11-28", "prefix-reordered-7.3.4-2026-11-28"} {
		if d := filepath.Join(dir, "data", pr); exists(d) {
			if out[pr], err = prefixRuns(d); err != nil {
				return nil, err
			}
		}
	}
	if _, err := kit.Stat(filepath.Join(lab, "rx")); err == nil {
		if out["rx-7.3"], err = rxPairs(filepath.Join(lab, "rx")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkTables(dir string) (map[string]string, error) {
	runs, err := kit.Glob(filepath.Join(dir, "data", "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(runs)
	out := map[string]string{}
	for _, f := range runs {
		var r record
		if err := kit.ReadJSON(f, &r); err != nil {
			return nil, err
		}
		var rows [][]string
		for _, c := range r.Checks {
			if len(c.Prefixes) == 0 {
				return nil, fmt.Errorf("%s: check %s has no prefixes", f, c.Check)
			}
			ok := map[string]int{}
			cp := [3]int{}
			for _, p := range c.Prefixes {
				for a, res := range p.Build {
					if res == "ok" {
						ok[a]++
					}
				}
				if len(p.Checkpatch) != 3 {
					return nil, fmt.Errorf("%s: check %s patch %d: no checkpatch count", f, c.Check, p.Patch)
				}
				for i := range cp {
					cp[i] += p.Checkpatch[i]
				}
			}
			n := len(c.Prefixes)
			cover := "-"
			if len(c.Cover) == 3 {
				cover = fmt.Sprintf("%d/%d/%d", c.Cover[0], c.Cover[1], c.Cover[2])
			}
			verdict := "**pass**"
			if c.Exit != 0 || ok["x86_64"] != n || ok["arm64"] != n || cp != [3]int{} {
				verdict = "**FAIL**"
			}
			rows = append(rows, []string{c.Check, c.Base, fmt.Sprint(n),
				fmt.Sprintf("%d/%d", ok["x86_64"], n), fmt.Sprintf("%d/%d", ok["arm64"], n),
				fmt.Sprintf("%d/%d/%d", cp[0], cp[1], cp[2]), cover, verdict})
		}
		id := filepath.Base(filepath.Dir(f))
		out[id] = kit.Table([]string{"series", "base", "prefixes", "x86_64 builds clean", "arm64 builds clean",
			"checkpatch --strict errors/warnings/checks (all patches)", "cover letter", "verdict"}, rows)
	}
	return out, nil
}

// stressRuns is a row per usbnet-stress boot under dir, every one (PLAN.md
// drops none), in the order they started: which usbnet it ran (the lab's
// modules.txt), its verdict and the stress script's count of steps.
func stressRuns(dir string) (string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return "", err
	}
	type row struct{ started, name, usbnet, outcome, summary, cycles string }
	var rows []row
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(dir, e.Name())
		var v struct {
			Started string `json:"started"`
			OK      bool   `json:"ok"`
			Failure string `json:"failure"`
			Options struct {
				Cycles int `json:"cycles"`
			} `json:"options"`
		}
		if err := kit.ReadJSON(filepath.Join(d, "vm.json"), &v); err != nil {
			return "", err
		}
		r := row{started: v.Started, name: e.Name(), cycles: strconv.Itoa(v.Options.Cycles), outcome: "clean"}
		if !v.OK {
			r.outcome = "FAIL: " + v.Failure
		}
		mods, err := kit.ReadFile(filepath.Join(d, "modules.txt"))
		if err != nil {
			return "", err
		}
		r.usbnet = "?"
		for _, l := range strings.Split(string(mods), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "usbnet" {
				r.usbnet = map[bool]string{true: "ours (round 5)", false: "the kernel's own"}[f[1] == "modules-dir"]
			}
		}
		st, err := kit.ReadFile(filepath.Join(d, "stress.txt"))
		if err != nil {
			return "", err
		}
		for _, l := range strings.Split(string(st), "\n") {
			if _, after, ok := strings.Cut(l, "cycles done: "); ok {
				r.summary = after
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].started < rows[j].started })
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r.name, r.usbnet, r.cycles, r.outcome, r.summary})
	}
	return kit.Table([]string{"run", "usbnet", "cycles", "outcome", "steps done (the stress script's count)"}, cells), nil
}

// rxPairs is usbnet-rx.sh's gadget-icount phase (round 2's reader: a pair
// counts when both boots finished their bench), a row per pair and the
// medians of the per-pair ratios.
func rxPairs(dir string) (string, error) {
	pairs, dropped, err := kit.RXPhase(dir, "gadget-icount")
	if err != nil {
		return "", err
	}
	var rows [][]string
	var thr, busy []float64
	for _, p := range pairs {
		thr = append(thr, p.ThroughputRatio())
		busy = append(busy, p.BusyRatio())
		rows = append(rows, []string{strconv.Itoa(p.Pair), kit.F(p.Stock.Mbit, 1), kit.F(p.Ours.Mbit, 1), kit.F(p.ThroughputRatio(), 3),
			kit.F(p.Stock.BusyPerMbit, 3), kit.F(p.Ours.BusyPerMbit, 3), kit.F(p.BusyRatio(), 3), p.Ours.RXPath, kit.F(p.Ours.GRORatio, 1)})
	}
	if len(pairs) > 0 {
		rows = append(rows, []string{"median", "", "", kit.F(kit.Median(thr), 3), "", "", kit.F(kit.Median(busy), 3), "", ""})
	}
	for _, d := range dropped {
		rows = append(rows, []string{strconv.Itoa(d), "not counted (a boot failed or its bench was incomplete)", "", "", "", "", "", "", ""})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % per Mbit/s",
		"ours busy % per Mbit/s", "busy per Mbit/s ours/stock", "RX path (ours)", "GRO segments per skb (ours)"}, rows), nil
}

func exists(p string) bool { _, err := kit.Stat(p); return err == nil }

// stallCount counts, per side, the BQL boots under dir whose console shows
// an RCU stall or a soft lockup report, and where the stalled CPU was
// (the first function of ours or the kernel's the trace names after the
// lock), and the boots that failed otherwise. Every boot is counted
// (PLAN.md drops none).
func stallCount(dir string) (string, error) {
	type side struct {
		boots, stalls, failed int
		where                 []string
	}
	sides := map[string]*side{"stock": {}, "ours": {}}
	for _, name := range []string{"stock", "ours"} {
		reps, err := kit.Reps(dir, "bql-"+name)
		if err != nil {
			return "", err
		}
		s := sides[name]
		for _, i := range reps {
			run := filepath.Join(dir, fmt.Sprintf("bql-%s-%d", name, i))
			s.boots++
			con, err := kit.ReadFile(filepath.Join(run, "console.log"))
			if err != nil {
				return "", err
			}
			text := string(con)
			if strings.Contains(text, "detected stalls on CPUs") || strings.Contains(text, "soft lockup") {
				s.stalls++
				s.where = append(s.where, fmt.Sprintf("%d: %s", i, stallSite(text)))
				continue
			}
			if ok, err := kit.VMOK(run); err != nil {
				return "", err
			} else if !ok {
				s.failed++
			}
		}
	}
	var rows [][]string
	for _, name := range []string{"stock", "ours"} {
		s := sides[name]
		rows = append(rows, []string{name, strconv.Itoa(s.boots), strconv.Itoa(s.stalls), strconv.Itoa(s.failed), strings.Join(s.where, "; ")})
	}
	return kit.Table([]string{"usbnet", "boots", "with an RCU stall or soft lockup", "failed otherwise", "where the stalled CPU was (boot: caller of the lock)"}, rows), nil
}

// stallSite is the first frame after hrtimer_start_range_ns (or after the
// spin lock) of the first stall report's trace.
func stallSite(console string) string {
	i := strings.Index(console, "detected stalls on CPUs")
	if i < 0 {
		i = strings.Index(console, "soft lockup")
	}
	lines := strings.Split(console[i:], "\n")
	seen := false
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		fn := f[len(f)-1]
		if strings.HasPrefix(fn, "[") && len(f) >= 3 { // a module: "name+0x../0x.. [cdc_ncm]"
			fn = f[len(f)-2]
		}
		if strings.Contains(fn, "hrtimer_start_range_ns") || strings.Contains(fn, "_raw_spin_lock") {
			seen = true
			continue
		}
		if seen && strings.Contains(fn, "+0x") {
			return strings.SplitN(fn, "+", 2)[0]
		}
	}
	return "?"
}

// prefixRuns is prefix-runs.sh's record: a row per prefix, its stress
// boot (the script's count of steps) and its receive boot, and whether
// both passed (clean, every cycle done, traffic received).
func prefixRuns(dir string) (string, error) {
	srcs, err := kit.Glob(filepath.Join(dir, "at-*.source"))
	if err != nil {
		return "", err
	}
	var reps []int
	for _, f := range srcs {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "at-"), ".source"))
		if err != nil {
			return "", fmt.Errorf("%s: not at-N.source", f)
		}
		reps = append(reps, n)
	}
	sort.Ints(reps)
	var rows [][]string
	for _, n := range reps {
		src, err := kit.ReadFile(filepath.Join(dir, fmt.Sprintf("at-%d.source", n)))
		if err != nil {
			return "", err
		}
		last := strings.TrimSpace(string(src))
		if _, after, ok := strings.Cut(last, ": "); ok {
			last = after
		}
		stress, cycles, err := stressVerdict(filepath.Join(dir, fmt.Sprintf("at-%d-stress", n)))
		if err != nil {
			return "", err
		}
		rx, rxOK, err := kit.RXRun(filepath.Join(dir, fmt.Sprintf("at-%d-rx", n)))
		if err != nil {
			return "", err
		}
		rxCell, verdict := "FAIL", "**FAIL**"
		if rxOK && rx.Mbit > 0 {
			rxCell = fmt.Sprintf("clean, %s Mbit/s, %s", kit.F(rx.Mbit, 1), rx.RXPath)
			if rx.GRORatio > 0 && !strings.Contains(rx.RXPath, "no GRO") {
				rxCell += fmt.Sprintf(", GRO %s segments/skb", kit.F(rx.GRORatio, 1))
			}
			if stress == "clean" {
				verdict = "**pass**"
			}
		}
		rows = append(rows, []string{strconv.Itoa(n), last, stress, cycles, rxCell, verdict})
		rerun := filepath.Join(dir, fmt.Sprintf("at-%d-stress-rerun", n))
		if !exists(rerun) {
			continue
		}
		first := rows[len(rows)-1][2]
		stress, cycles, err = stressVerdict(rerun)
		if err != nil {
			return "", err
		}
		// a rerun passes a prefix only when the first boot failed on the
		// emulator's stall alone
		verdict = "**FAIL**"
		if stress == "clean" && rxOK && rx.Mbit > 0 {
			verdict = "clean rerun; the prefix stays **FAIL** (its first boot did not fail on the stall)"
			if strings.Contains(first, "RCU stall") && !strings.Contains(first, ";") {
				verdict = "**pass** (rerun)"
			}
		}
		how := "the same boot, rerun once"
		if fair, err := hasFairLocks(rerun); err != nil {
			return "", err
		} else if firstFair, err := hasFairLocks(filepath.Join(dir, fmt.Sprintf("at-%d-stress", n))); err != nil {
			return "", err
		} else if fair && !firstFair {
			how = "rerun once with clearcpuid=hypervisor (the stall's fair-lock arm)"
		}
		rows = append(rows, []string{strconv.Itoa(n) + " rerun", how, stress, cycles, "(as above)", verdict})
	}
	return kit.Table([]string{"prefix", "its last patch", "usbnet-stress", "steps done (the stress script's count)",
		"receive (usb-gadget, -P 2, 8 s)", "verdict"}, rows), nil
}

// stressVerdict is a stress boot's outcome ("clean" or the failure) and
// the stress script's count of steps.
func stressVerdict(run string) (outcome, summary string, err error) {
	var v struct {
		OK      bool   `json:"ok"`
		Failure string `json:"failure"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &v); err != nil {
		return "", "", err
	}
	outcome = "clean"
	if !v.OK {
		outcome = "FAIL: " + strings.SplitN(v.Failure, "\n", 2)[0]
	}
	if st, err := kit.ReadFile(filepath.Join(run, "stress.txt")); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if _, after, ok := strings.Cut(l, "cycles done: "); ok {
				summary = after
			}
		}
	}
	return outcome, summary, nil
}

// dumpSample is one sample of a lab monitor-at-stall.txt: each vCPU's RIP
// and RDI, and the first word at each address read.
type dumpSample struct {
	rip, rdi []string
	words    map[string][]string
}

var (
	dumpRegRe  = regexp.MustCompile(`^RIP=([0-9a-f]{16})|\bRDI=([0-9a-f]{16})`)
	dumpWordRe = regexp.MustCompile(`^([0-9a-f]{16}): (0x[0-9a-f]{8}) (0x[0-9a-f]{8})`)
)

// readDump parses a monitor-at-stall.txt into its samples.
func readDump(b []byte) []dumpSample {
	var out []dumpSample
	var cur *dumpSample
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## sample "):
			out = append(out, dumpSample{words: map[string][]string{}})
			cur = &out[len(out)-1]
		case cur == nil:
		case strings.HasPrefix(l, "RIP="):
			cur.rip = append(cur.rip, l[4:20])
		case strings.Contains(l, "RDI="):
			if m := dumpRegRe.FindStringSubmatch(l); m != nil {
				cur.rdi = append(cur.rdi, m[2])
			}
		default:
			if m := dumpWordRe.FindStringSubmatch(l); m != nil {
				if _, seen := cur.words[m[1]]; !seen {
					cur.words[m[1]] = []string{m[2], m[3]}
				}
			}
		}
	}
	return out
}

// stallDumps is a row per sample of each monitor-at-stall.txt under
// dirs: each vCPU's RIP and RDI, and the word at each RDI that was read
// with the word after it (for a hrtimer_cpu_base: its lock, then its cpu).
func stallDumps(dirs ...string) (string, error) {
	var rows [][]string
	for _, dir := range dirs {
		files, err := kit.Glob(filepath.Join(dir, "*", "monitor-at-stall.txt"))
		if err != nil {
			return "", err
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := kit.ReadFile(f)
			if err != nil {
				return "", err
			}
			run := filepath.Base(filepath.Dir(filepath.Dir(f))) + "/" + filepath.Base(filepath.Dir(f))
			samples := readDump(b)
			if len(samples) == 0 {
				rows = append(rows, []string{run, "-", "dump incomplete", "", ""})
			}
			for n, sm := range samples {
				var cpus, words []string
				for c := range sm.rip {
					rdi := "?"
					if c < len(sm.rdi) {
						rdi = sm.rdi[c]
					}
					cpus = append(cpus, fmt.Sprintf("CPU %d: %s, RDI %s", c, sm.rip[c], rdi))
					if v := sm.words[rdi]; v != nil {
						words = append(words, fmt.Sprintf("CPU %d's RDI: %s (next %s)", c, v[0], v[1]))
					}
				}
				rows = append(rows, []string{run, strconv.Itoa(n + 1), strings.Join(cpus, "; "), strings.Join(words, "; ")})
			}
		}
	}
	return kit.Table([]string{"boot", "sample", "each vCPU's RIP and RDI", "the words at the RDIs read"}, rows), nil
}

// stallAB is stall-ab.sh's record: per arm (the guest as QEMU's TCG makes
// it, or with clearcpuid=hypervisor), the boots, those with an RCU stall
// or soft lockup report, those that failed otherwise, and the stress
// cycles done in each boot.
func stallAB(dir string) (string, error) {
	var rows [][]string
	for _, arm := range []string{"default", "fair"} {
		reps, err := kit.Reps(dir, arm)
		if err != nil {
			return "", err
		}
		stalls, failed := 0, 0
		var cycles []string
		for _, i := range reps {
			run := filepath.Join(dir, fmt.Sprintf("%s-%d", arm, i))
			con, err := kit.ReadFile(filepath.Join(run, "console.log"))
			if err != nil {
				return "", err
			}
			cycles = append(cycles, cyclesDone(run))
			if strings.Contains(string(con), "detected stalls on CPUs") || strings.Contains(string(con), "soft lockup") {
				stalls++
			} else if ok, err := kit.VMOK(run); err != nil {
				return "", err
			} else if !ok {
				failed++
			}
		}
		name := map[string]string{"default": "as TCG makes it (hypervisor bit: virt_spin_lock)", "fair": "clearcpuid=hypervisor (queued spinlocks)"}[arm]
		rows = append(rows, []string{name, strconv.Itoa(len(reps)), strconv.Itoa(stalls), strconv.Itoa(failed), strings.Join(cycles, ", ")})
	}
	return kit.Table([]string{"guest", "boots", "with an RCU stall or soft lockup", "failed otherwise", "stress cycles done per boot"}, rows), nil
}

var cyclesRe = regexp.MustCompile(`(\d+) cycles done`)

// cyclesDone is the stress script's count of cycles done in run ("-" when
// it did not finish).
func cyclesDone(run string) string {
	st, err := kit.ReadFile(filepath.Join(run, "stress.txt"))
	if err != nil {
		return "-"
	}
	if m := cyclesRe.FindStringSubmatch(string(st)); m != nil {
		return m[1]
	}
	return "-"
}

// hasFairLocks says whether run's guest booted with clearcpuid=hypervisor.
func hasFairLocks(run string) (bool, error) {
	var v struct {
		QEMU []string `json:"qemu_command"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &v); err != nil {
		return false, err
	}
	return strings.Contains(strings.Join(v.QEMU, " "), "clearcpuid=hypervisor"), nil
}
