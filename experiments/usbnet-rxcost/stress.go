// SPDX-License-Identifier: Apache-2.0

package usbnetrxcost

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// stressRun is one usbnet-stress boot of the frags table: which kernel and
// modules, where its files are (under data/), and whether its memory
// readings mean anything (not under KASAN, whose quarantine holds freed
// objects back).
type stressRun struct {
	label, dir string
	memory     bool
}

var fragsStressRuns = []stressRun{
	{"Debian 7.3.4, 1-11", "frags-7.3.4-2026-11-26/stress-mem/frags-1", true},
	{"Debian 7.3.4, 1-8 (without them)", "frags-7.3.4-2026-11-26/stress-mem/base-1", true},
	{"lab 6.18.19, 1-12", "frags-6.18.19-2026-11-26/stress-1", true},
	{"Debian 6.12.117, 1-12", "frags-6.12.117-2026-11-27/stress-frags-1", true},
	{"Debian 6.1.192, 1-12", "frags-6.1.192-2026-11-27/stress-frags-1", true},
	{"Debian 7.3.4 arm64 (Pi 3-class), 1-11", "frags-7.3.4-arm64-2026-11-27/stress-frags-1", true},
	{"Debian 7.3.4 arm64 (Pi 3-class), 1-8 (without them)", "frags-7.3.4-arm64-2026-11-27/stress-base-1", true},
	{"Debian 7.3.4 arm64 (Pi 3-class), 1-11, second run", "frags-7.3.4-arm64-2026-11-27/stress-frags-2", true},
	{"Debian 7.3.4 arm64 (Pi 3-class), 1-11, 90 cycles", "frags-7.3.4-arm64-2026-11-27/stress90-frags-1", true},
	{"lab 6.18.19 with KASAN, 1-12", "kasan-6.18.19-2026-11-27/stress-frags-1", false},
	{"lab 6.18.19 with KASAN, 1-9 (without them)", "kasan-6.18.19-2026-11-27/stress-base-1", false},
}

var (
	cyclesRe = regexp.MustCompile(`stress: (\d+) cycles done: .*gadget-stalls=(\d+)`)
	memRe    = regexp.MustCompile(`(?m)^(MemAvailable|Slab):\s+(\d+) kB$`)
)

// stressTable: each usbnet-stress run of the frags patches - cycles done,
// the lab's verdict (vm.json ok: no WARNING, BUG, KASAN report, bad page,
// lockup or stall on the console) and MemAvailable and Slab before and
// after the cycles.
func stressTable(data string, runs []stressRun) (string, error) {
	var rows [][]string
	for _, r := range runs {
		dir := filepath.Join(data, r.dir)
		var vm struct {
			OK bool `json:"ok"`
		}
		if err := kit.ReadJSON(filepath.Join(dir, "vm.json"), &vm); err != nil {
			return "", err
		}
		st, err := kit.ReadFile(filepath.Join(dir, "stress.txt"))
		if err != nil {
			return "", err
		}
		all := cyclesRe.FindAllSubmatch(st, -1)
		if len(all) == 0 {
			return "", fmt.Errorf("%s: stress.txt has no \"N cycles done\" line", dir)
		}
		m := all[len(all)-1]
		verdict := "fail"
		if vm.OK {
			verdict = "clean"
		}
		mem, slab := "(not read: KASAN's quarantine)", "-"
		if r.memory {
			if mem, slab, err = memChange(dir); err != nil {
				return "", err
			}
		}
		rows = append(rows, []string{r.label, string(m[1]), string(m[2]), verdict, mem, slab, r.dir})
	}
	return kit.Table([]string{"kernel, patches", "cycles done", "gadget stalls", "lab's verdict",
		"MemAvailable before -> after (kB)", "Slab before -> after (kB)", "raw files (data/)"}, rows), nil
}

// memChange reads MemAvailable and Slab from the run's meminfo before and
// after the cycles.
func memChange(dir string) (mem, slab string, err error) {
	var v [2]map[string]int
	for i, name := range []string{"meminfo-before.txt", "meminfo-after.txt"} {
		b, err := kit.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", "", err
		}
		v[i] = map[string]int{}
		for _, m := range memRe.FindAllSubmatch(b, -1) {
			n, _ := strconv.Atoi(string(m[2]))
			v[i][string(m[1])] = n
		}
		if len(v[i]) != 2 {
			return "", "", fmt.Errorf("%s: no MemAvailable or Slab line", filepath.Join(dir, name))
		}
	}
	f := func(k string) string { return fmt.Sprintf("%d -> %d (%+d)", v[0][k], v[1][k], v[1][k]-v[0][k]) }
	return f("MemAvailable"), f("Slab"), nil
}
