// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// hostileRun is one boot of devlab-hostile.sh, as its files say.
type hostileRun struct {
	name           string
	ok             bool
	mbit           float64
	aggregates     float64
	malformed      float64
	kinds          int
	stalled        float64
	rxErrors       float64
	complete       bool
	bulkInAnswered float64
	guards         []string
}

func readHostile(run string) (hostileRun, error) {
	h := hostileRun{name: filepath.Base(run)}
	var v struct {
		OK     bool `json:"ok"`
		Guards []struct {
			Text string `json:"text"`
		} `json:"guards"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "vm.json"), &v); err != nil {
		return h, err
	}
	h.ok = v.OK
	for _, g := range v.Guards {
		h.guards = append(h.guards, strings.TrimSpace(g.Text))
	}
	var d struct {
		Stats struct {
			InTransfers float64 `json:"in_transfers"`
			Stalled     float64 `json:"stalled"`
		} `json:"stats"`
		Model map[string]float64 `json:"model"`
	}
	if err := kit.ReadJSON(filepath.Join(run, "usbdev.json"), &d); err != nil && !os.IsNotExist(err) {
		return h, err
	}
	h.aggregates, h.stalled, h.bulkInAnswered = d.Model["aggregates_to_host"], d.Stats.Stalled, d.Stats.InTransfers
	for k, v := range d.Model {
		if strings.HasPrefix(k, "hostile_") && v > 0 {
			h.malformed += v
			h.kinds++
		}
	}
	// a boot that died early wrote no facts: its counters are absent
	facts, err := readFacts(filepath.Join(run, "facts.txt"))
	if err != nil && !os.IsNotExist(err) {
		return h, err
	}
	h.rxErrors = facts["after-receive.rx_errors"] - facts["before-receive.rx_errors"]
	r, err := kit.FirstRun(run, "receive")
	if err != nil {
		return h, err
	}
	if r != nil {
		h.complete, h.mbit = true, r.Metrics["receive_mbit"]
	}
	return h, nil
}

// readFacts reads the numeric key=value lines of a guest's facts.txt.
func readFacts(path string) (map[string]float64, error) {
	f, err := kit.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "=")
		if n, err := strconv.ParseFloat(v, 64); ok && err == nil {
			out[k] = n
		}
	}
	return out, s.Err()
}

// hostileTable: one row per boot, in the order model, stock, ours.
func hostileTable(dir string) (string, error) {
	names, err := boots(dir)
	if err != nil {
		return "", err
	}
	return hostileTableOf(dir, names)
}

// hostileTableOf is hostileTable of the boots names of dir.
func hostileTableOf(dir string, names []string) (string, error) {
	var rows [][]string
	for _, n := range names {
		h, err := readHostile(filepath.Join(dir, n))
		if err != nil {
			return "", fmt.Errorf("%s: %w", n, err)
		}
		verdict := "pass"
		if !h.ok || !h.complete {
			verdict = "FAIL"
		}
		rows = append(rows, []string{n, verdict, kit.F(h.aggregates, 0), kit.F(h.malformed, 0), strconv.Itoa(h.kinds),
			kit.F(h.stalled, 0), kit.F(h.rxErrors, 0), kit.F(h.mbit, 1), firstGuard(h.guards)})
	}
	return kit.Table([]string{"boot", "console clean + bench complete", "aggregates sent", "malformed sent",
		"kinds", "stalled answers", "guest rx_errors", "receive Mbit/s", "first console guard hit"}, rows), nil
}

// firstGuard is the first guard's line, or "-".
func firstGuard(g []string) string {
	if len(g) == 0 {
		return "-"
	}
	return strings.ReplaceAll(g[0], "|", "/")
}

// boots lists the boot directories MODEL-SIDE of dir, by model, stock
// first.
func boots(dir string) ([]string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool { return stockFirst(names[i], names[j]) })
	return names, nil
}

// stockFirst orders MODEL-SIDE names by model, stock before ours.
func stockFirst(a, b string) bool {
	ma, sa, _ := strings.Cut(a, "-")
	mb, sb, _ := strings.Cut(b, "-")
	if ma != mb {
		return ma < mb
	}
	return sa > sb
}
