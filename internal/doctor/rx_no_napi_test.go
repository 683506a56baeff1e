// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

var rxNoNapiCases = addCases("rx-no-napi", []ruleCase{
	{name: "veth without NAPI, receiving", fixture: "firecracker-veth-threaded", id: "rx-no-napi", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "ws-fx1")
			d.NAPIs, d.Threads = nil, nil
			d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.No}, RXPath: datapath.NoNAPIPath}
			setOffload(d, "rx-gro", false, false)
			d.Stats.RxPackets = ptr(uint64(5000))
		}, actions: []string{"rx-gro:ws-fx1=on"}},
	{name: "veth with NAPI + GRO", fixture: "firecracker-veth-threaded", id: "rx-no-napi"},
	{name: "ifbs that are down and loopback", fixture: "firecracker-host", id: "rx-no-napi"},
})

func TestRuleRxNoNapi(t *testing.T) { runCases(t, rxNoNapiCases) }

// TestNoNAPISuperPackets: a veth receiving 64 KB GSO packets from a TSO
// peer has nothing for GRO to merge.
func TestNoNAPISuperPackets(t *testing.T) {
	mk := func(bytesPerSkb uint64) *Input {
		in := &Input{Snap: fixture(t, "firecracker-veth-threaded")}
		d := dev(t, in.Snap, "ws-fx1")
		d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.Yes}, RXPath: datapath.NAPIPath(datapath.Yes, datapath.Threaded)}
		in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "ws-fx1", RXPath: observe.PathNetifRx,
			NetifRx: 1000, Delivered: 1000, DeliveredBytes: 1000 * bytesPerSkb, NetifRxPerSec: 10000}}}
		return in
	}
	if got, _ := run(t, mk(61000), "rx-no-napi"); len(got) != 0 {
		t.Errorf("64 KB skbs: fired %s", got[0].Title)
	}
	if got, _ := run(t, mk(1514), "rx-no-napi"); len(got) != 1 {
		t.Errorf("MTU-sized skbs through netif_rx: want rx-no-napi, got %d", len(got))
	}
}
