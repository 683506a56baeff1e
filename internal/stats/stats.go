// SPDX-License-Identifier: Apache-2.0

// Package stats holds the statistics wirespeed reports: summaries with a
// Student-t confidence interval, percentiles, Welch's unequal-variance and
// the paired t-test, and paired ratios summarized on the log scale. The t
// distribution is computed here from the regularized incomplete beta
// function (no external math library).
package stats

import (
	"errors"
	"math"
	"sort"
)

// Mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Variance is the sample variance (n-1 denominator; NaN for n < 2).
func Variance(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// Stdev is the sample standard deviation.
func Stdev(xs []float64) float64 { return math.Sqrt(Variance(xs)) }

// Percentile returns the p-th percentile (0..100) by linear interpolation
// between closest ranks (the "R-7" / numpy default definition).
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []float64, p float64) float64 {
	if p <= 0 {
		return s[0]
	}
	if p >= 100 {
		return s[len(s)-1]
	}
	h := (float64(len(s)) - 1) * p / 100
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// Summary describes repeated measurements of one metric.
type Summary struct {
	N     int     `json:"n"`
	Mean  float64 `json:"mean"`
	Stdev float64 `json:"stdev,omitempty"`
	// CILow and CIHigh bound the 95% confidence interval of the mean
	// (Student t with n-1 degrees of freedom); equal to Mean for n < 2.
	CILow  float64 `json:"ci95_low"`
	CIHigh float64 `json:"ci95_high"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize computes a Summary; NaN values are skipped.
func Summarize(xs []float64) Summary {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	s := Summary{N: len(v)}
	if len(v) == 0 {
		return s
	}
	s.Mean = Mean(v)
	s.Min, s.Max = v[0], v[0]
	for _, x := range v {
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.CILow, s.CIHigh = s.Mean, s.Mean
	if len(v) >= 2 {
		s.Stdev = Stdev(v)
		half := TQuantile(0.975, float64(len(v)-1)) * s.Stdev / math.Sqrt(float64(len(v)))
		s.CILow, s.CIHigh = s.Mean-half, s.Mean+half
	}
	return s
}

// RegIncBeta is the regularized incomplete beta function I_x(a, b), from its
// continued fraction evaluated with the modified Lentz method.
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case math.IsNaN(x) || a <= 0 || b <= 0:
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	// The continued fraction converges fast for x < (a+1)/(a+b+2); use the
	// symmetry I_x(a,b) = 1 - I_{1-x}(b,a) otherwise.
	if x > (a+1)/(a+b+2) {
		return 1 - RegIncBeta(1-x, b, a)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	// front = x^a (1-x)^b / (a B(a,b))
	front := math.Exp(a*math.Log(x)+b*math.Log1p(-x)+lab-la-lb) / a
	const tiny = 1e-300
	f, c, d := 1.0, 1.0, 0.0
	for i := 0; i <= 400; i++ {
		m := float64(i / 2)
		var num float64
		switch {
		case i == 0:
			num = 1
		case i%2 == 0:
			num = m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		default:
			num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		}
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		d = 1 / d
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		cd := c * d
		f *= cd
		if math.Abs(1-cd) < 1e-15 {
			break
		}
	}
	return front * (f - 1)
}

// TCDF is the cumulative distribution function of Student's t with df
// degrees of freedom (df > 0, not necessarily an integer).
func TCDF(t, df float64) float64 {
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	tail := 0.5 * RegIncBeta(df/(df+t*t), df/2, 0.5)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// TQuantile is the inverse of TCDF: the t with TCDF(t, df) = p.
func TQuantile(p, df float64) float64 {
	if p <= 0 || p >= 1 || df <= 0 {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// TTest is the outcome of a t-test of a mean difference: Welch's
// (two independent samples) or the paired one.
type TTest struct {
	Diff float64 `json:"diff"` // mean(b) - mean(a), or mean(b[i] - a[i])
	T    float64 `json:"t"`
	DF   float64 `json:"df"`
	P    float64 `json:"p"` // two-sided
	// CILow and CIHigh bound the 95% confidence interval of Diff.
	CILow  float64 `json:"ci95_low"`
	CIHigh float64 `json:"ci95_high"`
}

// ErrTooFew is returned when a sample has fewer than two values.
var ErrTooFew = errors.New("need at least two values on each side for a t-test (use --repeat 2 or more)")

// Welch runs Welch's unequal-variance t-test of mean(b) - mean(a).
func Welch(a, b []float64) (TTest, error) {
	if len(a) < 2 || len(b) < 2 {
		return TTest{}, ErrTooFew
	}
	na, nb := float64(len(a)), float64(len(b))
	va, vb := Variance(a)/na, Variance(b)/nb
	r := TTest{Diff: Mean(b) - Mean(a), DF: na + nb - 2}
	if va+vb > 0 {
		r.DF = (va + vb) * (va + vb) / (va*va/(na-1) + vb*vb/(nb-1))
	}
	return r.finish(math.Sqrt(va + vb)), nil
}

// PairedT is the paired t-test of b[i] - a[i] (two-sided), for designs that
// measure A and B next to each other (interleaved repetitions): the noise
// both share cancels. DF is n-1; CI bounds the mean difference.
func PairedT(a, b []float64) (TTest, error) {
	if len(a) != len(b) {
		return TTest{}, errors.New("paired t-test: samples of different length")
	}
	if len(a) < 2 {
		return TTest{}, ErrTooFew
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = b[i] - a[i]
	}
	n := float64(len(d))
	r := TTest{Diff: Mean(d), DF: n - 1}
	return r.finish(Stdev(d) / math.Sqrt(n)), nil
}

// finish computes T, P and the interval from Diff, DF and the standard
// error se.
func (r TTest) finish(se float64) TTest {
	if se == 0 {
		// No spread at all: any difference is certain, none is nothing.
		r.CILow, r.CIHigh = r.Diff, r.Diff
		if r.Diff == 0 {
			r.P = 1
		} else {
			r.T = math.Copysign(math.MaxFloat64, r.Diff) // "infinite", but JSON-safe
		}
		return r
	}
	r.T = r.Diff / se
	r.P = RegIncBeta(r.DF/(r.DF+r.T*r.T), r.DF/2, 0.5)
	half := TQuantile(0.975, r.DF) * se
	r.CILow, r.CIHigh = r.Diff-half, r.Diff+half
	return r
}
