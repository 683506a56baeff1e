// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpLine is a target's line in `make help`: "## TARGET: what it does",
// directly above the target.
var helpLine = regexp.MustCompile(`^## ([a-z][a-z-]*): \S`)

// makeHelpProblems lists the .PHONY targets without a help line, the help
// lines not directly above their target, and the help lines of no .PHONY
// target.
func makeHelpProblems(makefile string) []string {
	lines := strings.Split(makefile, "\n")
	var phony []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, ".PHONY:"); ok {
			phony = append(phony, strings.Fields(rest)...)
		}
	}
	var probs []string
	helped := map[string]bool{}
	for i, l := range lines {
		m := helpLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		helped[m[1]] = true
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], m[1]+":") {
			probs = append(probs, "the help line of "+m[1]+" is not directly above its target")
		}
		if !slices.Contains(phony, m[1]) {
			probs = append(probs, m[1]+" has a help line but is not .PHONY")
		}
	}
	for _, t := range phony {
		if !helped[t] {
			probs = append(probs, "target "+t+" has no help line (## "+t+": what it does)")
		}
	}
	return probs
}

// TestMakeHelp: `make help` lists every target of the Makefile, one line
// each, from the "## TARGET:" line above it.
func TestMakeHelp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range makeHelpProblems(string(b)) {
		t.Error("Makefile: " + p)
	}
	bad := ".PHONY: a b c\n## a: first\na:\n## b: second\n\nb:\n## d: none\nd:\n"
	got := makeHelpProblems(bad)
	want := []string{"the help line of b is not directly above its target", "d has a help line but is not .PHONY", "target c has no help line (## c: what it does)"}
	if !slices.Equal(got, want) {
		t.Errorf("on a made-up Makefile:\n got %q\nwant %q", got, want)
	}
}
