// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

func TestRegIncBeta(t *testing.T) {
	// I_0.5(2,3) = sum_{j=2}^{4} C(4,j)/16 = 11/16 (binomial identity).
	near(t, "I_0.5(2,3)", RegIncBeta(0.5, 2, 3), 11.0/16, 1e-12)
	// I_x(1,1) = x; I_x(a,1) = x^a.
	near(t, "I_0.3(1,1)", RegIncBeta(0.3, 1, 1), 0.3, 1e-12)
	near(t, "I_0.7(3,1)", RegIncBeta(0.7, 3, 1), 0.343, 1e-12)
	// Symmetry I_x(a,b) = 1 - I_{1-x}(b,a), on both branches.
	near(t, "symmetry", RegIncBeta(0.9, 2.5, 7)+RegIncBeta(0.1, 7, 2.5), 1, 1e-12)
	near(t, "I_0", RegIncBeta(0, 2, 3), 0, 0)
	near(t, "I_1", RegIncBeta(1, 2, 3), 1, 0)
}

func TestTDistributionTable(t *testing.T) {
	// Two-sided 95% critical values of Student's t (standard tables).
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706}, {2, 4.303}, {3, 3.182}, {5, 2.571}, {10, 2.228}, {30, 2.042}, {120, 1.980},
	} {
		near(t, "t_0.975", TQuantile(0.975, c.df), c.want, 0.0006)
	}
	// One-sided 95% and 99.5%.
	near(t, "t_0.95(5)", TQuantile(0.95, 5), 2.015, 0.0006)
	near(t, "t_0.995(20)", TQuantile(0.995, 20), 2.845, 0.0006)
	near(t, "t_0.025(10)", TQuantile(0.025, 10), -2.228, 0.0006)
	// CDF from numeric integration of the density.
	near(t, "TCDF(2,10)", TCDF(2, 10), 0.963306, 1e-6)
	near(t, "TCDF(-2,10)", TCDF(-2, 10), 1-0.963306, 1e-6)
	near(t, "TCDF(0,3)", TCDF(0, 3), 0.5, 1e-12)
	// df=1 is Cauchy: CDF(1) = 3/4.
	near(t, "TCDF(1,1)", TCDF(1, 1), 0.75, 1e-12)
}

func TestWelch(t *testing.T) {
	// Welch's t-test example (Wikipedia, "Welch's t-test", example 1);
	// t, df and p checked by direct numeric integration of the t density.
	a := []float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
	b := []float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
	w, err := Welch(a, b)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t", w.T, 2.455356, 1e-5)
	near(t, "df", w.DF, 24.988529, 1e-5)
	near(t, "p", w.P, 0.021378, 1e-5)
	if !(w.CILow > 0 && w.CIHigh > w.CILow) {
		t.Errorf("CI of a significant positive difference = [%g, %g], want it above 0", w.CILow, w.CIHigh)
	}
	// Swapping the samples flips the sign, not p.
	w2, _ := Welch(b, a)
	near(t, "t swapped", w2.T, -2.455356, 1e-5)
	near(t, "p swapped", w2.P, 0.021378, 1e-5)
	if _, err := Welch([]float64{1}, b); err == nil {
		t.Error("Welch with one value: no error")
	}
	same, _ := Welch([]float64{5, 5, 5}, []float64{5, 5})
	near(t, "p of identical constants", same.P, 1, 0)
}

func TestSummarizeAndPercentile(t *testing.T) {
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	s := Summarize(xs)
	near(t, "mean", s.Mean, 5, 1e-12)
	near(t, "stdev", s.Stdev, math.Sqrt(32.0/7), 1e-12)
	half := 2.364624 * math.Sqrt(32.0/7) / math.Sqrt(8) // t_0.975(7) = 2.364624
	near(t, "ci low", s.CILow, 5-half, 1e-5)
	near(t, "ci high", s.CIHigh, 5+half, 1e-5)
	if s.Min != 2 || s.Max != 9 || s.N != 8 {
		t.Errorf("min/max/n = %g/%g/%d", s.Min, s.Max, s.N)
	}
	// numpy.percentile([1..10], [50, 90, 99]) = 5.5, 9.1, 9.91
	ten := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	near(t, "p50", Percentile(ten, 50), 5.5, 1e-12)
	near(t, "p90", Percentile(ten, 90), 9.1, 1e-12)
	near(t, "p99", Percentile(ten, 99), 9.91, 1e-12)
	near(t, "p100", Percentile(ten, 100), 10, 0)
	one := Summarize([]float64{3, math.NaN()})
	if one.N != 1 || one.CILow != 3 || one.CIHigh != 3 {
		t.Errorf("single value summary = %+v", one)
	}
}

func TestPairedT(t *testing.T) {
	// Differences 1, 2, 3, 4, 5: mean 3, sd sqrt(2.5), t = 3/(sqrt(2.5)/sqrt(5)) = 4.2426, df 4;
	// two-sided p = 0.013236 (numeric integration of the t density; between the table's
	// t_0.99(4) = 3.747 and t_0.995(4) = 4.604).
	a := []float64{10, 25, 12, 40, 31}
	b := []float64{11, 27, 15, 44, 36}
	r, err := PairedT(a, b)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t", r.T, 4.242641, 1e-6)
	near(t, "df", r.DF, 4, 0)
	near(t, "p", r.P, 0.013236, 1e-5)
	// The same numbers unpaired are far from significant: the pairing is what helps.
	w, _ := Welch(a, b)
	if w.P < 0.5 {
		t.Errorf("unpaired p = %g, want > 0.5", w.P)
	}
	if _, err := PairedT(a, b[:3]); err == nil {
		t.Error("different lengths accepted")
	}
}
