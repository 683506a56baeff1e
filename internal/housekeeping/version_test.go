// SPDX-License-Identifier: Apache-2.0

package housekeeping

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionScript runs scripts/test-version.sh: scripts/version.sh, which
// versions the binary and the packages, on made-up repositories with and
// without release tags (no tags in this clone are needed).
func TestVersionScript(t *testing.T) {
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	out, err := exec.Command("bash", filepath.Join(moduleRoot(t), "scripts/test-version.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/test-version.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// changelogRelease is a release heading of CHANGELOG.md.
var changelogRelease = regexp.MustCompile(`^## \[(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\] - \d{4}-\d{2}-\d{2}$`)

// changelogProblems: the first section is Unreleased, every other "## "
// heading is a release "## [X.Y.Z] - YYYY-MM-DD", newest first.
func changelogProblems(doc string) []string {
	var probs []string
	var prev []int
	first := true
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "## ") {
			continue
		}
		if first {
			first = false
			if line != "## [Unreleased]" {
				probs = append(probs, "the first section is "+line+", not ## [Unreleased]")
			} else {
				continue
			}
		}
		m := changelogRelease.FindStringSubmatch(line)
		if m == nil {
			probs = append(probs, line+" is no release heading ## [MAJOR.MINOR.PATCH] - YYYY-MM-DD")
			continue
		}
		v := make([]int, 3)
		for i := range v {
			for _, c := range m[i+1] {
				v[i] = v[i]*10 + int(c-'0')
			}
		}
		if prev != nil && !(v[0] < prev[0] || v[0] == prev[0] && (v[1] < prev[1] || v[1] == prev[1] && v[2] < prev[2])) {
			probs = append(probs, line+" is not older than the release above it")
		}
		prev = v
	}
	if first {
		probs = append(probs, "no sections")
	}
	return probs
}

func TestChangelog(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range changelogProblems(string(b)) {
		t.Errorf("CHANGELOG.md: %s", p)
	}
}

func TestChangelogProblems(t *testing.T) {
	good := "# Changelog\n\n## [Unreleased]\n\n## [0.10.0] - 2027-01-02\n\n## [0.9.1] - 2026-12-01\n\n## [0.1.0] - 2026-11-26\n"
	if p := changelogProblems(good); len(p) != 0 {
		t.Errorf("a good changelog: %q", p)
	}
	bad := "# Changelog\n\n## [0.1.0] - 2026-11-26\n\n## [0.2.0] - 2026-12-01\n\n## [v0.0.1]\n"
	p := changelogProblems(bad)
	if len(p) != 3 || !strings.Contains(p[0], "not ## [Unreleased]") || !strings.Contains(p[1], "not older") ||
		!strings.Contains(p[2], "no release heading") {
		t.Errorf("a bad changelog: %q", p)
	}
}
