// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// What the TX queueing rules share (tx-no-bql, qdisc-fifo): the devices
// whose queueing they judge and tx-no-bql's finding, which qdisc-fifo's fix
// follows.

// txQueued are the devices whose TX queueing the tx-no-bql and qdisc-fifo
// rules judge: physical, up, not mac80211, and not a DSA user port (whose
// frames queue on its conduit: it is LLTX with noqueue by design).
func txQueued(in *Input) []*inspect.Device {
	var out []*inspect.Device
	for _, d := range in.devices() {
		if physical(d) && isUp(d) && !isMac80211(d) && d.Datapath.RXPath.Class() != datapath.Borrowed {
			out = append(out, d)
		}
	}
	return out
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

// txNoBQL is d's tx-no-bql finding (nil when its driver uses BQL or it sent
// nothing), whether its BQL is unused, and the packets it sent (since the
// earlier reading where there is one).
func txNoBQL(in *Input, d *inspect.Device) (*Finding, bool, uint64) {
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
			phy, why := phyRate(d)
			if d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
				f.Evidence = append(f.Evidence, snapEv(devField(d, "link.speed_mbps"), "%d", *d.Link.SpeedMbps))
			}
			if phy {
				// a rate a PHY negotiated: the queue drains at it
				ms := float64(bytes) * 8 / float64(*d.Link.SpeedMbps) / 1000
				f.Title = fmt.Sprintf("%s: usbnet without BQL queues ~%d KB, ~%.1f ms at %d Mbit/s, below any qdisc", d.Name, bytes/1000, ms, *d.Link.SpeedMbps)
				if ms >= 2 {
					f.Severity, f.Impact = Warn, 40+min(30, int(ms))
				}
			} else {
				// no made-up numbers: without a rate the host negotiated
				// or measured, the queue's time is not known
				f.Title = fmt.Sprintf("%s: usbnet without BQL queues ~%d KB below any qdisc", d.Name, bytes/1000)
				f.Unchecked = append(f.Unchecked, "how many ms the queue holds: that needs the link's rate, and "+why)
			}
			if ModuleKernels.MatchString(in.Snap.Host.Kernel) {
				f.Fix.Commands = append(f.Fix.Commands, "# wirespeed's usbnet module adds BQL (kernel/usbnet; "+seeFinding("usbnet-no-gro", d.Name, " for the install", "its README says how to install it")+")")
			} else {
				f.Fix.Commands = append(f.Fix.Commands, "# usbnet gains BQL in Linux "+fact("usbnet-bql").Release+"; wirespeed's usbnet module (kernel/usbnet) adds it for "+ModuleKernelsText)
			}
			if !phy && d.Link.SpeedMbps != nil {
				f.Fix.Commands = append(f.Fix.Commands, "# shaping needs the rate the link really has: "+why+"; measure it (wirespeed bench --peer PEER --iface "+d.Name+
					" --direction send), then shape just below the measured rate: tc qdisc replace dev "+d.Name+" root cake bandwidth RATEmbit")
			} else if d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
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
		return &f, unused, tx
	}
	return nil, unused, tx
}
