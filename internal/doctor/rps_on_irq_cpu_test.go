// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var rpsOnIrqCpuCases = addCases("rps-on-irq-cpu", []ruleCase{
	{name: "RPS on including the IRQ CPU", fixture: "rpi4-ax88179", id: "rps-on-irq-cpu", fire: true, sev: Info,
		actions: []string{"rps_cpus:eth1:rx-0=e"}},
	{name: "RPS on without the IRQ CPU", fixture: "rpi4-ax88179", id: "rps-on-irq-cpu",
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "e" }},
})

func TestRuleRpsOnIrqCpu(t *testing.T) { runCases(t, rpsOnIrqCpuCases) }
