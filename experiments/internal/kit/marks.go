// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/stats"
)

// Median is the 50th percentile (the mean of the middle two for an even n).
func Median(xs []float64) float64 { return stats.Percentile(xs, 50) }

// F formats x with prec decimals.
func F(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// MarkSide is one boot of usbnet-marks.sh: V1 says it counts when vm.json
// is ok and the bench JSON is there.
type MarkSide struct {
	OK      bool
	Metrics map[string]float64
	NCPU    int
	NAPI    float64
}

func MarkRun(run, direction string) (MarkSide, error) {
	ok, err := VMOK(run)
	if err != nil || !ok {
		return MarkSide{}, err
	}
	r, err := FirstRun(run, direction)
	if err != nil || r == nil {
		return MarkSide{}, err
	}
	s := MarkSide{OK: true, Metrics: r.Metrics, NCPU: 2}
	if r.Load != nil {
		if len(r.Load.CPUs) > 0 {
			s.NCPU = len(r.Load.CPUs)
		}
		for _, t := range r.Load.NAPI {
			s.NAPI += t.CPUPct
		}
	}
	return s, nil
}

func (s MarkSide) Busy() float64 { return (100 - s.Metrics["cpu_idle_pct"]) * float64(s.NCPU) }

func (s MarkSide) Excess() float64 {
	return s.Metrics["icmp_load_p50_ms"] - s.Metrics["icmp_idle_p50_ms"]
}

var (
	sampleRe  = regexp.MustCompile(`limit=(\d+) inflight=(\d+)`)
	backlogRe = regexp.MustCompile(`backlog (\d+)b`)
)

// queueSamples reads queue-samples.txt: BQL limit, inflight and qdisc backlog.
func queueSamples(run string) (limit, inflight, backlog []float64, err error) {
	b, err := ReadRaw(filepath.Join(run, "queue-samples.txt"))
	if err != nil {
		return nil, nil, nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m := sampleRe.FindStringSubmatch(l); m != nil {
			a, _ := strconv.ParseFloat(m[1], 64)
			c, _ := strconv.ParseFloat(m[2], 64)
			limit = append(limit, a)
			inflight = append(inflight, c)
		}
		if m := backlogRe.FindStringSubmatch(l); m != nil {
			a, _ := strconv.ParseFloat(m[1], 64)
			backlog = append(backlog, a)
		}
	}
	return limit, inflight, backlog, nil
}

// LimitRange renders BQL limit samples as "min..max (distinct values)".
func LimitRange(limit []float64) string {
	if len(limit) == 0 {
		return "-"
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	distinct := map[float64]bool{}
	for _, v := range limit {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		distinct[v] = true
	}
	return fmt.Sprintf("%.0f..%.0f (%d)", lo, hi, len(distinct))
}

// BQLPair is one valid pair of the BQL mark (V1: both boots ok with a bench JSON).
type BQLPair struct {
	Pair                  int
	StockMbit, OursMbit   float64
	StockIdle, StockLoad  float64
	OursIdle, OursLoad    float64
	ExcessRatio, TPRatio  float64
	Limit, Inflight, Back []float64
}

// BQLPairs reads the bql-stock-N / bql-ours-N boots of a usbnet-marks.sh run
// and applies the validity rules fixed before round 2's runs: V1 a pair
// counts only when both boots completed and wrote their bench JSON; V3 with
// tcg-icount the guest's clock counts instructions and no pair is dropped
// for host load, with any other accel a pair whose boots' host load
// averages (host-top.txt) differ by more than 2 is dropped.
func BQLPairs(dir string) ([]BQLPair, error) {
	reps, err := Reps(dir, "bql-stock")
	if err != nil {
		return nil, err
	}
	var out []BQLPair
	for _, i := range reps {
		an, bn := filepath.Join(dir, fmt.Sprintf("bql-stock-%d", i)), filepath.Join(dir, fmt.Sprintf("bql-ours-%d", i))
		a, err := MarkRun(an, "send")
		if err != nil {
			return nil, err
		}
		b, err := MarkRun(bn, "send")
		if err != nil {
			return nil, err
		}
		if !a.OK || !b.OK {
			continue // V1
		}
		if drop, err := hostLoadsDiffer(an, bn); err != nil {
			return nil, err
		} else if drop {
			continue // V3
		}
		lim, inf, back, err := queueSamples(bn)
		if err != nil {
			return nil, err
		}
		out = append(out, BQLPair{
			Pair: i, StockMbit: a.Metrics["send_mbit"], OursMbit: b.Metrics["send_mbit"],
			StockIdle: a.Metrics["icmp_idle_p50_ms"], StockLoad: a.Metrics["icmp_load_p50_ms"],
			OursIdle: b.Metrics["icmp_idle_p50_ms"], OursLoad: b.Metrics["icmp_load_p50_ms"],
			ExcessRatio: b.Excess() / a.Excess(), TPRatio: b.Metrics["send_mbit"] / a.Metrics["send_mbit"],
			Limit: lim, Inflight: inf, Back: back,
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no valid bql pair", dir)
	}
	return out, nil
}

var loadRe = regexp.MustCompile(`load average: ([0-9.]+)`)

// hostLoadsDiffer is V3 for a pair of boots.
func hostLoadsDiffer(a, b string) (bool, error) {
	var accel struct {
		Accel string `json:"accel"`
	}
	raw, err := ReadRaw(filepath.Join(a, "vm.json"))
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(raw, &accel); err != nil {
		return false, fmt.Errorf("%s/vm.json: %w", a, err)
	}
	if strings.Contains(accel.Accel, "icount") {
		return false, nil
	}
	var loads []float64
	for _, run := range []string{a, b} {
		t, err := ReadRaw(filepath.Join(run, "host-top.txt"))
		if os.IsNotExist(err) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		m := loadRe.FindSubmatch(t)
		if m == nil {
			return false, nil
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		loads = append(loads, v)
	}
	return math.Abs(loads[0]-loads[1]) > 2, nil
}

// IdlePcts returns bench's guest idle % under load of every boot of a
// usbnet-marks.sh BQL run that wrote a bench JSON.
func IdlePcts(dir string) ([]float64, error) {
	var out []float64
	for _, v := range []string{"stock", "ours"} {
		reps, err := Reps(dir, "bql-"+v)
		if err != nil {
			return nil, err
		}
		for _, i := range reps {
			r, err := FirstRun(filepath.Join(dir, fmt.Sprintf("bql-%s-%d", v, i)), "send")
			if err != nil {
				return nil, err
			}
			if r != nil {
				out = append(out, r.Metrics["cpu_idle_pct"])
			}
		}
	}
	return out, nil
}

// LimitSamples is a boot's BQL limit samples (queue-samples.txt), for a
// stock side that has BQL of its own (7.x).
func LimitSamples(run string) ([]float64, error) {
	limit, _, _, err := queueSamples(run)
	return limit, err
}
