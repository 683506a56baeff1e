// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

var update = flag.Bool("update", false, "rewrite the golden /metrics files in testdata/golden")

const (
	fixtures  = "../../testdata/snapshots/*.tar.gz"
	goldenDir = "testdata/golden"
)

// unstable matches the samples whose value is a timing, not a reading of
// the host: the collectors' durations. normalise sets them to 0.
var unstable = regexp.MustCompile(`(?m)^(wirespeed_collector_duration_seconds\{[^}]*\}) .*$`)

// normalise makes a scrape comparable across runs and machines: timings
// become 0. Nothing else in a scrape of a snapshot varies (the handler
// serves no process or Go runtime metrics, and the observation is off).
func normalise(s string) string {
	return unstable.ReplaceAllString(s, "$1 0")
}

// goldenHeader opens every golden file; promtool reads it as a comment.
const goldenHeader = `# /metrics of testdata/snapshots/%s, the observation off.
# wirespeed_collector_duration_seconds values are set to 0 (timings).
# Rewrite: go test ./internal/exporter -run TestGoldenMetrics -update
`

// scrapeSnapshot serves the metrics of one snapshot fixture and scrapes
// them once.
func scrapeSnapshot(t *testing.T, file string) string {
	t.Helper()
	sf, err := hostfs.OpenSnapshot(file)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	a, err := inspect.ReplayAnswers(sf.Answers)
	if err != nil {
		t.Fatal(err)
	}
	e := New(context.Background(), Options{FS: sf.FS, Answers: a, Version: "golden"})
	return scrape(t, e)
}

// TestGoldenMetrics scrapes every snapshot fixture (found by glob) and
// compares the text with testdata/golden/NAME.prom, reviewed by hand and
// checked by promtool (make promtool-check).
func TestGoldenMetrics(t *testing.T) {
	files, err := filepath.Glob(fixtures)
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures at %s (%v)", fixtures, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		base := filepath.Base(f)
		name := strings.TrimSuffix(base, ".tar.gz")
		seen[name+".prom"] = true
		t.Run(name, func(t *testing.T) {
			got := fmt.Sprintf(goldenHeader, base) + normalise(scrapeSnapshot(t, f))
			path := filepath.Join(goldenDir, name+".prom")
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./internal/exporter -run TestGoldenMetrics -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("/metrics of %s differs from %s (-update rewrites it):\n%s", base, path, lineDiff(string(want), got))
			}
		})
	}
	// a golden file whose fixture is gone is stale
	old, _ := filepath.Glob(filepath.Join(goldenDir, "*.prom"))
	for _, p := range old {
		if !seen[filepath.Base(p)] {
			if *update {
				os.Remove(p)
				continue
			}
			t.Errorf("%s has no fixture in %s (-update removes it)", p, fixtures)
		}
	}
}

// lineDiff lists the lines only one of want and got has.
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := count(want), count(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] < w[l] {
			fmt.Fprintf(&b, "- %s\n", l)
			w[l]--
		}
	}
	w = count(want)
	for _, l := range strings.Split(got, "\n") {
		if w[l] < g[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
			g[l]--
		}
	}
	return b.String()
}
