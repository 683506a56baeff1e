// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule wg-softirq-risk: a host with several WireGuard devices whose NAPIs
// are polled in softirq. WireGuard raises the softirq only after a peer's
// queue drains, which does not happen during a surge, so the softirq
// already running on a core is reused and the tunnels' polling converges
// there until the surge ends. A snapshot cannot show that happening; the
// rule says the risk, how to confirm it (an observation under load, where
// napi-convergence names the CPU) and the fix, and stays silent where an
// observation already saw the devices busy.

func init() {
	register(Rule{
		ID:       "wg-softirq-risk",
		Summary:  "several WireGuard devices polled in softirq: a known convergence risk under a surge (confirm with --observe)",
		Findings: []string{"wg-softirq-risk"},
		Check:    checkWGSoftirq,
	})
}

func checkWGSoftirq(in *Input) ([]Finding, []Skipped) {
	if len(onlineCPUs(in.Snap)) < 2 {
		return nil, nil
	}
	var soft []*inspect.Device
	for _, d := range wireguards(in) {
		if !napiThreaded(d) && d.NAPISysfs.Threaded == "0" {
			soft = append(soft, d)
		}
	}
	if len(soft) < 2 {
		return nil, nil
	}
	var idle []string
	for _, d := range soft {
		if od := obsDevice(in.Obs, d.Name); od != nil {
			for _, n := range od.NAPIs {
				if n.WorkPerSec >= busyNAPIWork {
					return nil, nil // seen under load: napi-convergence judges what happened
				}
			}
		}
		idle = append(idle, d.Name)
	}
	rel := in.Snap.Host.Kernel
	names := deviceNames(soft)
	f := Finding{
		ID: "wg-softirq-risk", Severity: Info, Impact: 30, Devices: names,
		Title: fmt.Sprintf("%s: %d WireGuard devices poll in softirq; under a surge on several tunnels their polling can converge on one CPU (a risk, not seen)",
			nameList(names), len(soft)),
		Why: "WireGuard raises the NET_RX softirq only after a peer's queue drains, which does not happen while traffic surges; the softirq already " +
			"running on a core is reused, so tunnels that land on the same core stay there until the surge ends and the other CPUs idle. " +
			srcWGPaper + "; that is why WireGuard devices are threaded by default since " + fact("wg-threaded-default").Cite() + ".",
		Verify: fmt.Sprintf("wirespeed doctor --observe 30s while several tunnels carry load at once: finding napi-convergence names the CPU if polling converged; "+
			"after the fix, the same observation should show the napi/%s-* threads on different CPUs", names[0]),
		Fix: &Fix{},
	}
	for _, d := range soft {
		f.Evidence = append(f.Evidence, snapEv(devField(d, "napi_sysfs.threaded"), "%s", d.NAPISysfs.Threaded))
	}
	if in.Obs == nil {
		f.Unchecked = append(f.Unchecked, "whether polling converges on this host: needs --observe under load")
	} else {
		f.Unchecked = append(f.Unchecked, "the observation saw no load on "+strings.Join(idle, ", ")+": observe again while the tunnels are busy")
	}
	caveat := wgThreadedCaveat(rel)
	if _, inRange, _ := InStable(rel, "wg-threaded-default"); inRange {
		// The stall is known on this kernel: do not offer threaded NAPI.
		f.Fix.Commands = []string{"# upgrade the kernel first; threaded NAPI on this one risks a stalled peer (see the caveat)"}
	} else {
		for _, d := range soft {
			f.Fix.Actions = append(f.Fix.Actions, threadedActions(in.Snap, d)...)
		}
		f.Fix.Commands = commands(f.Fix.Actions)
	}
	f.Fix.Caveat = caveat + " Threaded polling moves poll time from softirq to sys: compare total busy CPU, not softirq alone."
	return []Finding{f}, nil
}
