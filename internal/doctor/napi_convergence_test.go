// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/observe"
)

var napiConvergenceCases = addCases("napi-convergence", []ruleCase{
	{name: "two WireGuard NAPIs in softirq on CPU3", fixture: "wg-gateway-16", id: "napi-convergence", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "softirq"), busyNAPI("wg1", 3, "softirq")}}
		}, actions: []string{"threaded:wg0=1", "threaded:wg1=1"}},
	{name: "per-NAPI threaded where napi-set has it", fixture: "firecracker-veth-threaded", id: "napi-convergence", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			d := busyNAPI("ws-fx1", 1, "softirq")
			d.NAPIs = append(d.NAPIs, d.NAPIs[0])
			d.NAPIs[1].Napi = "0xffff2"
			in.Obs = &observe.Observation{Devices: []observe.Device{d}}
		}, actions: []string{"napi-threaded:ws-fx1:278=enabled"}},
	{name: "the same NAPIs in their threads", fixture: "wg-gateway-16", id: "napi-convergence",
		change: func(t *testing.T, in *Input) {
			in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "thread"), busyNAPI("wg1", 3, "thread")}}
		}},
	{name: "softirq NAPIs on different CPUs", fixture: "wg-gateway-16", id: "napi-convergence",
		change: func(t *testing.T, in *Input) {
			in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "softirq"), busyNAPI("wg1", 4, "softirq")}}
		}},
})

func TestRuleNapiConvergence(t *testing.T) { runCases(t, napiConvergenceCases) }
