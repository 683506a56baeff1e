// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Helpers shared by the rules: evidence paths, CPU sets, lookups.

func devField(d *inspect.Device, field string) string {
	return fmt.Sprintf("devices[%s].%s", d.Name, field)
}

func snapEv(field string, format string, a ...any) Evidence {
	return Evidence{Source: FromSnapshot, Field: field, Value: fmt.Sprintf(format, a...)}
}

func obsEv(field string, format string, a ...any) Evidence {
	return Evidence{Source: FromObservation, Field: field, Value: fmt.Sprintf(format, a...)}
}

func deltaEv(field string, format string, a ...any) Evidence {
	return Evidence{Source: FromDelta, Field: field, Value: fmt.Sprintf(format, a...)}
}

// sysctl returns a net.core (or other recorded) sysctl's value.
func sysctl(s *inspect.Snapshot, name string) (string, bool) {
	for _, x := range s.Host.Sysctls {
		if x.Name == name && x.Error == "" {
			return x.Value, true
		}
	}
	return "", false
}

func sysctlInt(s *inspect.Snapshot, name string) (int64, bool) {
	v, ok := sysctl(s, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// onlineCPUs lists the snapshot's online CPUs.
func onlineCPUs(s *inspect.Snapshot) []int {
	if cpus, err := cpumask.ParseList(s.Host.CPUs.Online); err == nil && len(cpus) > 0 {
		return cpus
	}
	var out []int
	for i := 0; i < min(s.Host.CPUs.Count, cpumask.MaxCPUs); i++ {
		out = append(out, i)
	}
	return out
}

func without(cpus []int, drop ...int) []int {
	var out []int
	for _, c := range cpus {
		keep := true
		for _, d := range drop {
			if c == d {
				keep = false
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// offload returns a feature's state: active (nil if unknown) and fixed.
func offload(d *inspect.Device, name string) (*bool, bool) {
	for _, o := range d.Offloads {
		if o.Name == name {
			return o.Active, o.Fixed
		}
	}
	return nil, false
}

// obsDevice finds a device in the observation (nil without one).
func obsDevice(o *observe.Observation, name string) *observe.Device {
	if o == nil {
		return nil
	}
	for i := range o.Devices {
		if o.Devices[i].Name == name {
			return &o.Devices[i]
		}
	}
	return nil
}

// observedNAPI: the observation saw the device's packets delivered by NAPI
// polls (with or without GRO), not through netif_rx().
func observedNAPI(od *observe.Device) bool {
	return od != nil && od.RXPath.Class() == datapath.NAPI
}

// observationWins is said where a finding follows the observation against
// what the snapshot infers.
const observationWins = "The snapshot infers a NAPI here (its rx_path and own_napi above), but the observation saw the packets enter through netif_rx(), and what was seen wins."

// hotCPU is the CPU with the most counts of an IRQ and its share.
func hotCPU(irq *inspect.IRQ) (cpu int, share float64) {
	var best uint64
	cpu = -1
	for i, c := range irq.Counts {
		if c > best || cpu < 0 {
			best = c
			if i < len(irq.CountCPUs) {
				cpu = irq.CountCPUs[i]
			} else {
				cpu = i
			}
		}
	}
	if irq.Total > 0 {
		share = float64(best) / float64(irq.Total)
	}
	return cpu, share
}

// irqDelta returns the counts of an IRQ that moved between Before and
// Snap (nil when there is no earlier reading of it).
func (in *Input) irqDelta(dev string, irq *inspect.IRQ) *inspect.IRQ {
	if in.Before == nil {
		return nil
	}
	for i := range in.Before.Devices {
		bd := &in.Before.Devices[i]
		if bd.Name != dev {
			continue
		}
		for j := range bd.IRQs {
			b := &bd.IRQs[j]
			if b.Number != irq.Number || len(b.Counts) != len(irq.Counts) {
				continue
			}
			d := *irq
			d.Counts = make([]uint64, len(irq.Counts))
			d.Total = 0
			for k := range irq.Counts {
				if irq.Counts[k] >= b.Counts[k] {
					d.Counts[k] = irq.Counts[k] - b.Counts[k]
				}
				d.Total += d.Counts[k]
			}
			return &d
		}
	}
	return nil
}

// rpsCPUs is the union of a device's RX queues' RPS CPUs; known is false
// when no queue's mask could be read.
func rpsCPUs(d *inspect.Device) (cpus []int, known bool) {
	set := map[int]bool{}
	for _, q := range d.RXQueues {
		if q.RPSCPUs == "" {
			continue
		}
		known = true
		if c, err := cpumask.ParseMask(q.RPSCPUs); err == nil {
			for _, x := range c {
				set[x] = true
			}
		}
	}
	for c := range set {
		cpus = append(cpus, c)
	}
	sort.Ints(cpus)
	return cpus, known
}

func isUp(d *inspect.Device) bool {
	return d.Link.Operstate == "up" || (d.Link.Operstate == "unknown" && d.Link.Carrier != nil && *d.Link.Carrier)
}

// physical is a device with a bus of its own (USB, PCI, platform, virtio).
func physical(d *inspect.Device) bool {
	return d.Bus != "" && d.Bus != "virtual"
}

func u64(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// verifyRX is the bench command that shows an RX-side change.
func verifyRX(dev string) string {
	return fmt.Sprintf("wirespeed bench --peer PEER --iface %s --direction receive -P 10 -t 60s --omit 5s --out before.json; "+
		"apply the fix; the same with --out after.json; wirespeed compare before.json after.json", dev)
}

// verifyLatency is the bench command that shows a TX queueing change.
func verifyLatency(dev string) string {
	return fmt.Sprintf("wirespeed bench --peer PEER --iface %s --direction send -P 2 --probe-interval 20ms --priority 6 -t 30s --out before.json; "+
		"apply the fix; the same with --out after.json; wirespeed compare before.json after.json (loaded ICMP p50/p99)", dev)
}

func sysfsAction(id, dev, path, value string) Action {
	return Action{ID: id, Kind: KindSysfs, Device: dev, Target: path, Value: value,
		Command: fmt.Sprintf("echo %s > %s", value, path)}
}

func sysctlAction(name, value string) Action {
	return Action{ID: "sysctl:" + name, Kind: KindSysctl, Target: name, Value: value,
		Command: fmt.Sprintf("sysctl -w %s=%s", name, value)}
}

func ethtoolAction(dev, feature, value string) Action {
	return Action{ID: feature + ":" + dev, Kind: KindEthtool, Device: dev, Target: feature, Value: value,
		Command: fmt.Sprintf("ethtool -K %s %s %s", dev, feature, value)}
}

func irqAction(dev string, irq int, cpus []int) Action {
	l := cpumask.FormatList(cpus)
	return Action{ID: fmt.Sprintf("irq:%d", irq), Kind: KindIRQAffinity, Device: dev,
		Target: strconv.Itoa(irq), Value: l,
		Command: fmt.Sprintf("echo %s > /proc/irq/%d/smp_affinity_list", l, irq)}
}

func commands(acts []Action) []string {
	out := make([]string, 0, len(acts))
	for _, a := range acts {
		out = append(out, a.Command)
	}
	return out
}

// irqCounts picks the best evidence of where an IRQ fires: the
// observation's per-CPU counts (runtime), else the counts that moved
// between two readings, else the counts since boot.
func (in *Input) irqCounts(dev string, irq *inspect.IRQ) (*inspect.IRQ, EvidenceSource, string) {
	field := devField(&inspect.Device{Name: dev}, fmt.Sprintf("irqs[%d].counts", irq.Number))
	if in.Obs != nil {
		for _, o := range in.Obs.IRQs {
			if o.IRQ != irq.Number || o.Count == 0 {
				continue
			}
			c := *irq
			c.Counts, c.CountCPUs, c.Total = append([]uint64(nil), o.PerCPU...), nil, o.Count
			return &c, FromObservation, fmt.Sprintf("irqs[%d].per_cpu", irq.Number)
		}
	}
	if d := in.irqDelta(dev, irq); d != nil {
		return d, FromDelta, field
	}
	return irq, FromSnapshot, field
}

// crowded returns, in order, the CPUs holding two or more of something.
func crowded[T any](byCPU map[int][]T) []int {
	var out []int
	for c, l := range byCPU {
		if len(l) >= 2 {
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out
}
