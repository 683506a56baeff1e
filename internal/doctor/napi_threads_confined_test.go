// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"
)

var napiThreadsConfinedCases = addCases("napi-threads-confined", []ruleCase{
	{name: "napi kthreads confined to CPU0", fixture: "wg-gateway-16", id: "napi-threads-confined", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			dev(t, in.Snap, "wg0").Threads[0].AllowedCPU = "0"
			dev(t, in.Snap, "wg1").Threads[0].AllowedCPU = "0"
		}, text: "taskset -p -c 0-31 900"},
	{name: "napi kthreads free to move", fixture: "wg-gateway-16", id: "napi-threads-confined"},
})

func TestRuleNapiThreadsConfined(t *testing.T) { runCases(t, napiThreadsConfinedCases) }
