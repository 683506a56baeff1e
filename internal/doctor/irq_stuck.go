// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule irq-stuck-rps-off: the interrupt that starts all of a device's RX
// work lands on one CPU and cannot be moved (the Pi 4's xHCI MSI), or the
// device has one RX source whose processing stays where the interrupt ran
// (usbnet's bottom half, the netif_rx backlog), and RPS is off - so one CPU
// does everything while the others wait. RPS over the other CPUs spreads
// protocol processing; RFS steers each flow to its reader's CPU.
//
// Rule rps-on-irq-cpu: RPS is on but includes the CPU that takes the
// interrupt, which then gets a share of the protocol work on top of the
// interrupt and the driver's own.

func init() {
	register(Rule{
		ID:      "irq-stuck-rps-off",
		Summary: "all RX interrupt work on one CPU that cannot be spread by moving the IRQ, with RPS off (or on that CPU)",
		Check:   checkIRQStuck,
	})
}

// busyIRQ is the minimum count (since boot, or between two readings) for
// an interrupt to say anything about where work runs.
const busyIRQ = 1000

func checkIRQStuck(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	var skipped []Skipped
	cpus := onlineCPUs(in.Snap)
	if len(cpus) < 2 {
		return nil, nil
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
			others := without(cpus, hot)
			rps, known := rpsCPUs(d)
			ev := []Evidence{
				{Source: src, Field: field,
					Value: fmt.Sprintf("%.0f%% of %d on CPU%d", share*100, counts.Total, hot)},
				snapEv(devField(d, fmt.Sprintf("irqs[%d].affinity_changeable", irq.Number)), "%s (%s)", irq.Changeable.State, irq.Changeable.Evidence),
			}
			if d.Datapath.USBNet.State == datapath.Yes || d.Datapath.OwnNAPI.State == datapath.No {
				ev = append(ev, snapEv(devField(d, "datapath.rx_path"), "%s", d.Datapath.RXPath))
			}
			var unchecked []string
			if irq.Changeable.State == datapath.Unknown {
				unchecked = append(unchecked, "whether the IRQ can move: the affinity probe needs root ("+irq.Changeable.Evidence+")")
			}
			if in.Obs != nil {
				ev = append(ev, netRXEvidence(in)...)
			} else {
				unchecked = append(unchecked, "whether the other CPUs are idle under load: needs --observe")
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
			switch {
			case known && len(rps) == 0:
				f := Finding{
					ID: "irq-stuck-rps-off", Severity: Warn, Impact: 60, Devices: []string{d.Name},
					Title:     fmt.Sprintf("%s: all RX interrupt work on CPU%d, RPS off", d.Name, hot),
					Evidence:  append(ev, snapEv(devField(d, "rx_queues[*].rps_cpus"), "%s", rpsMasks(d))),
					Why:       why,
					Fix:       rpsFix(in.Snap, d, others, hot),
					Verify:    verifyRX(d.Name),
					Unchecked: unchecked,
				}
				out = append(out, f)
			case known && len(cpus) > 2 && slices.Contains(rps, hot):
				f := Finding{
					ID: "rps-on-irq-cpu", Severity: Info, Impact: 25, Devices: []string{d.Name},
					Title:    fmt.Sprintf("%s: RPS sends work back to CPU%d, the CPU that takes all its interrupts", d.Name, hot),
					Evidence: append(ev, snapEv(devField(d, "rx_queues[*].rps_cpus"), "%s (CPUs %s)", rpsMasks(d), cpumask.FormatList(rps))),
					Why: fmt.Sprintf("CPU%d already runs the interrupt and the driver's RX work; RPS including it puts a share of the protocol work there too. "+
						"Leaving it out keeps that CPU for what only it can do.", hot),
					Fix:       rpsFix(in.Snap, d, others, hot),
					Verify:    verifyRX(d.Name),
					Unchecked: unchecked,
				}
				f.Fix.Actions = f.Fix.Actions[:len(d.RXQueues)] // the mask only; RFS is its own question here
				f.Fix.Commands = commands(f.Fix.Actions)
				f.Fix.Caveat, _, _ = strings.Cut(f.Fix.Caveat, " RFS")
				out = append(out, f)
			case !known:
				skipped = append(skipped, Skipped{Rule: "irq-stuck-rps-off", Device: d.Name, Reason: "rps_cpus could not be read"})
			}
			break // one finding per device: its busiest single-CPU interrupt
		}
	}
	return out, skipped
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
