// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v2"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// The alert rules shipped for a fleet, and their promtool unit tests.
const (
	rulesFile     = "../../contrib/prometheus/wirespeed.rules.yml"
	rulesTestFile = "../../contrib/prometheus/wirespeed.rules.test.yml"
)

type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func readRules(t *testing.T, path string) []alertRule {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string      `yaml:"name"`
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []alertRule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rules", path)
	}
	return out
}

// metricLabels maps every metric the exporter can expose to its labels.
func metricLabels() map[string][]string {
	out := map[string][]string{}
	for _, m := range allMetrics() {
		out[m.name] = m.labels
	}
	return out
}

// counters is the set of the exporter's metrics of type counter.
func counters() map[string]bool {
	out := map[string]bool{}
	for _, m := range allMetrics() {
		if m.typ == prometheus.CounterValue {
			out[m.name] = true
		}
	}
	return out
}

var (
	// a selector: metric name and its {matchers}, if any
	selectorRe = regexp.MustCompile(`\b(wirespeed_[a-zA-Z0-9_]+|up)\b(\{[^}]*\})?`)
	matcherRe  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	groupingRe = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	counterFn  = regexp.MustCompile(`\b(rate|irate|increase)\s*\(\s*(wirespeed_[a-zA-Z0-9_]+)`)
	labelsRef  = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)
)

// Labels every scraped series has: Prometheus adds them to the target's.
var targetLabels = []string{"instance", "job"}

// TestAlertRulesUseExportedMetrics checks the alert rules against the
// exporter's own descriptors: every metric a rule (or a comment in the file)
// names is one the exporter exposes, every label a rule matches, groups or
// joins on, or prints in an annotation is one those metrics carry, rate()
// and increase() take counters only, doctor's severities are doctor's, and
// each alert has a severity label, a summary and a description.
func TestAlertRulesUseExportedMetrics(t *testing.T) {
	known, isCounter := metricLabels(), counters()
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	// Comments too: a comment naming a metric that does not exist misleads
	// whoever edits the rule next.
	for _, m := range metricRef.FindAllString(string(raw), -1) {
		if _, ok := known[m]; !ok {
			t.Errorf("%s names %s, which the exporter does not expose", rulesFile, m)
		}
	}
	severities := map[string]bool{string(doctor.Info): true, string(doctor.Warn): true, string(doctor.Crit): true}
	used := map[string]bool{}
	for _, r := range readRules(t, rulesFile) {
		if r.Alert == "" {
			t.Errorf("rule %q is not an alert (recording rules are not expected here)", r.Record)
			continue
		}
		where := "alert " + r.Alert
		// labels the rule's metrics carry
		have := map[string]bool{}
		for _, l := range targetLabels {
			have[l] = true
		}
		sels := selectorRe.FindAllStringSubmatch(r.Expr, -1)
		if len(sels) == 0 {
			t.Errorf("%s: expr %q names no metric", where, r.Expr)
		}
		for _, s := range sels {
			name := s[1]
			if name == "up" {
				if !strings.Contains(s[2], `job="wirespeed"`) {
					t.Errorf("%s: up without job=\"wirespeed\" would alert on every target", where)
				}
				continue
			}
			labels, ok := known[name]
			if !ok {
				t.Errorf("%s: expr uses %s, which the exporter does not expose", where, name)
				continue
			}
			used[name] = true
			mine := map[string]bool{}
			for _, l := range append(append([]string{}, targetLabels...), labels...) {
				mine[l] = true
				have[l] = true
			}
			for _, m := range matcherRe.FindAllStringSubmatch(s[2], -1) {
				if !mine[m[1]] {
					t.Errorf("%s: %s has no label %q (it has %v)", where, name, m[1], labels)
				}
				if name == "wirespeed_doctor_finding" && m[1] == "severity" && m[2] == "=" && !severities[m[3]] {
					t.Errorf("%s: severity=%q is not a severity of doctor's (info, warn, crit)", where, m[3])
				}
			}
		}
		for _, g := range groupingRe.FindAllStringSubmatch(r.Expr, -1) {
			for _, l := range strings.Split(g[2], ",") {
				if l = strings.TrimSpace(l); l != "" && !have[l] {
					t.Errorf("%s: %s (%s): no metric of the rule has label %q", where, g[1], g[2], l)
				}
			}
		}
		for _, c := range counterFn.FindAllStringSubmatch(r.Expr, -1) {
			if !isCounter[c[2]] {
				t.Errorf("%s: %s() of %s, which is not a counter", where, c[1], c[2])
			}
		}
		switch r.Labels["severity"] {
		case "critical", "warning", "info":
		default:
			t.Errorf("%s: severity label %q, want critical, warning or info", where, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: needs a summary and a description annotation", where)
		}
		for _, a := range r.Annotations {
			for _, m := range labelsRef.FindAllStringSubmatch(a, -1) {
				if !have[m[1]] {
					t.Errorf("%s: annotation prints $labels.%s, which no metric of the rule has", where, m[1])
				}
			}
		}
	}
	if len(used) < 5 {
		t.Errorf("the rules use only %d of the exporter's metrics", len(used))
	}
}

// TestAlertRulesAreTested checks that promtool's unit tests cover every
// alert twice: once firing, once where it must stay silent. promtool itself
// passes a rule no test names.
func TestAlertRulesAreTested(t *testing.T) {
	b, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", rulesTestFile, err)
	}
	if len(f.RuleFiles) != 1 || filepath.Base(f.RuleFiles[0]) != filepath.Base(rulesFile) {
		t.Errorf("%s tests %v, want %s", rulesTestFile, f.RuleFiles, filepath.Base(rulesFile))
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	var missing []string
	for _, r := range readRules(t, rulesFile) {
		if !fires[r.Alert] {
			missing = append(missing, r.Alert+" (firing)")
		}
		if !silent[r.Alert] {
			missing = append(missing, r.Alert+" (silent)")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s has no case for: %s", rulesTestFile, strings.Join(missing, ", "))
	}
}

// rulesConfig is the prometheus.yml lines that load the alert rules and
// evaluate them every second (TestPrometheusScrapesExporter uses it).
func rulesConfig(t *testing.T) string {
	abs, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  evaluation_interval: 1s\nrule_files:\n  - '%s'\n", abs)
}

// checkRulesEvaluate asks a running Prometheus (web: its listen address),
// which loaded rulesConfig and scrapes a real exporter, whether every alert
// rule evaluates without an error: a join the real series do not allow
// (many-to-many matching) shows there and nowhere else. Called once the
// series are there; the rules' rates need a few more scrapes, so it judges
// evaluations from 3 s after the call on.
func checkRulesEvaluate(t *testing.T, web string) {
	t.Helper()
	want := len(readRules(t, rulesFile))
	after := time.Now().Add(3 * time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		done, msg := rulesEvaluated(web, want, after)
		if done && msg == "" {
			return
		}
		if done || time.Now().After(deadline) {
			t.Errorf("alert rules on the real exporter's series: %s", msg)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// rulesEvaluated reports whether every alert rule has been evaluated since
// after, and what went wrong if one failed.
func rulesEvaluated(web string, want int, after time.Time) (done bool, msg string) {
	resp, err := http.Get("http://" + web + "/api/v1/rules?type=alert")
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name           string    `json:"name"`
					Health         string    `json:"health"`
					LastError      string    `json:"lastError"`
					LastEvaluation time.Time `json:"lastEvaluation"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return false, err.Error()
	}
	n := 0
	var bad, waiting []string
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			n++
			switch {
			case rule.Health == "err":
				bad = append(bad, fmt.Sprintf("%s: %s", rule.Name, rule.LastError))
			case rule.LastEvaluation.Before(after) || rule.Health != "ok":
				waiting = append(waiting, fmt.Sprintf("%s (health %q, last evaluated %v)", rule.Name, rule.Health, rule.LastEvaluation))
			}
		}
	}
	switch {
	case len(bad) > 0:
		return true, strings.Join(bad, "; ")
	case n != want:
		return false, fmt.Sprintf("prometheus loaded %d alert rules, the file has %d", n, want)
	case len(waiting) > 0:
		return false, "not evaluated yet: " + strings.Join(waiting, ", ")
	}
	return true, ""
}
