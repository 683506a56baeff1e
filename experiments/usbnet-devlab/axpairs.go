// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// axPairRuns are runs of interleaved receive boots named A-N and B-N
// (pair N), by table id: their directory and the sides A and B.
var axPairRuns = map[string]struct{ dir, a, b string }{
	"ax-rx-6.18-arm64":         {"ax-rx-6.18-arm64-2026-11-29", "stock", "ours"},
	"ax-rx-6.18-arm64-axpatch": {"ax-rx-6.18-arm64-axpatch-2026-11-29", "base", "ax"},
}

// axPairTables adds the tables of axPairRuns present under dir/data to out.
func axPairTables(dir string, out map[string]string) error {
	for id, r := range axPairRuns {
		d := filepath.Join(dir, "data", r.dir)
		if !exists(d) {
			continue
		}
		t, err := axPairsTable(d, r.a, r.b)
		if err != nil {
			return err
		}
		out[id] = t
	}
	return nil
}

// axPairsTable: one row per pair - each side's receive Mbit/s, busy CPU
// per Mbit/s, loaded probe p50 and GRO's segments per skb, b/a of the
// first two - and the medians. Every boot must be complete: the plans
// drop none.
func axPairsTable(dir, a, b string) (string, error) {
	var rows [][]string
	var rate, busy []float64
	for n := 1; exists(filepath.Join(dir, a+"-"+strconv.Itoa(n))); n++ {
		var s [2]axSide
		for i, side := range []string{a, b} {
			run := filepath.Join(dir, side+"-"+strconv.Itoa(n))
			ok, err := kit.VMOK(run)
			if err != nil {
				return "", err
			}
			r, complete, err := axDirection(run, "receive")
			if err != nil {
				return "", err
			}
			if !ok || !complete {
				return "", fmt.Errorf("%s: the boot failed or its receive bench is incomplete", run)
			}
			s[i] = r
		}
		rate = append(rate, s[1].mbit/s[0].mbit)
		busy = append(busy, s[1].busyPerMbit/s[0].busyPerMbit)
		rows = append(rows, []string{strconv.Itoa(n), kit.F(s[0].mbit, 1), kit.F(s[1].mbit, 1), kit.F(rate[n-1], 3),
			kit.F(s[0].busyPerMbit, 3), kit.F(s[1].busyPerMbit, 3), kit.F(busy[n-1], 3),
			kit.F(s[0].rttP50, 1), kit.F(s[1].rttP50, 1), kit.F(s[0].gro, 1), kit.F(s[1].gro, 1)})
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("%s: no pair", dir)
	}
	rows = append(rows, []string{"median", "", "", kit.F(kit.Median(rate), 3), "", "", kit.F(kit.Median(busy), 3), "", "", "", ""})
	return kit.Table([]string{"pair", a + " Mbit/s", b + " Mbit/s", b + " / " + a, a + " busy % per Mbit/s",
		b + " busy % per Mbit/s", b + " / " + a, a + " probe p50 ms", b + " probe p50 ms",
		a + " GRO segments per skb", b + " GRO segments per skb"}, rows), nil
}

// fifoRuns are receive runs whose device sampled its RX FIFO (usbdev.json
// rx_waiting_*), by table id.
var fifoRuns = map[string]string{"ax-latency-6.18-arm64": "ax-latency-6.18-arm64-2026-11-29"}

// fifoTable: one row per boot in runs.txt's order: the receive rate, the
// loaded probe's p50 and the device's RX FIFO depth, mean and most ("-"
// for a boot whose device did not sample it).
func fifoTable(dir string) (string, error) {
	names, err := runOrder(dir)
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, n := range names {
		run := filepath.Join(dir, n)
		r, ok, err := axDirection(run, "receive")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("%s: no complete receive bench", run)
		}
		var dev struct {
			Stats struct {
				Sum     *float64 `json:"rx_waiting_sum"`
				Samples float64  `json:"rx_waiting_samples"`
				Max     float64  `json:"rx_waiting_max"`
			} `json:"stats"`
		}
		if err := kit.ReadJSON(filepath.Join(run, "usbdev.json"), &dev); err != nil {
			return "", err
		}
		mean, most := "-", "-"
		if st := dev.Stats; st.Sum != nil && st.Samples > 0 {
			mean, most = kit.F(*st.Sum/st.Samples, 0), kit.F(st.Max, 0)
		}
		rows = append(rows, []string{n, kit.F(r.mbit, 1), kit.F(r.rttP50, 1), mean, most})
	}
	return kit.Table([]string{"boot", "receive Mbit/s", "probe p50 ms", "RX FIFO mean frames", "RX FIFO max frames"}, rows), nil
}
