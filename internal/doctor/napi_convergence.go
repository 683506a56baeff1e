// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"slices"
	"sort"

	"github.com/wirespeed/wirespeed/internal/observe"
)

// Rule napi-convergence: several busy NAPIs (WireGuard peers, several
// devices) are polled in softirq on the same CPU. Softirq polling runs
// where the NAPI was scheduled, and schedules tend to converge on one CPU;
// threaded NAPI gives each instance a kthread the scheduler can place.

func init() {
	register(Rule{
		ID:       "napi-convergence",
		Summary:  "several busy NAPIs polled in softirq on one CPU",
		Findings: []string{"napi-convergence"},
		Check:    checkNAPIConvergence,
	})
}

type napiOnCPU struct {
	dev   string
	work  float64 // packets/s polled on this CPU in softirq
	napi  string
	share float64
}

func checkNAPIConvergence(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	var skipped []Skipped
	cpus := onlineCPUs(in.Snap)
	if len(cpus) < 2 {
		return nil, nil
	}
	if in.Obs == nil {
		skipped = append(skipped, Skipped{Reason: "where NAPIs are polled is runtime data: needs --observe (or --result)"})
		return nil, skipped
	}
	byCPU := map[int][]napiOnCPU{}
	for _, od := range in.Obs.Devices {
		if len(in.Ifaces) > 0 && !slices.Contains(in.Ifaces, od.Name) {
			continue
		}
		for _, n := range od.NAPIs {
			soft := 0.0
			for _, c := range n.Contexts {
				if c.Kind == observe.PollSoftirq {
					soft += c.PollShare
				}
			}
			if n.WorkPerSec < busyNAPIWork || soft < 0.5 {
				continue
			}
			for _, c := range n.CPUs {
				if c.WorkShare >= 0.5 {
					byCPU[c.CPU] = append(byCPU[c.CPU], napiOnCPU{od.Name, n.WorkPerSec * c.WorkShare, n.Napi, c.WorkShare})
				}
			}
		}
	}
	for _, c := range crowded(byCPU) {
		list := byCPU[c]
		f := Finding{
			ID: "napi-convergence", Severity: Warn, Impact: 55,
			Title: fmt.Sprintf("%d busy NAPIs polled in softirq on CPU%d", len(list), c),
			Why: "softirq polling runs on the CPU that scheduled the NAPI, so busy instances converge on one CPU; threaded NAPI gives each a napi/<dev>-<id> " +
				"kthread the scheduler spreads. " + srcWGPaper + "; WireGuard devices are threaded by default since " + fact("wg-threaded-default").Cite() + ".",
			Fix: &Fix{Caveat: "threaded polling moves poll time from softirq to sys and can add wake-up latency: compare total busy CPU and loaded latency, not softirq alone."},
		}
		devs := map[string]bool{}
		for _, n := range list {
			f.Evidence = append(f.Evidence, obsEv(fmt.Sprintf("devices[%s].napis[%s].cpus[%d].work_share", n.dev, n.napi, c),
				"%.0f%% of %.0f pkt/s in softirq", n.share*100, n.work/n.share))
			if !devs[n.dev] {
				devs[n.dev] = true
				f.Devices = append(f.Devices, n.dev)
			}
		}
		sort.Strings(f.Devices)
		for _, dn := range f.Devices {
			d := deviceByName(in.Snap, dn)
			if d == nil {
				f.Unchecked = append(f.Unchecked, dn+": not in the snapshot (another namespace?), no fix computed")
				continue
			}
			f.Fix.Actions = append(f.Fix.Actions, threadedActions(in.Snap, d)...)
		}
		f.Fix.Commands = commands(f.Fix.Actions)
		for _, dn := range f.Devices {
			if d := deviceByName(in.Snap, dn); d != nil && d.Driver == "wireguard" {
				f.Fix.Caveat += " " + wgThreadedCaveat(in.Snap.Host.Kernel)
				break
			}
		}
		f.Verify = verifyRX(f.Devices[0])
		out = append(out, f)
	}
	return out, skipped
}
