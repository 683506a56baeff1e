// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strconv"
)

// Rule softnet, two findings. softnet-squeeze: NET_RX softirqs ran out of
// budget (time_squeeze) with work left, often, between two readings.
// softnet-drops: the per-CPU backlog (netif_rx, RPS) overflowed and
// dropped packets. Both need two readings: counters since boot say
// nothing about now.

func init() {
	register(Rule{
		ID:       "softnet",
		Summary:  "softnet time_squeeze and backlog drops that grew between two readings",
		Findings: []string{"softnet-squeeze", "softnet-drops"},
		Check:    checkSoftnet,
	})
}

func checkSoftnet(in *Input) ([]Finding, []Skipped) {
	if in.Before == nil || len(in.Before.Host.Softnet) == 0 || len(in.Snap.Host.Softnet) == 0 {
		return nil, []Skipped{{Reason: "needs two readings of /proc/net/softnet_stat: run with --observe D (or --result FILE)"}}
	}
	d := softnetDeltas(in)
	var out []Finding
	// A squeeze now and then is how the budget is meant to work; one per
	// thousand packets processed, and at least 10, is a softirq that keeps
	// leaving work behind for ksoftirqd.
	if d.squeeze >= 10 && d.squeeze*1000 >= d.processed {
		out = append(out, squeezeFinding(in, d))
	}
	if d.dropped > 0 {
		out = append(out, backlogDropFinding(in, d))
	}
	return out, nil
}

// softnetDelta is how the softnet counters grew between the two readings,
// summed over the CPUs in both, with per-CPU evidence of the growth.
type softnetDelta struct {
	processed, squeeze, dropped, flowLimit uint64
	squeezeEv, dropEv                      []Evidence
}

// softnetDeltas sums the growth of each CPU's counters from in.Before to
// in.Snap; a CPU missing from the first reading, or whose counters went
// back (reset by CPU hotplug), counts nothing.
func softnetDeltas(in *Input) softnetDelta {
	before := map[int]int{}
	for i, r := range in.Before.Host.Softnet {
		before[r.CPU] = i
	}
	var d softnetDelta
	for _, r := range in.Snap.Host.Softnet {
		i, ok := before[r.CPU]
		if !ok {
			continue
		}
		b := in.Before.Host.Softnet[i]
		if r.Processed < b.Processed { // counters reset (CPU hotplug): skip
			continue
		}
		dp, ds, dd, df := r.Processed-b.Processed, r.TimeSqueeze-b.TimeSqueeze, r.Dropped-b.Dropped, r.FlowLimitCount-b.FlowLimitCount
		d.processed += dp
		d.squeeze += ds
		d.dropped += dd
		d.flowLimit += df
		if ds > 0 {
			d.squeezeEv = append(d.squeezeEv, deltaEv(fmt.Sprintf("host.softnet[cpu=%d].time_squeeze", r.CPU), "+%d (processed +%d)", ds, dp))
		}
		if dd > 0 {
			d.dropEv = append(d.dropEv, deltaEv(fmt.Sprintf("host.softnet[cpu=%d].dropped", r.CPU), "+%d (processed +%d)", dd, dp))
		}
	}
	return d
}

// squeezeFinding: NET_RX ran out of budget often; the fix raises
// netdev_budget and netdev_budget_usecs where they are low.
func squeezeFinding(in *Input, d softnetDelta) Finding {
	budget, _ := sysctlInt(in.Snap, "net.core.netdev_budget")
	usecs, _ := sysctlInt(in.Snap, "net.core.netdev_budget_usecs")
	f := Finding{
		ID: "softnet-squeeze", Severity: Warn, Impact: 35,
		Title:    fmt.Sprintf("NET_RX ran out of budget %d times for %d packets processed", d.squeeze, d.processed),
		Evidence: append(d.squeezeEv, snapEv("host.sysctls[net.core.netdev_budget]", "%d", budget), snapEv("host.sysctls[net.core.netdev_budget_usecs]", "%d", usecs)),
		Why: "time_squeeze counts NET_RX softirqs that stopped with packets left (budget packets or budget_usecs spent); the rest waits for the next " +
			"softirq or ksoftirqd, adding latency and, when the backlog fills, drops.",
		Fix:    &Fix{Caveat: "a larger budget lets one softirq run longer, delaying everything else on that CPU; prefer spreading the work (RPS, threaded NAPI) when one CPU does it all."},
		Verify: "wirespeed observe --duration 10s under the same load; time_squeeze in 'wirespeed inspect' should grow less",
	}
	if budget > 0 && budget < 600 {
		f.Fix.Actions = append(f.Fix.Actions, sysctlAction("net.core.netdev_budget", strconv.FormatInt(max(600, budget*2), 10)))
	}
	if usecs > 0 && usecs < 8000 {
		f.Fix.Actions = append(f.Fix.Actions, sysctlAction("net.core.netdev_budget_usecs", strconv.FormatInt(max(8000, usecs*2), 10)))
	}
	f.Fix.Commands = commands(f.Fix.Actions)
	if len(f.Fix.Commands) == 0 {
		f.Fix.Commands = []string{"# netdev_budget and netdev_budget_usecs are already high: spread the RX work instead (RPS, threaded NAPI)"}
	}
	return f
}

// backlogDropFinding: the per-CPU backlog dropped packets; the fix raises
// netdev_max_backlog where it is low.
func backlogDropFinding(in *Input, d softnetDelta) Finding {
	backlog, _ := sysctlInt(in.Snap, "net.core.netdev_max_backlog")
	f := Finding{
		ID: "softnet-drops", Severity: Crit, Impact: 80,
		Title:    fmt.Sprintf("%d packets dropped at the per-CPU backlog", d.dropped),
		Evidence: append(d.dropEv, snapEv("host.sysctls[net.core.netdev_max_backlog]", "%d", backlog)),
		Why: "netif_rx() and RPS queue packets to a per-CPU backlog of netdev_max_backlog packets; when the CPU cannot drain it in time the kernel drops " +
			"them, and TCP sees loss it did not cause.",
		Fix:    &Fix{Caveat: "a longer backlog absorbs bursts but adds queueing delay; if one CPU does all the work, spread it (RPS) as well."},
		Verify: "wirespeed observe --duration 10s under the same load; softnet dropped should stop growing",
	}
	if d.flowLimit > 0 {
		f.Evidence = append(f.Evidence, deltaEv("host.softnet[*].flow_limit_count", "+%d", d.flowLimit))
		f.Why += " flow_limit_count grew too: the flow limit dropped packets of the biggest flows on purpose."
	}
	if backlog > 0 && backlog < 10000 {
		f.Fix.Actions = append(f.Fix.Actions, sysctlAction("net.core.netdev_max_backlog", strconv.FormatInt(max(10000, backlog*4), 10)))
	}
	f.Fix.Commands = commands(f.Fix.Actions)
	if len(f.Fix.Commands) == 0 {
		f.Fix.Commands = []string{"# netdev_max_backlog is already large: spread the RX work (RPS) so the backlog drains"}
	}
	return f
}
