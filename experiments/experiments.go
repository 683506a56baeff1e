// SPDX-License-Identifier: Apache-2.0

// Package experiments holds wirespeed's published experiments. Each one lives
// in its own directory, experiments/NAME/, with:
//
//   - README.md: the plan - what is measured, the validity rules written
//     before the runs (which runs count, which are dropped and why), and the
//     command that runs it;
//   - data/: the raw result files the runs wrote (JSON, as the tools wrote them);
//   - a Go package (package NAME) that registers the experiment and recomputes
//     its tables in docs/results.md from data/, with internal/stats.
//
// docs/results.md marks each recomputed table with
//
//	<!-- table NAME/ID -->
//	| ... |
//	<!-- /table -->
//
// and the test in experiments/all fails when a marked table differs from what
// its experiment computes, when a table in results.md is not marked, or when
// a marker names no table. `make experiments-check` runs that test;
// `make experiments-update` rewrites the marked tables from the raw files.
package experiments

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// An Experiment recomputes its tables from the files under its directory.
type Experiment struct {
	// Name is the directory under experiments/ and the first part of its
	// tables' IDs.
	Name string
	// Tables reads dir (experiments/NAME) and returns each table's ID
	// (without the NAME/ prefix) and its markdown text: the lines of the
	// table, each starting with '|', ending with a newline.
	Tables func(dir string) (map[string]string, error)
}

var registry = map[string]Experiment{}

// Register adds an experiment; each experiment package calls it from init.
func Register(e Experiment) {
	if _, dup := registry[e.Name]; dup {
		panic("experiments: registered twice: " + e.Name)
	}
	registry[e.Name] = e
}

// All returns the registered experiments by name.
func All() []Experiment {
	var out []Experiment
	for _, e := range registry {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Root is the directory holding experiments/ and docs/: the module root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// Compute runs every registered experiment and returns its tables keyed by
// "NAME/ID".
func Compute(root string) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range All() {
		tables, err := e.Tables(filepath.Join(root, "experiments", e.Name))
		if err != nil {
			return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
		}
		for id, t := range tables {
			if !strings.HasSuffix(t, "\n") {
				t += "\n"
			}
			out[e.Name+"/"+id] = t
		}
	}
	return out, nil
}

var (
	openRe  = regexp.MustCompile(`^<!-- table ([a-z0-9][a-z0-9-]*/[A-Za-z0-9._-]+) -->$`)
	closeRe = regexp.MustCompile(`^<!-- /table -->$`)
)

// A Block is one marked table in results.md.
type Block struct {
	ID   string
	Line int // 1-based line of the opening marker
	Text string
}

// Parse finds the marked tables in a results document and the table lines
// that stand outside any marker (their 1-based line numbers).
func Parse(doc string) (blocks []Block, unmarked []int, err error) {
	lines := strings.SplitAfter(doc, "\n")
	var cur *Block
	fence := false
	for i, l := range lines {
		t := strings.TrimRight(l, "\n")
		if strings.HasPrefix(t, "```") {
			fence = !fence
		}
		switch {
		case fence:
			if cur != nil {
				cur.Text += l
			}
		case openRe.MatchString(t):
			if cur != nil {
				return nil, nil, fmt.Errorf("line %d: table %s opened inside %s", i+1, openRe.FindStringSubmatch(t)[1], cur.ID)
			}
			cur = &Block{ID: openRe.FindStringSubmatch(t)[1], Line: i + 1}
		case closeRe.MatchString(t):
			if cur == nil {
				return nil, nil, fmt.Errorf("line %d: <!-- /table --> with no table open", i+1)
			}
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.Text += l
		case strings.HasPrefix(t, "|"):
			unmarked = append(unmarked, i+1)
		}
	}
	if cur != nil {
		return nil, nil, fmt.Errorf("line %d: table %s never closed", cur.Line, cur.ID)
	}
	return blocks, unmarked, nil
}

// Replace returns doc with each marked table's text replaced by tables[ID].
// IDs with no computed table are an error.
func Replace(doc string, tables map[string]string) (string, error) {
	lines := strings.SplitAfter(doc, "\n")
	var b strings.Builder
	in := false
	for i, l := range lines {
		t := strings.TrimRight(l, "\n")
		if m := openRe.FindStringSubmatch(t); m != nil && !in {
			text, ok := tables[m[1]]
			if !ok {
				return "", fmt.Errorf("line %d: no experiment computes table %s", i+1, m[1])
			}
			b.WriteString(l)
			b.WriteString(text)
			in = true
			continue
		}
		if in && closeRe.MatchString(t) {
			in = false
		}
		if !in {
			b.WriteString(l)
		}
	}
	return b.String(), nil
}

// ReadResults reads docs/results.md under root.
func ReadResults(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "results.md"))
	return string(b), err
}
