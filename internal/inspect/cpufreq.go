// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"strings"
)

// cpufreqChoices reads what a CPU's cpufreq policy accepts, so that doctor
// proposes only values this host takes: scaling_available_governors (the
// governors scaling_governor accepts; intel_pstate and amd-pstate-epp in
// active mode list only "performance powersave") and, where the driver has
// it, energy_performance_preference with its available values.
func (c *collector) cpufreqChoices(base string, cpu *CPU) {
	if s, e := c.str(base + "/scaling_available_governors"); e == "" {
		cpu.AvailableGovernors = strings.Fields(s)
	}
	if s, e := c.str(base + "/energy_performance_preference"); e == "" {
		cpu.EPP = s
		if a, e := c.str(base + "/energy_performance_available_preferences"); e == "" {
			cpu.EPPAvailable = strings.Fields(a)
		}
	}
}

// cpufreqChoicesSummary is the driver and what the policy accepts, as
// CPU0 shows them ("" when the snapshot has neither).
func cpufreqChoicesSummary(c CPUs) string {
	for _, cpu := range c.PerCPU {
		if !cpu.HasCpufreq || len(cpu.AvailableGovernors) == 0 {
			continue
		}
		s := fmt.Sprintf("cpu%d driver %s, governors available: %s", cpu.CPU, orDash(cpu.Driver), strings.Join(cpu.AvailableGovernors, " "))
		if cpu.EPP != "" {
			s += "; energy_performance_preference " + cpu.EPP
			if len(cpu.EPPAvailable) > 0 {
				s += " (of " + strings.Join(cpu.EPPAvailable, " ") + ")"
			}
		}
		return s
	}
	return ""
}
