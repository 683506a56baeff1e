// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// What the rules on RX steering share (irq-stuck-rps-off, rps-on-irq-cpu,
// rx-one-cpu, irqs-piled, mt76u-no-gro): the interrupts stuck on one CPU
// and the RPS fix.

// busyIRQ is the minimum count (since boot, or between two readings) for
// an interrupt to say anything about where work runs.
const busyIRQ = 1000

// stuckIRQ is a device's busiest interrupt that runs on one CPU where
// moving it would not spread the work: it cannot move, or the device has
// one RX source. What the two rules on it share.
type stuckIRQ struct {
	d         *inspect.Device
	hot       int   // the CPU it runs on
	others    []int // the online CPUs but hot
	rps       []int // the device's RPS CPUs
	known     bool  // rps_cpus could be read
	ev        []Evidence
	unchecked []string
	why       string
}

// stuckIRQs finds, per device, the first interrupt that is busy, on one
// CPU (95%), and cannot spread the work by moving; none on one CPU.
func stuckIRQs(in *Input) []stuckIRQ {
	var out []stuckIRQ
	cpus := onlineCPUs(in.Snap)
	if len(cpus) < 2 {
		return nil
	}
	for _, d := range in.devices() {
		if !physical(d) || !isUp(d) || len(d.IRQs) == 0 {
			continue
		}
		single := d.Datapath.USBNet.State == datapath.Yes || d.Datapath.OwnNAPI.State == datapath.No
		for i := range d.IRQs {
			irq := &d.IRQs[i]
			counts, src, field := in.irqCounts(d.Name, irq)
			if counts.Total < busyIRQ && !(src != FromSnapshot && counts.Total >= 100) {
				continue
			}
			hot, share := hotCPU(counts)
			if share < 0.95 {
				continue
			}
			cannotMove := irq.Changeable.State == datapath.No
			if !cannotMove && !single {
				continue // a movable IRQ of a NAPI device: irqs-piled's business
			}
			s := stuckIRQ{d: d, hot: hot, others: without(cpus, hot)}
			s.rps, s.known = rpsCPUs(d)
			s.ev = []Evidence{
				{Source: src, Field: field,
					Value: fmt.Sprintf("%.0f%% of %d on CPU%d", share*100, counts.Total, hot)},
				snapEv(devField(d, fmt.Sprintf("irqs[%d].affinity_changeable", irq.Number)), "%s (%s)", irq.Changeable.State, irq.Changeable.Evidence),
			}
			if single {
				s.ev = append(s.ev, snapEv(devField(d, "datapath.rx_path"), "%s", d.Datapath.RXPath))
			}
			if irq.Changeable.State == datapath.Unknown {
				s.unchecked = append(s.unchecked, "whether the IRQ can move: the affinity probe needs root ("+irq.Changeable.Evidence+")")
			}
			if in.Obs != nil {
				s.ev = append(s.ev, netRXEvidence(in)...)
			} else {
				s.unchecked = append(s.unchecked, "whether the other CPUs are idle under load: needs --observe")
			}
			why := fmt.Sprintf("IRQ %d (%s) runs on CPU%d only", irq.Number, strings.Join(irq.Actions, ","), hot)
			if cannotMove {
				why += " and its affinity cannot be changed (" + irq.Changeable.Evidence + ")"
			}
			why += "; the driver's RX work and, without RPS, all protocol processing follow it, so one CPU saturates while the others idle. " +
				"RPS hands each flow's processing to another CPU by hash."
			switch {
			case cannotMove && piHost(in.Snap, irq):
				why += " On a Raspberry Pi the USB interrupt cannot leave CPU0 (" + srcPi4Article + ": writing the xHCI interrupt's smp_affinity answers EINVAL), and rps_cpus is the knob that works."
			case cannotMove:
				why += " Where the interrupt cannot move, rps_cpus is the knob that works."
			default:
				why += " Moving the interrupt moves the driver's work too, but it stays on one CPU; RPS spreads the protocol work that follows it."
			}
			s.why = why
			out = append(out, s)
			break // one per device: its busiest single-CPU interrupt
		}
	}
	return out
}

// piHost: a Raspberry Pi, by its kernel's name or by the interrupt chips
// of its SoCs (the Pi 4's PCIe MSI, the Pi 3's ARM control block).
func piHost(s *inspect.Snapshot, irq *inspect.IRQ) bool {
	return piKernel(s.Host.Kernel) || irq.Chip == "BRCM STB PCIe MSI" || strings.HasPrefix(irq.Chip, "ARMCTRL")
}

func rpsMasks(d *inspect.Device) string {
	var parts []string
	for _, q := range d.RXQueues {
		parts = append(parts, q.Name+"="+q.RPSCPUs)
	}
	return strings.Join(parts, " ")
}

// netRXEvidence reports how busy each CPU's NET_RX was.
func netRXEvidence(in *Input) []Evidence {
	var ev []Evidence
	for _, c := range in.Obs.CPUs {
		ev = append(ev, obsEv(fmt.Sprintf("cpus[%d].net_rx_share", c.CPU), "%.0f%%", c.NetRXShare*100))
	}
	return ev
}

// rpsFix spreads RX processing over cpus (all but the IRQ's CPU) on every
// RX queue, and adds RFS where local sockets are the consumers.
func rpsFix(s *inspect.Snapshot, d *inspect.Device, cpus []int, hot int) *Fix {
	if s.Host.OpenWrt != nil {
		return openWrtRPSFix(s, d)
	}
	cpus, bigWhy := bigCPUs(s, cpus)
	mask := cpumask.FormatMask(cpus)
	var acts []Action
	var rpsIDs []string
	for _, q := range d.RXQueues {
		acts = append(acts, sysfsAction("rps_cpus:"+d.Name+":"+q.Name, d.Name,
			"/sys/class/net/"+d.Name+"/queues/"+q.Name+"/rps_cpus", mask))
		rpsIDs = append(rpsIDs, acts[len(acts)-1].ID)
	}
	fix := &Fix{
		Caveat: fmt.Sprintf("The mask leaves out CPU%d, which takes the interrupt and runs the driver's RX work; "+
			"RPS costs an inter-processor interrupt per batch, a good trade when that CPU is the bottleneck.", hot),
	}
	if bigWhy != "" {
		fix.Caveat += " " + bigWhy
	}
	fwd, _ := sysctl(s, "net.ipv4.ip_forward")
	entries, ok := sysctlInt(s, "net.core.rps_sock_flow_entries")
	if ok && entries == 0 && fwd != "1" {
		const total = 32768
		rfs := sysctlAction("net.core.rps_sock_flow_entries", fmt.Sprint(total))
		rfs.Needs = rpsIDs
		acts = append(acts, rfs)
		per := total / max(1, len(d.RXQueues))
		for _, q := range d.RXQueues {
			a := sysfsAction("rps_flow_cnt:"+d.Name+":"+q.Name, d.Name,
				"/sys/class/net/"+d.Name+"/queues/"+q.Name+"/rps_flow_cnt", fmt.Sprint(per))
			a.Needs = rpsIDs
			acts = append(acts, a)
		}
		fix.Caveat += " RFS (rps_sock_flow_entries, rps_flow_cnt) then steers each flow to the CPU its reader runs on; it helps local sockets, not forwarding."
	}
	fix.Actions = acts
	fix.Commands = commands(acts)
	return fix
}
