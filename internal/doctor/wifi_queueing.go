// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
)

// Rule wifi-queueing: what is true about TX queueing on a mac80211 (WiFi)
// device, where the Ethernet knobs do not apply. mac80211 sets IFF_NO_QUEUE
// (root qdisc noqueue), never calls the BQL hooks and picks no TX queue
// that XPS could steer; it queues frames per station and TID in its own
// fq_codel-based queues and, with AQL (airtime queue limits), keeps only a
// few milliseconds of airtime queued in the driver and firmware. Said once,
// as info, for a device that transmitted - so that users who look for XPS
// and BQL on WiFi learn where the queue is.

func init() {
	register(Rule{
		ID:       "wifi-queueing",
		Summary:  "WiFi (mac80211) queues per station in fq_codel under AQL: XPS, BQL and the root qdisc do not apply",
		Findings: []string{"wifi-queueing"},
		Check:    checkWiFiQueueing,
	})
}

func checkWiFiQueueing(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if !isMac80211(d) || !isUp(d) || u64(d.Stats.TxPackets) == 0 {
			continue
		}
		phy := d.Wireless.Phy
		if phy == "" {
			phy = "phy*"
		}
		f := Finding{
			ID: "wifi-queueing", Severity: Info, Impact: 1, Devices: []string{d.Name},
			Title: fmt.Sprintf("%s queues in mac80211 (per-station fq_codel under AQL), not in a qdisc: XPS and BQL do not apply", d.Name),
			Evidence: []Evidence{
				snapEv(devField(d, "wireless.stack"), "%s (%s)", d.Wireless.Stack, d.Driver),
				snapEv(devField(d, "link.qdisc"), "%s", d.Link.Qdisc),
				snapEv(devField(d, "tx_queues"), "%d", len(d.TXQueues)),
			},
			Why: "mac80211 registers the interface with IFF_NO_QUEUE (root qdisc noqueue) and queues frames itself, per station and TID, " +
				"in fq_codel-based queues; AQL limits the airtime queued in the driver and firmware, which is where WiFi latency under load " +
				"comes from. It never reports bytes to BQL (the byte_queue_limits directory stays at 0) and picks the TX queue itself, " +
				"so xps_cpus and a BQL limit change nothing. Nothing to fix here.",
			Fix: &Fix{Commands: []string{
				"# to see the queues (debugfs, as root): cat /sys/kernel/debug/ieee80211/" + phy + "/aqm /sys/kernel/debug/ieee80211/" + phy + "/aql_txq_limit",
			}},
		}
		if d.Link.Qdisc != "" && d.Link.Qdisc != "noqueue" {
			f.Fix.Caveat = "a root qdisc (" + d.Link.Qdisc + ") on a WiFi interface only holds packets when it shapes below the WiFi rate " +
				"(cake with a bandwidth); otherwise the queue still builds in mac80211."
		}
		out = append(out, f)
	}
	return out, nil
}
