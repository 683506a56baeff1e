// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

var xpsCases = addCases("xps", []ruleCase{
	{name: "one TX queue on a USB NIC", fixture: "rpi4-ax88179", id: "xps-not-applicable", fire: true, sev: Info, text: "ENOENT"},
	{name: "multiqueue without XPS", fixture: "firecracker-host", id: "xps-unset", fire: true, sev: Info,
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth0")
			d.TXQueues = []inspect.TXQueue{{Name: "tx-0", XPSCPUs: "0"}, {Name: "tx-1", XPSCPUs: "0"}}
		}, actions: []string{"xps_cpus:eth0:tx-0=1", "xps_cpus:eth0:tx-1=2"}},
	{name: "multiqueue with XPS", fixture: "firecracker-host", id: "xps-unset",
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth0")
			d.TXQueues = []inspect.TXQueue{{Name: "tx-0", XPSCPUs: "1"}, {Name: "tx-1", XPSCPUs: "2"}}
		}},
})

func TestRuleXps(t *testing.T) { runCases(t, xpsCases) }
