// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// gadgetFnRuns are the directories of the gadget loop's boots with each
// --gadget-function (FUNCTION-SIDE[-stress]), by table id.
var gadgetFnRuns = map[string]string{
	"gadgetfn-7.3":        "gadgetfn-7.3.4-2026-11-28",
	"gadgetfn-kasan-7.3":  "gadgetfn-kasan-7.3.4-2026-11-28",
	"gadgetfn-kasan2-7.3": "gadgetfn-kasan2-7.3.4-2026-11-28",
	"gadgetfn-kasan3-7.3": "gadgetfn-kasan3-7.3.4-2026-11-28",
	"gadgetfn-kasan4-7.3": "gadgetfn-kasan4-7.3.4-2026-11-28",
}

var stressDoneRe = regexp.MustCompile(`stress: (\d+) cycles done`)

// gadgetFnTable: one row per boot: the verdict (vm.json ok: the console
// guards saw no KASAN, WARNING, BUG, Oops, lockup or stall, and the
// scenario finished; a receive boot also needs a complete bench), the
// function and the host driver that bound, the receive Mbit/s or the
// stress cycles done, kmemleak's suspects at the end (where the kernel has
// kmemleak) and the guards hit or the failure.
func gadgetFnTable(dir string) (string, error) {
	names, err := boots(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, n := range names {
		row, err := gadgetFnRow(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		rows = append(rows, append([]string{n}, row...))
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("%s: no boots", dir)
	}
	return kit.Table([]string{"boot", "verdict", "function", "driver bound", "guest kernel", "receive Mbit/s",
		"stress cycles done", "kmemleak suspects", "console guards hit / failure"}, rows), nil
}

func gadgetFnRow(run string) ([]string, error) {
	var v struct {
		OK     bool `json:"ok"`
		Kernel struct {
			Release string `json:"release"`
		} `json:"kernel"`
		Options struct {
			Scenario       string `json:"scenario"`
			GadgetFunction string `json:"gadget_function"`
		} `json:"options"`
		Failure string `json:"failure"`
		Guards  []struct {
			Guard string `json:"guard"`
		} `json:"guards"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &v); err != nil {
		return nil, err
	}
	facts := map[string]string{} // none when the boot stopped before init
	if exists(filepath.Join(run, "facts.txt")) {
		f, err := readFactStrings(filepath.Join(run, "facts.txt"))
		if err != nil {
			return nil, err
		}
		facts = f
	}
	verdict, mbit, cycles := "pass", "-", "-"
	if v.Options.Scenario == "usb-gadget" {
		r, err := kit.FirstRun(run, "receive")
		if err != nil {
			return nil, err
		}
		if r == nil {
			verdict = "FAIL (bench incomplete)"
		} else {
			mbit = kit.F(r.Metrics["receive_mbit"], 1)
		}
	}
	if m := stressDoneRe.FindStringSubmatch(facts["stress_result"]); m != nil {
		cycles = m[1]
	}
	if !v.OK {
		verdict = "FAIL"
	}
	leaks := facts["kmemleak_suspects"]
	if leaks == "" {
		leaks = "-"
	}
	var hits []string
	for _, g := range v.Guards {
		hits = append(hits, g.Guard)
	}
	if len(hits) == 0 && v.Failure != "" {
		f, _, _ := strings.Cut(v.Failure, "\n")
		hits = append(hits, strings.ReplaceAll(f, "|", "/"))
	}
	drv := facts["dut_driver"]
	if drv == "" {
		drv = "-" // the stress records none: its host_up fails the run when no such device comes
	}
	fn := v.Options.GadgetFunction
	if fn == "" {
		fn = "ncm"
	}
	return []string{verdict, fn, drv, v.Kernel.Release, mbit, cycles, leaks, strings.Join(hits, ", ")}, nil
}
