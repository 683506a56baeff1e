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

// maxFuncLines is the most lines a hand-written function may span, from
// its func keyword to its closing brace (its doc comment not counted).
// At 80 a function is about a screen and a half: long enough for a rule,
// a parser or a printer of one thing with its error paths, short enough
// that one that does several things in a row - Build, Loop, Flent were
// 270, 180 and 150 lines - is split into its named steps. Test functions
// are exempt: a table-driven test keeps its table inline, and its length
// is data, not steps.
const maxFuncLines = 80

// longFuncAllowed names the functions over maxFuncLines that are not split
// yet, "path name" (a method as "(*Type).Name"), each with the reason. An
// entry whose function is gone or back under the limit fails the test:
// the list only shrinks.
var longFuncAllowed = map[string]string{
	// internal/cli: split by the helper that owns internal/cli for issue 32.
	"internal/cli/labvm.go runLabVM":     "internal/cli's own split (issue 32)",
	// internal/lab/vm: its tests boot VMs (the lead runs them), and its
	// guest scripts are moving out of Go strings; split once that lands.
	"internal/lab/vm/vm.go Run":                "VM lab: split after the guest-script move, checked by the VM tests",
	"internal/lab/vm/vm.go (*Config).Validate": "VM lab: split after the guest-script move, checked by the VM tests",
	"internal/lab/vm/initramfs.go BaseImage":   "VM lab: split after the guest-script move, checked by the VM tests",
	"internal/lab/vm/kernel.go FetchKernel":    "VM lab: split after the guest-script move, checked by the VM tests",
}

// longFunc is one function over the limit.
type longFunc struct {
	key   string // "path name", as longFuncAllowed spells it
	pos   string // path:line
	lines int
}

// funcName is a declaration's name as longFuncAllowed spells it:
// "Name", or "(*T).Name" / "(T).Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	var recv func(ast.Expr) string
	recv = func(e ast.Expr) string {
		switch t := e.(type) {
		case *ast.StarExpr:
			return "*" + recv(t.X)
		case *ast.Ident:
			return t.Name
		case *ast.IndexExpr: // T[P]
			return recv(t.X)
		case *ast.IndexListExpr: // T[P, Q]
			return recv(t.X)
		}
		return "?"
	}
	return "(" + recv(fd.Recv.List[0].Type) + ")." + fd.Name.Name
}

// longFuncs returns every function over limit in the non-generated,
// non-test Go files under root.
func longFuncs(t *testing.T, root string, limit int) []longFunc {
	t.Helper()
	var out []longFunc
	for _, rel := range goFiles(t, root) {
		if strings.HasSuffix(rel, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			from, to := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if n := to - from + 1; n > limit {
				out = append(out, longFunc{key: rel + " " + funcName(fd), pos: fmt.Sprintf("%s:%d", rel, from), lines: n})
			}
		}
	}
	return out
}

func TestFunctionLengths(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range longFuncs(t, moduleRoot(t), maxFuncLines) {
		seen[f.key] = true
		if _, ok := longFuncAllowed[f.key]; !ok {
			name := f.key[strings.LastIndex(f.key, " ")+1:]
			t.Errorf("%s %s is %d lines, over %d: split it into its steps (or, with a reason, add %q to longFuncAllowed)",
				f.pos, name, f.lines, maxFuncLines, f.key)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(longFuncAllowed)) {
		if !seen[k] {
			t.Errorf("longFuncAllowed lists %q, which is gone or no longer over %d lines: remove the entry", k, maxFuncLines)
		}
	}
}

// TestFunctionLengthsCatches runs the check on a made-up tree: a function
// one line over is caught with its position and name, one at the limit,
// a test's, a generated file's and a hidden directory's are not, and
// methods are named with their receiver.
func TestFunctionLengthsCatches(t *testing.T) {
	root := t.TempDir()
	write := func(rel, head, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(head+"package x\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// fn is a function of exactly n lines (n >= 2).
	fn := func(sig string, n int) string {
		return "func " + sig + " {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
	}
	write("a.go", "", fn("ok()", 10)+fn("atLimit()", 80)+fn("over()", 81))
	write("b.go", "", "type T struct{}\ntype G[P any] struct{}\n\n"+fn("(t *T) M()", 90)+fn("(g G[P]) N()", 85))
	write("a_test.go", "", fn("TestLong(t *testing.T)", 300))
	write("gen.go", "// Code generated by bpf2go; DO NOT EDIT.\n\n", fn("generated()", 500))
	write(".hidden/h.go", "", fn("hidden()", 500))
	got := map[string]string{}
	for _, f := range longFuncs(t, root, 80) {
		got[f.key] = fmt.Sprintf("%s %d", f.pos, f.lines)
	}
	want := map[string]string{
		"a.go over":   "a.go:93 81",
		"b.go (*T).M": "b.go:6 90",
		"b.go (G).N":  "b.go:96 85",
	}
	if len(got) != len(want) {
		t.Errorf("flagged %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: flagged %q, want %q", k, got[k], v)
		}
	}
}
