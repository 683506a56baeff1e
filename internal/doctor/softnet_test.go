// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var softnetCases = addCases("softnet", []ruleCase{
	{name: "time_squeeze grew", fixture: "firecracker-host", id: "softnet-squeeze", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			in.Before = fixture(t, "firecracker-host")
			in.Snap.Host.Softnet[1].Processed += 100000
			in.Snap.Host.Softnet[1].TimeSqueeze += 500
		}, actions: []string{"sysctl:net.core.netdev_budget=600"}},
	{name: "a few squeezes for many packets", fixture: "firecracker-host", id: "softnet-squeeze",
		change: func(t *testing.T, in *Input) {
			in.Before = fixture(t, "firecracker-host")
			in.Snap.Host.Softnet[1].Processed += 1000000
			in.Snap.Host.Softnet[1].TimeSqueeze += 20
		}},
	{name: "backlog drops", fixture: "firecracker-host", id: "softnet-drops", fire: true, sev: Crit,
		change: func(t *testing.T, in *Input) {
			in.Before = fixture(t, "firecracker-host")
			in.Snap.Host.Softnet[0].Processed += 1000
			in.Snap.Host.Softnet[0].Dropped += 3
		}, actions: []string{"sysctl:net.core.netdev_max_backlog=10000"}},
	{name: "drops since boot only (one reading)", fixture: "firecracker-host", id: "softnet-drops",
		change: func(t *testing.T, in *Input) { in.Snap.Host.Softnet[0].Dropped = 999 }},
})

func TestRuleSoftnet(t *testing.T) { runCases(t, softnetCases) }
