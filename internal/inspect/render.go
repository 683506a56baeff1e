// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

// WriteText prints the snapshot for a person: the host first, then one
// section per device, each line starting with what it is about.
func WriteText(w io.Writer, s *Snapshot) error {
	p := &printer{w: w}
	p.header(s)
	p.host(&s.Host)
	for i := range s.Devices {
		p.line("")
		p.device(&s.Devices[i], s)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, Printable(fmt.Sprintf(format, a...)))
	}
}

// Printable writes the control characters of s (an escape, a carriage
// return; not the line breaks and tabs of the layout)
// as Go escapes: names, aliases and driver strings come from the host,
// and a device named with an escape sequence must not drive the
// terminal the text is read on.
func Printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < ' ' && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0
}

// kv prints "  key       value" with the key column aligned.
func (p *printer) kv(key, format string, a ...any) {
	p.line("  %-10s %s", key, fmt.Sprintf(format, a...))
}

func (p *printer) header(s *Snapshot) {
	if s.Source.Kind == SourceSnapshot {
		p.line("(from snapshot %s, captured %s)", s.Source.File, s.Source.Captured)
	}
}

func yesNo(t Tri) string {
	return t.State.String()
}

func (p *printer) host(h *Host) {
	arch := ""
	if h.Arch != "" {
		arch = " " + h.Arch
	}
	p.line("host %s: kernel %s%s, %d CPUs online (%s)", h.Hostname, h.Kernel, arch, h.CPUs.Count, h.CPUs.Online)
	f := h.Features
	p.kv("features", "threaded sysfs %s, napi-get %s, per-NAPI config %s, per-NAPI threaded %s, BQL stall stats %s",
		yesNo(f.ThreadedSysfs), yesNo(f.NAPIGet), yesNo(f.PerNAPIConfig), yesNo(f.PerNAPIThreaded), yesNo(f.BQLStallStats))
	if f.NAPIGet.State != datapath.Yes {
		p.kv("", "napi-get: %s", f.NAPIGet.Evidence)
	}
	p.kv("cpufreq", "%s", cpufreqSummary(h.CPUs))
	if c := cpufreqChoicesSummary(h.CPUs); c != "" {
		p.kv("", "%s", c)
	}
	p.capacity(h.CPUs)
	p.kv("irqbalance", "%s", yesNo(h.IRQBalance))
	p.services(h.Services)
	if o := h.OS; o != nil {
		name := o.PrettyName
		if name == "" {
			name = strings.TrimSpace(o.ID + " " + o.VersionID)
		}
		if o.RPiIssue {
			name += " (Raspberry Pi OS: /etc/rpi-issue)"
		}
		p.kv("os", "%s", name)
	}
	p.openWrt(h.OpenWrt)
	var sc []string
	for _, s := range h.Sysctls {
		v := s.Value
		if s.Error != "" {
			v = "(" + s.Error + ")"
		}
		sc = append(sc, strings.TrimPrefix(s.Name, "net.core.")+"="+v)
	}
	p.kv("sysctl", "%s", wrap(sc, 90, 13))
	p.softnet(h.Softnet)
	for _, n := range h.Notes {
		p.kv("note", "%s", n)
	}
}

// softnet prints one row per CPU on small hosts; on big ones the totals,
// the busiest CPUs and every CPU that dropped or squeezed.
func (p *printer) softnet(rows []procfs.SoftnetCPU) {
	if len(rows) == 0 {
		return
	}
	head := "cpu  processed  dropped  squeezed  rps  flow_limit  backlog"
	row := func(r procfs.SoftnetCPU) {
		p.kv("", "%3d %10d %8d %9d %4d %11d %8d", r.CPU, r.Processed, r.Dropped, r.TimeSqueeze, r.ReceivedRPS, r.FlowLimitCount, r.BacklogLen)
	}
	if len(rows) <= 8 {
		p.kv("softnet", "%s", head)
		for _, r := range rows {
			row(r)
		}
		return
	}
	var tot procfs.SoftnetCPU
	for _, r := range rows {
		tot.Processed += r.Processed
		tot.Dropped += r.Dropped
		tot.TimeSqueeze += r.TimeSqueeze
	}
	p.kv("softnet", "%d CPUs: processed %d, dropped %d, squeezed %d (busiest and troubled CPUs below; all in --json)",
		len(rows), tot.Processed, tot.Dropped, tot.TimeSqueeze)
	sorted := append([]procfs.SoftnetCPU(nil), rows...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Processed > sorted[j].Processed })
	p.kv("", "%s", head)
	for i, r := range sorted {
		if i < 4 || r.Dropped > 0 || r.TimeSqueeze > 0 {
			row(r)
		}
	}
}

func cpufreqSummary(c CPUs) string {
	if len(c.PerCPU) == 0 {
		return "unknown"
	}
	var parts []string
	any := false
	for _, cpu := range c.PerCPU {
		if !cpu.HasCpufreq {
			continue
		}
		any = true
		s := fmt.Sprintf("cpu%d %s", cpu.CPU, orDash(cpu.Governor))
		if cpu.CurKHz != nil {
			s += fmt.Sprintf(" %d", *cpu.CurKHz/1000)
			if cpu.MaxKHz != nil {
				s += fmt.Sprintf("/%d", *cpu.MaxKHz/1000)
			}
			s += " MHz"
		}
		parts = append(parts, s)
	}
	if !any {
		return "no cpufreq driver (frequency not controlled by the OS, e.g. a VM)"
	}
	return strings.Join(parts, "; ")
}

func wrap(items []string, width, indent int) string {
	var b strings.Builder
	col := 0
	for i, it := range items {
		if i > 0 {
			if col+2+len(it) > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = 0
			} else {
				b.WriteString("  ")
				col += 2
			}
		}
		b.WriteString(it)
		col += len(it)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func onOff(b *bool) string {
	switch {
	case b == nil:
		return "?"
	case *b:
		return "on"
	}
	return "off"
}

func (p *printer) device(d *Device, s *Snapshot) {
	id := d.Bus
	if d.BusID != "" && d.Bus != "virtual" {
		id += " " + d.BusID
	}
	p.line("== %s (ifindex %d): %s on %s ==", d.Name, d.Ifindex, orDash(d.Driver), id)
	if u := d.USB; u != nil {
		name := strings.TrimSpace(u.Manufacturer + " " + u.Product)
		p.kv("usb", "%s %s:%s %s, %s Mbit/s USB (bcdUSB %s)", u.Path, u.VendorID, u.ProductID, name, orDash(u.SpeedMbps), orDash(u.Version))
		hc := u.HostController
		p.kv("", "host controller %s %s (%s)", orDash(hc.Bus), hc.BusID, orDash(hc.Driver))
	}
	dp := d.Datapath
	p.kv("rx path", "%s", dp.RXPath)
	if dp.RXPathNote != "" {
		p.kv("", "%s", dp.RXPathNote)
	}
	if d.Bus == "usb" {
		p.kv("usbnet", "%s (%s)", dp.USBNet.State, dp.USBNet.Evidence)
	}
	if w := d.Wireless; w != nil {
		p.kv("wireless", "%s", wirelessSummary(w))
	}
	p.kv("link", "%s", linkLine(d.Link))
	p.napis(d, s)
	p.kv("offloads", "%s", wrap(offloadItems(d.Offloads), 90, 13))
	for _, o := range d.Offloads {
		if o.Error != "" && o.Error != "not known to this kernel" {
			p.kv("", "offloads unknown: %s", o.Error)
			break
		}
	}
	p.queues(d)
	if len(d.IRQs) == 0 {
		p.kv("irq", "none found (a virtual device, or its interrupts are not named after it)")
	}
	for _, q := range d.IRQs {
		p.irq(q)
	}
	st := d.Stats
	p.kv("counters", "rx %s pkts %s B (drop %s, err %s); tx %s pkts %s B (drop %s, err %s)",
		u64(st.RxPackets), u64(st.RxBytes), u64(st.RxDropped), u64(st.RxErrors),
		u64(st.TxPackets), u64(st.TxBytes), u64(st.TxDropped), u64(st.TxErrors))
	for _, n := range d.Notes {
		p.kv("note", "%s", n)
	}
}

// linkLine is a device's link: state, carrier, speed, MTU, queue length,
// qdisc.
func linkLine(l Link) string {
	speed := "speed ?"
	if l.SpeedMbps != nil {
		speed = fmt.Sprintf("%d Mbit/s %s", *l.SpeedMbps, l.Duplex)
	}
	carrier := "carrier ?"
	if l.Carrier != nil {
		carrier = "carrier " + map[bool]string{true: "yes", false: "no"}[*l.Carrier]
	}
	return fmt.Sprintf("%s, %s, %s, mtu %s, txqueuelen %s, qdisc %s", orDash(l.Operstate), carrier, speed, intStr(l.MTU), intStr(l.TxQueueLen), orDash(l.Qdisc))
}

// napis prints the device's NAPI settings, its NAPI instances, and the
// napi threads no instance names.
func (p *printer) napis(d *Device, s *Snapshot) {
	ns := d.NAPISysfs
	p.kv("napi", "sysfs threaded=%s gro_flush_timeout=%s napi_defer_hard_irqs=%s", ns.Threaded, ns.GROFlushTimeout, ns.NAPIDeferHardIRQs)
	if !d.NAPIsKnown {
		p.kv("", "NAPI instances unknown: napi-get unavailable (%s)", s.Host.Features.NAPIGet.Evidence)
	}
	for _, n := range d.NAPIs {
		p.kv("", "%s", napiLine(n))
	}
	listed := map[int]bool{}
	for _, n := range d.NAPIs {
		if n.PID != nil {
			listed[*n.PID] = true
		}
	}
	for _, t := range d.Threads {
		if !listed[t.PID] {
			p.kv("", "thread %s pid %d on CPU %d (allowed %s), no NAPI id", t.Comm, t.PID, t.CPU, orDash(t.AllowedCPU))
		}
	}
}

// offloadItems is each offload as "name on|off [fixed]", "name n/a" when
// the kernel does not know it, "name ?" when it could not be read.
func offloadItems(offloads []Offload) []string {
	var offs []string
	for _, o := range offloads {
		switch {
		case o.Error != "" && o.Error == "not known to this kernel":
			offs = append(offs, o.Name+" n/a")
		case o.Error != "":
			offs = append(offs, o.Name+" ?")
		default:
			v := o.Name + " " + onOff(o.Active)
			if o.Fixed {
				v += " [fixed]"
			}
			offs = append(offs, v)
		}
	}
	return offs
}

// queues prints each RX queue's RPS and each TX queue's XPS and BQL.
func (p *printer) queues(d *Device) {
	for _, q := range d.RXQueues {
		if q.Error != "" {
			p.kv(q.Name, "%s", q.Error)
			continue
		}
		rps := "off"
		if q.RPSCPUList != "" {
			rps = "CPUs " + q.RPSCPUList
		}
		p.kv(q.Name, "rps %s (mask %s), rps_flow_cnt %s", rps, q.RPSCPUs, intStr(q.RPSFlowCnt))
	}
	for _, q := range d.TXQueues {
		xps := q.XPSNote
		if xps == "" {
			xps = "mask " + q.XPSCPUs
		}
		bql := "no BQL directory"
		if b := q.BQL; b != nil {
			bql = fmt.Sprintf("BQL limit %s (min %s, max %s) inflight %s hold %s ms", i64(b.Limit), i64(b.LimitMin), i64(b.LimitMax), i64(b.Inflight), i64(b.HoldTime))
			if b.StallThrs != nil {
				bql += fmt.Sprintf(", stall thrs %s cnt %s max %s", i64(b.StallThrs), i64(b.StallCnt), i64(b.StallMax))
			}
		}
		p.kv(q.Name, "xps %s; %s", xps, bql)
	}
}

func napiLine(n NAPI) string {
	s := fmt.Sprintf("NAPI id %d", n.ID)
	if n.IRQ != nil {
		s += fmt.Sprintf(" irq %d", *n.IRQ)
	}
	if n.Thread != nil {
		t := n.Thread
		s += fmt.Sprintf(": thread %s pid %d on CPU %d (allowed %s)", t.Comm, t.PID, t.CPU, orDash(t.AllowedCPU))
	} else if n.PID != nil {
		s += fmt.Sprintf(": thread pid %d", *n.PID)
	} else {
		s += ": softirq"
	}
	var extra []string
	if n.Threaded != "" {
		extra = append(extra, "threaded "+n.Threaded)
	}
	if n.DeferHardIRQs != nil {
		extra = append(extra, fmt.Sprintf("defer-hard-irqs %d", *n.DeferHardIRQs))
	}
	if n.GROFlushTimeoutNS != nil {
		extra = append(extra, fmt.Sprintf("gro-flush-timeout %d ns", *n.GROFlushTimeoutNS))
	}
	if len(n.RXQueues) > 0 || len(n.TXQueues) > 0 {
		extra = append(extra, fmt.Sprintf("queues rx %v tx %v", n.RXQueues, n.TXQueues))
	}
	if len(extra) > 0 {
		s += "; " + strings.Join(extra, ", ")
	}
	return s
}

func (p *printer) irq(q IRQ) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	for i, c := range q.Counts {
		fmt.Fprintf(tw, "CPU%d %d\t", q.CountCPUs[i], c)
	}
	tw.Flush()
	p.kv(fmt.Sprintf("irq %d", q.Number), "%s [%s] via %s", strings.Join(q.Actions, ","), orDash(q.Chip), q.Via)
	p.kv("", "counts %s", strings.TrimSpace(b.String()))
	p.kv("", "affinity %s (effective %s), changeable: %s - %s", orDash(q.SMPAffinityList), orDash(q.EffectiveAffinity), q.Changeable.State, q.Changeable.Evidence)
	if len(q.SharedWith) > 0 {
		p.kv("", "shared with: %s", strings.Join(q.SharedWith, "; "))
	}
}

func intStr(n *int) string {
	if n == nil {
		return "?"
	}
	return strconv.Itoa(*n)
}

func i64(n *int64) string {
	if n == nil {
		return "?"
	}
	return strconv.FormatInt(*n, 10)
}

func u64(n *uint64) string {
	if n == nil {
		return "?"
	}
	return strconv.FormatUint(*n, 10)
}
