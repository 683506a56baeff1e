// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/extending.md sends people to files to copy and places to register;
// every path it quotes must exist.

const extendingDoc = "docs/extending.md"

// repoPath is a quoted path under one of the tree's top directories, or a
// file at its root.
var repoPath = regexp.MustCompile("`((?:internal|experiments|cmd|scripts|kernel|packaging|contrib|docs|testdata)/[A-Za-z0-9_./-]+|[A-Za-z0-9_-]+\\.md|Makefile)`")

// placeholder is a path segment written in capitals (NAME, FAMILY): a
// pattern for the reader to fill in, not a path.
var placeholder = regexp.MustCompile(`^[A-Z_]+$`)

// quotedPaths returns the paths doc quotes, placeholders left out.
func quotedPaths(doc string) []string {
	var out []string
	for _, m := range repoPath.FindAllStringSubmatch(doc, -1) {
		p := strings.TrimSuffix(m[1], "/")
		skip := false
		for _, seg := range strings.Split(p, "/") {
			if placeholder.MatchString(seg) {
				skip = true
			}
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}

func TestExtendingPathsExist(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, extendingDoc))
	if err != nil {
		t.Fatal(err)
	}
	paths := quotedPaths(string(b))
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s quotes %s, which does not exist", extendingDoc, p)
		}
	}
	if len(paths) < 30 {
		t.Errorf("only %d quoted paths found in %s: the pattern no longer matches how it quotes them", len(paths), extendingDoc)
	}
}

func TestQuotedPaths(t *testing.T) {
	doc := "Copy `internal/tune/sysctl.go`, into `kernel/usbnet/patches/FAMILY/`; see `CHANGELOG.md` and `Makefile`, not `go test` or `experiments/NAME/data`."
	got := strings.Join(quotedPaths(doc), " ")
	if got != "internal/tune/sysctl.go CHANGELOG.md Makefile" {
		t.Errorf("quoted paths %q", got)
	}
}
