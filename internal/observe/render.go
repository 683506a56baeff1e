// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"fmt"
	"io"
	"strings"
	"time"
)

func human(v uint64) string {
	f := float64(v)
	switch {
	case f >= 1e9:
		return fmt.Sprintf("%.2fG", f/1e9)
	case f >= 1e6:
		return fmt.Sprintf("%.2fM", f/1e6)
	case f >= 1e4:
		return fmt.Sprintf("%.1fk", f/1e3)
	}
	return fmt.Sprintf("%d", v)
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// rate is human() for a per-second figure.
func rate(x float64) string { return human(uint64(x + 0.5)) }

// WriteText prints an observation for people.
func WriteText(w io.Writer, o *Observation) {
	writeHeader(w, o)
	if len(o.Devices) == 0 {
		fmt.Fprintln(w, "\nno device received packets or was polled during the window")
	}
	for _, d := range o.Devices {
		writeDevice(w, d)
	}
	fmt.Fprintf(w, "\n%-4s %12s %10s %8s %12s %10s %8s\n", "CPU", "NET_RX", "time", "share", "NET_TX", "time", "share")
	for _, c := range o.CPUs {
		fmt.Fprintf(w, "%-4d %12s %9.1fms %8s %12s %9.1fms %8s\n", c.CPU, human(c.NetRX), float64(c.NetRXNs)/1e6, pct(c.NetRXShare),
			human(c.NetTX), float64(c.NetTXNs)/1e6, pct(c.NetTXShare))
	}
	writeIRQs(w, o.IRQs)
	if o.DQLStalls != nil && o.DQLStalls.Count > 0 {
		fmt.Fprintf(w, "\nBQL stalls detected: %d (max queue len %d, threshold %d)\n", o.DQLStalls.Count, o.DQLStalls.MaxLen, o.DQLStalls.MaxThrs)
	}
}

// writeHeader prints the window: its length, the tracepoints attached,
// sampling, and the notes.
func writeHeader(w io.Writer, o *Observation) {
	att, skipped := 0, 0
	for _, e := range o.Events {
		switch e.Status {
		case "attached":
			att++
		case "skipped":
			skipped++
		}
	}
	fmt.Fprintf(w, "observed %.1f s on %d CPUs, %d/%d tracepoints attached", o.DurationSec, o.NCPU, att, len(o.Events))
	if skipped > 0 {
		fmt.Fprintf(w, " (%d per-packet ones left out: light mode)", skipped)
	}
	fmt.Fprintln(w)
	if sm := o.Sample; sm != nil {
		frac := sm.Fraction
		if o.DurationSec > 0 {
			frac = sm.AttachedSec / o.DurationSec
		}
		fmt.Fprintf(w, "sampled: attached %.0f%% of the time (%.2f s of %.1f s; %v every %v); counts are from those windows, rates (/s) and shares per attached second\n",
			100*frac, sm.AttachedSec, o.DurationSec, time.Duration(sm.Fraction*sm.PeriodSec*1e9), time.Duration(sm.PeriodSec*1e9))
	}
	for _, n := range o.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

// writeDevice prints one device: its RX path, entry events, rates, NAPIs
// and IRQs.
func writeDevice(w io.Writer, d Device) {
	fmt.Fprintf(w, "\n%s  RX path: %s", d.Name, d.RXPath)
	if d.GRORatio != nil {
		fmt.Fprintf(w, "  GRO ratio %.1f (%s segments -> %s skbs)", *d.GRORatio, human(d.GROSegments), human(d.Delivered))
	}
	fmt.Fprintln(w)
	if d.RXPathNote != "" {
		fmt.Fprintf(w, "  (%s)\n", d.RXPathNote)
	}
	estimated := d.GROFrom != "" && d.GROFrom != "napi_gro_receive_entry"
	gro := "gro " + human(d.GROSegments)
	if estimated {
		gro = "NAPI work " + human(d.GROSegments) + " (for gro, estimated)"
	}
	fmt.Fprintf(w, "  entry events: %s, netif_receive_skb %s, list %s, netif_rx %s; delivered %s skbs, %s bytes\n",
		gro, human(d.ReceiveEntry), human(d.ListEntry), human(d.NetifRx), human(d.Delivered), human(d.DeliveredBytes))
	if d.Delivered > 0 || d.GROSegments > 0 || d.NetifRx > 0 {
		into := "into GRO"
		if estimated {
			into = "NAPI work"
		}
		parts := []string{fmt.Sprintf("delivered %s skbs (%sbit)", rate(d.DeliveredPerSec), rate(8*d.DeliveredBytesPerSec))}
		if d.GROSegments > 0 {
			parts = append(parts, into+" "+rate(d.GROSegmentsPerSec))
		}
		if d.NetifRx > 0 {
			parts = append(parts, "netif_rx "+rate(d.NetifRxPerSec))
		}
		fmt.Fprintf(w, "  per second: %s\n", strings.Join(parts, ", "))
	}
	for _, n := range d.NAPIs {
		writeNAPI(w, n)
	}
	if len(d.IRQs) > 0 {
		fmt.Fprintf(w, "  IRQs: %v\n", d.IRQs)
	}
}

// writeNAPI prints one NAPI: its polls and budget, the contexts and CPUs
// it ran in, and its work-per-poll histogram.
func writeNAPI(w io.Writer, n NAPI) {
	fmt.Fprintf(w, "  NAPI %s: %s polls (%s/s), %.1f work/poll (max %d), budget %d, full-budget polls %s (%s)\n",
		n.Napi, human(n.Polls), rate(n.PollsPerSec), n.WorkPerPoll, n.MaxWork, n.Budget, human(n.FullBudget), pct(n.FullShare))
	var ctx []string
	for _, c := range n.Contexts {
		s := string(c.Kind)
		if c.PID != 0 {
			s += fmt.Sprintf(" %s[%d]", c.Comm, c.PID)
		}
		ctx = append(ctx, fmt.Sprintf("%s %s", s, pct(c.PollShare)))
	}
	fmt.Fprintf(w, "    ran in:  %s\n", strings.Join(ctx, ", "))
	var cpus []string
	for _, c := range n.CPUs {
		cpus = append(cpus, fmt.Sprintf("cpu%d polls %s work %s", c.CPU, pct(c.PollShare), pct(c.WorkShare)))
	}
	fmt.Fprintf(w, "    CPUs:    %s\n", strings.Join(cpus, ", "))
	var hist []string
	for _, b := range n.Hist {
		hist = append(hist, fmt.Sprintf("%s:%s", histLabel(b), pct(float64(b.Polls)/float64(max(n.Polls, 1)))))
	}
	fmt.Fprintf(w, "    work/poll: %s\n", strings.Join(hist, " "))
}

// histLabel names a histogram bin: "0", "1-4", "7", or ">64" for polls
// over the budget.
func histLabel(b HistBin) string {
	switch {
	case b.Lo == 0 && b.Hi == 0:
		return "0"
	case b.Hi == 0:
		return fmt.Sprintf(">%d", b.Lo-1)
	case b.Lo == b.Hi:
		return fmt.Sprintf("%d", b.Lo)
	}
	return fmt.Sprintf("%d-%d", b.Lo, b.Hi)
}

// writeIRQs prints the busiest ten IRQs.
func writeIRQs(w io.Writer, irqs []IRQ) {
	if len(irqs) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-5s %10s %8s %10s %7s  %-24s %s\n", "IRQ", "count", "/s", "time", "share", "per CPU", "name")
	for i, q := range irqs {
		if i == 10 {
			fmt.Fprintf(w, "(%d more)\n", len(irqs)-10)
			break
		}
		var pc []string
		for _, c := range q.PerCPU {
			pc = append(pc, human(c))
		}
		fmt.Fprintf(w, "%-5d %10s %8s %9.1fms %7s  %-24s %s\n", q.IRQ, human(q.Count), rate(q.PerSec), float64(q.Ns)/1e6,
			pct(q.Share), strings.Join(pc, "/"), q.Name)
	}
}
