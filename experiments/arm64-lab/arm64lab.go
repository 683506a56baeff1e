// SPDX-License-Identifier: Apache-2.0

// Package arm64lab recomputes docs/results.md's tables of the arm64
// Pi-class lab (issue 23): what the guest ran, stock vs ours receiving on
// the Pi 3-class guest, and its usbnet-stress series, from data/.
package arm64lab

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments"
	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "arm64-lab", Tables: tables})
}

func tables(dir string) (map[string]string, error) {
	d := filepath.Join(dir, "data")
	out := map[string]string{}
	var err error
	if out["runs"], err = runsTable(d); err != nil {
		return nil, err
	}
	if out["rx"], err = rxTable(filepath.Join(d, "rx-pairs")); err != nil {
		return nil, err
	}
	if out["stress"], err = stressTable(d); err != nil {
		return nil, err
	}
	return out, nil
}

// The four runs of "What runs": the command (a label) and the directory.
var runs = []struct{ label, dir string }{
	{"`usb-nic --direction receive` (raspi3b, stock)", "raspi3b-usb-nic-receive"},
	{"`usb-nic --tune ...` (raspi3b, stock)", "raspi3b-usb-nic-tune"},
	{"`usb-nic --tune ... --modules-dir` ours (raspi3b)", "raspi3b-usb-nic-ours-tune"},
	{"`usb-nic --machine virt` (stock)", "virt-usb-nic"},
}

func mbit(x float64) string {
	if x < 10 {
		return kit.F(x, 2)
	}
	return kit.F(x, 1)
}

var (
	irqRe = regexp.MustCompile(`^\s*(\d+):((?:\s+\d+)+)\s+(\S+)\s.*(usb|xhci)`)
	pciRe = regexp.MustCompile(`-[0-9a-f]{4}:[0-9a-f]{2}:.*$`)
)

// usbIRQ reads the USB host controller's line in /proc/interrupts before
// and after the receive bench: its number, chip, and each CPU's count.
func usbIRQ(path string) (num, chip string, counts []float64, err error) {
	b, err := kit.ReadRaw(path)
	if err != nil {
		return "", "", nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		m := irqRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, f := range strings.Fields(m[2]) {
			v, _ := strconv.ParseFloat(f, 64)
			counts = append(counts, v)
		}
		return m[1], pciRe.ReplaceAllString(m[3], ""), counts, nil
	}
	return "", "", nil, fmt.Errorf("%s: no USB host controller interrupt", path)
}

func irqCell(d string) (string, error) {
	num, chip, before, err := usbIRQ(filepath.Join(d, "interrupts-before-receive.txt"))
	if err != nil {
		return "", err
	}
	_, _, after, err := usbIRQ(filepath.Join(d, "interrupts-after-receive.txt"))
	if err != nil {
		return "", err
	}
	var total float64
	for i := range after {
		total += after[i] - before[i]
	}
	if total <= 0 {
		return "", fmt.Errorf("%s: no USB interrupts during the receive bench", d)
	}
	return fmt.Sprintf("IRQ %s `%s`, %.0f%% on CPU0", num, chip, 100*(after[0]-before[0])/total), nil
}

func runsTable(d string) (string, error) {
	var rows [][]string
	first := ""
	for _, r := range runs {
		dir := filepath.Join(d, r.dir)
		row := []string{r.label}
		var path string
		for _, direction := range []string{"receive", "send"} {
			run, err := kit.FirstRun(dir, direction)
			if err != nil {
				return "", err
			}
			if run == nil {
				row = append(row, "-")
				continue
			}
			row = append(row, mbit(run.Metrics[direction+"_mbit"]))
			if direction == "receive" {
				devs, err := kit.Observed(run)
				if err != nil {
					return "", err
				}
				for _, dv := range devs {
					if dv.Name == "usb0" {
						path = dv.RXPath
						if dv.GRORatio > 0 {
							path += fmt.Sprintf(", GRO ratio %.1f", dv.GRORatio)
						}
					}
				}
			}
		}
		if path == "" {
			return "", fmt.Errorf("%s: observe saw no usb0", r.dir)
		}
		irq, err := irqCell(dir)
		if err != nil {
			return "", err
		}
		if first == "" {
			first = irq
		} else if irq == first {
			irq = "same"
		}
		rows = append(rows, append(row, path, irq))
	}
	return kit.Table([]string{"run (`wirespeed lab vm ... --arch arm64`, `-t 5s`)", "receive Mbit/s", "send Mbit/s",
		"RX path (observe in the guest)", "USB interrupt (during the receive bench)"}, rows), nil
}

func rxTable(dir string) (string, error) {
	pairs, _, err := kit.RXPhase(dir, "gadget-icount")
	if err != nil {
		return "", err
	}
	var sm, om, sb, ob, sp, op, ss, os_, sy, oy, tr, br, sr []float64
	for _, p := range pairs {
		if !p.Stock.HasCPU || !p.Ours.HasCPU {
			return "", fmt.Errorf("%s: pair %d has no CPU samples", dir, p.Pair)
		}
		sm, om = append(sm, p.Stock.Mbit), append(om, p.Ours.Mbit)
		sb, ob = append(sb, p.Stock.BusyPct), append(ob, p.Ours.BusyPct)
		sp, op = append(sp, p.Stock.BusyPerMbit), append(op, p.Ours.BusyPerMbit)
		ss, os_ = append(ss, p.Stock.SoftirqPerMbit), append(os_, p.Ours.SoftirqPerMbit)
		sy, oy = append(sy, p.Stock.SysPerMbit), append(oy, p.Ours.SysPerMbit)
		tr, br, sr = append(tr, p.ThroughputRatio()), append(br, p.BusyRatio()), append(sr, p.SoftirqRatio())
	}
	med := kit.Median
	path := func(s kit.RXSide) string {
		p, _, _ := strings.Cut(s.RXPath, " (")
		if s.GRORatio > 0 {
			p += fmt.Sprintf(", GRO ratio %.1f", s.GRORatio)
		}
		return p
	}
	last := pairs[len(pairs)-1]
	rows := [][]string{
		{"receive, Mbit/s (guest time)", kit.F(med(sm), 1), kit.F(med(om), 1), "**" + kit.F(med(tr), 3) + "**"},
		{"busy CPU, all 4 vCPUs", fmt.Sprintf("%.0f%%", med(sb)), fmt.Sprintf("%.0f%%", med(ob)), ""},
		{"busy CPU ms per Mbit", kit.F(med(sp), 4), kit.F(med(op), 4), "**" + kit.F(med(br), 3) + "**"},
		{"softirq / sys per Mbit", fmt.Sprintf("%.4f / %.4f", med(ss), med(sy)), fmt.Sprintf("%.4f / %.4f", med(os_), med(oy)), kit.F(med(sr), 3) + " (softirq)"},
		{"RX path", path(last.Stock), path(last.Ours), ""},
	}
	return kit.Table([]string{"", fmt.Sprintf("stock (Debian's usbnet, median of %d)", len(pairs)),
		"ours (the 8-patch series, cross-built)", "ours / stock (median pair)"}, rows), nil
}

var (
	failRe  = regexp.MustCompile(`FAIL: no ping over usb0 after cycle (\d+) \(([a-z_]+)\)`)
	countRe = regexp.MustCompile(`\b(gadget-stalls|slow-recoveries)=(\d+)`)
)

// stressCell summarizes one side of a usbnet-stress-series.sh series: runs
// clean, where the others failed, and (when the stress counted them) slow
// recoveries and gadget stalls per clean run.
func stressCell(dir, side string) (string, error) {
	ents, err := kit.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), side+"-") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	clean := 0
	var fails, slow, stalls []string
	for _, n := range names {
		b, err := kit.ReadRaw(filepath.Join(dir, n, "vm.json"))
		if err != nil {
			return "", err
		}
		var v struct {
			OK      bool              `json:"ok"`
			Failure string            `json:"failure"`
			Facts   map[string]string `json:"facts"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return "", fmt.Errorf("%s/%s/vm.json: %w", dir, n, err)
		}
		if !v.OK {
			m := failRe.FindStringSubmatch(v.Failure)
			if m == nil {
				return "", fmt.Errorf("%s/%s: failed, not at a ping check: %q", dir, n, v.Failure)
			}
			fails = append(fails, fmt.Sprintf("%s at cycle %s", m[2], m[1]))
			continue
		}
		clean++
		for _, m := range countRe.FindAllStringSubmatch(v.Facts["stress_result"], -1) {
			if m[1] == "slow-recoveries" {
				slow = append(slow, m[2])
			} else {
				stalls = append(stalls, m[2])
			}
		}
	}
	s := fmt.Sprintf("%d of %d clean", clean, len(names))
	var notes []string
	if len(fails) > 0 {
		notes = append(notes, "failed after: "+strings.Join(fails, ", "))
	}
	if len(slow) > 0 {
		notes = append(notes, "slow recoveries "+strings.Join(slow, ", "), "gadget stalls rebound "+strings.Join(stalls, ", "))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s, nil
}

func stressTable(d string) (string, error) {
	var rows [][]string
	for _, s := range []struct{ label, dir string }{
		{"1 (the old check)", "stress"},
		{"2 (slow recoveries counted; `stress2/`)", "stress2"},
	} {
		row := []string{s.label}
		for _, side := range []string{"ours", "stock"} {
			c, err := stressCell(filepath.Join(d, s.dir), side)
			if err != nil {
				return "", err
			}
			row = append(row, c)
		}
		rows = append(rows, row)
	}
	return kit.Table([]string{"series", "ours", "stock"}, rows), nil
}
