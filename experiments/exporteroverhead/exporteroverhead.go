// SPDX-License-Identifier: Apache-2.0

// Package exporteroverhead recomputes docs/results.md's "Exporter overhead"
// table from the raw files exporter-overhead.sh wrote: each pair's two bench
// results (pairN-off.json.gz, pairN-on.json.gz), the exporter's CPU ticks
// (pairN-on.cputicks) and its scrapes (pairN-on.scrapes: seconds, bytes).
package exporteroverhead

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/stats"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "exporteroverhead", Tables: tables})
}

// The batches: the directory under data/ and the scrape interval its
// command gave (the plan, not a result).
var batches = []struct{ sub, scrape string }{
	{".", "2 s"},
	{"scrape1s", "1 s"},
}

// userHZ is the clock tick /proc/PID/stat counts in.
const userHZ = 100

func mbit(path string) (float64, error) {
	b, err := kit.ReadFile(path)
	if err != nil {
		return 0, err
	}
	r, err := bench.Decode(b, path)
	if err != nil {
		return 0, err
	}
	if len(r.Runs) != 1 || !r.Runs[0].Complete {
		return 0, fmt.Errorf("%s: want one complete run", path)
	}
	return r.Runs[0].Throughput["send"].Mbit, nil
}

// scrapes returns the median scrape time of one run, in seconds.
func scrapes(path string) (float64, error) {
	b, err := kit.ReadRaw(path)
	if err != nil {
		return 0, err
	}
	var ts []float64
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			return 0, fmt.Errorf("%s:%d: want 'seconds bytes'", path, i+1)
		}
		t, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		ts = append(ts, t)
	}
	return stats.Percentile(ts, 50), nil
}

func ticks(path string) (float64, error) {
	b, err := kit.ReadRaw(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return float64(n) / userHZ, nil
}

func batch(dir, scrape string) ([]string, error) {
	var offs, ons, cpu, scr []float64
	for p := 1; ; p++ {
		base := filepath.Join(dir, fmt.Sprintf("pair%d-", p))
		if _, err := kit.Stat(base + "off.json.gz"); os.IsNotExist(err) && p > 1 {
			break
		}
		off, err := mbit(base + "off.json.gz")
		if err != nil {
			return nil, err
		}
		on, err := mbit(base + "on.json.gz")
		if err != nil {
			return nil, err
		}
		c, err := ticks(base + "on.cputicks")
		if err != nil {
			return nil, err
		}
		s, err := scrapes(base + "on.scrapes")
		if err != nil {
			return nil, err
		}
		offs, ons = append(offs, off), append(ons, on)
		cpu, scr = append(cpu, c), append(scr, s)
	}
	ratios := stats.PairedRatios(offs, ons)
	per := make([]string, len(ratios))
	for i, r := range ratios {
		per[i] = fmt.Sprintf("%.3f", r)
	}
	return []string{
		scrape,
		fmt.Sprint(len(ratios)),
		fmt.Sprintf("%.0f / %.0f", stats.Percentile(offs, 50), stats.Percentile(ons, 50)),
		strings.Join(per, " "),
		fmt.Sprintf("%.3f (%.3f-%.3f)", stats.Percentile(ratios, 50), stats.Percentile(ratios, 25), stats.Percentile(ratios, 75)),
		fmt.Sprintf("%.3f", stats.Mean(ratios)),
		fmt.Sprintf("%.3g s", stats.Percentile(cpu, 50)),
		fmt.Sprintf("%.0f ms", 1000*stats.Percentile(scr, 50)),
	}, nil
}

func tables(dir string) (map[string]string, error) {
	var rows [][]string
	for _, b := range batches {
		row, err := batch(filepath.Join(dir, "data", b.sub), b.scrape)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return map[string]string{"pairs": kit.Table([]string{"scrape every", "pairs", "median off / on Mbit/s",
		"on/off per pair, in order", "on/off median (IQR)", "mean", "exporter CPU per run, median",
		"scrape wall time, median of the runs' medians"}, rows)}, nil
}
