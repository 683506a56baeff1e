// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The packages' copyright files (DEP-5, packaging/*/copyright) say in
// machine-readable form what the SPDX lines say file by file; these tests
// hold the two to each other, and the Go module list mkdeb writes into
// wirespeed's copyright file to the modules the binary is built from.

const dep5Format = "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"

// dep5SPDX maps the DEP-5 names our copyright files use for our own code to
// the SPDX identifiers of the source files.
var dep5SPDX = map[string]string{"Apache-2.0": "Apache-2.0", "GPL-2": "GPL-2.0-only"}

// paragraph is one DEP-5 paragraph: field -> value, continuation lines
// joined with "\n".
type paragraph map[string]string

// parseDEP5 reads paragraphs separated by blank lines; a line starting
// with a space continues the field above.
func parseDEP5(text string) ([]paragraph, error) {
	var out []paragraph
	cur, last := paragraph{}, ""
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur, last = paragraph{}, ""
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("line %d continues no field: %q", i+1, line)
			}
			cur[last] += "\n" + strings.TrimSpace(line)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("line %d is no field: %q", i+1, line)
			}
			if _, dup := cur[k]; dup {
				return nil, fmt.Errorf("line %d repeats field %s", i+1, k)
			}
			cur[k], last = strings.TrimSpace(v), k
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// licenceNames splits a License field's first line ("FTL or GPL-2+",
// "Apache-2.0 and Expat") into its names.
func licenceNames(field string) []string {
	first, _, _ := strings.Cut(field, "\n")
	var names []string
	for _, a := range strings.Split(first, " or ") {
		for _, n := range strings.Split(a, " and ") {
			names = append(names, strings.TrimSpace(n))
		}
	}
	return names
}

// dep5Problems checks the format: the header names the format, every Files
// paragraph has Copyright and License, and every licence named without its
// text has a stand-alone License paragraph with one.
func dep5Problems(paras []paragraph) []string {
	var probs []string
	if len(paras) == 0 || paras[0]["Format"] != dep5Format {
		return []string{"the first paragraph has no Format: " + dep5Format}
	}
	texts := map[string]bool{}
	for _, p := range paras[1:] {
		if _, files := p["Files"]; !files && strings.Contains(p["License"], "\n") {
			texts[strings.TrimSpace(strings.SplitN(p["License"], "\n", 2)[0])] = true
		}
	}
	for _, p := range paras[1:] {
		files, ok := p["Files"]
		if !ok {
			if _, lic := p["License"]; !lic {
				probs = append(probs, fmt.Sprintf("a paragraph with neither Files nor License: %v", p))
			}
			continue
		}
		if p["Copyright"] == "" || p["License"] == "" {
			probs = append(probs, fmt.Sprintf("Files: %s lacks Copyright or License", files))
			continue
		}
		if strings.Contains(p["License"], "\n") {
			continue
		}
		for _, n := range licenceNames(p["License"]) {
			if !texts[n] {
				probs = append(probs, fmt.Sprintf("Files: %s names licence %s, which no stand-alone License paragraph gives", files, n))
			}
		}
	}
	return probs
}

// dep5Match reports whether a DEP-5 Files pattern matches path: "*"
// matches any characters, "/" included; "?" one character.
func dep5Match(pattern, path string) bool {
	var re strings.Builder
	re.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(path)
}

// dep5Licence is the License of the last Files paragraph matching path (the
// format's rule), or "" when none matches.
func dep5Licence(paras []paragraph, path string) string {
	lic := ""
	for _, p := range paras {
		for _, pat := range strings.Fields(p["Files"]) {
			if dep5Match(pat, path) {
				lic = strings.SplitN(p["License"], "\n", 2)[0]
			}
		}
	}
	return lic
}

// readCopyright parses a package's copyright template; mkdeb's
// placeholders stand for paragraphs and licence text it writes.
func readCopyright(t *testing.T, root, rel string) []paragraph {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\n@GOLICENSE@\n", "\n (the Go toolchain's LICENSE)\n")
	text = strings.ReplaceAll(text, "\n@GOMODULES@\n", "\n")
	paras, err := parseDEP5(text)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	for _, p := range dep5Problems(paras) {
		t.Errorf("%s: %s", rel, p)
	}
	return paras
}

// spdxOf is the identifier of a file's SPDX line in its first three lines.
func spdxOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	re := regexp.MustCompile(`SPDX-License-Identifier:\s*(\S+)`)
	for n := 0; n < 3 && sc.Scan(); n++ {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	return ""
}

// TestCopyrightMatchesSPDX: both copyright files are well-formed DEP-5, and
// for every tracked file with an SPDX line the package's copyright file
// gives the same licence (wirespeed's the tree but kernel/, the DKMS
// package's kernel/usbnet).
func TestCopyrightMatchesSPDX(t *testing.T) {
	root := moduleRoot(t)
	tool := readCopyright(t, root, "packaging/wirespeed/copyright")
	dkms := readCopyright(t, root, "packaging/wirespeed-usbnet-dkms/copyright")
	needGitTree(t, root)
	cmd := exec.Command("git", "ls-files")
	cmd.Dir, cmd.Env = root, gitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rel := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		id := spdxOf(filepath.Join(root, rel))
		if id == "" {
			continue
		}
		n++
		paras, name := tool, "packaging/wirespeed/copyright"
		if strings.HasPrefix(rel, "kernel/") {
			paras, name = dkms, "packaging/wirespeed-usbnet-dkms/copyright"
		}
		lic := dep5Licence(paras, rel)
		if dep5SPDX[lic] != id {
			t.Errorf("%s says SPDX %s, %s gives it %q", rel, id, name, lic)
		}
	}
	if n < 10 {
		t.Errorf("only %d files with an SPDX line: the walk or spdxOf is broken", n)
	}
}

func TestDEP5(t *testing.T) {
	paras, err := parseDEP5("Format: " + dep5Format + "\n\nFiles: *\nCopyright: us\nLicense: Apache-2.0\n\n" +
		"Files: a/*\n b/?.c\nCopyright: us\nLicense: GPL-2\n\nFiles: m/*\nCopyright: them\nLicense: FTL or GPL-2+\n\n" +
		"Files: x/*\nCopyright: x\nLicense: Expat\n the text\n\nLicense: Apache-2.0\n text\n\nLicense: GPL-2\n text\n")
	if err != nil {
		t.Fatal(err)
	}
	probs := dep5Problems(paras)
	if len(probs) != 2 || !strings.Contains(probs[0], "names licence FTL") || !strings.Contains(probs[1], "names licence GPL-2+") {
		t.Errorf("problems %q", probs)
	}
	for path, want := range map[string]string{"go.mod": "Apache-2.0", "a/deep/x.c": "GPL-2", "b/x.c": "GPL-2", "b/xy.c": "Apache-2.0"} {
		if got := dep5Licence(paras, path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if _, err := parseDEP5(" continues nothing\n"); err == nil {
		t.Error("a continuation line without a field was accepted")
	}
}

// TestCopyrightNamesEveryModule: packaging/wirespeed/go-modules, from
// which mkdeb writes the modules' paragraphs, lists exactly the modules
// the binary is built from (make deb would fail on a missing one only
// when it runs).
func TestCopyrightNamesEveryModule(t *testing.T) {
	root := moduleRoot(t)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(root, "packaging/wirespeed/go-modules"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, " | ")
		if len(f) != 4 || f[1] == "" || f[2] == "" || f[3] == "" {
			t.Errorf("go-modules: %q is not MODULE | LICENSE | FILES | COPYRIGHT", line)
			continue
		}
		listed = append(listed, f[0])
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", "./cmd/wirespeed")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var built []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(built, m) {
			built = append(built, m)
		}
	}
	if len(built) < 5 {
		t.Fatalf("go list names only %q", built)
	}
	for _, m := range built {
		if !slices.Contains(listed, m) {
			t.Errorf("the binary is built with %s, which packaging/wirespeed/go-modules does not list: add its licence there", m)
		}
	}
	for _, m := range listed {
		if !slices.Contains(built, m) {
			t.Errorf("packaging/wirespeed/go-modules lists %s, which the binary is not built with", m)
		}
	}
}
