// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"fmt"
	"math"
	"sort"
)

// PairedRatios returns b[i]/a[i] for each pair: the ratio of two
// measurements taken next to each other (a repetition's variant over its
// base, "on" over "off"). a and b must be the same length.
func PairedRatios(a, b []float64) []float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("stats.PairedRatios: %d values against %d", len(a), len(b)))
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = b[i] / a[i]
	}
	return out
}

// PairByKey lines up two sets of measurements keyed by repetition: the
// values of the keys both have, in ascending key order.
func PairByKey(a, b map[int]float64) (as, bs []float64) {
	var keys []int
	for k := range b {
		if _, ok := a[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Ints(keys)
	for _, k := range keys {
		as, bs = append(as, a[k]), append(bs, b[k])
	}
	return as, bs
}

// RatioSummary describes paired ratios the way throughput is compared:
// on the logarithmic scale, where a ratio of 2 and one of 1/2 weigh the
// same.
type RatioSummary struct {
	N      int
	Median float64
	// GeoMean is the geometric mean, exp(mean(log ratio)); GeoLow and
	// GeoHigh bound its 95% Student-t interval (equal to GeoMean for N < 2).
	GeoMean, GeoLow, GeoHigh float64
	// P is the two-sided one-sample t-test of mean(log ratio) = 0 (that the
	// ratios centre on 1); NaN for N < 2.
	P float64
}

// SummarizeRatios summarizes ratios (as PairedRatios returns them); for
// none, N is 0 and every figure NaN.
func SummarizeRatios(ratios []float64) RatioSummary {
	if len(ratios) == 0 {
		nan := math.NaN()
		return RatioSummary{Median: nan, GeoMean: nan, GeoLow: nan, GeoHigh: nan, P: nan}
	}
	logs := make([]float64, len(ratios))
	for i, q := range ratios {
		logs[i] = math.Log(q)
	}
	s := Summarize(logs)
	r := RatioSummary{N: len(ratios), Median: Percentile(ratios, 50),
		GeoMean: math.Exp(s.Mean), GeoLow: math.Exp(s.CILow), GeoHigh: math.Exp(s.CIHigh), P: math.NaN()}
	if t, err := PairedT(make([]float64, len(logs)), logs); err == nil {
		r.P = t.P
	}
	return r
}
