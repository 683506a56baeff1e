// SPDX-License-Identifier: Apache-2.0

package doctor

// Rule tx-no-bql: the device transmitted but its BQL limit and inflight are
// both 0 - the driver never calls the BQL hooks, so its own queue (usbnet:
// up to hundreds of URBs) fills before the qdisc sees any backlog, and a
// prioritizing or fair qdisc has nothing to reorder. Not on a mac80211
// (WiFi) device: mac80211 never calls the BQL hooks and sets IFF_NO_QUEUE,
// by design - it queues per station and TID in its own fq_codel-based
// queues and limits what sits in the driver and firmware with AQL
// (airtime queue limits); wifi-queueing says that.

func init() {
	register(Rule{
		ID:       "tx-no-bql",
		Summary:  "driver queue without BQL on a slow link (latency under load)",
		Findings: []string{"tx-no-bql"},
		Check:    checkTXNoBQL,
	})
}

func checkTXNoBQL(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range txQueued(in) {
		if f, _, _ := txNoBQL(in, d); f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
}
