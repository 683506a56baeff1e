// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

// Rule xps: on a one-TX-queue device XPS does not apply (writing xps_cpus
// answers ENOENT, which users chase); a multiqueue device without XPS gets
// a CPU -> queue mapping proposed. Never on a mac80211 (WiFi) device:
// mac80211 queues frames per station and TID in its own queues; its
// netdev has one TX queue, or (before its internal TX queues became the
// only path, and with drivers without them) four chosen by access category
// in ndo_select_queue, so xps_cpus would change nothing.

func init() {
	register(Rule{
		ID:       "xps",
		Summary:  "XPS: not applicable on one TX queue; unset on a multiqueue device",
		Findings: []string{"xps-not-applicable", "xps-unset"},
		Check:    checkXPS,
	})
}

func checkXPS(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	cpus := onlineCPUs(in.Snap)
	for _, d := range in.devices() {
		if !physical(d) || len(d.TXQueues) == 0 || isMac80211(d) {
			continue
		}
		if len(d.TXQueues) == 1 {
			if d.USB == nil {
				continue // only worth saying where users look for it: USB NICs on small boards
			}
			q := d.TXQueues[0]
			out = append(out, Finding{
				ID: "xps-not-applicable", Severity: Info, Impact: 1, Devices: []string{d.Name},
				Title:    fmt.Sprintf("%s has one TX queue: XPS does not apply", d.Name),
				Evidence: []Evidence{snapEv(devField(d, "tx_queues[tx-0].xps_note"), "%s", q.XPSNote)},
				Why:      "XPS picks a TX queue per CPU; with one queue there is nothing to pick, and the kernel answers ENOENT to xps_cpus reads and writes. Nothing to fix.",
			})
			continue
		}
		unset := 0
		for _, q := range d.TXQueues {
			if m, err := cpumask.ParseMask(q.XPSCPUs); q.XPSCPUs != "" && err == nil && len(m) == 0 {
				unset++
			}
		}
		if unset != len(d.TXQueues) || len(cpus) < 2 {
			continue
		}
		f := Finding{
			ID: "xps-unset", Severity: Info, Impact: 10, Devices: []string{d.Name},
			Title:    fmt.Sprintf("%s has %d TX queues and no XPS mapping", d.Name, len(d.TXQueues)),
			Evidence: []Evidence{snapEv(devField(d, "tx_queues[*].xps_cpus"), "all 0")},
			Why:      "without XPS the queue is chosen by flow hash, so a CPU's packets can land on a queue whose completions run elsewhere; mapping each CPU to its own queue keeps TX completion local and avoids queue lock contention.",
			Fix:      &Fix{},
			Verify:   verifyLatency(d.Name),
		}
		for i, q := range d.TXQueues {
			var set []int
			for j, c := range cpus {
				if j%len(d.TXQueues) == i {
					set = append(set, c)
				}
			}
			if len(set) == 0 {
				continue
			}
			f.Fix.Actions = append(f.Fix.Actions, sysfsAction("xps_cpus:"+d.Name+":"+q.Name, d.Name,
				"/sys/class/net/"+d.Name+"/queues/"+q.Name+"/xps_cpus", cpumask.FormatMask(set)))
		}
		f.Fix.Commands = commands(f.Fix.Actions)
		out = append(out, f)
	}
	return out, nil
}
