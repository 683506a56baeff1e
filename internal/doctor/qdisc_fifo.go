// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule qdisc-fifo: a physical device with a FIFO root qdisc where a fair
// queue would keep a bulk flow from delaying everything else - over BQL,
// or over a driver queue without it (tx-no-bql's finding, which the fix
// follows). Not on a mac80211 (WiFi) device, as tx-no-bql.

func init() {
	register(Rule{
		ID:       "qdisc-fifo",
		Summary:  "FIFO root qdisc",
		Findings: []string{"qdisc-fifo"},
		Check:    checkQdiscFIFO,
	})
}

func checkQdiscFIFO(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range txQueued(in) {
		f, unused, tx := txNoBQL(in, d)
		if f != nil {
			if fifoQdisc[d.Link.Qdisc] {
				out = append(out, fifoOverDriverQueue(in, d, *f))
			}
			continue
		}
		if !unused && tx > 0 && (fifoQdisc[d.Link.Qdisc] || d.Link.Qdisc == "noqueue") {
			a := Action{ID: "qdisc:" + d.Name, Kind: KindQdisc, Device: d.Name, Target: "root", Value: "fq_codel",
				Command: fmt.Sprintf("tc qdisc replace dev %s root fq_codel", d.Name)}
			var unchecked []string
			if def, _ := sysctl(in.Snap, "net.core.default_qdisc"); def != "fq_codel" {
				// The default qdisc is the one sign in a snapshot that the
				// kernel has fq_codel; some kernels are built without it.
				unchecked = append(unchecked, "whether this kernel has fq_codel (default_qdisc is "+def+
					"): tc answers \"Unknown qdisc\" where it lacks it, and tune reverts")
			}
			out = append(out, Finding{
				Unchecked: unchecked,
				ID:        "qdisc-fifo", Severity: Info, Impact: 15, Devices: []string{d.Name},
				Title:    fmt.Sprintf("%s: root qdisc %s (a FIFO) on a device that queues with BQL", d.Name, d.Link.Qdisc),
				Evidence: []Evidence{snapEv(devField(d, "link.qdisc"), "%s", d.Link.Qdisc)},
				Why: "with BQL the standing queue moves into the qdisc; a FIFO there lets a bulk flow delay every other packet by the whole backlog, " +
					"fq_codel keeps each flow's queue short and serves sparse flows first.",
				Fix:    &Fix{Commands: []string{a.Command, "sysctl -w net.core.default_qdisc=fq_codel   # for devices created later"}, Actions: []Action{a}},
				Verify: verifyLatency(d.Name),
			})
		}
	}
	return out, nil
}

// fifoQdisc are the root qdiscs that queue first in, first out.
var fifoQdisc = map[string]bool{"pfifo_fast": true, "pfifo": true, "bfifo": true, "pfifo_head_drop": true}

// fifoOverDriverQueue: a FIFO root qdisc above a driver queue without BQL
// (tx-no-bql's finding f). Once the driver's queue is full the qdisc
// backs up too, and a FIFO adds its whole backlog in front of every
// packet; a fair qdisc at least keeps that part short per flow. Where f
// shapes below the link rate (its qdisc action), that qdisc is the advice
// here too - one action, so tune sees one change.
func fifoOverDriverQueue(in *Input, d *inspect.Device, f Finding) Finding {
	q := Finding{
		ID: "qdisc-fifo", Severity: Info, Impact: 20, Devices: []string{d.Name},
		Title:    fmt.Sprintf("%s: root qdisc %s (a FIFO) above a driver queue without BQL", d.Name, d.Link.Qdisc),
		Evidence: []Evidence{snapEv(devField(d, "link.qdisc"), "%s", d.Link.Qdisc)},
		Why: "the driver queues without BQL (" + seeFinding("tx-no-bql", d.Name, "", "its BQL limit stays 0 while it transmits") + "); when its queue is full the " +
			"qdisc backs up as well, and a FIFO there lets a bulk flow delay every other packet by its whole backlog on top of the driver's. " +
			"fq_codel keeps each flow's share of that backlog short and serves sparse flows (DNS, ACKs, interactive traffic) first; " +
			"only shaping below the link rate, or BQL, moves the rest of the queue out of the driver.",
		Verify: verifyLatency(d.Name),
	}
	for _, a := range f.Fix.Actions {
		if a.Kind == KindQdisc {
			q.Fix = &Fix{Commands: []string{"# shape just below the link rate with a fair qdisc, so the queue builds there and not in the driver:", a.Command},
				Actions: []Action{a}, Caveat: f.Fix.Caveat}
			q.Unchecked = append(q.Unchecked, "whether this kernel has sch_cake (a snapshot cannot tell): tc answers \"Unknown qdisc\" where it lacks it, and tune reverts")
			return q
		}
	}
	a := Action{ID: "qdisc:" + d.Name, Kind: KindQdisc, Device: d.Name, Target: "root", Value: "fq_codel",
		Command: fmt.Sprintf("tc qdisc replace dev %s root fq_codel", d.Name)}
	q.Fix = &Fix{Commands: []string{a.Command}, Actions: []Action{a},
		Caveat: "without a known link rate (" + d.Name + " reports none) shaping cannot be proposed; with one, cake bandwidth just below it moves the queue out of the driver."}
	if def, _ := sysctl(in.Snap, "net.core.default_qdisc"); def != "fq_codel" {
		q.Unchecked = append(q.Unchecked, "whether this kernel has fq_codel (default_qdisc is "+def+
			"): tc answers \"Unknown qdisc\" where it lacks it, and tune reverts")
	}
	return q
}
