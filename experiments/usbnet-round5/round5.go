// SPDX-License-Identifier: Apache-2.0

// Package usbnetround5 recomputes docs/results.md's "usbnet round 5" table
// from checks.sh's record of the series' static checks, data/*/checks.json.
package usbnetround5

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/mdtab"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-round5", Tables: tables})
}

// record is checks.sh's OUT/checks.json.
type record struct {
	Commit string `json:"wirespeed_commit"`
	Checks []struct {
		Check    string `json:"check"`
		Base     string `json:"base"`
		Exit     int    `json:"exit"`
		Prefixes []struct {
			Patch      int               `json:"patch"`
			Of         int               `json:"of"`
			Build      map[string]string `json:"build"`
			Checkpatch []int             `json:"checkpatch"`
		} `json:"prefixes"`
		Cover []int `json:"cover_checkpatch"`
	} `json:"checks"`
}

// tables: one table per run directory under data/ holding a checks.json,
// its ID the directory's name.
func tables(dir string) (map[string]string, error) {
	runs, err := filepath.Glob(filepath.Join(dir, "data", "*", "checks.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(runs)
	out := map[string]string{}
	for _, f := range runs {
		var r record
		if err := mdtab.ReadJSON(f, &r); err != nil {
			return nil, err
		}
		var rows [][]string
		for _, c := range r.Checks {
			if len(c.Prefixes) == 0 {
				return nil, fmt.Errorf("%s: check %s has no prefixes", f, c.Check)
			}
			ok := map[string]int{}
			cp := [3]int{}
			for _, p := range c.Prefixes {
				for a, res := range p.Build {
					if res == "ok" {
						ok[a]++
					}
				}
				if len(p.Checkpatch) != 3 {
					return nil, fmt.Errorf("%s: check %s patch %d: no checkpatch count", f, c.Check, p.Patch)
				}
				for i := range cp {
					cp[i] += p.Checkpatch[i]
				}
			}
			n := len(c.Prefixes)
			cover := "-"
			if len(c.Cover) == 3 {
				cover = fmt.Sprintf("%d/%d/%d", c.Cover[0], c.Cover[1], c.Cover[2])
			}
			verdict := "**pass**"
			if c.Exit != 0 || ok["x86_64"] != n || ok["arm64"] != n || cp != [3]int{} {
				verdict = "**FAIL**"
			}
			rows = append(rows, []string{c.Check, c.Base, fmt.Sprint(n),
				fmt.Sprintf("%d/%d", ok["x86_64"], n), fmt.Sprintf("%d/%d", ok["arm64"], n),
				fmt.Sprintf("%d/%d/%d", cp[0], cp[1], cp[2]), cover, verdict})
		}
		id := filepath.Base(filepath.Dir(f))
		out[id] = mdtab.Table([]string{"series", "base", "prefixes", "x86_64 builds clean", "arm64 builds clean",
			"checkpatch --strict errors/warnings/checks (all patches)", "cover letter", "verdict"}, rows)
	}
	return out, nil
}
