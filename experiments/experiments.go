// SPDX-License-Identifier: Apache-2.0

// Package experiments is wirespeed's lab notebook: the published
// experiments, a Go module of its own (experiments/go.mod) beside the
// product's. It may import the product's internal/ packages (Go lets any
// package whose import path starts with github.com/wirespeed/wirespeed/
// import github.com/wirespeed/wirespeed/internal/..., whichever module it
// is in; go.mod's replace points at the checkout around it); the product
// imports nothing of it. Each experiment lives in its own directory,
// experiments/NAME/, with:
//
//   - README.md: the plan - what is measured, the validity rules written
//     before the runs (which runs count, which are dropped and why), and the
//     command that runs it. It is the only name a plan has: a run's own
//     plan, written before that run, is the PLAN.md in its archive;
//   - data/: the raw result files the runs wrote, as the tools wrote them;
//     each run one file, data/RUN.tar.gz, made from the directory data/RUN
//     the run wrote by experiments/archive-run.sh (make
//     experiments-archive); a run that was one file from the start (a
//     sweep's OUT.json) stays as it is. A path data/RUN/FILE in the docs
//     names FILE in data/RUN.tar.gz: tar -xzf data/RUN.tar.gz -C data
//     gives the directory back;
//   - a Go package, named NAME without its dashes, that registers the
//     experiment under NAME and recomputes its tables in docs/results.md
//     from data/ with experiments/internal/kit and internal/stats. An
//     experiment imports no other experiment: what two of them share is in
//     kit.
//
// Why tar.gz: a run is thousands of small files; one archive a run is one
// file to add, to review as one, to move, and git keeps one object for it
// instead of thousands. Go's standard library reads tar and gzip, so the
// tables are recomputed from the archives directly (kit reads each as the
// directory it was, in memory) with no new dependency, and every machine
// has tar and gzip to unpack one by hand; zstd compresses these runs
// better, but would bring a module into the notebook and a tool onto
// every reader's machine. archive-run.sh makes the archive reproducible -
// names sorted, mtime 0, owner 0 with no names, gzip without name or
// time - so archiving the same files again gives the same bytes and git
// sees no change.
//
// docs/results.md marks each recomputed table with
//
//	<!-- table NAME/ID -->
//	| ... |
//	<!-- /table -->
//
// and the test in experiments/all fails when a marked table differs from what
// its experiment computes, when a table in results.md is not marked, or when
// a marker names no table; its rules test holds every experiment to the
// rules above. `make experiments-check` runs them;
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
