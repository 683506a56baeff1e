// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/observe"
)

// rxOneCPUVeth: the veth receiver observed busy (80k packets/s delivered),
// its RPS mask rps, NET_RX's share of each CPU as given.
func rxOneCPUVeth(rps string, shares ...float64) func(t *testing.T, in *Input) {
	return func(t *testing.T, in *Input) {
		dev(t, in.Snap, "ws-fx1").RXQueues[0].RPSCPUs = rps
		in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "ws-fx1", RXPath: observe.PathNAPIGRO, DeliveredPerSec: 80000}}}
		for i, s := range shares {
			in.Obs.CPUs = append(in.Obs.CPUs, observe.CPU{CPU: i, NetRXShare: s})
		}
	}
}

var rxOneCpuCases = addCases("rx-one-cpu", []ruleCase{
	{name: "lopsided NET_RX, RPS off", fixture: "firecracker-veth-threaded", id: "rx-one-cpu", fire: true, sev: Warn,
		change: rxOneCPUVeth("0", 0.9, 0.02), actions: []string{"rps_cpus:ws-fx1:rx-0=2"}},
	{name: "both CPUs busy", fixture: "firecracker-veth-threaded", id: "rx-one-cpu", change: rxOneCPUVeth("0", 0.9, 0.4)},
	{name: "RPS on", fixture: "firecracker-veth-threaded", id: "rx-one-cpu", change: rxOneCPUVeth("3", 0.9, 0.02)},
	{name: "idle", fixture: "firecracker-veth-threaded", id: "rx-one-cpu", change: rxOneCPUVeth("0", 0.03, 0.0)},
	{name: "without an observation it says it could not check", fixture: "firecracker-veth-threaded", id: "rx-one-cpu",
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "ws-fx1").RXQueues[0].RPSCPUs = "0" }, skip: "where NET_RX runs is runtime data"},
})

func TestRuleRxOneCpu(t *testing.T) { runCases(t, rxOneCpuCases) }
