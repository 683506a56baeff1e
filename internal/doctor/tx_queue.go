// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule tx-no-bql: the device transmitted but its BQL limit and inflight are
// both 0 - the driver never calls the BQL hooks, so its own queue (usbnet:
// up to hundreds of URBs) fills before the qdisc sees any backlog, and a
// prioritizing or fair qdisc has nothing to reorder. Rule qdisc-fifo: a
// physical device with a FIFO root qdisc where a fair queue would keep a
// bulk flow from delaying everything else. Neither on a mac80211 (WiFi)
// device: mac80211 never calls the BQL hooks and sets IFF_NO_QUEUE, by
// design - it queues per station and TID in its own fq_codel-based queues
// and limits what sits in the driver and firmware with AQL (airtime queue
// limits); wifi-queueing says that.

func init() {
	register(Rule{
		ID:      "tx-queue",
		Summary: "driver queue without BQL on a slow link (latency under load); FIFO root qdisc",
		Check:   checkTXQueue,
	})
}

// usbnetTXQueue estimates usbnet's TX queue in frames from the USB speed,
// as usbnet_update_max_qlen() sets it: MAX_QUEUE_MEMORY (60 frames of 1518
// bytes) at high speed, five times that at super speed, 4 otherwise.
func usbnetTXQueue(usbMbps string) int {
	switch strings.TrimSpace(usbMbps) {
	case "480":
		return 60
	case "5000", "10000", "20000":
		return 300
	}
	return 4
}

func bqlUnused(d *inspect.Device) (bool, []Evidence) {
	used, seen := false, false
	var ev []Evidence
	for _, q := range d.TXQueues {
		if q.BQL == nil || q.BQL.Limit == nil || q.BQL.Inflight == nil {
			continue
		}
		seen = true
		if *q.BQL.Limit != 0 || *q.BQL.Inflight != 0 {
			used = true
		}
		ev = append(ev, snapEv(devField(d, "tx_queues["+q.Name+"].bql"), "limit %d inflight %d", *q.BQL.Limit, *q.BQL.Inflight))
	}
	return seen && !used, ev
}

func checkTXQueue(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if !physical(d) || !isUp(d) || isMac80211(d) {
			continue
		}
		tx := u64(d.Stats.TxPackets)
		txSrc := FromSnapshot
		if in.Before != nil {
			if b := deviceByName(in.Before, d.Name); b != nil && b.Stats.TxPackets != nil {
				tx, txSrc = tx-u64(b.Stats.TxPackets), FromDelta
			}
		}
		unused, ev := bqlUnused(d)
		if unused && usbnetHasBQL(in.Snap.Host.Kernel, d) {
			unused = false // in tree: a 0 limit after a reopen is no sign of disuse
		}
		if unused && tx > 0 {
			f := Finding{
				ID: "tx-no-bql", Severity: Info, Impact: 35, Devices: []string{d.Name},
				Title:    fmt.Sprintf("%s's driver (%s) does not use BQL: its own TX queue fills before the qdisc", d.Name, d.Driver),
				Evidence: append(ev, Evidence{Source: txSrc, Field: devField(d, "stats.tx_packets"), Value: fmt.Sprint(tx)}),
				Why: "the byte_queue_limits directory exists for every queue, but limit and inflight stay 0 although the device transmitted: the driver " +
					"never reports bytes queued and completed, so it queues as much as it can and a qdisc above it cannot prioritize. " +
					"Measured with wirespeed's usbnet module, which adds BQL: " + srcUsbnetBQLMark + ".",
				Verify: verifyLatency(d.Name),
				Fix:    &Fix{},
			}
			if d.Datapath.USBNet.State == datapath.Yes && d.USB != nil {
				urbs := usbnetTXQueue(d.USB.SpeedMbps)
				mtu := 1500
				if d.Link.MTU != nil {
					mtu = *d.Link.MTU
				}
				bytes := urbs * (mtu + 18)
				f.Evidence = append(f.Evidence, snapEv(devField(d, "usb.speed_mbps"), "%s (usbnet queues %d frames at this speed)", d.USB.SpeedMbps, urbs))
				if d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
					ms := float64(bytes) * 8 / float64(*d.Link.SpeedMbps) / 1000
					f.Evidence = append(f.Evidence, snapEv(devField(d, "link.speed_mbps"), "%d", *d.Link.SpeedMbps))
					f.Title = fmt.Sprintf("%s: usbnet without BQL queues ~%d KB, ~%.1f ms at %d Mbit/s, below any qdisc", d.Name, bytes/1000, ms, *d.Link.SpeedMbps)
					if ms >= 2 {
						f.Severity, f.Impact = Warn, 40+min(30, int(ms))
					}
				} else {
					f.Unchecked = append(f.Unchecked, "the link speed (unknown), so how many ms the queue holds")
				}
				if ModuleKernels.MatchString(in.Snap.Host.Kernel) {
					f.Fix.Commands = append(f.Fix.Commands, "# wirespeed's usbnet module adds BQL (kernel/usbnet; "+seeFinding("usbnet-no-gro", d.Name, " for the install", "its README says how to install it")+")")
				} else {
					f.Fix.Commands = append(f.Fix.Commands, "# usbnet gains BQL in Linux "+fact("usbnet-bql").Release+"; wirespeed's usbnet module (kernel/usbnet) adds it for "+ModuleKernelsText)
				}
				if d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
					rate := *d.Link.SpeedMbps * 95 / 100
					a := Action{ID: "qdisc:" + d.Name, Kind: KindQdisc, Device: d.Name, Target: "root",
						Value:   fmt.Sprintf("cake bandwidth %dmbit", rate),
						Command: fmt.Sprintf("tc qdisc replace dev %s root cake bandwidth %dmbit", d.Name, rate)}
					f.Fix.Commands = append(f.Fix.Commands, "# until then, shape just below the link rate so the queue builds in a fair qdisc, not in the driver:", a.Command)
					f.Fix.Actions = append(f.Fix.Actions, a)
					f.Fix.Caveat = "shaping costs ~5% of throughput and CPU per packet; cake needs sch_cake (fq_codel with htb is the alternative)."
					f.Unchecked = append(f.Unchecked, "whether this kernel has sch_cake (a snapshot cannot tell): tc answers \"Unknown qdisc\" where it lacks it, and tune reverts")
				}
			}
			out = append(out, f)
			if fifoQdisc[d.Link.Qdisc] {
				out = append(out, fifoOverDriverQueue(in, d, f))
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
