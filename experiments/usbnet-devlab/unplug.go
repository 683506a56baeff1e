// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// unplugRuns are usbdev-stress runs read for the control transfers an
// unplug leaves to their timeouts (-110), by table id.
var unplugRuns = map[string]string{"staged-ab-kasan-7.3": "staged-ab-kasan-7.3.4-2026-11-29"}

// unplugTable: one row per boot, in the order runs.txt started them: the
// lab's binary (by the run's part: before the replug gate, with it, with
// it and the closing check of the adapter of the moment), the verdict
// and vm.json's failure, what the guest and the device counted, the
// guest's control timeouts and the most of them one device (one
// enumeration) had.
func unplugTable(dir string) (string, error) {
	names, err := runOrder(dir)
	if err != nil {
		return "", err
	}
	return unplugTableOf(dir, names)
}

// unplugTableOf is unplugTable of the boots names of dir.
func unplugTableOf(dir string, names []string) (string, error) {
	var rows [][]string
	for _, n := range names {
		row, err := unplugRow(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		rows = append(rows, append([]string{n, unplugPart(filepath.Base(dir), n)}, row...))
	}
	return kit.Table([]string{"boot", "lab", "verdict", "failure", "new devices the guest configured", "device unplugs",
		"unplug waits for an open interface", "control timeouts (-110)", "most timeouts of one device"}, rows), nil
}

// unplugPart names the lab a boot ran with: in staged-ab-kasan by its
// part, later runs all with the gate and the closing check (main 36c9793).
func unplugPart(run, name string) string {
	switch {
	case run != "staged-ab-kasan-7.3.4-2026-11-29" || strings.Contains(name, "-p3-"):
		return "gate + closing check"
	case strings.Contains(name, "-gated-"):
		return "gate"
	}
	return "before"
}

// runOrder is the boots of dir in the order runs.txt started them.
func runOrder(dir string) ([]string, error) {
	b, err := kit.ReadRaw(filepath.Join(dir, "runs.txt"))
	if err != nil {
		return nil, err
	}
	var names []string
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "== "); ok {
			if n, _, ok := strings.Cut(rest, ":"); ok {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: runs.txt names no boot", dir)
	}
	return names, s.Err()
}

// unplugRow is one boot's row but its name and part.
func unplugRow(run string) ([]string, error) {
	var vm struct {
		OK      bool   `json:"ok"`
		Failure string `json:"failure"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &vm); err != nil {
		return nil, err
	}
	var dev struct {
		Stats struct {
			Replugs     float64          `json:"replugs"`
			ReplugWaits *json.RawMessage `json:"replug_waits"`
		} `json:"stats"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "usbdev.json"), &dev); err != nil {
		return nil, err
	}
	verdict, failure := "pass", ""
	if !vm.OK {
		verdict = "FAIL"
		failure = strings.TrimPrefix(vm.Failure, "scenario usbdev-stress failed in the guest: ")
		if len(failure) > 90 {
			failure = failure[:90] + "..."
		}
	}
	seen, waits := "-", "-"
	if facts, err := readFacts(filepath.Join(run, "facts.txt")); err == nil {
		seen = kit.F(facts["plugins_seen"], 0)
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	if dev.Stats.ReplugWaits != nil {
		waits = string(*dev.Stats.ReplugWaits)
	}
	timeouts, most, err := controlTimeouts(filepath.Join(run, "dmesg.txt"))
	if err != nil {
		return nil, err
	}
	return []string{verdict, failure, seen, kit.F(dev.Stats.Replugs, 0), waits, timeouts, most}, nil
}

// controlTimeouts counts the guest's register accesses that timed out
// (a driver's "...: -110" lines) and the most of them between two
// enumerations; "-" for both when the boot wrote no dmesg.
func controlTimeouts(path string) (total, most string, err error) {
	b, err := kit.ReadRaw(path)
	if os.IsNotExist(err) {
		return "-", "-", nil
	}
	if err != nil {
		return "", "", err
	}
	n, cur, top := 0, 0, 0
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		l := s.Text()
		switch {
		case strings.Contains(l, "new SuperSpeed USB device number"):
			cur = 0
		case strings.HasSuffix(l, ": -110"):
			n++
			cur++
			top = max(top, cur)
		}
	}
	return fmt.Sprint(n), fmt.Sprint(top), s.Err()
}

// splitRuns are run directories holding boots of two kinds, told apart by
// their names' prefix: each kind's table by id.
var splitRuns = []struct {
	id, dir, prefix string
	mk              func(dir string, names []string) (string, error)
}{
	{"stress-staged-ax-6x-kasan", "staged-ax-6x-kasan-2026-11-29", "stress-", unplugTableOf},
	{"hostile-staged-ax-6x-kasan", "staged-ax-6x-kasan-2026-11-29", "hostile-", hostileTableOf},
}

// splitTables adds the tables of splitRuns present under dir/data to out.
func splitTables(dir string, out map[string]string) error {
	for _, r := range splitRuns {
		d := filepath.Join(dir, "data", r.dir)
		if !exists(d) {
			continue
		}
		all, err := runOrder(d)
		if err != nil {
			return err
		}
		var names []string
		for _, n := range all {
			if strings.HasPrefix(n, r.prefix) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return fmt.Errorf("%s: no boot named %s*", d, r.prefix)
		}
		t, err := r.mk(d, names)
		if err != nil {
			return err
		}
		out[r.id] = t
	}
	return nil
}
