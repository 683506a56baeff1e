// SPDX-License-Identifier: Apache-2.0

package stats

import (
	"math"
	"reflect"
	"testing"
)

func TestPairedRatios(t *testing.T) {
	got := PairedRatios([]float64{100, 200, 50}, []float64{110, 180, 60})
	want := []float64{1.1, 0.9, 1.2}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("PairedRatios = %v, want %v", got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("PairedRatios of different lengths did not panic")
		}
	}()
	PairedRatios([]float64{1, 2}, []float64{1})
}

func TestPairByKey(t *testing.T) {
	off := map[int]float64{1: 10, 2: 20, 3: 30, 5: 50}
	on := map[int]float64{3: 33, 1: 11, 4: 44, 5: 55}
	a, b := PairByKey(off, on)
	if !reflect.DeepEqual(a, []float64{10, 30, 50}) || !reflect.DeepEqual(b, []float64{11, 33, 55}) {
		t.Errorf("PairByKey = %v, %v; want the keys 1, 3, 5 in order", a, b)
	}
	if a, b := PairByKey(off, nil); a != nil || b != nil {
		t.Errorf("PairByKey with nothing on one side = %v, %v", a, b)
	}
}

func TestSummarizeRatios(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

	// 2 and 1/2 cancel on the log scale: the geometric mean is 1, where
	// the arithmetic mean would say 1.25.
	s := SummarizeRatios([]float64{2, 0.5})
	if s.N != 2 || !near(s.GeoMean, 1) || !near(s.Median, 1.25) || !near(s.P, 1) {
		t.Errorf("SummarizeRatios(2, 0.5) = %+v, want geometric mean 1, median 1.25, p 1", s)
	}

	a, b := []float64{100, 200, 50, 80}, []float64{110, 180, 60, 96}
	s = SummarizeRatios(PairedRatios(a, b))
	if want := math.Pow(1.1*0.9*1.2*1.2, 0.25); !near(s.GeoMean, want) {
		t.Errorf("GeoMean = %v, want %v", s.GeoMean, want)
	}
	if !near(s.Median, 1.15) {
		t.Errorf("Median = %v, want 1.15", s.Median)
	}
	// The interval is symmetric around the geometric mean on the log
	// scale, and the test is the paired t-test of the logarithms.
	if !(s.GeoLow < s.GeoMean && s.GeoMean < s.GeoHigh) || !near(s.GeoLow*s.GeoHigh, s.GeoMean*s.GeoMean) {
		t.Errorf("interval %v .. %v around %v", s.GeoLow, s.GeoHigh, s.GeoMean)
	}
	la, lb := make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		la[i], lb[i] = math.Log(a[i]), math.Log(b[i])
	}
	tt, err := PairedT(la, lb)
	if err != nil || !near(s.P, tt.P) || !near(math.Log(s.GeoLow), tt.CILow) {
		t.Errorf("P %v, low %v; the paired t-test of the logs says %+v (%v)", s.P, s.GeoLow, tt, err)
	}

	one := SummarizeRatios([]float64{1.5})
	if one.N != 1 || !near(one.GeoMean, 1.5) || one.GeoLow != one.GeoMean || one.GeoHigh != one.GeoMean || !math.IsNaN(one.P) {
		t.Errorf("one ratio: %+v, want 1.5 with no interval and no p", one)
	}
	if none := SummarizeRatios(nil); none.N != 0 || !math.IsNaN(none.GeoMean) || !math.IsNaN(none.Median) {
		t.Errorf("no ratios: %+v", none)
	}
}
