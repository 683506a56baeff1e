// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

// Rule rx-one-cpu: observed at work, all NET_RX softirq time sits on one
// CPU while the others do next to none, and a device without an interrupt
// of its own (veth, tun: packets processed where they were sent) receives
// with RPS off. irq-stuck-rps-off covers devices whose interrupt places the
// work; this covers those that have none.

func init() {
	register(Rule{
		ID:       "rx-one-cpu",
		Summary:  "observed: NET_RX on one CPU, others idle, for a receiving device without an IRQ and with RPS off",
		Findings: []string{"rx-one-cpu"},
		Check:    checkRXOneCPU,
	})
}

func checkRXOneCPU(in *Input) ([]Finding, []Skipped) {
	cpus := onlineCPUs(in.Snap)
	if len(cpus) < 2 {
		return nil, nil
	}
	if in.Obs == nil {
		return nil, []Skipped{{Reason: "where NET_RX runs is runtime data: needs --observe (or --result)"}}
	}
	hot, hotShare, rest := -1, 0.0, 0.0
	for _, c := range in.Obs.CPUs {
		if c.NetRXShare > hotShare {
			if hot >= 0 {
				rest = max(rest, hotShare)
			}
			hot, hotShare = c.CPU, c.NetRXShare
		} else {
			rest = max(rest, c.NetRXShare)
		}
	}
	// One CPU at least 5% in NET_RX (a veth receiver at 4 Gbit/s with
	// sender and reader on that CPU: ~10%; the rest is their copies), none
	// of the others above a third of that.
	if hot < 0 || hotShare < 0.05 || rest > hotShare/3 {
		return nil, nil
	}
	var out []Finding
	for _, d := range in.devices() {
		if len(d.IRQs) > 0 || d.Driver == "loopback" || !isUp(d) {
			continue
		}
		od := obsDevice(in.Obs, d.Name)
		if od == nil || od.DeliveredPerSec+od.NetifRxPerSec < 1000 {
			continue
		}
		if rps, known := rpsCPUs(d); !known || len(rps) > 0 {
			continue
		}
		others := without(cpus, hot)
		f := Finding{
			ID: "rx-one-cpu", Severity: Warn, Impact: 55, Devices: []string{d.Name},
			Title: fmt.Sprintf("%s: all NET_RX work on CPU%d (%.0f%% in NET_RX), the other CPUs idle, RPS off", d.Name, hot, hotShare*100),
			Evidence: []Evidence{
				obsEv(fmt.Sprintf("cpus[%d].net_rx_share", hot), "%.0f%%", hotShare*100),
				obsEv("cpus[*].net_rx_share", "at most %.0f%% on any other CPU", rest*100),
				obsEv(fmt.Sprintf("devices[%s].delivered_skbs_per_s", d.Name), "%.0f (+%.0f netif_rx/s)", od.DeliveredPerSec, od.NetifRxPerSec),
				snapEv(devField(d, "rx_queues[*].rps_cpus"), "%s", rpsMasks(d)),
			},
			Why: fmt.Sprintf("%s has no interrupt of its own: its packets are processed on the CPU that sent them (or ran its NAPI), here CPU%d, "+
				"while %s idle; RPS hands each flow's protocol processing to another CPU.", d.Name, hot, cpumask.FormatList(others)),
			Fix:    rpsFix(in.Snap, d, others, hot),
			Verify: verifyRX(d.Name),
		}
		f.Fix.Caveat = fmt.Sprintf("The mask leaves out CPU%d, where the work is now; RPS costs an inter-processor interrupt per batch.", hot)
		out = append(out, f)
	}
	return out, nil
}
