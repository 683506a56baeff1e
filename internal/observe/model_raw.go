// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"fmt"
	"time"
)

// Raw counts as read from the BPF maps, and their difference between two
// reads.

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
