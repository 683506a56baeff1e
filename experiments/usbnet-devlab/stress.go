// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"path/filepath"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// stressRuns are the directories of usbdev-stress boots, by table id.
var stressRuns = map[string]string{"stress-7.3": "stress-7.3.4-2026-11-28", "stress-rndis-ax-7.3": "stress2-7.3.4-2026-11-28",
	"stress-staged-ax-kasan-7.3": "staged-ax-stress-kasan-7.3.4-2026-11-28",
	"stress-bqlwork-7.3":         "bqlwork-stress-7.3.4-2026-11-28", "stress-staged2-kasan-7.3": "staged2-stress-kasan-7.3.4-2026-11-28",
	"stress-six12-6.12": "six12-stress-6.12.117-2026-11-28"}

// stressTable: one row per boot (MODEL-SIDE): the verdict (vm.json ok:
// console clean, the plug-ins seen, a ping after), what the guest counted
// and what the device did.
func stressTable(dir string) (string, error) {
	names, err := boots(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, n := range names {
		var d struct {
			Stats struct {
				Replugs      float64 `json:"replugs"`
				Cancelled    float64 `json:"cancelled"`
				InTransfers  float64 `json:"in_transfers"`
				OutTransfers float64 `json:"out_transfers"`
			} `json:"stats"`
		}
		ok, facts, err := readBoot(filepath.Join(dir, n), &d)
		if err != nil {
			return "", err
		}
		verdict := "pass"
		if !ok {
			verdict = "FAIL"
		}
		rows = append(rows, []string{n, verdict, kit.F(facts["plugins_seen"], 0), kit.F(facts["stress_cycles"], 0),
			kit.F(d.Stats.Replugs, 0), kit.F(d.Stats.Cancelled, 0), kit.F(d.Stats.InTransfers, 0), kit.F(d.Stats.OutTransfers, 0)})
	}
	return kit.Table([]string{"boot", "console clean, every new device asked for (--cycles), ping after", "new devices the guest configured (unplugs and reloads)",
		"guest cycles (flap, MTU, reload, none)", "device unplugs", "requests cancelled", "bulk IN answered", "bulk OUT taken"}, rows), nil
}

// readBoot reads one boot of the device lab: vm.json's verdict, the
// guest's numeric facts and the device process's usbdev.json into dev.
func readBoot(run string, dev any) (ok bool, facts map[string]float64, err error) {
	if ok, err = kit.VMOK(run); err != nil {
		return false, nil, err
	}
	if facts, err = readFacts(filepath.Join(run, "facts.txt")); err != nil {
		return false, nil, err
	}
	return ok, facts, kit.ReadJSON(filepath.Join(run, "usbdev.json"), dev)
}
