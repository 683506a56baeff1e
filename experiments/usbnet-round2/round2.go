// SPDX-License-Identifier: Apache-2.0

// Package usbnetround2 recomputes docs/results.md's tables of usbnet round 2
// (issue 12): the BQL and capped-RX marks, threaded polling, and RX beyond
// the capped loop, from the boots' raw files under data/.
package usbnetround2

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
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

func bqlTable(dir string) (string, error) {
	pairs, err := kit.BQLPairs(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{
			strconv.Itoa(p.Pair), kit.F(p.StockMbit, 1), kit.F(p.OursMbit, 1),
			fmt.Sprintf("%.2f / %.2f (%.2f)", p.StockIdle, p.StockLoad, p.StockLoad-p.StockIdle),
			fmt.Sprintf("%.2f / %.2f (%.2f)", p.OursIdle, p.OursLoad, p.OursLoad-p.OursIdle),
			kit.F(p.ExcessRatio, 3), kit.F(p.TPRatio, 3),
			fmt.Sprintf("%.0f KB", kit.Median(p.Back)/1000),
			fmt.Sprintf("%s, %.0f KB", kit.LimitRange(p.Limit), kit.Median(p.Inflight)/1000),
		})
	}
	n := len(pairs[0].Limit)
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "stock idle / load p50 ms (excess)", "ours idle / load p50 ms (excess)",
		"excess ours/stock", "throughput ours/stock", "ours qdisc backlog median",
		fmt.Sprintf("ours BQL limit (distinct values in %d samples), inflight median", n)}, rows), nil
}

func rxCappedTable(dir string) (string, error) {
	reps, err := kit.Reps(dir, "rx-stock")
	if err != nil {
		return "", err
	}
	var rows [][]string
	first := ""
	for _, i := range reps {
		an, bn := filepath.Join(dir, fmt.Sprintf("rx-stock-%d", i)), filepath.Join(dir, fmt.Sprintf("rx-ours-%d", i))
		a, err := kit.MarkRun(an, "receive")
		if err != nil {
			return "", err
		}
		b, err := kit.MarkRun(bn, "receive")
		if err != nil {
			return "", err
		}
		if !a.OK || !b.OK {
			continue // V1
		}
		ta, tb := a.Metrics["receive_mbit"], b.Metrics["receive_mbit"]
		if math.Abs(tb/ta-1) > 0.05 {
			continue // V2: not equal work
		}
		ca, cb := a.Busy()/ta, b.Busy()/tb
		sa, sb := a.Metrics["cpu_softirq_pct"]/ta, b.Metrics["cpu_softirq_pct"]/tb
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
		rows = append(rows, []string{strconv.Itoa(i), kit.F(ta, 1), kit.F(tb, 1),
			fmt.Sprintf("%.0f (%.3f)", a.Busy(), ca), fmt.Sprintf("%.0f (%.3f)", b.Busy(), cb),
			kit.F(cb/ca, 3), kit.F(sb/sa, 3), path})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "stock busy % (per Mbit/s)", "ours busy % (per Mbit/s)",
		"busy per Mbit/s ours/stock", "softirq per Mbit/s ours/stock", "RX path (observe), GRO ratio (ours)"}, rows), nil
}

// rxPaths returns observe's RX path of the receiving device in both boots
// and ours' GRO ratio.
func rxPaths(stock, ours string) (string, string, float64, error) {
	var paths [2]string
	var gro float64
	for k, run := range []string{stock, ours} {
		r, err := kit.FirstRun(run, "receive")
		if err != nil {
			return "", "", 0, err
		}
		devs, err := kit.Observed(r)
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
	var rx, bql [2]kit.MarkSide
	for k, v := range []string{"thron", "throff"} {
		var err error
		if rx[k], err = kit.MarkRun(filepath.Join(dir, "rx-"+v+"-1"), "receive"); err != nil {
			return "", err
		}
		if bql[k], err = kit.MarkRun(filepath.Join(dir, "bql-"+v+"-1"), "send"); err != nil {
			return "", err
		}
		if !rx[k].OK || !bql[k].OK {
			return "", fmt.Errorf("%s: the %s boots did not complete", dir, v)
		}
	}
	per := func(s kit.MarkSide) float64 { return s.Busy() / s.Metrics["receive_mbit"] }
	busy := func(s kit.MarkSide) string {
		if s.NAPI > 0 {
			return fmt.Sprintf("%.1f (NAPI thread %.1f)", s.Busy(), s.NAPI)
		}
		return kit.F(s.Busy(), 1)
	}
	bq := func(s kit.MarkSide) string {
		return fmt.Sprintf("%.1f, %.2f ms", s.Metrics["send_mbit"], s.Metrics["icmp_load_p50_ms"])
	}
	rows := [][]string{
		{"receive Mbit/s", kit.F(rx[0].Metrics["receive_mbit"], 2), kit.F(rx[1].Metrics["receive_mbit"], 2)},
		{"total busy CPU (2 vCPUs, % of one)", busy(rx[0]), busy(rx[1])},
		{"busy CPU per Mbit/s", kit.F(per(rx[0]), 3), fmt.Sprintf("%.3f (threaded %.2fx)", per(rx[1]), per(rx[0])/per(rx[1]))},
		{"probe p50 under receive load, ms", kit.F(rx[0].Metrics["icmp_load_p50_ms"], 2), kit.F(rx[1].Metrics["icmp_load_p50_ms"], 2)},
		{"bql send Mbit/s, probe p50 under load", bq(bql[0]), bq(bql[1])},
	}
	return kit.Table([]string{"", "threaded", "softirq (default)"}, rows), nil
}

func side(s kit.RXSide, prec int) string {
	return fmt.Sprintf("%.0f (%.*f)", s.BusyPct, prec, s.BusyPerMbit)
}

func rxUncappedTable(dir string) (string, error) {
	pairs, _, err := kit.RXPhase(dir, "gadget-icount")
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{strconv.Itoa(p.Pair), kit.F(p.Stock.Mbit, 1), kit.F(p.Ours.Mbit, 1), kit.F(p.ThroughputRatio(), 3),
			side(p.Stock, 3), side(p.Ours, 3), kit.F(p.BusyRatio(), 3), kit.F(p.SoftirqRatio(), 3), kit.F(p.Ours.GRORatio, 1)})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % (per Mbit/s)",
		"ours busy % (per Mbit/s)", "busy per Mbit/s ours/stock", "softirq per Mbit/s ours/stock", "GRO (ours)"}, rows), nil
}

func rxNICTable(dir string) (string, error) {
	pairs, _, err := kit.RXPhase(dir, "nic-tcg")
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, p := range pairs {
		rows = append(rows, []string{strconv.Itoa(p.Pair), kit.F(p.Stock.Mbit, 1), kit.F(p.Ours.Mbit, 1), kit.F(p.ThroughputRatio(), 3),
			side(p.Stock, 2), side(p.Ours, 2), kit.F(p.BusyRatio(), 3), kit.F(p.Ours.GRORatio, 1)})
	}
	return kit.Table([]string{"pair", "stock Mbit/s", "ours Mbit/s", "throughput ours/stock", "stock busy % (per Mbit/s)",
		"ours busy % (per Mbit/s)", "busy per Mbit/s ours/stock", "GRO (ours)"}, rows), nil
}
