// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docs/architecture.md is the project's map. These tests hold it to the
// tree: its package table names every package directory, its data-flow
// picture has exactly the imports' arrows, and every path it quotes exists.

const archDoc = "docs/architecture.md"

func readArch(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// skipDir reports whether a directory holds no packages of the project:
// Go's testdata, the experiments' raw files, hidden directories.
func skipDir(name string) bool {
	return name == "testdata" || name == "data" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// packageDirs lists, relative to root, every directory under the given top
// directories that holds a .go file (test files count: a directory of tests
// is a package too), and, with every experiment set, each directory right
// under experiments/ (an experiment without Go is still one).
func packageDirs(root string, tops ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != top && skipDir(d.Name()) {
					return filepath.SkipDir
				}
				if top == "experiments" && filepath.Dir(rel) == "experiments" && d.Name() != "internal" {
					seen[rel] = true
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), ".go") {
				seen[filepath.ToSlash(filepath.Dir(rel))] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	dirs := slices.Sorted(func(yield func(string) bool) {
		for d := range seen {
			if !yield(d) {
				return
			}
		}
	})
	return dirs, nil
}

// tableRow is a row of a markdown table whose first cell is a quoted path
// under internal/ or experiments/ (or experiments itself).
var tableRow = regexp.MustCompile("(?m)^\\| `((?:internal|experiments)(?:/[a-z0-9_./-]+)?)` \\|")

// tablePackages returns the paths the doc's package tables name, without a
// trailing slash.
func tablePackages(doc string) []string {
	var out []string
	for _, m := range tableRow.FindAllStringSubmatch(doc, -1) {
		out = append(out, strings.TrimSuffix(m[1], "/"))
	}
	return out
}

// tableProblems compares the package directories with the table's rows:
// a directory without a row, and a row naming no directory.
func tableProblems(dirs, rows []string) []string {
	var probs []string
	for _, d := range dirs {
		if !slices.Contains(rows, d) {
			probs = append(probs, fmt.Sprintf("%s is a package directory, but %s's package table has no row | `%s` | ... |", d, archDoc, d))
		}
	}
	for _, r := range rows {
		if !slices.Contains(dirs, r) {
			probs = append(probs, fmt.Sprintf("%s's package table has a row for %s, which is not a package directory", archDoc, r))
		}
	}
	return probs
}

func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := moduleRoot(t)
	dirs, err := packageDirs(root, "internal", "experiments")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dirs, "internal/housekeeping") || !slices.Contains(dirs, "experiments/all") {
		t.Fatalf("the walk missed this very package or experiments/all: %v", dirs)
	}
	for _, p := range tableProblems(dirs, tablePackages(readArch(t, root))) {
		t.Error(p)
	}
}

// TestTableProblems: a directory the table lacks and a row for a directory
// that is gone are both reported.
func TestTableProblems(t *testing.T) {
	doc := "| package | what |\n|---|---|\n| `internal/a` | A. |\n| `internal/gone` | Was. |\n| `experiments` | E. |\n"
	got := tableProblems([]string{"experiments", "internal/a", "internal/b"}, tablePackages(doc))
	if len(got) != 2 || !strings.Contains(got[0], "internal/b is a package directory") || !strings.Contains(got[1], "row for internal/gone") {
		t.Errorf("problems: %q", got)
	}
}

// picture returns the lines of the code block under the "## Data flows one
// way" heading.
func picture(doc string) ([]string, error) {
	_, after, ok := strings.Cut(doc, "\n## Data flows one way\n")
	if !ok {
		return nil, fmt.Errorf("no \"## Data flows one way\" section")
	}
	if next := strings.Index(after, "\n## "); next >= 0 {
		after = after[:next]
	}
	_, block, ok := strings.Cut(after, "```\n")
	if !ok {
		return nil, fmt.Errorf("no code block in \"## Data flows one way\"")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		return nil, fmt.Errorf("the picture's code block does not end")
	}
	return strings.Split(block, "\n"), nil
}

// pkgName is how the picture names a package: "inspect", "lab/vm",
// "cmd/wirespeed".
var pkgName = regexp.MustCompile(`^(cmd/)?[a-z0-9]+(/[a-z0-9]+)*$`)

// pictureName is the module-relative path of a package the picture names.
func pictureName(name string) (string, error) {
	if !pkgName.MatchString(name) {
		return "", fmt.Errorf("%q is not a package name", name)
	}
	if strings.HasPrefix(name, "cmd/") {
		return name, nil
	}
	return "internal/" + name, nil
}

// pictureArrows reads the picture's arrows as "importer <- imported" pairs
// of module-relative paths. A line "a, b --> c --> d  words" gives c <- a,
// c <- b and d <- c; words after two spaces are a caption. Lines without an
// arrow and the floor lines (which may hold experiments/NAME) are not read.
func pictureArrows(lines []string) (map[string]bool, error) {
	arrows := map[string]bool{}
	for _, line := range lines {
		if !strings.Contains(line, "-->") || strings.HasPrefix(strings.TrimSpace(line), "floor") {
			continue
		}
		parts := strings.Split(line, "-->")
		last := strings.TrimSpace(parts[len(parts)-1])
		if i := strings.Index(last, "  "); i >= 0 {
			last = last[:i]
		}
		parts[len(parts)-1] = last
		var prev []string
		for i, part := range parts {
			var names []string
			for _, n := range strings.Split(part, ",") {
				n = strings.TrimSpace(n)
				if i > 0 && len(names) > 0 {
					return nil, fmt.Errorf("line %q: an arrow points at one package", line)
				}
				names = append(names, n)
			}
			var cur []string
			for _, n := range names {
				p, err := pictureName(n)
				if err != nil {
					return nil, fmt.Errorf("line %q: %w", line, err)
				}
				cur = append(cur, p)
			}
			for _, from := range prev {
				arrows[cur[0]+" <- "+from] = true
			}
			prev = cur
		}
	}
	return arrows, nil
}

// importArrows reads every non-test Go file under the given top
// directories and returns the packages they make and "importer <- imported"
// for each import of one of the module's packages.
func importArrows(root, module string, tops ...string) (pkgs, arrows map[string]bool, err error) {
	pkgs, arrows = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, top := range tops {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != filepath.Join(root, top) && skipDir(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			pkgs[filepath.ToSlash(rel)] = true
			for _, im := range f.Imports {
				ip, _ := strconv.Unquote(im.Path.Value)
				if dep, ok := strings.CutPrefix(ip, module+"/"); ok {
					arrows[filepath.ToSlash(rel)+" <- "+dep] = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return pkgs, arrows, nil
}

func modulePath(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	return string(m[1])
}

// arrowProblems compares the picture's arrows with the imports.
func arrowProblems(drawn, imports map[string]bool) []string {
	var probs []string
	for a := range drawn {
		if !imports[a] {
			probs = append(probs, "the picture draws "+a+", an import that does not exist")
		}
	}
	for a := range imports {
		if !drawn[a] {
			probs = append(probs, "the picture lacks "+a+" (an import)")
		}
	}
	slices.Sort(probs)
	return probs
}

func TestArchitecturePictureMatchesImports(t *testing.T) {
	root := moduleRoot(t)
	lines, err := picture(readArch(t, root))
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := pictureArrows(lines)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, imports, err := importArrows(root, modulePath(t, root), "internal", "cmd")
	if err != nil {
		t.Fatal(err)
	}
	if !imports["cmd/wirespeed <- internal/cli"] || !imports["internal/inspect <- internal/hostfs"] {
		t.Fatalf("the import walk missed known imports: %v", imports)
	}
	for _, p := range arrowProblems(drawn, imports) {
		t.Errorf("%s: %s; the picture's arrows are 'imported, ... --> importer'", archDoc, p)
	}
	drawnFloors, err := pictureFloors(lines)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range floorProblems(drawnFloors, floors(pkgs, imports)) {
		t.Errorf("%s: %s", archDoc, p)
	}
}

// pictureFloors reads the lines "floor N   a, b, c  caption" of the
// picture: package path -> N.
func pictureFloors(lines []string) (map[string]int, error) {
	out := map[string]int{}
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, "floor ")
		if !ok {
			continue
		}
		num, names, _ := strings.Cut(strings.TrimSpace(rest), " ")
		n, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("line %q: no floor number", line)
		}
		names = strings.TrimSpace(names)
		if i := strings.Index(names, "  "); i >= 0 {
			names = names[:i]
		}
		for _, name := range strings.Split(names, ",") {
			p, err := pictureName(strings.TrimSpace(name))
			if err != nil {
				return nil, fmt.Errorf("line %q: %w", line, err)
			}
			if _, dup := out[p]; dup {
				return nil, fmt.Errorf("%s is on two floors", p)
			}
			out[p] = n
		}
	}
	return out, nil
}

// floors gives each package 1 + the highest floor of what it imports
// (1 when it imports none of pkgs). The imports have no cycle (Go refuses
// one), so the recursion ends.
func floors(pkgs, imports map[string]bool) map[string]int {
	deps := map[string][]string{}
	for a := range imports {
		from, to, _ := strings.Cut(a, " <- ")
		deps[from] = append(deps[from], to)
	}
	out := map[string]int{}
	var floor func(p string) int
	floor = func(p string) int {
		if f, ok := out[p]; ok {
			return f
		}
		f := 1
		for _, d := range deps[p] {
			f = max(f, floor(d)+1)
		}
		out[p] = f
		return f
	}
	for p := range pkgs {
		floor(p)
	}
	return out
}

// floorProblems compares the picture's floors with the computed ones.
func floorProblems(drawn, computed map[string]int) []string {
	var probs []string
	for p, f := range computed {
		switch d, ok := drawn[p]; {
		case !ok:
			probs = append(probs, fmt.Sprintf("the picture has %s on no floor (its imports put it on floor %d)", p, f))
		case d != f:
			probs = append(probs, fmt.Sprintf("the picture has %s on floor %d, its imports put it on floor %d", p, d, f))
		}
	}
	for p, d := range drawn {
		if _, ok := computed[p]; !ok {
			probs = append(probs, fmt.Sprintf("the picture has %s on floor %d, but it is no package of internal/ or cmd/", p, d))
		}
	}
	slices.Sort(probs)
	return probs
}

// TestFloors: floors follow the longest chain of imports, and a package
// drawn too low, missing or unknown is reported.
func TestFloors(t *testing.T) {
	pkgs := map[string]bool{"internal/a": true, "internal/b": true, "internal/c": true, "cmd/x": true}
	imports := map[string]bool{"internal/b <- internal/a": true, "internal/c <- internal/a": true,
		"internal/c <- internal/b": true, "cmd/x <- internal/c": true}
	got := floors(pkgs, imports)
	want := map[string]int{"internal/a": 1, "internal/b": 2, "internal/c": 3, "cmd/x": 4}
	if !maps.Equal(got, want) {
		t.Errorf("floors %v, want %v", got, want)
	}
	drawn, err := pictureFloors([]string{"floor 4   cmd/x", "floor 2   b, c, gone  caption, d", "floor 1   a"})
	if err != nil {
		t.Fatal(err)
	}
	probs := floorProblems(drawn, got)
	if len(probs) != 2 || !strings.Contains(probs[0], "internal/c on floor 2, its imports put it on floor 3") ||
		!strings.Contains(probs[1], "internal/gone on floor 2, but it is no package") {
		t.Errorf("problems %q", probs)
	}
	if _, err := pictureFloors([]string{"floor 1   a", "floor 2   a"}); err == nil {
		t.Error("a package on two floors was accepted")
	}
}

// TestPictureArrows: the picture's grammar, and a drawn arrow the code
// lacks and an import the picture lacks are both reported.
func TestPictureArrows(t *testing.T) {
	lines := []string{
		"floor 1   hostfs, procfs",
		"hostfs, procfs --> inspect  the Snapshot",
		"cpumask --> lab --> lab/vm",
		"inspect --> cli --> cmd/wirespeed",
	}
	drawn, err := pictureArrows(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"cmd/wirespeed <- internal/cli", "internal/cli <- internal/inspect", "internal/inspect <- internal/hostfs",
		"internal/inspect <- internal/procfs", "internal/lab <- internal/cpumask", "internal/lab/vm <- internal/lab",
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for a := range drawn {
			if !yield(a) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Errorf("arrows %q, want %q", got, want)
	}
	imports := map[string]bool{}
	for _, a := range want[1:] {
		imports[a] = true
	}
	imports["internal/inspect <- internal/rtnl"] = true
	got := arrowProblems(drawn, imports)
	if len(got) != 2 || !strings.Contains(got[0], "draws cmd/wirespeed <- internal/cli") ||
		!strings.Contains(got[1], "lacks internal/inspect <- internal/rtnl") {
		t.Errorf("problems: %q", got)
	}
	if _, err := pictureArrows([]string{"inspect --> cli, bench"}); err == nil {
		t.Error("an arrow into two packages was accepted")
	}
	if _, err := pictureArrows([]string{"the Snapshot --> inspect"}); err == nil {
		t.Error("a caption before the arrow was taken for a package")
	}
}

// quotedPath is a path under one of the project's code directories quoted
// in the doc.
var quotedPath = regexp.MustCompile("`((?:internal|experiments|cmd|scripts)/[a-z0-9_./-]+)`")

func TestArchitecturePathsExist(t *testing.T) {
	root := moduleRoot(t)
	doc := readArch(t, root)
	n := 0
	for _, m := range quotedPath.FindAllStringSubmatch(doc, -1) {
		n++
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("%s quotes %s, which does not exist", archDoc, m[1])
		}
	}
	if n < 20 {
		t.Errorf("only %d quoted paths found: the pattern no longer matches how the page quotes them", n)
	}
}
