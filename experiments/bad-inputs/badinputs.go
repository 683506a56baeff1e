// SPDX-License-Identifier: Apache-2.0

// Package badinputs recomputes docs/results.md's table of bad inputs across
// all commands (issue 21) from bad-inputs.sh's per-input records.
package badinputs

import (
	"strconv"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "bad-inputs", Tables: tables})
}

// run is bad-inputs.sh's OUT.json: one record per input tried.
type run struct {
	Tried  int `json:"tried"`
	Inputs []struct {
		Args    string `json:"args"`
		Exit    int    `json:"exit"`
		Crashed bool   `json:"crashed"`
		Changed bool   `json:"changed"`
		Clear   bool   `json:"clear"`
	} `json:"inputs"`
}

// The binaries tried: the label is which commit each was built from.
var binaries = []kit.Swept{
	{Label: "main (90235b8)", File: "before.json"},
	{Label: "branch i21tune", File: "after.json"},
}

func tables(dir string) (map[string]string, error) {
	count := func(r *run) (int, int) { return len(r.Inputs), r.Tried }
	rows, err := kit.SweepRows(dir, binaries, "inputs", count, func(b kit.Swept, r *run) ([]string, error) {
		var clear, nonzero, crashed, changed int
		for _, in := range r.Inputs {
			if in.Clear {
				clear++
			}
			if in.Exit != 0 {
				nonzero++
			}
			if in.Crashed {
				crashed++
			}
			if in.Changed {
				changed++
			}
		}
		return []string{b.Label, strconv.Itoa(len(r.Inputs)), strconv.Itoa(clear), strconv.Itoa(nonzero),
			strconv.Itoa(crashed), strconv.Itoa(changed)}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"summary": kit.Table([]string{"binary", "tried", "clear", "non-zero exit", "crashes", "changed something"}, rows)}, nil
}
