// SPDX-License-Identifier: Apache-2.0

// Package usbnetdevlab recomputes docs/results.md's "device lab" tables
// (issue 41) from the runs of devlab-rx.sh under data/: receive capacity
// and busy guest CPU per Mbit/s on the emulated CDC-NCM adapter, stock
// usbnet vs ours, with the device process's own CPU beside.
package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func exists(p string) bool { _, err := kit.Stat(p); return err == nil }

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-devlab", Tables: tables})
}

// runs are the directories of devlab-rx.sh runs, by table id.
var runs = map[string]struct{ dir, phase string }{
	"rx-ncm-x86-7.3":     {"rx-7.3.4-2026-11-28", "ncm-x86"},
	"rx-ncm-x86-rt-7.3":  {"rx-rt-7.3.4-2026-11-28", "ncm-x86-rt"},
	"rx-ncm-virt-rt-7.3": {"rx-virt-rt-7.3.4-2026-11-28", "ncm-virt-rt"},
}

func tables(dir string) (map[string]string, error) {
	out := map[string]string{}
	for id, r := range runs {
		d := filepath.Join(dir, "data", r.dir)
		if _, err := kit.Stat(d); err != nil {
			continue
		}
		t, err := rxTable(d, r.phase)
		if err != nil {
			return nil, err
		}
		out[id] = t
	}
	for id, r := range axRuns {
		d := filepath.Join(dir, "data", r.dir)
		if !exists(d) {
			continue
		}
		t, err := axTable(d, r.phase, r.variants, r.loaded)
		if err != nil {
			return nil, err
		}
		out[id] = t
		if out[id+"-reps"], err = axRepsTable(d, r.phase, r.variants, r.loaded); err != nil {
			return nil, err
		}
	}
	for id, r := range stagedRuns {
		d := filepath.Join(dir, "data", r.dir)
		if !exists(d) {
			continue
		}
		var err error
		if out[id], err = stagedTable(d, r.phase, r.variants); err != nil {
			return nil, err
		}
		if out[id+"-reps"], err = stagedRepsTable(d, r.phase, r.variants); err != nil {
			return nil, err
		}
	}
	for _, id := range axInsideRuns {
		r := axRuns[id]
		d := filepath.Join(dir, "data", r.dir)
		if !exists(d) {
			continue
		}
		var err error
		if out[id+"-inside"], err = axInsideTable(d, r.phase, r.variants, r.loaded); err != nil {
			return nil, err
		}
	}
	if d := filepath.Join(dir, "data", "profile-7.3.4-2026-11-28"); exists(d) {
		t, err := kit.ProfileRunsTable(d, "ncm-stock", "ncm-ours")
		if err != nil {
			return nil, err
		}
		out["profile-ncm-x86-7.3"] = t
	}
	if d := filepath.Join(dir, "data", "profile-virt-7.3.4-2026-11-28"); exists(d) {
		t, err := kit.ProfileRunsTable(d, "ncm-virt-stock", "ncm-virt-ours")
		if err != nil {
			return nil, err
		}
		out["profile-ncm-virt-7.3"] = t
	}
	// the runs of one directory each, a table per run
	err := dirTables(dir, out, []dirTable{{hostileRuns, hostileTable}, {bootRuns, bootTable},
		{cloneRuns, cloneTable}, {stressRuns, stressTable}, {eemCRCRuns, eemCRCTable},
		{gadgetFnRuns, gadgetFnTable}, {unplugRuns, unplugTable}, {fifoRuns, fifoTable}})
	if err != nil {
		return nil, err
	}
	for _, add := range []func(string, map[string]string) error{tuneTables, splitTables, axPairTables} {
		if err := add(dir, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dirTable makes the table of each run directory present in runs (by
// table id) with mk.
type dirTable struct {
	runs map[string]string
	mk   func(dir string) (string, error)
}

// dirTables adds every dirTable's tables to out.
func dirTables(dir string, out map[string]string, sets []dirTable) error {
	for _, set := range sets {
		for id, d := range set.runs {
			if d = filepath.Join(dir, "data", d); !exists(d) {
				continue
			}
			t, err := set.mk(d)
			if err != nil {
				return err
			}
			out[id] = t
		}
	}
	return nil
}

// hostileRuns are the directories of devlab-hostile.sh runs, by table id.
var hostileRuns = map[string]string{"hostile-7.3": "hostile-7.3.4-2026-11-28",
	"hostile-rndis-ax-7.3": "hostile2-7.3.4-2026-11-28", "hostile-kasan-7.3": "hostile-kasan-7.3.4-2026-11-28",
	"hostile-staged-ax-kasan-7.3": "staged-ax-kasan-7.3.4-2026-11-28",
	"hostile-bqlwork-kasan-7.3":   "bqlwork-hostile-kasan-7.3.4-2026-11-28", "hostile-staged2-kasan-7.3": "staged2-hostile-kasan-7.3.4-2026-11-28",
	"hostile-6.18": "hostile-6x-2026-11-28/6.18", "hostile-6.12": "hostile-6x-2026-11-28/6.12",
	"hostile-kasan-6.12": "hostile-kasan-6.12.117-2026-11-28", "hostile-kasan-6.18": "hostile-kasan-6.18.19-2026-11-28"}

// quietPairs keeps the pairs whose boots both started on a quiet host.
func quietPairs(dir, phase string, pairs []kit.RXPair, dropped []int) ([]kit.RXPair, []int, error) {
	var keep []kit.RXPair
	for _, p := range pairs {
		worst := 0.0
		for _, side := range []string{"stock", "ours"} {
			w, err := kit.OutsideLoad(filepath.Join(dir, fmt.Sprintf("%s-%s-%d", phase, side, p.Pair), "host-top.txt"), true)
			if err != nil {
				return nil, nil, err
			}
			worst = max(worst, w)
		}
		if worst > 20 {
			dropped = append(dropped, p.Pair)
			continue
		}
		keep = append(keep, p)
	}
	sort.Ints(dropped)
	return keep, dropped, nil
}

// device is what a run's usbdev.json says of the device process.
type device struct {
	CPUUser float64 `json:"cpu_user_s"`
	CPUSys  float64 `json:"cpu_sys_s"`
	Model   struct {
		FramesToHost     float64 `json:"frames_to_host"`
		AggregatesToHost float64 `json:"aggregates_to_host"`
	} `json:"model"`
}

func readDevice(run string) (device, error) {
	var d device
	err := kit.ReadJSON(filepath.Join(run, "usbdev.json"), &d)
	return d, err
}

// rxTable: one row per counted pair, the medians, then the pairs not
// counted (PLAN.md's rule: both boots ok with a complete bench; in real
// time also no process but QEMU, wirespeed and iperf3 above 20% of a CPU
// before either boot).
func rxTable(dir, phase string) (string, error) {
	pairs, dropped, err := kit.RXPhase(dir, phase)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(phase, "-rt") {
		if pairs, dropped, err = quietPairs(dir, phase, pairs, dropped); err != nil {
			return "", err
		}
	}
	var rows [][]string
	var thr, busy []float64
	for _, p := range pairs {
		thr = append(thr, p.ThroughputRatio())
		busy = append(busy, p.BusyRatio())
		var cpu [2]string
		var per string
		for i, side := range []string{"stock", "ours"} {
			d, err := readDevice(filepath.Join(dir, fmt.Sprintf("%s-%s-%d", phase, side, p.Pair)))
			if err != nil {
				return "", err
			}
			cpu[i] = kit.F(d.CPUUser+d.CPUSys, 1)
			if side == "ours" && d.Model.AggregatesToHost > 0 {
				per = kit.F(d.Model.FramesToHost/d.Model.AggregatesToHost, 1)
			}
		}
		rows = append(rows, []string{strconv.Itoa(p.Pair), kit.F(p.Stock.Mbit, 1), kit.F(p.Ours.Mbit, 1), kit.F(p.ThroughputRatio(), 3),
			kit.F(p.Stock.BusyPerMbit, 3), kit.F(p.Ours.BusyPerMbit, 3), kit.F(p.BusyRatio(), 3),
			p.Ours.RXPath, kit.F(p.Ours.GRORatio, 1), per, cpu[0] + " / " + cpu[1]})
	}
	if len(pairs) > 0 {
		rows = append(rows, []string{"median", "", "", kit.F(kit.Median(thr), 3), "", "", kit.F(kit.Median(busy), 3), "", "", "", ""})
	}
	for _, d := range dropped {
		rows = append(rows, []string{strconv.Itoa(d), "not counted (a boot failed or its bench was incomplete)", "", "", "", "", "", "", "", "", ""})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % per Mbit/s",
		"ours busy % per Mbit/s", "busy per Mbit/s ours/stock", "RX path (ours)", "GRO segments per skb (ours)",
		"frames per NTB (ours)", "device CPU s stock / ours"}, rows), nil
}
