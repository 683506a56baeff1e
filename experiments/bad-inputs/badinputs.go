// SPDX-License-Identifier: Apache-2.0

// Package badinputs recomputes docs/results.md's table of bad inputs across
// all commands (issue 21) from bad-inputs.sh's per-input records.
package badinputs

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/mdtab"
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
var binaries = []struct{ label, file string }{
	{"main (90235b8)", "before.json"},
	{"branch i21tune", "after.json"},
}

func tables(dir string) (map[string]string, error) {
	var rows [][]string
	for _, b := range binaries {
		var r run
		if err := mdtab.ReadJSON(filepath.Join(dir, "data", b.file), &r); err != nil {
			return nil, err
		}
		if len(r.Inputs) != r.Tried {
			return nil, fmt.Errorf("data/%s: %d inputs recorded, %d tried", b.file, len(r.Inputs), r.Tried)
		}
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
		rows = append(rows, []string{b.label, strconv.Itoa(len(r.Inputs)), strconv.Itoa(clear), strconv.Itoa(nonzero),
			strconv.Itoa(crashed), strconv.Itoa(changed)})
	}
	return map[string]string{"summary": mdtab.Table([]string{"binary", "tried", "clear", "non-zero exit", "crashes", "changed something"}, rows)}, nil
}
