// SPDX-License-Identifier: Apache-2.0

package usbnetdevlab

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/experiments/internal/kit"
)

// axRuns are devlab-rx.sh's AX88179 phases (issue 42, seed 003's shape),
// by table id: several variants per rep, each compared with the stock
// boot of its own rep.
// loaded runs shared the host with other work by their plan: every boot
// counts, however busy the host was before it.
var axRuns = map[string]struct {
	dir, phase string
	variants   []string
	loaded     bool
}{
	"seed003-ax-virt-rt-7.3": {"ax-rt-7.3.4-2026-11-28", "ax-virt-rt", []string{"stock", "stock-rps", "ours", "ours-rps", "ours-threaded"}, false},
	"seed003-ax-x86-rt-7.3":  {"ax-rt-7.3.4-2026-11-28", "ax-x86-rt", []string{"stock", "ours", "ours-threaded"}, false},
	"bqlfix-ax-virt-rt-7.3":  {"bqlfix-7.3.4-2026-11-28", "ax-virt-rt-bql", []string{"stock", "ours", "ours-bql"}, true},
	"bqlfix-ax-x86-rt-7.3":   {"bqlfix-7.3.4-2026-11-28", "ax-x86-rt-bql", []string{"stock", "ours", "ours-bql"}, true},
	"bqlfix2-ax-virt-rt-7.3": {"bqlfix2-7.3.4-2026-11-28", "ax-virt-rt-bql", []string{"stock", "ours", "ours-bql"}, false},
	"bqlpoll-ax-virt-rt-7.3": {"bqlpoll-7.3.4-2026-11-28", "ax-virt-rt-poll", []string{"stock", "ours", "ours-poll"}, false},
	"bqlcap-ax-virt-rt-7.3":  {"bqlcap-7.3.4-2026-11-28", "ax-virt-rt-cap", []string{"stock", "ours", "ours-cap", "ours-perurb"}, false},
	"six12-ax-x86-6.12":      {"six12-ax-6.12.117-2026-11-28", "ax", []string{"stock", "ours"}, true},
}

// axInsideRuns are the axRuns whose receive side is also tabled from the
// inside (CPU kinds, the ACK stream, BQL): the runs about BQL's reports.
var axInsideRuns = []string{"bqlfix2-ax-virt-rt-7.3", "bqlpoll-ax-virt-rt-7.3", "bqlcap-ax-virt-rt-7.3"}

// axSide is one boot's figures in one direction.
type axSide struct {
	mbit, busyPerMbit, rttP50, gro, bqlLimit float64
	// softirq and sys are the guest's CPU shares (% of all vCPUs); txPer100
	// is the adapter's transmitted packets per 100 received (receiving:
	// the ACK stream), bqlInflight BQL's highest sampled bytes in flight.
	softirq, sys, txPer100, bqlInflight float64
}

// axDirection reads run's bench-DIRECTION.json: the iperf3 rate, the guest's
// busy CPU (all vCPUs, % of one) per Mbit/s the adapter moved, the probe's
// loaded p50 and, receiving, GRO's segments per skb. ok is false when the
// bench is missing or incomplete.
func axDirection(run, direction string) (axSide, bool, error) {
	r, err := kit.FirstRun(run, direction)
	if err != nil || r == nil {
		return axSide{}, false, err
	}
	m := r.Metrics
	s := axSide{mbit: m[direction+"_mbit"], rttP50: m["icmp_load_p50_ms"], softirq: m["cpu_softirq_pct"], sys: m["cpu_sys_pct"]}
	idle, ok := m["cpu_idle_pct"]
	if !ok || r.Load == nil || len(r.Load.Devices) != 1 {
		return axSide{}, false, nil
	}
	var dev float64
	for _, d := range r.Load.Devices {
		dev = d.TxMbit
		s.bqlLimit = float64(d.BQLLimit)
		s.bqlInflight = float64(d.BQLMaxBytes)
		if d.RxPackets > 0 {
			s.txPer100 = 100 * float64(d.TxPackets) / float64(d.RxPackets)
		}
		if direction == "receive" {
			dev = d.RxMbit
		}
	}
	if dev <= 0 {
		return axSide{}, false, nil
	}
	s.busyPerMbit = (100 - idle) * float64(len(r.Load.CPUs)) / dev
	if direction == "receive" {
		devs, err := kit.Observed(r)
		if err != nil {
			return axSide{}, false, fmt.Errorf("%s: %w", run, err)
		}
		for _, d := range devs {
			if _, mine := r.Load.Devices[d.Name]; mine {
				s.gro = d.GRORatio
			}
		}
	}
	return s, true, nil
}

// axBoot is one valid boot: both directions complete, the VM ok, and
// unless loaded no process but this run's above 20% of a host CPU before
// it booted (any QEMU there is another run's). why says what made it
// invalid.
func axBoot(run string, loaded bool) (recv, send axSide, why string, err error) {
	ok, err := kit.VMOK(run)
	if err != nil {
		return recv, send, "", err
	}
	if !ok {
		return recv, send, "the boot failed", nil
	}
	if w, err := kit.OutsideLoad(filepath.Join(run, "host-top.txt"), true); err != nil || !loaded && w > 20 {
		return recv, send, fmt.Sprintf("another process at %.0f%% of a CPU before the boot", w), err
	}
	var okR, okS bool
	if recv, okR, err = axDirection(run, "receive"); err != nil {
		return
	}
	if send, okS, err = axDirection(run, "send"); err != nil {
		return
	}
	if !okR || !okS {
		return recv, send, "a bench incomplete", nil
	}
	return recv, send, "", nil
}

// axTable: one row per variant - medians over its valid boots, and the
// median over reps of its ratio to the same rep's stock boot - then the
// boots not counted.
func axTable(dir, phase string, variants []string, loaded bool) (string, error) {
	reps, err := kit.Reps(dir, phase+"-stock")
	if err != nil {
		return "", err
	}
	type boot struct{ recv, send axSide }
	got := map[string]map[int]boot{}
	var dropped []string
	for _, v := range variants {
		got[v] = map[int]boot{}
		for _, i := range reps {
			run := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", phase, v, i))
			if _, err := kit.Stat(run); err != nil {
				continue
			}
			recv, send, why, err := axBoot(run, loaded)
			if err != nil {
				return "", err
			}
			if why != "" {
				dropped = append(dropped, fmt.Sprintf("%s-%d: %s", v, i, why))
				continue
			}
			got[v][i] = boot{recv, send}
		}
	}
	var rows [][]string
	for _, v := range variants {
		var rM, rB, sM, sB, rRTT, gro, lim, rMR, rBR, sMR, sBR []float64
		for _, i := range reps {
			b, ok := got[v][i]
			if !ok {
				continue
			}
			rM, rB, sM, sB = append(rM, b.recv.mbit), append(rB, b.recv.busyPerMbit), append(sM, b.send.mbit), append(sB, b.send.busyPerMbit)
			rRTT, gro, lim = append(rRTT, b.recv.rttP50), append(gro, b.recv.gro), append(lim, b.send.bqlLimit)
			if s, ok := got["stock"][i]; ok {
				rMR, rBR = append(rMR, b.recv.mbit/s.recv.mbit), append(rBR, b.recv.busyPerMbit/s.recv.busyPerMbit)
				sMR, sBR = append(sMR, b.send.mbit/s.send.mbit), append(sBR, b.send.busyPerMbit/s.send.busyPerMbit)
			}
		}
		rows = append(rows, []string{v, strconv.Itoa(len(rM)), med(rM, 1), med(rMR, 3), med(rB, 3), med(rBR, 3), med(rRTT, 1), med(gro, 1),
			med(sM, 1), med(sMR, 3), med(sB, 3), med(sBR, 3), med(lim, 0)})
	}
	if len(dropped) > 0 {
		rows = append(rows, []string{"not counted", strconv.Itoa(len(dropped)), strings.Join(dropped, "; "), "", "", "", "", "", "", "", "", "", ""})
	}
	return kit.Table([]string{"variant", "boots", "receive Mbit/s", "receive / stock", "receive busy % per Mbit/s", "busy per Mbit/s / stock",
		"receive probe p50 ms", "GRO segments per skb", "send Mbit/s", "send / stock", "send busy % per Mbit/s", "busy per Mbit/s / stock", "send: BQL limit, highest sampled (bytes)"}, rows), nil
}

// med is the median of xs, or "" when there is none.
func med(xs []float64, prec int) string {
	if len(xs) == 0 {
		return ""
	}
	return kit.F(kit.Median(xs), prec)
}

// axRepsTable: each rep's receive and send Mbit/s per variant, with the
// ratio to that rep's stock boot; "-" where a boot was not counted.
func axRepsTable(dir, phase string, variants []string, loaded bool) (string, error) {
	reps, err := kit.Reps(dir, phase+"-stock")
	if err != nil {
		return "", err
	}
	head := []string{"rep"}
	for _, v := range variants {
		head = append(head, v+" receive", v+" send")
	}
	var rows [][]string
	for _, i := range reps {
		row := []string{strconv.Itoa(i)}
		var base [2]float64
		for _, v := range variants {
			recv, send, why, err := axBoot(filepath.Join(dir, fmt.Sprintf("%s-%s-%d", phase, v, i)), loaded)
			if err != nil && !os.IsNotExist(err) {
				return "", err
			}
			if why != "" || err != nil {
				row = append(row, "-", "-")
				continue
			}
			if v == "stock" {
				base = [2]float64{recv.mbit, send.mbit}
			}
			for k, x := range []float64{recv.mbit, send.mbit} {
				c := kit.F(x, 0)
				if v != "stock" && base[k] > 0 {
					c += " (" + kit.F(x/base[k], 2) + ")"
				}
				row = append(row, c)
			}
		}
		rows = append(rows, row)
	}
	return kit.Table(head, rows), nil
}

// axInsideTable: per variant, medians over its valid boots of the receive
// bench's softirq and sys CPU, the adapter's transmitted packets per 100
// received, GRO's segments per skb and BQL's bytes in flight and limit.
func axInsideTable(dir, phase string, variants []string, loaded bool) (string, error) {
	reps, err := kit.Reps(dir, phase+"-stock")
	if err != nil {
		return "", err
	}
	var rows [][]string
	for _, v := range variants {
		var soft, sys, tx, gro, infl, lim []float64
		for _, i := range reps {
			recv, _, why, err := axBoot(filepath.Join(dir, fmt.Sprintf("%s-%s-%d", phase, v, i)), loaded)
			if err != nil && !os.IsNotExist(err) {
				return "", err
			}
			if why != "" || err != nil {
				continue
			}
			soft, sys, tx = append(soft, recv.softirq), append(sys, recv.sys), append(tx, recv.txPer100)
			gro, infl, lim = append(gro, recv.gro), append(infl, recv.bqlInflight), append(lim, recv.bqlLimit)
		}
		rows = append(rows, []string{v, strconv.Itoa(len(soft)), med(soft, 1), med(sys, 1), med(tx, 2), med(gro, 1), med(infl, 0), med(lim, 0)})
	}
	return kit.Table([]string{"variant", "boots", "receive: softirq % of the guest", "sys %", "adapter TX packets per 100 received",
		"GRO segments per skb", "BQL bytes in flight, highest sampled", "BQL limit, highest sampled"}, rows), nil
}
