// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A package whose files are units of their own - doctor's rules, cli's
// commands - keeps what several units use in shared files, so a unit is
// the files you read (and copy) with the shared ones, never another unit.
// owner names a file's unit; "" is a shared file. A unit's file may use
// the package-level names of its own unit and of shared files; a shared
// file only those of shared files.
type ownerFunc func(file string, f *ast.File) string

// doctorOwner: a rule file (one whose init calls register) is a unit of
// its own; every other file is shared (common.go, shared_*.go, the model,
// the facts).
func doctorOwner(file string, f *ast.File) string {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "init" || fd.Recv != nil {
			continue
		}
		found := false
		ast.Inspect(fd, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "register" {
					found = true
				}
			}
			return !found
		})
		if found {
			return file
		}
	}
	return ""
}

// cliOwner: a command's files are CMD.go and CMD_*.go (the lab's vm
// sub-command's labvm*.go are the lab's); cli.go and shared_*.go are
// shared.
func cliOwner(file string, _ *ast.File) string {
	stem := strings.TrimSuffix(file, ".go")
	if stem == "cli" || strings.HasPrefix(stem, "shared_") {
		return ""
	}
	cmd, _, _ := strings.Cut(stem, "_")
	if cmd == "labvm" {
		cmd = "lab"
	}
	return cmd
}

// borrowed lists, for the non-test Go files of dir, each use of a
// package-level name declared in a file of another unit, as
// "file: name (from other.go)". Uses are the identifiers the parser leaves
// unresolved in a file (package-level names of other files, the
// universe's, imports); a method reached through a selector is not seen,
// so a unit's file that declares methods is listed too unless its unit
// owns the type.
func borrowed(t *testing.T, dir string, owner ownerFunc) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	declared := map[string]string{} // name -> file
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		for _, n := range topLevelNames(f) {
			declared[n] = name
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		mine := owner(name, f)
		seen := map[string]bool{}
		for _, id := range f.Unresolved {
			from, ok := declared[id.Name]
			if !ok || from == name || seen[id.Name] {
				continue
			}
			seen[id.Name] = true
			if theirs := owner(from, files[from]); theirs != "" && theirs != mine {
				out = append(out, fmt.Sprintf("%s: %s (from %s)", name, id.Name, from))
			}
		}
		if mine != "" {
			out = append(out, foreignMethods(name, f, mine, files, declared, owner)...)
		}
	}
	return out
}

// foreignMethods lists the methods a unit's file declares on a type of
// another file that is not its unit's: others would reach them by a
// selector, which borrowed cannot see.
func foreignMethods(name string, f *ast.File, mine string, files map[string]*ast.File, declared map[string]string, owner ownerFunc) []string {
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) == 0 {
			continue
		}
		typ := fd.Recv.List[0].Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		id, ok := typ.(*ast.Ident)
		if !ok {
			continue
		}
		if from, ok := declared[id.Name]; ok && from != name && owner(from, files[from]) != mine {
			out = append(out, fmt.Sprintf("%s: method %s on %s (from %s)", name, fd.Name.Name, id.Name, from))
		}
	}
	return out
}

// topLevelNames are the functions, types, variables and constants f
// declares at package level (not methods, not init).
func topLevelNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" {
				out = append(out, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	return out
}

// TestSharedHelpersHaveHomes: doctor's rule files and cli's commands use
// nothing of another rule's or command's file; what they share is in
// shared files (docs/extending.md: one rule is one file to copy).
func TestSharedHelpersHaveHomes(t *testing.T) {
	root := moduleRoot(t)
	for _, c := range []struct {
		dir   string
		owner ownerFunc
		where string
	}{
		{"internal/doctor", doctorOwner, "common.go or a shared_CONCERN.go"},
		{"internal/cli", cliOwner, "a shared_CONCERN.go"},
	} {
		for _, b := range borrowed(t, filepath.Join(root, c.dir), c.owner) {
			t.Errorf("%s/%s: a unit uses another's helper; move the helper to %s", c.dir, b, c.where)
		}
	}
}

// TestSharedHelpersCatches runs the check on a made-up package: a rule
// using another rule's helper, a shared file using a rule's, and a rule
// declaring a method on a shared type are caught; a rule using its own
// and shared names is not.
func TestSharedHelpersCatches(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("package x\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(name, body string) string {
		return "func init() { register(" + name + ") }\n\n" + body
	}
	write("doctor.go", "func register(any) {}\n\ntype Input struct{}\n")
	write("shared_x.go", "func shared() int { return own() }\n")
	write("a.go", rule("checkA", "func checkA() int { return helperB() + shared() + mine() }\n\nfunc mine() int { return 1 }\n"))
	write("b.go", rule("checkB", "func checkB() {}\n\nfunc helperB() int { return 2 }\n\nfunc own() int { return 3 }\n\nfunc (Input) M() {}\n"))
	write("c.go", rule("checkC", "func checkC() int { return shared() + mineC() }\n\nfunc mineC() int { return 4 }\n"))
	got := borrowed(t, dir, doctorOwner)
	want := []string{
		"a.go: helperB (from b.go)",
		"b.go: method M on Input (from doctor.go)",
		"shared_x.go: own (from b.go)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("borrowed:\n got %q\nwant %q", got, want)
	}
}
