// SPDX-License-Identifier: Apache-2.0

package selfbench

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
	"github.com/wirespeed/wirespeed/internal/stats"
)

// canaryReading is the part of canary's JSON the table uses.
type canaryReading struct {
	IterationsPerS float64 `json:"iterations_per_s"`
	CopyMbytePerS  float64 `json:"copy_mbyte_per_s"`
	StealTicks     int64   `json:"steal_ticks"`
}

// canaryFile is canary-MODE-N.json: the readings just before and just after
// full-rate bench run MODE-N.
type canaryFile struct {
	Before canaryReading `json:"before"`
	After  canaryReading `json:"after"`
}

// canaryPoint is one full-rate run with its canary readings.
type canaryPoint struct {
	mode       string
	rep        int
	mbit       float64
	hash, copy float64 // the mean of the two readings
	hashDrift  float64 // after/before - 1
}

// readCanary pairs each canary-MODE-N.json with bench-MODE-N.json.gz.
func readCanary(d string) ([]canaryPoint, error) {
	files, err := kit.Glob(filepath.Join(d, "canary-*.json"))
	if err != nil {
		return nil, err
	}
	mbit := map[string]map[int]float64{}
	var out []canaryPoint
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "canary-"), ".json")
		i := strings.LastIndexByte(name, '-')
		rep, err := strconv.Atoi(name[i+1:])
		if i <= 0 || err != nil {
			return nil, fmt.Errorf("%s: not canary-MODE-N.json", f)
		}
		mode := name[:i]
		if mbit[mode] == nil {
			if mbit[mode], err = throughputs(d, mode); err != nil {
				return nil, err
			}
		}
		t, ok := mbit[mode][rep]
		if !ok {
			return nil, fmt.Errorf("%s: no bench-%s-%d.json.gz", f, mode, rep)
		}
		var c canaryFile
		if err := kit.ReadJSON(f, &c); err != nil {
			return nil, err
		}
		if c.Before.IterationsPerS <= 0 || c.After.IterationsPerS <= 0 {
			return nil, fmt.Errorf("%s: no iterations_per_s before and after", f)
		}
		out = append(out, canaryPoint{mode: mode, rep: rep, mbit: t,
			hash:      (c.Before.IterationsPerS + c.After.IterationsPerS) / 2,
			copy:      (c.Before.CopyMbytePerS + c.After.CopyMbytePerS) / 2,
			hashDrift: c.After.IterationsPerS/c.Before.IterationsPerS - 1})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].mode != out[j].mode {
			return out[i].mode < out[j].mode
		}
		return out[i].rep < out[j].rep
	})
	return out, nil
}

// Pearson returns the correlation coefficient of xs and ys and its
// two-sided p value (t = r sqrt((n-2)/(1-r^2)), n-2 degrees of freedom);
// NaN for fewer than three pairs or a constant series.
func Pearson(xs, ys []float64) (r, p float64) {
	n := len(xs)
	if n != len(ys) || n < 3 {
		return math.NaN(), math.NaN()
	}
	mx, my := stats.Mean(xs), stats.Mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN(), math.NaN()
	}
	r = sxy / math.Sqrt(sxx*syy)
	if r >= 1 || r <= -1 {
		return r, 0
	}
	t := r * math.Sqrt(float64(n-2)/(1-r*r))
	return r, 2 * (1 - stats.TCDF(math.Abs(t), float64(n-2)))
}

// CoV is the coefficient of variation (sample stdev / mean), NaN below two.
func CoV(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	return stats.Stdev(xs) / stats.Mean(xs)
}

func pctCell(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", x*100)
}

func rCell(xs, ys []float64) string {
	r, p := Pearson(xs, ys)
	if math.IsNaN(r) {
		return fmt.Sprintf("- (n = %d)", len(xs))
	}
	return fmt.Sprintf("r = %+.2f (n = %d, p = %.2f)", r, len(xs), p)
}

const offLabel = "off runs"

// hostVerdict applies the rule the README fixed before the first run: the
// drift is the host's speed when throughput / canary spreads at most half
// as much as throughput (CoV) and throughput rises with the canary
// (Pearson r > 0, p < 0.05); it is not when the ratio spreads as much as
// throughput or more; anything between is undecided.
func hostVerdict(mbit, hash []float64) string {
	per := make([]float64, len(mbit))
	for i := range mbit {
		per[i] = mbit[i] / hash[i]
	}
	ct, cr := CoV(mbit), CoV(per)
	r, p := Pearson(mbit, hash)
	switch {
	case math.IsNaN(ct) || math.IsNaN(r):
		return fmt.Sprintf("undecided: too few runs (n = %d)", len(mbit))
	case cr <= ct/2 && r > 0 && p < 0.05:
		return "**yes**: the ratio's CoV is at most half the throughput's, r > 0 at p < 0.05"
	case cr >= ct:
		return "**no**: the ratio spreads as much as throughput or more"
	}
	return fmt.Sprintf("undecided at n = %d", len(mbit))
}

// canaryTable: does bench's run-to-run drift follow the host's speed? Each
// full-rate run's throughput against the mean of the canary readings just
// before and just after it; the off runs alone (no observation cost in the
// spread), then all modes pooled.
func canaryTable(d string) (string, error) {
	env, valid, err := validity(d)
	if err != nil {
		return "", err
	}
	pts, err := readCanary(d)
	if err != nil {
		return "", err
	}
	rows := [][]string{{"valid (idle before the run)", "-", valid}}
	group := func(label string, keep func(canaryPoint) bool) {
		var mbit, hash, copyRate, perHash, perCopy, drift []float64
		var each []string
		for _, p := range pts {
			if !keep(p) {
				continue
			}
			mbit = append(mbit, p.mbit)
			hash = append(hash, p.hash)
			perHash = append(perHash, p.mbit/p.hash)
			drift = append(drift, math.Abs(p.hashDrift))
			if p.copy > 0 {
				copyRate = append(copyRate, p.copy)
				perCopy = append(perCopy, p.mbit/p.copy)
			}
			each = append(each, fmt.Sprintf("%.0f/%.0f", p.mbit, p.hash))
		}
		if len(mbit) == 0 {
			return
		}
		rows = append(rows,
			[]string{label + ": throughput / canary hashes per s, each run in order", "-", strings.Join(each, ", ")},
			[]string{label + ": CoV of throughput", "-", pctCell(CoV(mbit))},
			[]string{label + ": CoV of the canary (hash)", "-", pctCell(CoV(hash))},
			[]string{label + ": canary's own change across a run, median abs(after/before - 1)", "-", pctCell(stats.Percentile(drift, 50))},
			[]string{label + ": CoV of throughput / canary (hash)", "-", pctCell(CoV(perHash))},
			[]string{label + ": throughput vs canary (hash), Pearson", "-", rCell(mbit, hash)},
		)
		if label == offLabel {
			rows = append(rows, []string{label + ": is the drift the host's speed?", "the README's rule", hostVerdict(mbit, hash)})
		}
		if len(copyRate) == len(mbit) {
			rows = append(rows,
				[]string{label + ": CoV of the canary (memory copy)", "-", pctCell(CoV(copyRate))},
				[]string{label + ": CoV of throughput / canary (memory copy)", "-", pctCell(CoV(perCopy))},
				[]string{label + ": throughput vs canary (memory copy), Pearson", "-", rCell(mbit, copyRate)},
			)
		}
	}
	group(offLabel, func(p canaryPoint) bool { return p.mode == "off" })
	group("all modes pooled", func(canaryPoint) bool { return true })
	if len(rows) == 1 {
		return "", fmt.Errorf("no canary-off-N.json")
	}
	return kit.Table([]string{"figure (full rate, host-speed canary)", "reading", "now (" + env.Before.Commit + ")"}, rows), nil
}
