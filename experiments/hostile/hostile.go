// SPDX-License-Identifier: Apache-2.0

// Package hostile recomputes docs/results.md's table of the issue 34 sweep
// of hostile inputs from hostile-sweep.sh's per-case records.
package hostile

import (
	"fmt"
	"strconv"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "hostile", Tables: tables})
}

// run is hostile-sweep.sh's OUT.json: one record per case tried.
type run struct {
	Tried       int  `json:"tried"`
	HostChanged bool `json:"host_changed"`
	Cases       []struct {
		Args  string `json:"args"`
		Class string `json:"class"`
	} `json:"cases"`
}

// The binaries swept: the label is which commit each was built from.
var binaries = []kit.Swept{
	{Label: "hostile before this session (194fe62)", File: "before.json"},
	{Label: "hostile after", File: "sweep.json"},
	// issue 40: the same script with its section 7, on the binary the
	// issue was filed against and on the one that fixed it
	{Label: "issue 40's sweep, before (970db8e)", File: "round3-970db8e.json"},
	{Label: "issue 40's sweep, after (a27acbc)", File: "round3-a27acbc.json"},
}

func tables(dir string) (map[string]string, error) {
	count := func(r *run) (int, int) { return len(r.Cases), r.Tried }
	rows, err := kit.SweepRows(dir, binaries, "cases", count, func(b kit.Swept, r *run) ([]string, error) {
		n := map[string]int{}
		for _, c := range r.Cases {
			switch c.Class {
			case "clear", "unclear", "wrong", "hang":
				n[c.Class]++
			default:
				return nil, fmt.Errorf("data/%s: case %q has class %q", b.File, c.Args, c.Class)
			}
		}
		host := "no"
		if r.HostChanged {
			host = "yes"
		}
		return []string{b.Label, strconv.Itoa(r.Tried), strconv.Itoa(n["clear"]), strconv.Itoa(n["unclear"]),
			strconv.Itoa(n["wrong"]), strconv.Itoa(n["hang"]), host}, nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"summary": kit.Table([]string{"binary", "tried", "clear", "unclear", "wrong", "hang", "host changed"}, rows)}, nil
}
