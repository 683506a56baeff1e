// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var txNoBqlCases = addCases("tx-no-bql", []ruleCase{
	{name: "usbnet without BQL at 1 Gbit/s", fixture: "rpi4-ax88179", id: "tx-no-bql", fire: true, sev: Warn, text: "~3.6 ms at 1000 Mbit/s",
		actions: []string{"qdisc:eth1=cake bandwidth 950mbit"}},
	{name: "usbnet without BQL at 100 Mbit/s", fixture: "rpi4-ax88179", id: "tx-no-bql", fire: true, sev: Warn, text: "~36.4 ms at 100 Mbit/s",
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").Link.SpeedMbps = ptr(100) }},
	{name: "usbnet without BQL on USB 2 at 1 Gbit/s: a short queue", fixture: "rpi4-ax88179", id: "tx-no-bql", fire: true, sev: Info,
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").USB.SpeedMbps = "480" }},
	{name: "a driver that drives BQL (genet, virtio)", fixture: "firecracker-host", id: "tx-no-bql"},
	{name: "nothing transmitted since the earlier reading", fixture: "rpi4-ax88179", id: "tx-no-bql",
		change: func(t *testing.T, in *Input) { in.Before = fixture(t, "rpi4-ax88179") }},
})

func TestRuleTxNoBql(t *testing.T) { runCases(t, txNoBqlCases) }
