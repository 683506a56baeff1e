// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var wgSoftirqRiskCases = addCases("wg-softirq-risk", []ruleCase{
	{name: "eight tunnels polled in softirq", fixture: "wg-gw-softirq", id: "wg-softirq-risk", fire: true, sev: Info},
	{name: "the same tunnels threaded", fixture: "wg-gw-threaded", id: "wg-softirq-risk"},
})

func TestRuleWgSoftirqRisk(t *testing.T) { runCases(t, wgSoftirqRiskCases) }
