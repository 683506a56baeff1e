// SPDX-License-Identifier: Apache-2.0

package all

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/experiments"
)

// The rules experiments.go states, held against experiments/ as it is on
// disk: each experiment a directory with a README.md (the one name a plan
// has), its Go package named after the directory and registered under
// its name, importing no other experiment, and its runs one reproducible
// archive each.

const modulePath = "github.com/wirespeed/wirespeed/experiments"

// notExperiments are the directories of experiments/ that are not one.
var notExperiments = []string{"all", "internal"}

func TestExperimentRules(t *testing.T) {
	dir := filepath.Join(experiments.Root(), "experiments")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && !slices.Contains(notExperiments, e.Name()) {
			names = append(names, e.Name())
		}
	}
	if len(names) < 20 {
		t.Fatalf("found %d experiments under %s: %v", len(names), dir, names)
	}
	registered := map[string]bool{}
	for _, e := range experiments.All() {
		registered[e.Name] = true
	}
	for _, name := range names {
		for _, p := range experimentProblems(filepath.Join(dir, name), names, registered) {
			t.Error(p)
		}
	}
	for name := range registered {
		if !slices.Contains(names, name) {
			t.Errorf("experiment %s is registered but experiments/%s is not a directory", name, name)
		}
	}
}

// experimentProblems is every rule an experiment's directory breaks.
func experimentProblems(dir string, all []string, registered map[string]bool) []string {
	name := filepath.Base(dir)
	rel := "experiments/" + name
	var probs []string
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		probs = append(probs, rel+": no README.md (what is measured, the validity rules, the command that runs it)")
	}
	hasGo := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(filepath.Dir(dir), p)
		r = "experiments/" + filepath.ToSlash(r)
		switch {
		case d.IsDir() && filepath.Dir(p) == filepath.Join(dir, "data"):
			probs = append(probs, r+": a run directory; make it one file with experiments/archive-run.sh "+r)
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case strings.HasSuffix(p, ".md") && d.Name() != "README.md":
			probs = append(probs, r+": a plan is README.md (a run's own PLAN.md goes into its archive)")
		case filepath.Dir(p) == filepath.Join(dir, "data") && strings.HasSuffix(p, ".tar.gz"):
			probs = append(probs, archiveProblems(p, r)...)
		case strings.HasSuffix(p, ".go"):
			if filepath.Dir(p) == dir {
				hasGo = true
			}
			probs = append(probs, goFileProblems(p, r, dir, all)...)
		}
		return nil
	})
	if err != nil {
		probs = append(probs, rel+": "+err.Error())
	}
	if hasGo && !registered[name] {
		probs = append(probs, rel+": has Go but registers no experiment "+name+" (or experiments/all does not import it)")
	}
	return probs
}

// goFileProblems: an experiment's package (the directory's own files) is
// named after the directory without its dashes, and no file of it imports
// another experiment.
func goFileProblems(path, rel, dir string, all []string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return []string{rel + ": " + err.Error()}
	}
	var probs []string
	name := filepath.Base(dir)
	want := strings.ReplaceAll(name, "-", "")
	if filepath.Dir(path) == dir && f.Name.Name != want && f.Name.Name != want+"_test" {
		probs = append(probs, fmt.Sprintf("%s: package %s, want package %s (the directory's name without dashes)", rel, f.Name.Name, want))
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		other, ok := strings.CutPrefix(p, modulePath+"/")
		if !ok {
			continue
		}
		other, _, _ = strings.Cut(other, "/")
		if other != name && slices.Contains(all, other) {
			probs = append(probs, fmt.Sprintf("%s imports the experiment %s: what two experiments share goes into experiments/internal/kit", rel, p))
		}
	}
	return probs
}

// archiveProblems: a run's archive is the one archive-run.sh makes, the
// same bytes from the same files: one top directory named after the run,
// only directories and regular files, in tar's --sort=name order, mtime 0,
// owner 0 without names, and a gzip header without name or time.
func archiveProblems(path, rel string) []string {
	run := strings.TrimSuffix(filepath.Base(path), ".tar.gz")
	f, err := os.Open(path)
	if err != nil {
		return []string{rel + ": " + err.Error()}
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return []string{rel + ": " + err.Error()}
	}
	var probs []string
	if zr.Name != "" || !zr.ModTime.IsZero() {
		probs = append(probs, fmt.Sprintf("%s: gzip header has name %q, time %v (want gzip -n)", rel, zr.Name, zr.ModTime))
	}
	tr := tar.NewReader(zr)
	prev := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(probs, rel+": "+err.Error())
		}
		name := strings.TrimSuffix(h.Name, "/")
		switch {
		case name != run && !strings.HasPrefix(name, run+"/"):
			probs = append(probs, fmt.Sprintf("%s: %s is not under %s/", rel, h.Name, run))
		case h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg:
			probs = append(probs, fmt.Sprintf("%s: %s is neither a directory nor a regular file", rel, h.Name))
		case h.ModTime.Unix() != 0 || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "":
			probs = append(probs, fmt.Sprintf("%s: %s has mtime %d, owner %d:%d %q:%q (want 0, 0:0, no names)", rel, h.Name, h.ModTime.Unix(), h.Uid, h.Gid, h.Uname, h.Gname))
		case prev != "" && !tarOrder(prev, name):
			probs = append(probs, fmt.Sprintf("%s: %s comes after %s (want tar --sort=name)", rel, name, prev))
		}
		if len(probs) > 3 {
			return append(probs, rel+": more problems not shown; make it again with experiments/archive-run.sh")
		}
		prev = name
	}
	return probs
}

// tarOrder says whether a comes before b in a tree walked depth first,
// each directory's entries by name: the order of tar --sort=name.
func tarOrder(a, b string) bool {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) < 0
}

// TestRulesCatch: an experiment that breaks each rule is told so.
func TestRulesCatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bad-one")
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bad.go", "package bad\n\nimport _ \""+modulePath+"/other/sub\"\n")
	write("PLAN-2026-11-28.md", "# plan\n")
	write("data/run1/PLAN.md", "# a run's plan\n")
	f, err := os.Create(filepath.Join(dir, "data", "run2.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Name = "run2.tar"
	tw := tar.NewWriter(zw)
	for _, n := range []string{"run2/b", "run2/a"} {
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatGNU}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []io.Closer{tw, zw, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(experimentProblems(dir, []string{"bad-one", "other"}, map[string]bool{}), "\n")
	for _, want := range []string{
		"experiments/bad-one: no README.md",
		"experiments/bad-one/PLAN-2026-11-28.md: a plan is README.md",
		"experiments/bad-one/data/run1: a run directory",
		"experiments/bad-one/data/run2.tar.gz: gzip header has name \"run2.tar\"",
		"experiments/bad-one/data/run2.tar.gz: run2/a comes after run2/b",
		"experiments/bad-one/bad.go: package bad, want package badone",
		"imports the experiment " + modulePath + "/other/sub",
		"has Go but registers no experiment bad-one",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q among the problems:\n%s", want, got)
		}
	}
	if strings.Contains(got, "run1/PLAN.md") {
		t.Errorf("a run directory's files are told of one by one:\n%s", got)
	}
}

func TestTarOrder(t *testing.T) {
	// tar --sort=name walks a directory before its next sibling: a/x
	// before a-b, though '-' sorts before '/' in plain string order
	for _, c := range [][2]string{{"r/a", "r/a/x"}, {"r/a/x", "r/a-b"}, {"r", "r/a"}} {
		if !tarOrder(c[0], c[1]) || tarOrder(c[1], c[0]) {
			t.Errorf("tarOrder(%q, %q) wrong", c[0], c[1])
		}
	}
}
