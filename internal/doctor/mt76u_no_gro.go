// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule mt76u-no-gro: an mt76 USB WiFi adapter (mt7921u and friends) whose
// RX runs in mt76u's usb-rx worker: URB completions wake the kthread, which
// hands frames to netif_receive_skb_list() because the USB path passes a
// NULL napi to mt76_rx_complete() - no NAPI, no GRO, the same loss as
// usbnet's netif_rx path. Silent once the kernel polls a threaded NAPI
// for it (napi/phyN-* kthreads on mt76's internal netdev).

// mt76uNAPI is the upstream change that gives mt76u a threaded NAPI
// (facts.go: "mt76u-threaded-napi"): its commit, and where it is.
func mt76uNAPI() (commit, where string) {
	f := fact("mt76u-threaded-napi")
	where = f.Source
	if f.Release != "" {
		where = "Linux " + f.Release
	}
	return f.Commit, where
}

func init() {
	register(Rule{
		ID:       "mt76u-no-gro",
		Summary:  "mt76 USB WiFi receiving in its usb-rx worker: no NAPI, no GRO",
		Findings: []string{"mt76u-no-gro"},
		Check:    checkMT76U,
	})
}

func checkMT76U(in *Input) ([]Finding, []Skipped) {
	commit, where := mt76uNAPI()
	napiFact := fact("mt76u-threaded-napi")
	kernel := in.Snap.Host.Kernel
	if Has(kernel, napiFact.Key) == datapath.Yes {
		return nil, nil // the kernel polls mt76u's RX on a threaded NAPI with GRO
	}
	h := hostDistroOf(in.Snap)
	var out []Finding
	for _, d := range in.devices() {
		w := d.Wireless
		if w == nil || w.Family != inspect.FamilyMT76USB || d.Datapath.OwnNAPI.State != datapath.No || !isUp(d) {
			continue
		}
		f := Finding{
			ID: "mt76u-no-gro", Severity: Warn, Impact: 70, Devices: []string{d.Name},
			Title: fmt.Sprintf("%s (%s) receives in mt76's usb-rx worker: no NAPI, no GRO", d.Name, d.Driver),
			Evidence: []Evidence{
				snapEv(devField(d, "driver"), "%s", d.Driver),
				snapEv(devField(d, "datapath.rx_path"), "%s", d.Datapath.RXPath),
				snapEv(devField(d, "datapath.own_napi"), "%s (%s)", d.Datapath.OwnNAPI.State, d.Datapath.OwnNAPI.Evidence),
			},
			Why: "mt76's USB path completes URBs into its usb-rx kthread, which hands the frames to netif_receive_skb_list() with no NAPI: " +
				"every TCP segment climbs the stack alone (GRO would merge them), the same per-packet cost as usbnet's netif_rx path, " +
				"and all of it on the CPU the worker runs on. The upstream change " + commit + " (" + where +
				") polls a threaded NAPI instead, with GRO; on a kernel that has it " + napiFact.Note + ".",
			Verify: verifyRX(d.Name),
		}
		if rx := u64(d.Stats.RxPackets); rx > 0 {
			f.Evidence = append(f.Evidence, snapEv(devField(d, "stats.rx_packets"), "%d", rx))
		}
		fix := &Fix{Commands: []string{"# the cure is a kernel that carries " + commit + " (" + where + "):"}}
		fix.Commands = append(fix.Commands, reachAdvice(h, kernel, in.Snap.Host.Arch, "mt76u's threaded NAPI", napiFact.Release, hasSeries(napiFact.Key))...)
		fix.Commands = append(fix.Commands, "# until then:")
		f.Unchecked = append(f.Unchecked, distroAssumed(h)...)
		cpus := onlineCPUs(in.Snap)
		irqCPU := -1
		for i := range d.IRQs {
			c, _, _ := in.irqCounts(d.Name, &d.IRQs[i])
			if c.Total >= busyIRQ {
				if hot, share := hotCPU(c); share >= 0.8 {
					irqCPU = hot
					f.Evidence = append(f.Evidence, snapEv(devField(d, fmt.Sprintf("irqs[%d].counts", d.IRQs[i].Number)),
						"%.0f%% on CPU%d (the USB host controller's interrupt: URB completion)", share*100, hot))
				}
				break
			}
		}
		for i, t := range w.RXWorkers {
			f.Evidence = append(f.Evidence, snapEv(devField(d, fmt.Sprintf("wireless.rx_workers[pid=%d].cpu", t.PID)), "%d (allowed %s)", t.CPU, t.AllowedCPU))
			// The worker on the interrupt's CPU competes with the URB
			// completions that feed it; elsewhere both run at once.
			if i == 0 && irqCPU >= 0 && t.CPU == irqCPU && len(cpus) > 1 {
				away := cpumask.FormatList(without(cpus, irqCPU))
				fix.Commands = append(fix.Commands,
					fmt.Sprintf("# keep the usb-rx worker off CPU%d, which takes the USB interrupt (it runs as SCHED_FIFO; not kept across reboots or replugs):", irqCPU),
					fmt.Sprintf("taskset -p -c %s %d", away, t.PID))
			}
		}
		if rps, known := rpsCPUs(d); known && len(rps) == 0 && len(cpus) > 1 {
			hot := irqCPU
			if hot < 0 && len(w.RXWorkers) > 0 {
				hot = w.RXWorkers[0].CPU
			}
			r := rpsFix(in.Snap, d, without(cpus, hot), hot)
			fix.Commands = append(fix.Commands, "# spread the protocol work that follows with RPS on "+d.Name+":")
			fix.Commands = append(fix.Commands, r.Commands...)
			fix.Actions = r.Actions
			fix.Caveat = r.Caveat
		}
		f.Fix = fix
		out = append(out, f)
	}
	return out, nil
}
