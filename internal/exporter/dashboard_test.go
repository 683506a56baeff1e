// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var dashboards = "../../contrib/grafana/*.json"

// dashboardQueries returns every PromQL expression of the Grafana dashboards
// (panel targets, nested row panels and template variable queries).
func dashboardQueries(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(dashboards)
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards at %s (%v)", dashboards, err)
	}
	out := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d any
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var walk func(v any, key string)
		walk = func(v any, key string) {
			switch x := v.(type) {
			case map[string]any:
				for k, c := range x {
					walk(c, k)
				}
			case []any:
				for _, c := range x {
					walk(c, key)
				}
			case string:
				if key == "expr" || (key == "query" && strings.Contains(x, "wirespeed_")) {
					out[f] = append(out[f], x)
				}
			}
		}
		walk(d, "")
	}
	return out
}

var metricRef = regexp.MustCompile(`\bwirespeed_[a-zA-Z0-9_]+`)

// TestDashboardUsesExportedMetrics checks that every metric a dashboard
// queries is one the exporter exposes, and that each query names one.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	known := map[string]bool{}
	for _, n := range MetricNames() {
		known[n] = true
	}
	used := map[string]bool{}
	for f, qs := range dashboardQueries(t) {
		if len(qs) < 10 {
			t.Errorf("%s: only %d queries", f, len(qs))
		}
		for _, q := range qs {
			refs := metricRef.FindAllString(q, -1)
			if len(refs) == 0 {
				t.Errorf("%s: query %q names no wirespeed metric", f, q)
			}
			for _, r := range refs {
				used[r] = true
				if !known[r] {
					t.Errorf("%s: query %q uses %s, which the exporter does not expose", f, q, r)
				}
			}
		}
	}
	var unused []string
	for n := range known {
		if !used[n] {
			unused = append(unused, n)
		}
	}
	sort.Strings(unused)
	t.Logf("metrics no dashboard shows: %s", strings.Join(unused, ", "))
}

// promQuery turns a dashboard query into one Prometheus answers directly:
// Grafana's variables become match-all and a fixed range.
func promQuery(q string) string {
	r := strings.NewReplacer(`"$instance"`, `".*"`, `"$device"`, `".*"`, "$__rate_interval", "30s")
	return r.Replace(q)
}
