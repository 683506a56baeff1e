// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/observe"
)

var cpufreqCases = addCases("cpufreq", []ruleCase{
	{name: "powersave on a Pi", fixture: "rpi4-ax88179", id: "cpufreq-powersave", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			for i := range in.Snap.Host.CPUs.PerCPU {
				in.Snap.Host.CPUs.PerCPU[i].Governor = "powersave"
			}
		}, actions: []string{"governor:0-3=schedutil"}},
	{name: "performance on a Pi", fixture: "rpi4-ax88179", id: "cpufreq-powersave"},
	{name: "clock low under load", fixture: "rpi4-ax88179", id: "cpufreq-low-under-load", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			in.Snap.Host.CPUs.PerCPU[0].CurKHz = ptr(int64(600000))
			in.Obs = &observe.Observation{CPUs: []observe.CPU{{CPU: 0, NetRXShare: 0.6}, {CPU: 1, NetRXShare: 0.05}}}
		}},
	{name: "clock low on an idle CPU", fixture: "rpi4-ax88179", id: "cpufreq-low-under-load",
		change: func(t *testing.T, in *Input) {
			in.Snap.Host.CPUs.PerCPU[1].CurKHz = ptr(int64(600000))
			in.Obs = &observe.Observation{CPUs: []observe.CPU{{CPU: 0, NetRXShare: 0.6}, {CPU: 1, NetRXShare: 0.05}}}
		}},
})

func TestRuleCpufreq(t *testing.T) { runCases(t, cpufreqCases) }
