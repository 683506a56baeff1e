// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule irqs-piled: interrupts of busy devices that could be moved all run
// on the same CPU while other CPUs take none of them. Spreading them gives
// each its own CPU for the interrupt and the NAPI poll it schedules.

func init() {
	register(Rule{
		ID:       "irqs-piled",
		Summary:  "movable interrupts of busy devices piled on one CPU",
		Findings: []string{"irqs-piled"},
		Check:    checkIRQsPiled,
	})
}

type irqUse struct {
	dev    string
	irq    int
	name   string
	hot    int
	total  uint64
	source EvidenceSource
	field  string
}

func checkIRQsPiled(in *Input) ([]Finding, []Skipped) {
	cpus := onlineCPUs(in.Snap)
	if len(cpus) < 2 {
		return nil, nil
	}
	spread := spreadDevices(in)
	byCPU, used := busyIRQsByCPU(in)
	oneVectorPerDevice(byCPU, spread)
	free := idleCPUs(cpus, used)
	if len(free) == 0 {
		// every CPU already takes a busy interrupt: moving one makes
		// no CPU less loaded that was idle
		return nil, nil
	}
	var out []Finding
	for _, c := range crowded(byCPU) {
		out = append(out, piledFinding(in, c, byCPU[c], free))
	}
	return out, nil
}

// spreadDevices names the devices whose vectors the driver already placed
// on more than one CPU (a multi-queue NIC or WiFi card, one MSI-X vector
// per queue). Two of such a device's vectors on one CPU - iwlwifi's
// notification (default) queue beside its first RSS queue - are its
// layout, and which queue is busy follows the flows' hash, not placement:
// they count as one interrupt of that device.
func spreadDevices(in *Input) map[string]bool {
	spread := map[string]bool{}
	for _, d := range in.devices() {
		placed := map[int]bool{}
		for i := range d.IRQs {
			if c, ok := placedOn(&d.IRQs[i]); ok {
				placed[c] = true
			} else if counts, _, _ := in.irqCounts(d.Name, &d.IRQs[i]); counts.Total > 0 {
				hot, _ := hotCPU(counts)
				placed[hot] = true
			}
		}
		spread[d.Name] = len(placed) > 1
	}
	return spread
}

// busyIRQsByCPU walks the interrupts of physical devices that are up, each
// once: used marks every CPU that takes most of some interrupt, byCPU
// lists per CPU the busy, movable interrupts that run (almost) only there.
func busyIRQsByCPU(in *Input) (byCPU map[int][]irqUse, used map[int]bool) {
	seen := map[int]bool{}
	byCPU = map[int][]irqUse{}
	used = map[int]bool{}
	for _, d := range in.devices() {
		if !physical(d) || !isUp(d) {
			continue
		}
		for i := range d.IRQs {
			irq := &d.IRQs[i]
			if seen[irq.Number] {
				continue
			}
			seen[irq.Number] = true
			counts, src, field := in.irqCounts(d.Name, irq)
			hot, share := hotCPU(counts)
			if counts.Total == 0 {
				continue
			}
			used[hot] = true
			if counts.Total < busyIRQ || share < 0.9 || irq.Changeable.State == datapath.No {
				continue
			}
			byCPU[hot] = append(byCPU[hot], irqUse{d.Name, irq.Number, strings.Join(irq.Actions, ","), hot, counts.Total, src, field})
		}
	}
	return byCPU, used
}

// oneVectorPerDevice sorts each CPU's list busiest first and keeps, of a
// spread device (spreadDevices), only its busiest vector on that CPU.
func oneVectorPerDevice(byCPU map[int][]irqUse, spread map[string]bool) {
	for c, list := range byCPU {
		sort.Slice(list, func(i, j int) bool { return list[i].total > list[j].total })
		var kept []irqUse
		one := map[string]bool{}
		for _, u := range list {
			if spread[u.dev] && one[u.dev] {
				continue // the device's other vector here: its layout
			}
			one[u.dev] = true
			kept = append(kept, u)
		}
		byCPU[c] = kept
	}
}

// idleCPUs are the CPUs of cpus that take no interrupt (not in used).
func idleCPUs(cpus []int, used map[int]bool) []int {
	free := []int{}
	for _, x := range cpus {
		if !used[x] {
			free = append(free, x)
		}
	}
	return free
}

// piledFinding is the finding for CPU c and its busy interrupts list
// (busiest first): all but the busiest move to the free CPUs in turn.
func piledFinding(in *Input, c int, list []irqUse, free []int) Finding {
	f := Finding{
		ID: "irqs-piled", Severity: Warn, Impact: 45,
		Title: fmt.Sprintf("%d busy interrupts share CPU%d while %d other CPU(s) take none", len(list), c, len(free)),
		Why: "each interrupt schedules its NAPI poll on the CPU it ran on, so interrupts piled on one CPU put their devices' RX processing there too; " +
			"moving all but the busiest to idle CPUs lets them run in parallel.",
		Fix: &Fix{Caveat: "irqbalance, if it runs, may move them again: stop it, or set IRQBALANCE_BANNED_CPULIST / --banirq for these IRQs."},
	}
	if big, why := bigCPUs(in.Snap, free); why != "" {
		free = big
		f.Why += " " + why
		f.Evidence = append(f.Evidence, capacityEvidence(in.Snap)...)
	}
	devs := map[string]bool{}
	for i, u := range list {
		if !devs[u.dev] {
			devs[u.dev] = true
			f.Devices = append(f.Devices, u.dev)
		}
		f.Evidence = append(f.Evidence, Evidence{Source: u.source, Field: u.field,
			Value: fmt.Sprintf("%d (%s) on CPU%d", u.total, u.name, c)})
		if i == 0 {
			continue // the busiest stays
		}
		to := free[(i-1)%len(free)]
		f.Fix.Actions = append(f.Fix.Actions, irqAction(u.dev, u.irq, []int{to}))
	}
	f.Fix.Commands = commands(f.Fix.Actions)
	noteIRQBalance(in, &f)
	if hostDistroOf(in.Snap).Distro == distroOpenWrt {
		openWrtIRQNote(&f)
	}
	if len(f.Devices) > 0 {
		f.Verify = verifyRX(f.Devices[0])
	}
	return f
}

// noteIRQBalance adds to f what the snapshot says of irqbalance: it runs
// (and left them together), it does not (the fix lasts until reboot), or
// unknown.
func noteIRQBalance(in *Input, f *Finding) {
	switch ib := in.Snap.Host.IRQBalance; ib.State {
	case datapath.Yes:
		f.Evidence = append(f.Evidence, snapEv("host.irqbalance", "yes (%s)", ib.Evidence))
		f.Why += " irqbalance runs here and left them together (it places by load class, and may move them back after a fix)."
	case datapath.No:
		f.Evidence = append(f.Evidence, snapEv("host.irqbalance", "no"))
		f.Fix.Caveat = "irqbalance does not run: these affinities stay until reboot unless made persistent (wirespeed tune persist)."
	default:
		f.Unchecked = append(f.Unchecked, "whether irqbalance runs: "+ib.Evidence+" (check: pgrep -a irqbalance)")
	}
}

// placedOn is the one CPU an interrupt was placed on - its
// smp_affinity_list names a single CPU: the driver's affinity hint (one
// queue per CPU) or a tuner's choice. The effective affinity is not a
// placement: it is where the kernel put a vector allowed on several CPUs.
func placedOn(irq *inspect.IRQ) (int, bool) {
	if c, err := cpumask.ParseList(irq.SMPAffinityList); err == nil && len(c) == 1 {
		return c[0], true
	}
	return 0, false
}
