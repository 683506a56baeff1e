// SPDX-License-Identifier: Apache-2.0

// Package usbnetselftests recomputes docs/results.md's "usbnet and the
// kernel's driver selftests" tables from the selftests.json files that
// 'wirespeed lab vm selftests --ab' wrote (issue 43): data/RUN/stock and
// data/RUN/modules, one table pair per RUN.
package usbnetselftests

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-selftests", Tables: tables})
}

// run is the part of selftests.json (internal/lab/vm's KsftRun) read here.
type run struct {
	Tests []struct {
		Test  string `json:"test"`
		Exit  int    `json:"exit"`
		Cases []struct {
			Name   string `json:"name"`
			Result string `json:"result"`
		} `json:"cases"`
		Result string `json:"result"`
	} `json:"tests"`
}

// sides are the --ab output directories: stock modules, then ours.
var sides = []string{"stock", "modules"}

// tables: for each data/RUN, RUN-tests (one row per test program) and
// RUN-cases (one row per case; gro's grouped by mode and protocol).
func tables(dir string) (map[string]string, error) {
	runs, err := kit.Glob(filepath.Join(dir, "data", "*", "stock", "selftests.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	byID := map[string][2]run{}
	for _, f := range runs {
		rd := filepath.Dir(filepath.Dir(f))
		var rs [2]run
		for i, s := range sides {
			if err := kit.ReadJSON(filepath.Join(rd, s, "selftests.json"), &rs[i]); err != nil {
				return nil, err
			}
		}
		id := filepath.Base(rd)
		byID[id] = rs
		out[id+"-tests"] = testsTable(rs)
		out[id+"-cases"] = casesTable(rs)
	}
	for name, arches := range archTables {
		if t, ok := archTable(arches, byID); ok {
			out[name] = t
		}
	}
	return out, nil
}

// archRuns are one architecture's runs of a kernel, oldest first: a test
// program's result there is the newest run's that has it (a later pair
// re-ran a few programs, or ran one on its own).
type archRuns struct {
	arch string
	runs []string
}

// archTables are the tables that set architectures side by side, one
// column pair (stock, ours) each.
var archTables = map[string][]archRuns{
	"7.3.4-by-arch": {
		{"amd64", []string{"7.3.4-amd64-2026-11-28", "7.3.4-amd64-gro-2026-11-28", "7.3.4-amd64-modfix-2026-11-28", "7.3.4-amd64-modfix2-2026-11-28"}},
		{"arm64", []string{"7.3.4-arm64-2026-11-28"}},
	},
}

// archTable is one row per test program: for each architecture the
// result and case counts of stock and ours, and the run they come from.
// It is made only when every architecture has a run.
func archTable(arches []archRuns, byID map[string][2]run) (string, bool) {
	header := []string{"test"}
	// from[a][test] is the run of architecture a that decides test
	from := make([]map[string]string, len(arches))
	seen := map[string]bool{}
	var names []string
	for i, a := range arches {
		from[i] = map[string]string{}
		for _, id := range a.runs {
			rs, ok := byID[id]
			if !ok {
				continue
			}
			for _, n := range testNames(rs) {
				from[i][n] = id
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
		if len(from[i]) == 0 {
			return "", false
		}
		header = append(header, a.arch+" stock", a.arch+" ours", a.arch+" run")
	}
	sort.Strings(names)
	var rows [][]string
	for _, n := range names {
		row := []string{n}
		for i := range arches {
			id, ok := from[i][n]
			if !ok {
				row = append(row, "-", "-", "-")
				continue
			}
			rs := byID[id]
			sr, sc := counts(rs[0], n)
			or, oc := counts(rs[1], n)
			row = append(row, sr+" "+sc, or+" "+oc, id)
		}
		rows = append(rows, row)
	}
	return kit.Table(header, rows), true
}

// counts is "P/F/S/X" of a test's cases.
func counts(r run, test string) (string, string) {
	for _, t := range r.Tests {
		if t.Test != test {
			continue
		}
		n := map[string]int{}
		for _, c := range t.Cases {
			n[c.Result]++
		}
		return t.Result, fmt.Sprintf("%d/%d/%d/%d", n["PASS"], n["FAIL"], n["SKIP"], n["XFAIL"])
	}
	return "-", "-"
}

func testNames(rs [2]run) []string {
	seen := map[string]bool{}
	var names []string
	for _, r := range rs {
		for _, t := range r.Tests {
			if !seen[t.Test] {
				seen[t.Test] = true
				names = append(names, t.Test)
			}
		}
	}
	sort.Strings(names)
	return names
}

func testsTable(rs [2]run) string {
	var rows [][]string
	for _, n := range testNames(rs) {
		sr, sc := counts(rs[0], n)
		or, oc := counts(rs[1], n)
		rows = append(rows, []string{n, sr, sc, or, oc})
	}
	return kit.Table([]string{"test", "stock", "stock cases P/F/S/X", "ours", "ours cases P/F/S/X"}, rows)
}

// caseKey is the row a case counts in: gro's variants by mode and
// protocol (test.sw_ipv4_ack -> gro test.sw_ipv4_*), every other case as
// itself.
func caseKey(test, name string) string {
	if test == "gro" {
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			if f := strings.SplitN(name[i+1:], "_", 3); len(f) == 3 {
				return test + " " + name[:i+1] + f[0] + "_" + f[1] + "_*"
			}
		}
	}
	return test + " " + name
}

func casesTable(rs [2]run) string {
	type cell map[string]int
	rowsBy := map[string]*[2]cell{}
	for i, r := range rs {
		for _, t := range r.Tests {
			for _, c := range t.Cases {
				k := caseKey(t.Test, c.Name)
				if rowsBy[k] == nil {
					rowsBy[k] = &[2]cell{{}, {}}
				}
				rowsBy[k][i][c.Result]++
			}
		}
	}
	keys := make([]string, 0, len(rowsBy))
	for k := range rowsBy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	show := func(c cell) string {
		var parts []string
		for _, r := range []string{"PASS", "FAIL", "SKIP", "XFAIL"} {
			if c[r] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", r, c[r]))
			}
		}
		if len(parts) == 0 {
			return "-"
		}
		if len(parts) == 1 && c[strings.Fields(parts[0])[0]] == 1 {
			return strings.Fields(parts[0])[0]
		}
		return strings.Join(parts, ", ")
	}
	var rows [][]string
	for _, k := range keys {
		rows = append(rows, []string{k, show(rowsBy[k][0]), show(rowsBy[k][1])})
	}
	return kit.Table([]string{"test case", "stock", "ours"}, rows)
}
