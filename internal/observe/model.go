// Package observe watches the network datapath at work with eBPF programs on
// classic tracepoints (no BTF needed): which CPU and context polls each NAPI
// instance and how much work each poll does, which RX path every device uses
// (NAPI + GRO, NAPI without GRO, netif_rx backlog) and how well GRO coalesces,
// and how much time NET_RX/NET_TX softirqs and device interrupts take per CPU.
//
// The kernel side (bpf/observe.c) only counts, in per-CPU maps. This file
// holds the pure part: raw counts (Raw), their difference between two reads,
// and the Observation built from them, so it is testable without a kernel.
package observe

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// SchemaVersion names the JSON layout of Observation.
const SchemaVersion = "wirespeed.observe/v1"

// HistBins is the number of work-per-poll histogram bins in the BPF map:
// bin 0 is work 0, bins 1..16 split (0, budget] in 16 equal parts, bin 17
// counts polls that did more than the budget (drivers that ignore it).
const HistBins = 18

// Softirq vector numbers (include/linux/interrupt.h).
const (
	VecNetTX = 2
	VecNetRX = 3
	NrVecs   = 10
)

// Poll contexts as the BPF program records them.
const (
	CtxUnknown = 0
	CtxSoftirq = 1
	CtxTask    = 2
)

// RX event kinds as the BPF program records them.
const (
	RXGro       = 0 // net:napi_gro_receive_entry
	RXSkb       = 1 // net:netif_receive_skb
	RXSkbEntry  = 2 // net:netif_receive_skb_entry
	RXListEntry = 3 // net:netif_receive_skb_list_entry
	RXNetifRx   = 4 // net:netif_rx
	rxKinds     = 5
)

// RX path classes.
const (
	PathNAPIGRO   = "NAPI + GRO"
	PathNAPINoGRO = "NAPI, no GRO"
	PathNetifRx   = "netif_rx backlog (no NAPI, no GRO)"
	PathDirect    = "netif_receive_skb outside NAPI (no GRO)"
	PathOther     = "unclassified"
	PathIdle      = "no RX seen"
	PathBacklog   = "per-CPU backlog NAPIs (process_backlog: netif_rx and RPS queues)"
)

// BacklogDev is the name napi:napi_poll gives the per-CPU backlog NAPIs,
// which have no device; observe reports them under this name.
const BacklogDev = "(no_device)"

// NAPIVal is one CPU's counters of one NAPI key.
type NAPIVal struct {
	Polls, Work, Full uint64
	Hist              [HistBins]uint64
	Budget, MaxWork   uint32
}

// RawNAPI is one key of the napi_stats map with its per-CPU values.
type RawNAPI struct {
	Napi   uint64
	Dev    string
	Ctx    int
	PID    uint32
	PerCPU []NAPIVal
}

// CountVal is a count and a byte sum.
type CountVal struct{ Count, Bytes uint64 }

// RawRX is one key of the rx_stats map with its per-CPU values.
type RawRX struct {
	Dev    string
	NapiID uint32
	Kind   int
	PerCPU []CountVal
}

// TimeVal counts entries into a handler and the nanoseconds spent in it.
type TimeVal struct{ Count, Ns uint64 }

// RawIRQ is one hardirq number with per-CPU counts and time.
type RawIRQ struct {
	IRQ    int
	PerCPU []TimeVal
}

// Raw is one read of all maps: monotonically growing totals.
type Raw struct {
	At   time.Time
	NCPU int
	// Attached is how long the programs had been attached at At: since
	// Start, or the sum of the sampling windows so far (Options.Sample).
	Attached time.Duration
	NAPI     []RawNAPI
	RX       []RawRX
	Softirq  [][NrVecs]TimeVal // [cpu][vec]
	IRQ      []RawIRQ
	DQL      struct{ Count, MaxLen, MaxThrs uint64 }
	Lost     [3]uint64
}

func napiKey(n RawNAPI) string { return fmt.Sprintf("%x/%s/%d/%d", n.Napi, n.Dev, n.Ctx, n.PID) }
func rxKey(r RawRX) string     { return fmt.Sprintf("%s/%d/%d", r.Dev, r.NapiID, r.Kind) }

func sub(a, b uint64) uint64 {
	if a < b { // a key deleted and re-created; treat as new
		return a
	}
	return a - b
}

// Diff returns the counts of cur that happened after prev.
func Diff(cur, prev *Raw) *Raw {
	if prev == nil {
		return cur
	}
	d := &Raw{At: cur.At, NCPU: cur.NCPU, DQL: cur.DQL, Attached: cur.Attached - prev.Attached}
	if d.Attached < 0 { // not from the same session
		d.Attached = cur.Attached
	}
	d.DQL.Count = sub(cur.DQL.Count, prev.DQL.Count)
	for i := range d.Lost {
		d.Lost[i] = sub(cur.Lost[i], prev.Lost[i])
	}
	pn := map[string]RawNAPI{}
	for _, n := range prev.NAPI {
		pn[napiKey(n)] = n
	}
	for _, n := range cur.NAPI {
		o := pn[napiKey(n)]
		out := n
		out.PerCPU = make([]NAPIVal, len(n.PerCPU))
		for c, v := range n.PerCPU {
			var p NAPIVal
			if c < len(o.PerCPU) {
				p = o.PerCPU[c]
			}
			v.Polls, v.Work, v.Full = sub(v.Polls, p.Polls), sub(v.Work, p.Work), sub(v.Full, p.Full)
			for i := range v.Hist {
				v.Hist[i] = sub(v.Hist[i], p.Hist[i])
			}
			out.PerCPU[c] = v
		}
		d.NAPI = append(d.NAPI, out)
	}
	pr := map[string]RawRX{}
	for _, r := range prev.RX {
		pr[rxKey(r)] = r
	}
	for _, r := range cur.RX {
		o := pr[rxKey(r)]
		out := r
		out.PerCPU = make([]CountVal, len(r.PerCPU))
		for c, v := range r.PerCPU {
			var p CountVal
			if c < len(o.PerCPU) {
				p = o.PerCPU[c]
			}
			out.PerCPU[c] = CountVal{sub(v.Count, p.Count), sub(v.Bytes, p.Bytes)}
		}
		d.RX = append(d.RX, out)
	}
	d.Softirq = make([][NrVecs]TimeVal, len(cur.Softirq))
	for c := range cur.Softirq {
		for v := range cur.Softirq[c] {
			var p TimeVal
			if c < len(prev.Softirq) {
				p = prev.Softirq[c][v]
			}
			d.Softirq[c][v] = TimeVal{sub(cur.Softirq[c][v].Count, p.Count), sub(cur.Softirq[c][v].Ns, p.Ns)}
		}
	}
	pi := map[int]RawIRQ{}
	for _, q := range prev.IRQ {
		pi[q.IRQ] = q
	}
	for _, q := range cur.IRQ {
		o := pi[q.IRQ]
		out := RawIRQ{IRQ: q.IRQ, PerCPU: make([]TimeVal, len(q.PerCPU))}
		for c, v := range q.PerCPU {
			var p TimeVal
			if c < len(o.PerCPU) {
				p = o.PerCPU[c]
			}
			out.PerCPU[c] = TimeVal{sub(v.Count, p.Count), sub(v.Ns, p.Ns)}
		}
		d.IRQ = append(d.IRQ, out)
	}
	return d
}

// Observation is what observe reports for one time window.
//
// Counts (polls, work, segments, skbs, bytes, softirqs, interrupts) are
// what the programs saw while attached; rates (*_per_s) and time shares
// are per second of attached time, and ratios (GRO ratio, poll and work
// shares, full-budget share) need no time at all. Without sampling,
// attached time is the duration.
type Observation struct {
	Schema      string        `json:"schema"`
	Start       time.Time     `json:"start"`
	DurationSec float64       `json:"duration_s"` // wall time
	Sample      *Sampling     `json:"sample,omitempty"`
	NCPU        int           `json:"ncpu"`
	Filter      []string      `json:"filter,omitempty"` // device names asked for
	Events      []EventStatus `json:"events"`
	Devices     []Device      `json:"devices"`
	CPUs        []CPU         `json:"cpus"`
	IRQs        []IRQ         `json:"irqs,omitempty"`
	DQLStalls   *DQLStalls    `json:"dql_stalls,omitempty"` // nil when the tracepoint is absent
	Lost        uint64        `json:"lost_map_updates"`     // events not counted: a map was full
	Notes       []string      `json:"notes,omitempty"`
}

// Sampling says how much of the window the programs were attached for
// (Options.Sample); absent when they were attached throughout.
type Sampling struct {
	Fraction    float64 `json:"fraction"` // asked for: attached Fraction of every period
	PeriodSec   float64 `json:"period_s"`
	AttachedSec float64 `json:"attached_s"` // measured: the windows' sum
}

// EventStatus says whether a tracepoint was counted.
type EventStatus struct {
	Event  string `json:"event"`  // "napi:napi_poll"
	Status string `json:"status"` // attached, missing, format-mismatch, failed
	Detail string `json:"detail,omitempty"`
}

// Device is one network device as the tracepoints name it. Devices in other
// network namespaces can share a name with a host device; tracepoints carry
// no ifindex or namespace, so such devices are summed under the one name
// (NAPI pointers and NAPI ids still tell them apart).
type Device struct {
	Name           string   `json:"name"`
	RXPath         string   `json:"rx_path"`
	RXPathNote     string   `json:"rx_path_note,omitempty"`
	GROSegments    uint64   `json:"gro_segments"`      // napi_gro_receive_entry
	GROBytes       uint64   `json:"gro_bytes"`         // napi_gro_receive_entry len sum
	Delivered      uint64   `json:"delivered_skbs"`    // netif_receive_skb
	DeliveredBytes uint64   `json:"delivered_bytes"`   // netif_receive_skb len sum
	ReceiveEntry   uint64   `json:"receive_skb_entry"` // netif_receive_skb_entry
	ListEntry      uint64   `json:"receive_list_entry"`
	NetifRx        uint64   `json:"netif_rx"`
	GRORatio       *float64 `json:"gro_ratio,omitempty"` // segments per delivered skb
	// Per attached second.
	GROSegmentsPerSec    float64 `json:"gro_segments_per_s"`
	DeliveredPerSec      float64 `json:"delivered_skbs_per_s"`
	DeliveredBytesPerSec float64 `json:"delivered_bytes_per_s"`
	NetifRxPerSec        float64 `json:"netif_rx_per_s"`
	// GROFrom says where the GRO input count comes from: the
	// napi_gro_receive_entry events, or in light mode the NAPI polls' work
	// (packets the driver handed up; an estimate).
	GROFrom string   `json:"gro_from,omitempty"`
	NAPIIDs []uint32 `json:"napi_ids,omitempty"` // from the rx events
	NAPIs   []NAPI   `json:"napis"`
	IRQs    []int    `json:"irqs,omitempty"`
}

// NAPI is one NAPI instance (one napi_struct) of a device.
type NAPI struct {
	Napi        string        `json:"napi"` // kernel address, as an identity
	Polls       uint64        `json:"polls"`
	Work        uint64        `json:"work"`
	PollsPerSec float64       `json:"polls_per_s"` // per attached second
	WorkPerSec  float64       `json:"work_per_s"`
	WorkPerPoll float64       `json:"work_per_poll"`
	Budget      uint32        `json:"budget"`
	MaxWork     uint32        `json:"max_work"`
	FullBudget  uint64        `json:"full_budget_polls"`
	FullShare   float64       `json:"full_budget_share"`
	Hist        []HistBin     `json:"work_histogram"`
	Contexts    []PollContext `json:"contexts"`
	CPUs        []NAPICPU     `json:"cpus"`
}

// HistBin counts polls whose work was in [Lo, Hi].
type HistBin struct {
	Lo    uint32 `json:"lo"`
	Hi    uint32 `json:"hi"` // 0 with Lo > 0: above the budget
	Polls uint64 `json:"polls"`
}

// PollContext is where polls ran: softirq, or a task (napi/<dev>-<id>
// kthread for threaded NAPI, a user task for busy polling).
type PollContext struct {
	Kind      string  `json:"kind"` // softirq, thread, task, unknown
	PID       uint32  `json:"pid,omitempty"`
	Comm      string  `json:"comm,omitempty"`
	Polls     uint64  `json:"polls"`
	Work      uint64  `json:"work"`
	PollShare float64 `json:"poll_share"`
}

// NAPICPU is a NAPI's activity on one CPU.
type NAPICPU struct {
	CPU       int     `json:"cpu"`
	Polls     uint64  `json:"polls"`
	Work      uint64  `json:"work"`
	PollShare float64 `json:"poll_share"`
	WorkShare float64 `json:"work_share"`
}

// CPU is softirq time on one CPU.
type CPU struct {
	CPU          int      `json:"cpu"`
	NetRX        uint64   `json:"net_rx_softirqs"`
	NetRXNs      uint64   `json:"net_rx_ns"`
	NetRXShare   float64  `json:"net_rx_share"` // of attached time
	NetTX        uint64   `json:"net_tx_softirqs"`
	NetTXNs      uint64   `json:"net_tx_ns"`
	NetTXShare   float64  `json:"net_tx_share"`
	SoftirqCount []uint64 `json:"softirqs_by_vec"` // all vectors, /proc/softirqs order
}

// IRQ is one hardware interrupt that fired during the window.
type IRQ struct {
	IRQ     int      `json:"irq"`
	Name    string   `json:"name,omitempty"` // actions from /proc/interrupts
	Devices []string `json:"devices,omitempty"`
	Count   uint64   `json:"count"`
	Ns      uint64   `json:"ns"`
	PerSec  float64  `json:"per_s"`      // per attached second
	Share   float64  `json:"time_share"` // of one CPU's attached time
	PerCPU  []uint64 `json:"per_cpu"`
}

// DQLStalls summarises napi:dql_stall_detected.
type DQLStalls struct {
	Count   uint64 `json:"count"`
	MaxLen  uint64 `json:"max_len"`
	MaxThrs uint64 `json:"max_thrs"`
}

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

// Classify names the RX path of a device from its event counts: gro
// segments entering GRO, polls by the device's NAPIs that did work, skbs a
// driver handed over with netif_receive_skb{,_list} (direct), skbs queued
// with netif_rx, and skbs delivered to the stack.
func Classify(gro, pollsWithWork, direct, netifRx, delivered uint64) (string, string) {
	total := gro + direct + netifRx
	note := ""
	if total > 0 {
		var parts []string
		for _, p := range []struct {
			n string
			v uint64
		}{{"GRO", gro}, {"netif_receive_skb", direct}, {"netif_rx", netifRx}} {
			if p.v > 0 && p.v*10 >= total && p.v != total {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", p.n, 100*float64(p.v)/float64(total)))
			}
		}
		if len(parts) > 1 {
			note = "mixed entry points: " + strings.Join(parts, ", ")
		}
	}
	switch {
	case gro > 0 && gro >= direct && gro >= netifRx:
		return PathNAPIGRO, note
	case netifRx > 0 && netifRx >= direct:
		return PathNetifRx, note
	case direct > 0 && pollsWithWork > 0:
		return PathNAPINoGRO, note
	case direct > 0:
		return PathDirect, note
	case pollsWithWork > 0:
		return PathNAPINoGRO, "NAPI polls did work but no RX entry event was seen"
	case delivered > 0:
		return PathOther, "skbs delivered without a traced entry point"
	}
	return PathIdle, ""
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
			pc.Kind = "softirq"
		case CtxTask:
			pc.Kind = "task"
			pc.PID = n.PID
			if m.Comm != nil {
				pc.Comm = m.Comm(n.PID)
			}
			if strings.HasPrefix(pc.Comm, "napi/") {
				pc.Kind = "thread"
			}
		default:
			pc.Kind = "unknown"
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

// lightClassify fills in what light mode did not count: the packets a
// device's NAPIs handed up (their work) stand in for the segments entering
// GRO; a ratio of work to delivered skbs above 1.1 means GRO coalesced.
// With no coalescing, "NAPI, no GRO" and "NAPI + GRO" that found nothing
// to merge (UDP, or TSO super-packets) look the same, and the note says so.
func lightClassify(d *Device) {
	var work uint64
	for _, n := range d.NAPIs {
		work += n.Work
	}
	if work == 0 || d.NetifRx >= work || d.Delivered == 0 {
		return
	}
	v := share(work, d.Delivered)
	d.GRORatio = &v
	d.GROSegments = work
	d.GROFrom = "napi_poll work (light mode estimate)"
	if v >= 1.1 {
		d.RXPath, d.RXPathNote = PathNAPIGRO, "light mode: GRO inferred from NAPI work per delivered skb"
	} else {
		d.RXPath, d.RXPathNote = PathNAPINoGRO, "light mode: no coalescing seen; GRO may be on with nothing to merge"
	}
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
