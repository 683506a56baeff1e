// SPDX-License-Identifier: Apache-2.0

// Package usbnetround2 recomputes docs/results.md's tables of usbnet round 2
// (issue 12): the BQL and capped-RX marks, threaded polling, and RX beyond
// the capped loop, from the boots' raw files under data/.
package usbnetround2

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/mdtab"
	"github.com/wirespeed/wirespeed/internal/stats"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "usbnet-round2", Tables: tables})
}

func tables(dir string) (map[string]string, error) {
	d := filepath.Join(dir, "data")
	out := map[string]string{}
	var err error
	if out["bql"], err = bqlTable(filepath.Join(d, "marks-2026-11-22")); err != nil {
		return nil, err
	}
	if out["rx"], err = rxCappedTable(filepath.Join(d, "marks-2026-11-22")); err != nil {
		return nil, err
	}
	if out["threaded"], err = threadedTable(filepath.Join(d, "threaded-2026-11-22")); err != nil {
		return nil, err
	}
	if out["rx-uncapped"], err = rxUncappedTable(filepath.Join(d, "rx-2026-11-23")); err != nil {
		return nil, err
	}
	if out["rx-usb-nic"], err = rxNICTable(filepath.Join(d, "rx-2026-11-23")); err != nil {
		return nil, err
	}
	return out, nil
}

// Median is the 50th percentile (the mean of the middle two for an even n).
func Median(xs []float64) float64 { return stats.Percentile(xs, 50) }

// F formats x with prec decimals.
func F(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// markSide is one boot of usbnet-marks.sh: V1 says it counts when vm.json
// is ok and the bench JSON is there.
type markSide struct {
	ok      bool
	metrics map[string]float64
	ncpu    int
	napi    float64
}

func markRun(run, direction string) (markSide, error) {
	ok, err := VMOK(run)
	if err != nil || !ok {
		return markSide{}, err
	}
	r, err := FirstRun(run, direction)
	if err != nil || r == nil {
		return markSide{}, err
	}
	s := markSide{ok: true, metrics: r.Metrics, ncpu: 2}
	if r.Load != nil {
		if len(r.Load.CPUs) > 0 {
			s.ncpu = len(r.Load.CPUs)
		}
		for _, t := range r.Load.NAPI {
			s.napi += t.CPUPct
		}
	}
	return s, nil
}

func (s markSide) busy() float64 { return (100 - s.metrics["cpu_idle_pct"]) * float64(s.ncpu) }

func (s markSide) excess() float64 {
	return s.metrics["icmp_load_p50_ms"] - s.metrics["icmp_idle_p50_ms"]
}

var (
	sampleRe  = regexp.MustCompile(`limit=(\d+) inflight=(\d+)`)
	backlogRe = regexp.MustCompile(`backlog (\d+)b`)
)

// queueSamples reads queue-samples.txt: BQL limit, inflight and qdisc backlog.
func queueSamples(run string) (limit, inflight, backlog []float64, err error) {
	b, err := os.ReadFile(filepath.Join(run, "queue-samples.txt"))
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
		a, err := markRun(an, "send")
		if err != nil {
			return nil, err
		}
		b, err := markRun(bn, "send")
		if err != nil {
			return nil, err
		}
		if !a.ok || !b.ok {
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
			Pair: i, StockMbit: a.metrics["send_mbit"], OursMbit: b.metrics["send_mbit"],
			StockIdle: a.metrics["icmp_idle_p50_ms"], StockLoad: a.metrics["icmp_load_p50_ms"],
			OursIdle: b.metrics["icmp_idle_p50_ms"], OursLoad: b.metrics["icmp_load_p50_ms"],
			ExcessRatio: b.excess() / a.excess(), TPRatio: b.metrics["send_mbit"] / a.metrics["send_mbit"],
			Limit: lim, Inflight: inf, Back: back,
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no valid bql pair", dir)
	}
	return out, nil
}

func bqlTable(dir string) (string, error) {
	pairs, err := BQLPairs(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{
			strconv.Itoa(p.Pair), F(p.StockMbit, 1), F(p.OursMbit, 1),
			fmt.Sprintf("%.2f / %.2f (%.2f)", p.StockIdle, p.StockLoad, p.StockLoad-p.StockIdle),
			fmt.Sprintf("%.2f / %.2f (%.2f)", p.OursIdle, p.OursLoad, p.OursLoad-p.OursIdle),
			F(p.ExcessRatio, 3), F(p.TPRatio, 3),
			fmt.Sprintf("%.0f KB", Median(p.Back)/1000),
			fmt.Sprintf("%s, %.0f KB", LimitRange(p.Limit), Median(p.Inflight)/1000),
		})
	}
	n := len(pairs[0].Limit)
	return mdtab.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "stock idle / load p50 ms (excess)", "ours idle / load p50 ms (excess)",
		"excess ours/stock", "throughput ours/stock", "ours qdisc backlog median",
		fmt.Sprintf("ours BQL limit (distinct values in %d samples), inflight median", n)}, rows), nil
}

func rxCappedTable(dir string) (string, error) {
	reps, err := Reps(dir, "rx-stock")
	if err != nil {
		return "", err
	}
	var rows [][]string
	first := ""
	for _, i := range reps {
		an, bn := filepath.Join(dir, fmt.Sprintf("rx-stock-%d", i)), filepath.Join(dir, fmt.Sprintf("rx-ours-%d", i))
		a, err := markRun(an, "receive")
		if err != nil {
			return "", err
		}
		b, err := markRun(bn, "receive")
		if err != nil {
			return "", err
		}
		if !a.ok || !b.ok {
			continue // V1
		}
		ta, tb := a.metrics["receive_mbit"], b.metrics["receive_mbit"]
		if math.Abs(tb/ta-1) > 0.05 {
			continue // V2: not equal work
		}
		ca, cb := a.busy()/ta, b.busy()/tb
		sa, sb := a.metrics["cpu_softirq_pct"]/ta, b.metrics["cpu_softirq_pct"]/tb
		pa, pb, gro, err := rxPaths(an, bn)
		if err != nil {
			return "", err
		}
		path := fmt.Sprintf("%s -> %s, %.2f", pa, pb, gro)
		if first == "" {
			first = pa + " -> " + pb
		} else if first == pa+" -> "+pb {
			path = fmt.Sprintf("same, %.2f", gro)
		}
		rows = append(rows, []string{strconv.Itoa(i), F(ta, 1), F(tb, 1),
			fmt.Sprintf("%.0f (%.3f)", a.busy(), ca), fmt.Sprintf("%.0f (%.3f)", b.busy(), cb),
			F(cb/ca, 3), F(sb/sa, 3), path})
	}
	return mdtab.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "stock busy % (per Mbit/s)", "ours busy % (per Mbit/s)",
		"busy per Mbit/s ours/stock", "softirq per Mbit/s ours/stock", "RX path (observe), GRO ratio (ours)"}, rows), nil
}

// rxPaths returns observe's RX path of the receiving device in both boots
// and ours' GRO ratio.
func rxPaths(stock, ours string) (string, string, float64, error) {
	var paths [2]string
	var gro float64
	for k, run := range []string{stock, ours} {
		r, err := FirstRun(run, "receive")
		if err != nil {
			return "", "", 0, err
		}
		devs, err := Observed(r)
		if err != nil {
			return "", "", 0, err
		}
		for _, d := range devs {
			if d.RXPath != "" && d.Name != "(no_device)" {
				// "netif_rx backlog (no NAPI, no GRO)": the table names the path only
				path, _, _ := strings.Cut(d.RXPath, " (")
				paths[k], gro = path, d.GRORatio
			}
		}
	}
	return paths[0], paths[1], gro, nil
}

func threadedTable(dir string) (string, error) {
	var rx, bql [2]markSide
	for k, v := range []string{"thron", "throff"} {
		var err error
		if rx[k], err = markRun(filepath.Join(dir, "rx-"+v+"-1"), "receive"); err != nil {
			return "", err
		}
		if bql[k], err = markRun(filepath.Join(dir, "bql-"+v+"-1"), "send"); err != nil {
			return "", err
		}
		if !rx[k].ok || !bql[k].ok {
			return "", fmt.Errorf("%s: the %s boots did not complete", dir, v)
		}
	}
	per := func(s markSide) float64 { return s.busy() / s.metrics["receive_mbit"] }
	busy := func(s markSide) string {
		if s.napi > 0 {
			return fmt.Sprintf("%.1f (NAPI thread %.1f)", s.busy(), s.napi)
		}
		return F(s.busy(), 1)
	}
	bq := func(s markSide) string {
		return fmt.Sprintf("%.1f, %.2f ms", s.metrics["send_mbit"], s.metrics["icmp_load_p50_ms"])
	}
	rows := [][]string{
		{"receive Mbit/s", F(rx[0].metrics["receive_mbit"], 2), F(rx[1].metrics["receive_mbit"], 2)},
		{"total busy CPU (2 vCPUs, % of one)", busy(rx[0]), busy(rx[1])},
		{"busy CPU per Mbit/s", F(per(rx[0]), 3), fmt.Sprintf("%.3f (threaded %.2fx)", per(rx[1]), per(rx[0])/per(rx[1]))},
		{"probe p50 under receive load, ms", F(rx[0].metrics["icmp_load_p50_ms"], 2), F(rx[1].metrics["icmp_load_p50_ms"], 2)},
		{"bql send Mbit/s, probe p50 under load", bq(bql[0]), bq(bql[1])},
	}
	return mdtab.Table([]string{"", "threaded", "softirq (default)"}, rows), nil
}

func side(s RXSide, prec int) string {
	return fmt.Sprintf("%.0f (%.*f)", s.BusyPct, prec, s.BusyPerMbit)
}

func rxUncappedTable(dir string) (string, error) {
	pairs, _, err := RXPhase(dir, "gadget-icount")
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{strconv.Itoa(p.Pair), F(p.Stock.Mbit, 1), F(p.Ours.Mbit, 1), F(p.ThroughputRatio(), 3),
			side(p.Stock, 3), side(p.Ours, 3), F(p.BusyRatio(), 3), F(p.SoftirqRatio(), 3), F(p.Ours.GRORatio, 1)})
	}
	return mdtab.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % (per Mbit/s)",
		"ours busy % (per Mbit/s)", "busy per Mbit/s ours/stock", "softirq per Mbit/s ours/stock", "GRO (ours)"}, rows), nil
}

func rxNICTable(dir string) (string, error) {
	pairs, _, err := RXPhase(dir, "nic-tcg")
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{strconv.Itoa(p.Pair), F(p.Stock.Mbit, 1), F(p.Ours.Mbit, 1), F(p.ThroughputRatio(), 3),
			side(p.Stock, 2), side(p.Ours, 2), F(p.BusyRatio(), 3), F(p.Ours.GRORatio, 1)})
	}
	return mdtab.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % (per Mbit/s)",
		"ours busy % (per Mbit/s)", "busy per Mbit/s ours/stock", "GRO (ours)"}, rows), nil
}

var loadRe = regexp.MustCompile(`load average: ([0-9.]+)`)

// hostLoadsDiffer is V3 for a pair of boots.
func hostLoadsDiffer(a, b string) (bool, error) {
	var accel struct {
		Accel string `json:"accel"`
	}
	raw, err := os.ReadFile(filepath.Join(a, "vm.json"))
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
		t, err := os.ReadFile(filepath.Join(run, "host-top.txt"))
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
