// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule rx-no-napi: a device (other than usbnet and mt76 USB WiFi, which
// have rules of their own, and loopback) that is up, receives, and has no
// NAPI: packets go through netif_rx() and the per-CPU backlog, without
// GRO. veth is the common case: it registers a NAPI only with GRO (or XDP)
// on. A WiFi driver's NAPI sits on an internal netdev napi-get cannot
// list: inspect classifies WiFi devices by driver and kthreads, and this
// rule takes only what it calls "no NAPI".

func init() {
	register(Rule{
		ID:       "rx-no-napi",
		Summary:  "RX through the netif_rx backlog on a device without NAPI (veth with GRO off, ...)",
		Findings: []string{"rx-no-napi"},
		Check:    checkNoNAPI,
	})
}

func checkNoNAPI(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if d.Driver == "loopback" || d.Datapath.USBNet.State == datapath.Yes || !isUp(d) ||
			(d.Wireless != nil && d.Wireless.Family == inspect.FamilyMT76USB) { // mt76u-no-gro's
			continue
		}
		od := obsDevice(in.Obs, d.Name)
		noNAPI := d.Datapath.OwnNAPI.State == datapath.No && d.Datapath.RXPath.Class() == datapath.NoNAPI
		seen := od != nil && od.RXPath.Class() == datapath.NetifRx
		if !noNAPI && !seen || noNAPI && observedNAPI(od) {
			continue // the observation saw NAPI polls deliver: it wins over the snapshot's inference
		}
		if !seen && u64(d.Stats.RxPackets) == 0 {
			continue // nothing received: nothing to gain
		}
		if od != nil && od.Delivered > 0 && od.DeliveredBytes/od.Delivered >= 16384 {
			// Already aggregated: a veth peer sending with TSO/GSO hands over
			// 64 KB super-packets, which veth keeps off its NAPI (not
			// eligible for GRO) - there is no per-segment cost to save.
			continue
		}
		f := Finding{
			ID:       "rx-no-napi",
			Severity: Warn,
			Impact:   50,
			Devices:  []string{d.Name},
			Title:    fmt.Sprintf("%s (%s) receives through the netif_rx backlog: no NAPI, no GRO", d.Name, d.Driver),
			Evidence: []Evidence{
				snapEv(devField(d, "datapath.rx_path"), "%s", d.Datapath.RXPath),
				snapEv(devField(d, "datapath.own_napi"), "%s (%s)", d.Datapath.OwnNAPI.State, d.Datapath.OwnNAPI.Evidence),
				snapEv(devField(d, "stats.rx_packets"), "%d", u64(d.Stats.RxPackets)),
			},
			Why: "without a NAPI every packet is queued to a per-CPU backlog by netif_rx() and reaches the stack one by one, with no GRO; " +
				"measured with wirespeed bench: " + srcVethGRO + ".",
			Verify: verifyRX(d.Name),
		}
		if seen && !noNAPI {
			f.Why += " " + observationWins
		}
		if od != nil {
			f.Evidence = append(f.Evidence, obsEv(fmt.Sprintf("devices[%s].rx_path", d.Name), "%s, %.0f netif_rx/s", od.RXPath, od.NetifRxPerSec))
		}
		if d.Driver == "veth" {
			if on, fixed := offload(d, "rx-gro"); !fixed && (on == nil || !*on) {
				a := ethtoolAction(d.Name, "rx-gro", "on")
				f.Fix = &Fix{Commands: []string{a.Command}, Actions: []Action{a},
					Caveat: "veth registers its NAPI when GRO is turned on with the link up."}
			}
		}
		if f.Fix == nil {
			f.Fix = &Fix{Commands: []string{"# the driver has no NAPI; spread the backlog work with RPS (rps_cpus on its RX queues)"}}
			f.Severity = Info
			f.Impact = 20
		}
		out = append(out, f)
	}
	return out, nil
}
