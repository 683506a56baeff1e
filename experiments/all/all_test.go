// SPDX-License-Identifier: Apache-2.0

// Package all recomputes every table in docs/results.md from the raw files
// under experiments/ and fails when the document disagrees.
//
//	cd experiments && go test ./all          (make experiments-check)
//	cd experiments && go test ./all -update  (make experiments-update)
package all

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/experiments"
)

var update = flag.Bool("update", false, "rewrite the marked tables in docs/results.md from the raw files")

func TestResultsTablesRecompute(t *testing.T) {
	root := experiments.Root()
	doc, err := experiments.ReadResults(root)
	if err != nil {
		t.Fatal(err)
	}
	computed, err := experiments.Compute(root)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		out, err := experiments.Replace(doc, computed)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "results.md"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		doc = out
	}
	blocks, unmarked, err := experiments.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range unmarked {
		t.Errorf("docs/results.md:%d: a table no experiment recomputes (mark it <!-- table NAME/ID --> and compute it in experiments/NAME)", n)
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		if seen[b.ID] {
			t.Errorf("docs/results.md:%d: table %s marked twice", b.Line, b.ID)
		}
		seen[b.ID] = true
		want, ok := computed[b.ID]
		if !ok {
			t.Errorf("docs/results.md:%d: no experiment computes table %s", b.Line, b.ID)
			continue
		}
		if b.Text != want {
			t.Errorf("docs/results.md:%d: table %s differs from its raw files (make experiments-update rewrites it)\n--- results.md\n%s--- recomputed\n%s", b.Line, b.ID, b.Text, want)
		}
	}
	var ids []string
	for id := range computed {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) > 0 {
		t.Errorf("computed but not in docs/results.md: %s", strings.Join(ids, ", "))
	}
}
