// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// bootRuns are directories of single boots (one per model, kernel and
// side), by table id: what bound, and what passed each way.
var bootRuns = map[string]string{
	"functional":            "functional-2026-11-28",
	"clone-7.3":             "clone-kasan-7.3.4-2026-11-28",
	"functional-6x":         "functional-6x-2026-11-28",
	"functional-6.18-arm64": "functional-6.18-arm64-2026-11-29",
}

// bootTable: one row per boot directory: the verdict (vm.json ok: the
// console guards saw no KASAN, WARNING, BUG, Oops, lockup or stall; and
// every bench complete), the driver that bound and its USB speed, the
// guest's kernel and Mbit/s each way, the guards' hits; and one per boot
// refused before its VM started (only its console, NAME.txt, is there).
func bootTable(dir string) (string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	dirs := map[string]bool{}
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
			dirs[e.Name()] = true
		}
	}
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".txt")
		if ok && !e.IsDir() && n != "runs" && !dirs[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var rows [][]string
	for _, n := range names {
		row, err := notBootedRow(filepath.Join(dir, n))
		if dirs[n] {
			row, err = bootRow(filepath.Join(dir, n))
		}
		if err != nil {
			return "", err
		}
		rows = append(rows, append([]string{n}, row...))
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("%s: no boots", dir)
	}
	return kit.Table([]string{"boot", "verdict", "guest kernel", "driver bound", "USB speed", "send Mbit/s",
		"receive Mbit/s", "console guards hit", "xHCI event ring full (dmesg)"}, rows), nil
}

// notBootedRow is a refused boot's row: its console's last line.
func notBootedRow(run string) ([]string, error) {
	b, err := kit.ReadRaw(run + ".txt")
	if err != nil {
		return nil, err
	}
	last := strings.TrimSpace(string(b))
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	return []string{"FAIL (not booted: " + strings.TrimPrefix(last, "wirespeed lab: ") + ")", "-", "-", "-", "-", "-", "", "-"}, nil
}

// bootRow is one boot's row but its name.
func bootRow(run string) ([]string, error) {
	var v struct {
		OK     bool `json:"ok"`
		Kernel struct {
			Release string `json:"release"`
		} `json:"kernel"`
		Guards []struct {
			Guard string `json:"guard"`
		} `json:"guards"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &v); err != nil {
		return nil, err
	}
	facts, err := readFactStrings(filepath.Join(run, "facts.txt"))
	if err != nil {
		return nil, err
	}
	verdict := "pass"
	mbit := map[string]string{"send": "-", "receive": "-"}
	for _, dir := range []string{"send", "receive"} {
		if _, err := kit.Stat(filepath.Join(run, "bench-"+dir+".json")); err != nil {
			continue
		}
		r, err := kit.FirstRun(run, dir)
		if err != nil {
			return nil, err
		}
		if r == nil {
			verdict = "FAIL (bench incomplete)"
			continue
		}
		mbit[dir] = kit.F(r.Metrics[dir+"_mbit"], 1)
	}
	if !v.OK {
		verdict = "FAIL"
	}
	var hits []string
	for _, g := range v.Guards {
		hits = append(hits, g.Guard)
	}
	return []string{verdict, v.Kernel.Release, facts["dut_driver"], facts["usb_speed"],
		mbit["send"], mbit["receive"], strings.Join(hits, ", "), eventRingFull(run)}, nil
}

// eventRingFull counts the guest's "unknown event type 37" lines: QEMU's
// xHCI reports a full event ring with a Host Controller Event (type 37),
// which Linux's xhci-hcd does not know, and drops the completions it had
// no room for - where a real controller stops until the ring has room.
// "-" when the boot kept no dmesg.
func eventRingFull(run string) string {
	b, err := kit.ReadRaw(filepath.Join(run, "dmesg.txt"))
	if err != nil {
		return "-"
	}
	return strconv.Itoa(strings.Count(string(b), "unknown event type 37"))
}

// readFactStrings reads a guest's facts.txt as key=value strings.
func readFactStrings(path string) (map[string]string, error) {
	b, err := kit.ReadRaw(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = v
		}
	}
	return out, nil
}
