// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var qdiscFifoCases = addCases("qdisc-fifo", []ruleCase{
	{name: "FIFO root qdisc over BQL", fixture: "firecracker-host", id: "qdisc-fifo", fire: true, sev: Info, actions: []string{"qdisc:eth0=fq_codel"}},
	{name: "fq_codel root qdisc", fixture: "firecracker-host", id: "qdisc-fifo",
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth0").Link.Qdisc = "fq_codel" }},
})

func TestRuleQdiscFifo(t *testing.T) { runCases(t, qdiscFifoCases) }
