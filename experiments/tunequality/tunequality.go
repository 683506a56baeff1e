// SPDX-License-Identifier: Apache-2.0

// Package tunequality recomputes docs/results.md's "tune: tuner quality in
// the host lab" tables from tune-quality.py's raw results, data/runN.json:
// every trial of the exhaustive search, the tuner's own output, and the
// validation pairs (optimum and tuner measured alternately).
package tunequality

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/stats"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "tunequality", Tables: tables})
}

// oneSided names the runs whose tuner tested one-sided (commit b41c0cc),
// as PLAN-2026-11-23.md's second addendum fixed before they ran.
var oneSided = map[int]bool{8: true, 9: true}

type config map[string]string

type goal struct {
	Ratio      float64   `json:"ratio"`
	MedianPair float64   `json:"median_ratio"`
	P          float64   `json:"p"`
	Better     bool      `json:"better"`
	Worse      bool      `json:"worse"`
	PairRatios []float64 `json:"pair_ratios"`
}

type run struct {
	Args struct {
		Duration  string `json:"duration"`
		Pairs     int    `json:"pairs"`
		Reuse     string `json:"reuse"`
		TunerArgs string `json:"tuner_args"`
	} `json:"args"`
	Start      config `json:"start"`
	Exhaustive struct {
		Trials     int                  `json:"trials"`
		Samples    map[string][]float64 `json:"samples"`
		Best       config               `json:"best"`
		BestMean   float64              `json:"best_mean_mbit"`
		ReusedFrom string               `json:"reused_from"`
	} `json:"exhaustive"`
	Tuner struct {
		Exit   int `json:"exit"`
		Trials int `json:"trials"`
		Result struct {
			Trials []struct {
				Action struct {
					ID    string `json:"id"`
					Value string `json:"value"`
				} `json:"action"`
				Verdict string `json:"verdict"`
				Goal    *goal  `json:"goal"`
			} `json:"trials"`
		} `json:"result"`
	} `json:"tuner"`
	Validation struct {
		Optimum []float64 `json:"optimum"`
		Tuner   []float64 `json:"tuner"`
	} `json:"validation"`
}

func load(dir string, n int) (*run, error) {
	var r run
	if err := kit.ReadJSON(filepath.Join(dir, "data", fmt.Sprintf("run%d.json", n)), &r); err != nil {
		return nil, err
	}
	if len(r.Validation.Optimum) == 0 || len(r.Validation.Optimum) != len(r.Validation.Tuner) {
		return nil, fmt.Errorf("run%d.json: validation has %d optimum and %d tuner measurements", n, len(r.Validation.Optimum), len(r.Validation.Tuner))
	}
	return &r, nil
}

// knob names a knob's setting as the tables do.
func knob(id, value string) string {
	switch id {
	case "gro":
		return "GRO " + value
	case "threaded":
		return "threaded " + value
	}
	return id + " " + value
}

// describe lists what c changes from the start, in key order.
func describe(c, start config) string {
	var keys []string
	for k := range c {
		if c[k] != start[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, knob(k, c[k]))
	}
	if len(out) == 0 {
		return "the start"
	}
	return strings.Join(out, ", ")
}

// startMean is the exhaustive search's mean for the start configuration.
func (r *run) startMean() (float64, error) {
	for k, xs := range r.Exhaustive.Samples {
		var c config
		if err := json.Unmarshal([]byte(k), &c); err != nil {
			return 0, fmt.Errorf("exhaustive sample key %q: %w", k, err)
		}
		if describe(c, r.Start) == "the start" {
			return stats.Mean(xs), nil
		}
	}
	return 0, fmt.Errorf("the exhaustive search never measured the start configuration")
}

// decisions lists the tuner's kept actions, and those it reverted although
// the goal's test was significant, each with its ratio and p.
func (r *run) decisions() string {
	var out []string
	for _, t := range r.Tuner.Result.Trials {
		g := t.Goal
		if g == nil {
			continue
		}
		name := knob(t.Action.ID, t.Action.Value)
		if t.Action.ID == "gro" && t.Action.Value == "on" {
			name = "GRO"
		}
		if t.Action.ID == "threaded" {
			name = "threaded"
		}
		switch {
		case t.Verdict == "kept":
		case g.Better || g.Worse:
			name += " reverted"
		default:
			continue
		}
		out = append(out, fmt.Sprintf("%s (%.2f, p %.3f)", name, g.Ratio, g.P))
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, "; ")
}

// validation: tuner/optimum as the ratio of means, the median pair ratio,
// the geometric mean, and the pair ratios.
func (r *run) validation() (string, string) {
	v := r.Validation
	pairs := stats.PairedRatios(v.Optimum, v.Tuner)
	cells := make([]string, len(pairs))
	for i, q := range pairs {
		cells[i] = fmt.Sprintf("%.2f", q)
	}
	s := stats.SummarizeRatios(pairs)
	return fmt.Sprintf("**%.3f**, %.3f, %.3f", stats.Mean(v.Tuner)/stats.Mean(v.Optimum), s.Median, s.GeoMean),
		strings.Join(cells, " ")
}

var reuseRe = regexp.MustCompile(`run(\d+)\.json$`)

func (r *run) row(n int, guards bool) ([]string, error) {
	start, err := r.startMean()
	if err != nil {
		return nil, fmt.Errorf("run%d.json: %w", n, err)
	}
	label := fmt.Sprintf("%d (%s trials, %d pairs)", n, strings.TrimSuffix(r.Args.Duration, "s")+" s", r.Args.Pairs)
	exh := fmt.Sprintf("%d; %s (%.0f; start %.0f)", r.Exhaustive.Trials, describe(r.Exhaustive.Best, r.Start), r.Exhaustive.BestMean, start)
	if m := reuseRe.FindStringSubmatch(r.Exhaustive.ReusedFrom); m != nil {
		exh = fmt.Sprintf("run %s's, reused: %s", m[1], exh)
	}
	tuner := fmt.Sprintf("%d (%.2f)", r.Tuner.Trials, float64(r.Tuner.Trials)/float64(r.Exhaustive.Trials))
	if r.Tuner.Exit != 0 {
		tuner += fmt.Sprintf(", then stopped (exit %d)", r.Tuner.Exit)
	}
	tuner += "; " + r.decisions()
	ratios, pairs := r.validation()
	if !guards {
		return []string{label, exh, tuner, ratios, pairs}, nil
	}
	how := "default guards"
	if strings.Contains(r.Args.TunerArgs, "--guard none") {
		how = "`--guard none`"
	}
	if oneSided[n] {
		how += ", one-sided"
	} else {
		how += ", two-sided"
	}
	return []string{fmt.Sprint(n), how, exh, tuner, ratios, pairs}, nil
}

func tables(dir string) (map[string]string, error) {
	var first, quiet [][]string
	for n := 1; n <= 9; n++ {
		r, err := load(dir, n)
		if err != nil {
			return nil, err
		}
		row, err := r.row(n, n >= 4)
		if err != nil {
			return nil, err
		}
		if n <= 3 {
			first = append(first, row)
		} else {
			quiet = append(quiet, row)
		}
	}
	const (
		exh    = "exhaustive: trials; optimum (mean Mbit/s; start)"
		tuner  = "tuner: trials (share); kept, or reverted though significant (ratio, p)"
		ratios = "tuner / optimum: ratio of means, median pair ratio, geo. mean"
		pairs  = "per-pair ratios"
	)
	return map[string]string{
		"runs1-3": kit.Table([]string{"run", exh, tuner, ratios, pairs}, first),
		"runs4-9": kit.Table([]string{"run", "tuner", exh, tuner, ratios, pairs}, quiet),
	}, nil
}
