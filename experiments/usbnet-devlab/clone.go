// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// cloneRuns are the directories of the batched clone runs (issue 39: GRO
// fed clones of one URB skb), by table id.
var cloneRuns = map[string]string{"clone-batch-7.3": "clone-batch-7.3.4-2026-11-28",
	"clone-burst-7.3": "clone-burst-7.3.4-2026-11-28", "clone-headroom-7.3": "clone-headroom-7.3.4-2026-11-28"}

// cloneTable: one row per boot - the verdict and the console guards
// hit, the device's frames per transfer, what GRO did with the device's
// frames in the receive bench (segments in, skbs out: more than one
// segment per skb is the evidence the clones were coalesced; from the
// boot's background observe, which counts every event), the
// guest's rx_errors over the bench and how much MemAvailable moved.
func cloneTable(dir string) (string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var rows [][]string
	for _, n := range names {
		row, err := cloneRow(filepath.Join(dir, n))
		if err != nil {
			return "", fmt.Errorf("%s: %w", n, err)
		}
		rows = append(rows, append([]string{n}, row...))
	}
	if len(rows) == 0 {
		return "", fmt.Errorf("%s: no boots", dir)
	}
	return kit.Table([]string{"boot", "verdict", "console guards hit", "frames per transfer (device)",
		"receive Mbit/s", "GRO segments in (boot)", "skbs delivered (boot)", "segments per skb", "rx_errors in the bench",
		"MemAvailable after - before (MB)"}, rows), nil
}

func cloneRow(run string) ([]string, error) {
	var v struct {
		OK     bool `json:"ok"`
		Guards []struct {
			Guard string `json:"guard"`
			Fatal bool   `json:"fatal"`
			Text  string `json:"text"`
		} `json:"guards"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &v); err != nil {
		return nil, err
	}
	verdict := "pass"
	if !v.OK {
		verdict = "FAIL"
	}
	var hits []string
	for _, g := range v.Guards {
		if g.Fatal { // the line that stopped the boot, without its timestamp
			_, text, _ := strings.Cut(g.Text, "] ")
			hits = append(hits, g.Guard+" ("+text+")")
			continue
		}
		hits = append(hits, g.Guard)
	}
	var dev struct {
		Model map[string]float64 `json:"model"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "usbdev.json"), &dev); err != nil {
		return nil, err
	}
	perXfer := "-"
	if a := dev.Model["aggregates_to_host"]; a > 0 {
		perXfer = kit.F(dev.Model["frames_to_host"]/a, 2)
	}
	if _, err := kit.Stat(filepath.Join(run, "facts.txt")); err != nil && !v.OK {
		// the boot stopped before the guest wrote its facts
		return []string{verdict + " (stopped)", strings.Join(hits, ", "), perXfer, "-", "-", "-", "-", "-", "-"}, nil
	}
	facts, err := readFactStrings(filepath.Join(run, "facts.txt"))
	if err != nil {
		return nil, err
	}
	mbit, gro, skbs, ratio := "-", "-", "-", "-"
	r, err := kit.FirstRun(run, "receive")
	if err != nil {
		return nil, err
	}
	if r == nil {
		verdict += " (bench incomplete)"
	} else {
		mbit = kit.F(r.Metrics["receive_mbit"], 1)
	}
	// The session's observation counts every napi_gro_receive and
	// netif_receive_skb of the boot (the bench's own is sampled).
	var obs struct {
		Devices []kit.ObservedDevice `json:"devices"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "observe-session.json"), &obs); err != nil {
		return nil, err
	}
	for _, d := range obs.Devices {
		if d.Name == facts["dut_if"] && d.Delivered > 0 {
			gro, skbs = strconv.FormatUint(d.GROSegments, 10), strconv.FormatUint(d.Delivered, 10)
			ratio = kit.F(float64(d.GROSegments)/float64(d.Delivered), 2)
		}
	}
	return []string{verdict, strings.Join(hits, ", "), perXfer, mbit, gro, skbs, ratio,
		factDelta(facts, "receive.rx_errors"), memDelta(run)}, nil
}

// factDelta is after-K minus before-K of facts.txt.
func factDelta(facts map[string]string, k string) string {
	a, errA := strconv.ParseInt(facts["after-"+k], 10, 64)
	b, errB := strconv.ParseInt(facts["before-"+k], 10, 64)
	if errA != nil || errB != nil {
		return "-"
	}
	return strconv.FormatInt(a-b, 10)
}

// memDelta is MemAvailable after the receive bench minus before, in MB
// ("-" for a boot without the files).
func memDelta(run string) string {
	avail := func(which string) (float64, bool) {
		b, err := kit.ReadRaw(filepath.Join(run, "meminfo-"+which+"-receive.txt"))
		if err != nil {
			return 0, false
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemAvailable:" {
				kb, err := strconv.ParseFloat(f[1], 64)
				return kb, err == nil
			}
		}
		return 0, false
	}
	a, okA := avail("after")
	b, okB := avail("before")
	if !okA || !okB {
		return "-"
	}
	return kit.F((a-b)/1024, 1)
}
