// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var groOffCases = addCases("gro-off", []ruleCase{
	{name: "virtio NAPI with GRO off", fixture: "firecracker-host", id: "gro-off", fire: true, sev: Warn,
		change:  func(t *testing.T, in *Input) { setOffload(dev(t, in.Snap, "eth0"), "rx-gro", false, false) },
		actions: []string{"rx-gro:eth0=on"}},
	{name: "GRO off and fixed: nothing to do", fixture: "firecracker-host", id: "gro-off",
		change: func(t *testing.T, in *Input) { setOffload(dev(t, in.Snap, "eth0"), "rx-gro", false, true) }},
	{name: "GRO on", fixture: "firecracker-host", id: "gro-off"},
})

func TestRuleGroOff(t *testing.T) { runCases(t, groOffCases) }
