// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The lab notebook (experiments/) is a house apart from the product, as
// docs/architecture.md's "The lab notebook is a house of its own" says: a
// Go module of its own built from this checkout, which the product does
// not import.

const notebookModule = "github.com/wirespeed/wirespeed/experiments"

var (
	moduleLine  = regexp.MustCompile(`(?m)^module (\S+)$`)
	replaceLine = regexp.MustCompile(`(?m)^replace github\.com/wirespeed/wirespeed => \.\./?$`)
)

func TestNotebookIsItsOwnModule(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "experiments", "go.mod"))
	if err != nil {
		t.Fatalf("experiments/ is not a module of its own: %v", err)
	}
	if m := moduleLine.FindSubmatch(b); m == nil || string(m[1]) != notebookModule {
		t.Errorf("experiments/go.mod: want module %s", notebookModule)
	}
	if !replaceLine.Match(b) {
		t.Error("experiments/go.mod: want replace github.com/wirespeed/wirespeed => ../ (the notebook reads this checkout's product, not a published one)")
	}
	for _, top := range []string{"internal", "cmd"} {
		for _, p := range notebookImports(t, filepath.Join(root, top)) {
			t.Error(p)
		}
	}
}

// notebookImports lists the Go files under dir that import the notebook.
func notebookImports(t *testing.T, dir string) []string {
	t.Helper()
	var probs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == notebookModule || strings.HasPrefix(path, notebookModule+"/") {
				probs = append(probs, p+" imports the lab notebook ("+path+"): the product stands on its own")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return probs
}

func TestNotebookImports(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nimport _ \""+notebookModule+"/all\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n\nimport _ \""+notebookModule+"x/y\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := notebookImports(t, dir)
	if len(got) != 1 || !strings.Contains(got[0], "a.go imports the lab notebook") {
		t.Errorf("problems %q, want a.go's alone", got)
	}
}
