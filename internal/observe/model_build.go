// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Meta is what Build needs beyond the counts.
type Meta struct {
	Start    time.Time
	Duration time.Duration // wall time
	// Sampling (Options.Sample in (0,1); 0: attached throughout): the
	// fraction and period asked for and the attached time the counts
	// cover, which rates and shares are taken over.
	Sample   float64
	Period   time.Duration
	Attached time.Duration
	Filter   []string                // device names; empty: all
	Events   []EventStatus           // from the loader
	Comm     func(pid uint32) string // pid -> comm, may be nil
	IRQNames map[int]string          // irq -> actions
	DevIRQs  map[string][]int        // device -> its irqs (from inspect), optional
	Light    bool                    // per-segment events were not counted (light mode)
}

func share(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func wanted(filter []string, dev string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if f == dev {
			return true
		}
	}
	return false
}

// histBins labels the BPF histogram for a budget.
func histBins(hist [HistBins]uint64, budget uint32) []HistBin {
	var out []HistBin
	for i, n := range hist {
		var b HistBin
		switch {
		case i == 0:
			b = HistBin{0, 0, n}
		case i == HistBins-1:
			b = HistBin{budget + 1, 0, n}
		default:
			// bin i holds work w with 1 + (w-1)*16/budget == i
			lo := (uint32(i-1)*budget+15)/16 + 1
			hi := (uint32(i)*budget + 15) / 16
			if hi < lo {
				continue // empty bin (budget < 16)
			}
			b = HistBin{lo, hi, n}
		}
		if n > 0 {
			out = append(out, b)
		}
	}
	return out
}

// Build turns the counts of one window into an Observation.
func Build(r *Raw, m Meta) *Observation {
	o := &Observation{Schema: SchemaVersion, Start: m.Start, DurationSec: m.Duration.Seconds(),
		NCPU: r.NCPU, Filter: m.Filter, Events: m.Events, Devices: []Device{}, CPUs: []CPU{}}
	// Rates and shares are over the time the programs were attached.
	attached := m.Duration
	if m.Sample > 0 && m.Sample < 1 {
		attached = m.Attached
		o.Sample = &Sampling{Fraction: m.Sample, PeriodSec: m.Period.Seconds(), AttachedSec: attached.Seconds()}
		if attached <= 0 {
			o.Notes = append(o.Notes, "no sampling window fell in this interval: nothing was counted")
		}
	}
	ns := uint64(max(attached, 0).Nanoseconds())
	perSec := func(n uint64) float64 {
		if ns == 0 {
			return 0
		}
		return float64(n) * 1e9 / float64(ns)
	}
	o.Lost = r.Lost[0] + r.Lost[1] + r.Lost[2]
	if o.Lost > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("%d events not counted: a BPF map was full", o.Lost))
	}
	devs := map[string]*Device{}
	dev := func(name string) *Device {
		d := devs[name]
		if d == nil {
			d = &Device{Name: name, NAPIs: []NAPI{}}
			devs[name] = d
		}
		return d
	}
	// RX events.
	ids := map[string]map[uint32]bool{}
	for _, rx := range r.RX {
		if !wanted(m.Filter, rx.Dev) {
			continue
		}
		var c CountVal
		for _, v := range rx.PerCPU {
			c.Count += v.Count
			c.Bytes += v.Bytes
		}
		if c.Count == 0 {
			continue
		}
		d := dev(rx.Dev)
		switch rx.Kind {
		case RXGro:
			d.GROSegments += c.Count
			d.GROBytes += c.Bytes
		case RXSkb:
			d.Delivered += c.Count
			d.DeliveredBytes += c.Bytes
		case RXSkbEntry:
			d.ReceiveEntry += c.Count
		case RXListEntry:
			d.ListEntry += c.Count
		case RXNetifRx:
			d.NetifRx += c.Count
		}
		if rx.NapiID != 0 {
			if ids[rx.Dev] == nil {
				ids[rx.Dev] = map[uint32]bool{}
			}
			ids[rx.Dev][rx.NapiID] = true
		}
	}
	// NAPI polls, grouped by napi pointer and device name.
	type nk struct {
		napi uint64
		dev  string
	}
	napis := map[nk]*NAPI{}
	cpus := map[nk][]NAPICPU{}
	var order []nk
	// The backlog NAPIs serve every netif_rx device: show them with the
	// devices that used them.
	backlog := len(m.Filter) == 0 || wanted(m.Filter, BacklogDev)
	for _, d := range devs {
		backlog = backlog || d.NetifRx > 0
	}
	for _, n := range r.NAPI {
		if !wanted(m.Filter, n.Dev) && !(n.Dev == BacklogDev && backlog) {
			continue
		}
		k := nk{n.Napi, n.Dev}
		var polls, work uint64
		for _, v := range n.PerCPU {
			polls += v.Polls
			work += v.Work
		}
		if polls == 0 {
			continue
		}
		x := napis[k]
		if x == nil {
			x = &NAPI{Napi: fmt.Sprintf("%#x", n.Napi)}
			napis[k] = x
			cpus[k] = make([]NAPICPU, r.NCPU)
			for c := range cpus[k] {
				cpus[k][c].CPU = c
			}
			order = append(order, k)
		}
		var hist [HistBins]uint64
		for c, v := range n.PerCPU {
			x.Polls += v.Polls
			x.Work += v.Work
			x.FullBudget += v.Full
			if v.Budget > x.Budget {
				x.Budget = v.Budget
			}
			if v.MaxWork > x.MaxWork {
				x.MaxWork = v.MaxWork
			}
			for i := range hist {
				hist[i] += v.Hist[i]
			}
			if c < len(cpus[k]) {
				cpus[k][c].Polls += v.Polls
				cpus[k][c].Work += v.Work
			}
		}
		// Merge the histogram into the one kept on x.
		prev := map[[2]uint32]uint64{}
		for _, b := range x.Hist {
			prev[[2]uint32{b.Lo, b.Hi}] += b.Polls
		}
		for _, b := range histBins(hist, maxU32(x.Budget, n.maxBudget())) {
			prev[[2]uint32{b.Lo, b.Hi}] += b.Polls
		}
		x.Hist = x.Hist[:0]
		for lh, p := range prev {
			x.Hist = append(x.Hist, HistBin{lh[0], lh[1], p})
		}
		pc := PollContext{Polls: polls, Work: work}
		switch n.Ctx {
		case CtxSoftirq:
			pc.Kind = PollSoftirq
		case CtxTask:
			pc.Kind = PollTask
			pc.PID = n.PID
			if m.Comm != nil {
				pc.Comm = m.Comm(n.PID)
			}
			if strings.HasPrefix(pc.Comm, "napi/") {
				pc.Kind = PollThread
			}
		default:
			pc.Kind = PollUnknown
			pc.PID = n.PID
		}
		x.Contexts = append(x.Contexts, pc)
	}
	for _, k := range order {
		x := napis[k]
		x.WorkPerPoll = share(x.Work, x.Polls)
		x.PollsPerSec, x.WorkPerSec = perSec(x.Polls), perSec(x.Work)
		x.FullShare = share(x.FullBudget, x.Polls)
		// Work 0 has Lo 0, over-budget polls Lo budget+1: Lo orders them.
		sort.Slice(x.Hist, func(i, j int) bool { return x.Hist[i].Lo < x.Hist[j].Lo })
		for i := range x.Contexts {
			x.Contexts[i].PollShare = share(x.Contexts[i].Polls, x.Polls)
		}
		sort.SliceStable(x.Contexts, func(i, j int) bool { return x.Contexts[i].Polls > x.Contexts[j].Polls })
		for _, c := range cpus[k] {
			if c.Polls == 0 {
				continue
			}
			c.PollShare = share(c.Polls, x.Polls)
			c.WorkShare = share(c.Work, x.Work)
			x.CPUs = append(x.CPUs, c)
		}
		d := dev(k.dev)
		d.NAPIs = append(d.NAPIs, *x)
	}
	for name, d := range devs {
		var pollsWithWork uint64
		for _, n := range d.NAPIs {
			pollsWithWork += n.Polls - n.histZero()
		}
		if name == BacklogDev {
			d.RXPath, d.RXPathNote = PathBacklog, "one per CPU, shared by all devices that use netif_rx (and by RPS)"
			continue
		}
		d.RXPath, d.RXPathNote = Classify(d.GROSegments, pollsWithWork, d.ReceiveEntry+d.ListEntry, d.NetifRx, d.Delivered)
		if d.Delivered > 0 && d.GROSegments > 0 {
			v := share(d.GROSegments, d.Delivered)
			d.GRORatio = &v
			d.GROFrom = "napi_gro_receive_entry"
		}
		if m.Light {
			lightClassify(d)
		}
		for id := range ids[name] {
			d.NAPIIDs = append(d.NAPIIDs, id)
		}
		sort.Slice(d.NAPIIDs, func(i, j int) bool { return d.NAPIIDs[i] < d.NAPIIDs[j] })
		sort.Slice(d.NAPIs, func(i, j int) bool { return d.NAPIs[i].Polls > d.NAPIs[j].Polls })
	}
	for _, name := range m.Filter {
		if devs[name] == nil {
			d := dev(name)
			d.RXPath = PathIdle
			d.RXPathNote = "no event named this device during the window"
		}
	}
	for _, d := range devs {
		d.GROSegmentsPerSec, d.DeliveredPerSec = perSec(d.GROSegments), perSec(d.Delivered)
		d.DeliveredBytesPerSec, d.NetifRxPerSec = perSec(d.DeliveredBytes), perSec(d.NetifRx)
	}
	// CPUs.
	for c, vecs := range r.Softirq {
		x := CPU{CPU: c, NetRX: vecs[VecNetRX].Count, NetRXNs: vecs[VecNetRX].Ns,
			NetTX: vecs[VecNetTX].Count, NetTXNs: vecs[VecNetTX].Ns}
		x.NetRXShare = share(x.NetRXNs, ns)
		x.NetTXShare = share(x.NetTXNs, ns)
		for _, v := range vecs {
			x.SoftirqCount = append(x.SoftirqCount, v.Count)
		}
		o.CPUs = append(o.CPUs, x)
	}
	// IRQs: those of the devices (by inspect, or by name in
	// /proc/interrupts), or all that fired when no filter is set.
	irqDevs := map[int][]string{}
	for d, irqs := range m.DevIRQs {
		for _, q := range irqs {
			irqDevs[q] = append(irqDevs[q], d)
		}
	}
	for q, name := range m.IRQNames {
		for d := range devs {
			if strings.Contains(name, d) && !slices.Contains(irqDevs[q], d) {
				irqDevs[q] = append(irqDevs[q], d)
			}
		}
	}
	for _, q := range r.IRQ {
		x := IRQ{IRQ: q.IRQ, Name: m.IRQNames[q.IRQ], Devices: irqDevs[q.IRQ]}
		for _, v := range q.PerCPU {
			x.Count += v.Count
			x.Ns += v.Ns
			x.PerCPU = append(x.PerCPU, v.Count)
		}
		if x.Count == 0 || (len(m.Filter) > 0 && len(x.Devices) == 0) {
			continue
		}
		x.PerSec, x.Share = perSec(x.Count), share(x.Ns, ns)
		sort.Strings(x.Devices)
		for _, d := range x.Devices {
			if dd := devs[d]; dd != nil {
				dd.IRQs = append(dd.IRQs, q.IRQ)
			}
		}
		o.IRQs = append(o.IRQs, x)
	}
	sort.Slice(o.IRQs, func(i, j int) bool { return o.IRQs[i].Count > o.IRQs[j].Count })
	for _, e := range m.Events {
		if e.Event == "napi:dql_stall_detected" && e.Status == "attached" {
			o.DQLStalls = &DQLStalls{r.DQL.Count, r.DQL.MaxLen, r.DQL.MaxThrs}
		}
	}
	names := make([]string, 0, len(devs))
	for n := range devs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		o.Devices = append(o.Devices, *devs[n])
	}
	return o
}

func (n RawNAPI) maxBudget() uint32 {
	var b uint32
	for _, v := range n.PerCPU {
		b = maxU32(b, v.Budget)
	}
	return b
}

func (n NAPI) histZero() uint64 {
	for _, b := range n.Hist {
		if b.Lo == 0 && b.Hi == 0 {
			return b.Polls
		}
	}
	return 0
}

func maxU32(a, b uint32) uint32 {
	if a > b {
		return a
	}
	return b
}
