// SPDX-License-Identifier: Apache-2.0

// Package makerun recomputes docs/results.md's "make run's repetitions"
// tables from the two bench results make run wrote, data/seed1-repeat*.json.gz,
// with bench's own headline (the paired ratio and its interval).
package makerun

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/stats"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "makerun", Tables: tables})
}

// The runs, in the order the tables list them.
var files = []string{"seed1-repeat8.json.gz", "seed1-repeat10.json.gz"}

var pRe = regexp.MustCompile(`p=([0-9.e+-]+)\)`)

func load(dir, name string) (*bench.Result, error) {
	path := filepath.Join(dir, "data", name)
	b, err := kit.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return bench.Decode(b, path)
}

// verdict is a headline as the table prints it: ratio, interval, and the
// paired test's p when the interval excludes 1.
func verdict(h bench.Headline) string {
	s := fmt.Sprintf("%.2fx [%.2f-%.2f]", h.Ratio, h.RatioLow, h.RatioHigh)
	if !h.Significant {
		return s + ": not shown"
	}
	m := pRe.FindStringSubmatch(h.Verdict)
	if m == nil {
		return s + ": decided"
	}
	return s + ", p=" + m[1] + ": decided"
}

func duration(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d m %02d s", int(d.Minutes()), int(d.Seconds())%60)
}

// repRatios is throughput(variant)/throughput(base) per repetition, in
// repetition order, over the complete runs (a base of 0 pairs with none).
func repRatios(r *bench.Result, base, variant string) []float64 {
	mbit := func(v string) map[int]float64 {
		byRep := map[int]float64{}
		for _, run := range r.Runs {
			if x := run.Metrics["send_mbit"]; run.Variant == v && run.Complete && (v != base || x > 0) {
				byRep[run.Rep] = x
			}
		}
		return byRep
	}
	return stats.PairedRatios(stats.PairByKey(mbit(base), mbit(variant)))
}

func tables(dir string) (map[string]string, error) {
	var main, reps [][]string
	for _, f := range files {
		r, err := load(dir, f)
		if err != nil {
			return nil, err
		}
		hs := bench.Headlines(r)
		if len(hs) != 3 || hs[0].Variant != "nogro" || hs[1].Variant != "gro" || hs[2].Variant != "threaded" {
			return nil, fmt.Errorf("%s: want the variants nogro, gro, threaded", f)
		}
		runs := 0
		for _, run := range r.Runs {
			if run.Complete {
				runs++
			}
		}
		main = append(main, []string{fmt.Sprint(r.Settings.Repeat), fmt.Sprint(runs),
			duration(r.Finished.Sub(r.Started)), verdict(hs[1]), verdict(hs[2])})
		for _, h := range hs[1:] {
			rs := repRatios(r, "nogro", h.Variant)
			cells := make([]string, len(rs))
			for i, x := range rs {
				cells[i] = fmt.Sprintf("%.2f", x)
			}
			s := stats.SummarizeRatios(rs)
			reps = append(reps, []string{fmt.Sprint(r.Settings.Repeat), h.Variant, strings.Join(cells, " "),
				fmt.Sprintf("%.2f", s.Median), fmt.Sprintf("%.2f", s.GeoMean)})
		}
	}
	return map[string]string{
		"headline": kit.Table([]string{"RUN_REPEAT", "runs", "bench time (result's start to end)",
			"gro vs nogro (paired, 95% interval)", "threaded vs nogro"}, main),
		"per-rep": kit.Table([]string{"RUN_REPEAT", "variant", "per-repetition ratios (variant / nogro)",
			"median", "geometric mean"}, reps),
	}, nil
}
