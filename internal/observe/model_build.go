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
	b := &builder{r: r, m: m, o: o, devs: map[string]*Device{}}
	b.window()
	napiIDs := b.rxEvents()
	b.napiPolls()
	b.classify(napiIDs)
	b.idleFiltered()
	for _, d := range b.devs {
		d.GROSegmentsPerSec, d.DeliveredPerSec = b.perSec(d.GROSegments), b.perSec(d.Delivered)
		d.DeliveredBytesPerSec, d.NetifRxPerSec = b.perSec(d.DeliveredBytes), b.perSec(d.NetifRx)
	}
	b.cpus()
	b.irqs()
	for _, e := range m.Events {
		if e.Event == "napi:dql_stall_detected" && e.Status == "attached" {
			o.DQLStalls = &DQLStalls{r.DQL.Count, r.DQL.MaxLen, r.DQL.MaxThrs}
		}
	}
	names := make([]string, 0, len(b.devs))
	for n := range b.devs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		o.Devices = append(o.Devices, *b.devs[n])
	}
	return o
}

// builder is what Build's steps share: the counts, the Observation being
// made, the attached time rates are over, and the devices met so far.
type builder struct {
	r    *Raw
	m    Meta
	o    *Observation
	ns   uint64 // attached nanoseconds: rates and shares are over this
	devs map[string]*Device
}

// perSec is n per attached second (0 when nothing was attached).
func (b *builder) perSec(n uint64) float64 {
	if b.ns == 0 {
		return 0
	}
	return float64(n) * 1e9 / float64(b.ns)
}

// dev returns the device of that name, made on first use.
func (b *builder) dev(name string) *Device {
	d := b.devs[name]
	if d == nil {
		d = &Device{Name: name, NAPIs: []NAPI{}}
		b.devs[name] = d
	}
	return d
}

// window sets the time rates and shares are over (the attached time when
// sampling) and notes a window without sampling time or with lost events.
func (b *builder) window() {
	attached := b.m.Duration
	if b.m.Sample > 0 && b.m.Sample < 1 {
		attached = b.m.Attached
		b.o.Sample = &Sampling{Fraction: b.m.Sample, PeriodSec: b.m.Period.Seconds(), AttachedSec: attached.Seconds()}
		if attached <= 0 {
			b.o.Notes = append(b.o.Notes, "no sampling window fell in this interval: nothing was counted")
		}
	}
	b.ns = uint64(max(attached, 0).Nanoseconds())
	b.o.Lost = b.r.Lost[0] + b.r.Lost[1] + b.r.Lost[2]
	if b.o.Lost > 0 {
		b.o.Notes = append(b.o.Notes, fmt.Sprintf("%d events not counted: a BPF map was full", b.o.Lost))
	}
}

// rxEvents adds the RX events to the devices they name and returns the
// NAPI ids seen per device.
func (b *builder) rxEvents() map[string]map[uint32]bool {
	ids := map[string]map[uint32]bool{}
	for _, rx := range b.r.RX {
		if !wanted(b.m.Filter, rx.Dev) {
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
		addRX(b.dev(rx.Dev), rx.Kind, c)
		if rx.NapiID != 0 {
			if ids[rx.Dev] == nil {
				ids[rx.Dev] = map[uint32]bool{}
			}
			ids[rx.Dev][rx.NapiID] = true
		}
	}
	return ids
}

// addRX counts c events of one RX kind on d.
func addRX(d *Device, kind int, c CountVal) {
	switch kind {
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
}

// pollKey groups NAPI polls by napi pointer and device name.
type pollKey struct {
	napi uint64
	dev  string
}

// pollSum is one NAPI being summed over its map keys (one per context)
// and CPUs.
type pollSum struct {
	x    *NAPI
	cpus []NAPICPU
}

// napiPolls sums the NAPI polls per napi and device and gives each device
// its NAPIs. The backlog NAPIs serve every netif_rx device: they are shown
// with the devices that used them.
func (b *builder) napiPolls() {
	sums := map[pollKey]*pollSum{}
	var order []pollKey
	backlog := len(b.m.Filter) == 0 || wanted(b.m.Filter, BacklogDev)
	for _, d := range b.devs {
		backlog = backlog || d.NetifRx > 0
	}
	for _, n := range b.r.NAPI {
		if !wanted(b.m.Filter, n.Dev) && !(n.Dev == BacklogDev && backlog) {
			continue
		}
		k := pollKey{n.Napi, n.Dev}
		var polls, work uint64
		for _, v := range n.PerCPU {
			polls += v.Polls
			work += v.Work
		}
		if polls == 0 {
			continue
		}
		s := sums[k]
		if s == nil {
			s = &pollSum{x: &NAPI{Napi: fmt.Sprintf("%#x", n.Napi)}, cpus: make([]NAPICPU, b.r.NCPU)}
			for c := range s.cpus {
				s.cpus[c].CPU = c
			}
			sums[k] = s
			order = append(order, k)
		}
		s.add(n)
		s.x.Contexts = append(s.x.Contexts, pollContext(n, polls, work, b.m.Comm))
	}
	for _, k := range order {
		d := b.dev(k.dev)
		d.NAPIs = append(d.NAPIs, sums[k].finish(b.perSec))
	}
}

// add sums one map key's per-CPU counts into s and merges its histogram
// into the NAPI's.
func (s *pollSum) add(n RawNAPI) {
	x := s.x
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
		if c < len(s.cpus) {
			s.cpus[c].Polls += v.Polls
			s.cpus[c].Work += v.Work
		}
	}
	x.Hist = mergeHist(x.Hist, histBins(hist, maxU32(x.Budget, n.maxBudget())))
}

// mergeHist adds the bins of b to those of a with the same bounds, in no
// particular order (finish sorts them).
func mergeHist(a, b []HistBin) []HistBin {
	sum := map[[2]uint32]uint64{}
	for _, h := range a {
		sum[[2]uint32{h.Lo, h.Hi}] += h.Polls
	}
	for _, h := range b {
		sum[[2]uint32{h.Lo, h.Hi}] += h.Polls
	}
	out := a[:0]
	for lh, p := range sum {
		out = append(out, HistBin{lh[0], lh[1], p})
	}
	return out
}

// pollContext is the context one map key's polls ran in: softirq, a task,
// or a threaded-NAPI kthread (a task whose comm is napi/...).
func pollContext(n RawNAPI, polls, work uint64, comm func(uint32) string) PollContext {
	pc := PollContext{Polls: polls, Work: work}
	switch n.Ctx {
	case CtxSoftirq:
		pc.Kind = PollSoftirq
	case CtxTask:
		pc.Kind = PollTask
		pc.PID = n.PID
		if comm != nil {
			pc.Comm = comm(n.PID)
		}
		if strings.HasPrefix(pc.Comm, "napi/") {
			pc.Kind = PollThread
		}
	default:
		pc.Kind = PollUnknown
		pc.PID = n.PID
	}
	return pc
}

// finish gives the summed NAPI its rates and shares, its histogram in
// order, its contexts busiest first and the CPUs that polled it.
func (s *pollSum) finish(perSec func(uint64) float64) NAPI {
	x := s.x
	x.WorkPerPoll = share(x.Work, x.Polls)
	x.PollsPerSec, x.WorkPerSec = perSec(x.Polls), perSec(x.Work)
	x.FullShare = share(x.FullBudget, x.Polls)
	// Work 0 has Lo 0, over-budget polls Lo budget+1: Lo orders them.
	sort.Slice(x.Hist, func(i, j int) bool { return x.Hist[i].Lo < x.Hist[j].Lo })
	for i := range x.Contexts {
		x.Contexts[i].PollShare = share(x.Contexts[i].Polls, x.Polls)
	}
	sort.SliceStable(x.Contexts, func(i, j int) bool { return x.Contexts[i].Polls > x.Contexts[j].Polls })
	for _, c := range s.cpus {
		if c.Polls == 0 {
			continue
		}
		c.PollShare = share(c.Polls, x.Polls)
		c.WorkShare = share(c.Work, x.Work)
		x.CPUs = append(x.CPUs, c)
	}
	return *x
}

// classify gives each device its RX path, GRO ratio and NAPI ids, and
// orders its NAPIs busiest first.
func (b *builder) classify(napiIDs map[string]map[uint32]bool) {
	for name, d := range b.devs {
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
		if b.m.Light {
			lightClassify(d)
		}
		for id := range napiIDs[name] {
			d.NAPIIDs = append(d.NAPIIDs, id)
		}
		sort.Slice(d.NAPIIDs, func(i, j int) bool { return d.NAPIIDs[i] < d.NAPIIDs[j] })
		sort.Slice(d.NAPIs, func(i, j int) bool { return d.NAPIs[i].Polls > d.NAPIs[j].Polls })
	}
}

// idleFiltered adds the devices the filter names that no event named, as
// idle.
func (b *builder) idleFiltered() {
	for _, name := range b.m.Filter {
		if b.devs[name] == nil {
			d := b.dev(name)
			d.RXPath = PathIdle
			d.RXPathNote = "no event named this device during the window"
		}
	}
}

// cpus adds each CPU's NET_RX and NET_TX softirq time and softirq counts.
func (b *builder) cpus() {
	for c, vecs := range b.r.Softirq {
		x := CPU{CPU: c, NetRX: vecs[VecNetRX].Count, NetRXNs: vecs[VecNetRX].Ns,
			NetTX: vecs[VecNetTX].Count, NetTXNs: vecs[VecNetTX].Ns}
		x.NetRXShare = share(x.NetRXNs, b.ns)
		x.NetTXShare = share(x.NetTXNs, b.ns)
		for _, v := range vecs {
			x.SoftirqCount = append(x.SoftirqCount, v.Count)
		}
		b.o.CPUs = append(b.o.CPUs, x)
	}
}

// irqs adds the IRQs of the devices (by inspect, or by name in
// /proc/interrupts), or all that fired when no filter is set, busiest
// first, and gives each device its IRQ numbers.
func (b *builder) irqs() {
	irqDevs := irqDevices(b.m.DevIRQs, b.m.IRQNames, b.devs)
	for _, q := range b.r.IRQ {
		x := IRQ{IRQ: q.IRQ, Name: b.m.IRQNames[q.IRQ], Devices: irqDevs[q.IRQ]}
		for _, v := range q.PerCPU {
			x.Count += v.Count
			x.Ns += v.Ns
			x.PerCPU = append(x.PerCPU, v.Count)
		}
		if x.Count == 0 || (len(b.m.Filter) > 0 && len(x.Devices) == 0) {
			continue
		}
		x.PerSec, x.Share = b.perSec(x.Count), share(x.Ns, b.ns)
		sort.Strings(x.Devices)
		for _, d := range x.Devices {
			if dd := b.devs[d]; dd != nil {
				dd.IRQs = append(dd.IRQs, q.IRQ)
			}
		}
		b.o.IRQs = append(b.o.IRQs, x)
	}
	sort.Slice(b.o.IRQs, func(i, j int) bool { return b.o.IRQs[i].Count > b.o.IRQs[j].Count })
}

// irqDevices maps each IRQ to the devices it serves: those inspect named
// (devIRQs), and the devices seen whose name is in the IRQ's actions.
func irqDevices(devIRQs map[string][]int, irqNames map[int]string, devs map[string]*Device) map[int][]string {
	irqDevs := map[int][]string{}
	for d, irqs := range devIRQs {
		for _, q := range irqs {
			irqDevs[q] = append(irqDevs[q], d)
		}
	}
	for q, name := range irqNames {
		for d := range devs {
			if strings.Contains(name, d) && !slices.Contains(irqDevs[q], d) {
				irqDevs[q] = append(irqDevs[q], d)
			}
		}
	}
	return irqDevs
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
