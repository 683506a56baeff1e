// SPDX-License-Identifier: Apache-2.0

// Package tunecrash recomputes docs/results.md's "tune: crash safety" table
// from the harness's tally, data/result.json.
package tunecrash

import (
	"fmt"
	"path/filepath"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "tunecrash", Tables: tables})
}

// tally is what TestTuneCrash writes to WS_TUNE_CRASH_OUT.
type tally struct {
	Kills              int       `json:"kills"`
	Mismatches         int       `json:"mismatches"`
	FinishedBeforeKill int       `json:"finished_before_kill"`
	DelaysS            []float64 `json:"delays_s"`
	WindowS            []float64 `json:"window_s"`
}

func tables(dir string) (map[string]string, error) {
	var t tally
	if err := kit.ReadJSON(filepath.Join(dir, "data", "result.json"), &t); err != nil {
		return nil, err
	}
	if len(t.DelaysS) != t.Kills {
		return nil, fmt.Errorf("result.json: %d kills but %d delays", t.Kills, len(t.DelaysS))
	}
	row := []string{
		fmt.Sprint(t.Kills),
		fmt.Sprint(t.Kills - t.FinishedBeforeKill),
		fmt.Sprint(t.FinishedBeforeKill),
		fmt.Sprintf("**%d**", t.Mismatches),
	}
	return map[string]string{"kills": kit.Table(
		[]string{"kills", "killed mid-run", "finished before the kill", "mismatches after `revert --all`"},
		[][]string{row})}, nil
}
