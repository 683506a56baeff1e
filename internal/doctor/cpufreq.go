// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule cpufreq: CPUs on the powersave governor, or running far below their
// maximum frequency while NET_RX keeps them busy (a throttled Raspberry Pi).
// A fix names only values this host accepts: the governors in
// scaling_available_governors (intel_pstate and amd-pstate-epp in active
// mode offer only performance and powersave, and there powersave is the
// scaling mode whose bias is energy_performance_preference), and EPP values
// from energy_performance_available_preferences.

func init() {
	register(Rule{
		ID:       "cpufreq",
		Summary:  "powersave governor (or EPP power on intel_pstate/amd-pstate), or CPUs far below their maximum clock under network load",
		Findings: []string{"cpufreq-powersave", "cpufreq-low-under-load"},
		Check:    checkCPUFreq,
	})
}

// activePstate: drivers whose powersave governor scales the clock itself
// (intel_pstate and amd-pstate-epp in active mode); in passive mode they
// register as intel_cpufreq and amd-pstate and take the generic governors.
func activePstate(driver string) bool {
	return driver == "intel_pstate" || driver == "amd-pstate-epp"
}

// pickGovernor is the governor to propose instead of powersave: the first
// of schedutil, ondemand, performance the host lists; schedutil when the
// snapshot does not say (known false).
func pickGovernor(avail []string) (gov string, known bool) {
	if len(avail) == 0 {
		return "schedutil", false
	}
	for _, g := range []string{"schedutil", "ondemand", "performance"} {
		if slices.Contains(avail, g) {
			return g, true
		}
	}
	return "", true
}

func checkCPUFreq(in *Input) ([]Finding, []Skipped) {
	s := in.Snap
	small, caveat := heatCaveat(s.Host.Arch)
	powersave, first := powersaveCPUs(s)
	var out []Finding
	if first != nil && activePstate(first.Driver) {
		if f := eppFinding(s, first, powersave, caveat); f != nil {
			out = append(out, *f)
		}
	} else if first != nil {
		out = append(out, governorFinding(first, powersave, small, caveat))
	}
	if in.Obs == nil {
		return out, []Skipped{{Reason: "clock under load: needs --observe (the snapshot's clock is the idle one)"}}
	}
	if f := lowClockFinding(in, small, caveat); f != nil {
		out = append(out, *f)
	}
	return out, nil
}

// heatCaveat is the caveat every cpufreq fix carries, and whether the host
// is a small (arm) board, where it names the firmware's throttling.
func heatCaveat(arch string) (small bool, caveat string) {
	small = strings.HasPrefix(arch, "aarch64") || strings.HasPrefix(arch, "arm")
	caveat = "a higher clock makes more heat"
	if small {
		caveat += ": on a board without a heatsink the firmware throttles anyway (check vcgencmd get_throttled on a Pi)."
	} else {
		caveat += " and, on a laptop, costs battery."
	}
	return small, caveat
}

// powersaveCPUs are the CPUs with cpufreq on the powersave governor, and
// the first of them (nil when none).
func powersaveCPUs(s *inspect.Snapshot) (powersave []int, first *inspect.CPU) {
	for i, c := range s.Host.CPUs.PerCPU {
		if c.HasCpufreq && c.Governor == "powersave" {
			powersave = append(powersave, c.CPU)
			if first == nil {
				first = &s.Host.CPUs.PerCPU[i]
			}
		}
	}
	return powersave, first
}

// governorFinding: a generic cpufreq driver's powersave governor on the
// CPUs powersave (first the first of them); the fix writes the governor
// pickGovernor chooses from what the host lists.
func governorFinding(first *inspect.CPU, powersave []int, small bool, caveat string) Finding {
	l := cpumask.FormatList(powersave)
	f := Finding{
		ID: "cpufreq-powersave", Severity: Info, Impact: 30,
		Title:    fmt.Sprintf("CPUs %s run the powersave governor", l),
		Evidence: []Evidence{snapEv("host.cpus.per_cpu[*].governor", "powersave on CPUs %s", l)},
		Why:      "powersave (with " + orUnknown(first.Driver) + ") holds the lowest clock, so per-packet work takes longest exactly when the link is busy.",
		Fix:      &Fix{Caveat: caveat},
		Verify:   "wirespeed bench ... before and after; compare throughput and CPU per Mbit",
	}
	if first.Driver != "" {
		f.Evidence = append(f.Evidence, snapEv(fmt.Sprintf("host.cpus.per_cpu[%d].driver", first.CPU), "%s", first.Driver))
	}
	gov, known := pickGovernor(first.AvailableGovernors)
	if known {
		f.Evidence = append(f.Evidence, snapEv(fmt.Sprintf("host.cpus.per_cpu[%d].available_governors", first.CPU), "%s", strings.Join(first.AvailableGovernors, " ")))
	} else {
		f.Unchecked = append(f.Unchecked, "which governors this kernel offers: the snapshot has no scaling_available_governors (check it before writing "+gov+")")
	}
	if gov == "" {
		f.Fix.Commands = []string{"# this host offers no governor that scales up (" + strings.Join(first.AvailableGovernors, " ") + "): nothing to switch to"}
	} else {
		a := Action{ID: "governor:" + l, Kind: KindGovernor, Target: l, Value: gov,
			Command: fmt.Sprintf("for c in %s; do echo %s > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done", spaceList(powersave), gov)}
		f.Fix.Commands, f.Fix.Actions = []string{a.Command}, []Action{a}
		f.Fix.Caveat += map[string]string{"schedutil": " schedutil follows load;", "ondemand": " ondemand follows load;", "performance": " performance holds the maximum clock;"}[gov] +
			" the setting is lost at reboot unless persisted (wirespeed tune persist)."
	}
	if small {
		f.Severity, f.Impact = Warn, 45
	}
	return f
}

// lowClockFinding: CPUs that NET_RX keeps busy (at least 20% of their
// time, from the observation) running below 70% of their maximum clock;
// nil when there are none.
func lowClockFinding(in *Input, small bool, caveat string) *Finding {
	var slow []string
	var ev []Evidence
	for _, oc := range in.Obs.CPUs {
		if oc.NetRXShare < 0.2 {
			continue
		}
		for _, c := range in.Snap.Host.CPUs.PerCPU {
			if c.CPU != oc.CPU || c.CurKHz == nil || c.MaxKHz == nil || *c.MaxKHz == 0 {
				continue
			}
			if float64(*c.CurKHz) < 0.7*float64(*c.MaxKHz) {
				slow = append(slow, fmt.Sprintf("CPU%d", c.CPU))
				ev = append(ev, snapEv(fmt.Sprintf("host.cpus.per_cpu[%d].cur_khz", c.CPU), "%d of max %d", *c.CurKHz, *c.MaxKHz),
					obsEv(fmt.Sprintf("cpus[%d].net_rx_share", c.CPU), "%.0f%%", oc.NetRXShare*100))
			}
		}
	}
	if len(slow) == 0 {
		return nil
	}
	return &Finding{
		ID: "cpufreq-low-under-load", Severity: Warn, Impact: 40,
		Title:    fmt.Sprintf("%s below 70%% of their maximum clock while NET_RX keeps them busy", strings.Join(slow, ", ")),
		Evidence: ev,
		Why:      "a CPU doing network work at a reduced clock takes proportionally longer per packet: at 600 instead of 1500 MHz (a Raspberry Pi 4 throttled), 2.5 times as long.",
		Fix:      &Fix{Commands: []string{lowClockCheck(small)}, Caveat: caveat},
		Verify:   "wirespeed bench ... before and after; compare throughput and CPU per Mbit",
	}
}

func spaceList(cpus []int) string {
	var parts []string
	for _, c := range cpus {
		parts = append(parts, fmt.Sprint(c))
	}
	return strings.Join(parts, " ")
}

func lowClockCheck(small bool) string {
	c := "# check the governor and what the policy allows: cat /sys/devices/system/cpu/cpu*/cpufreq/{scaling_governor,scaling_max_freq}"
	if small {
		c += "; and throttling: vcgencmd get_throttled"
	}
	return c
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed cpufreq driver"
	}
	return s
}

// eppFinding: intel_pstate or amd-pstate-epp in active mode. powersave is
// their scaling mode, so the governor is not the problem; an energy
// performance preference of power or balance_power is (the clock ramps
// late and low). The fix writes a value the host lists.
func eppFinding(s *inspect.Snapshot, first *inspect.CPU, cpus []int, caveat string) *Finding {
	if first.EPP != "power" && first.EPP != "balance_power" {
		return nil // default, balance_performance, performance - or not in the snapshot
	}
	want := ""
	for _, v := range []string{"balance_performance", "performance"} {
		if slices.Contains(first.EPPAvailable, v) {
			want = v
			break
		}
	}
	l := cpumask.FormatList(cpus)
	f := &Finding{
		ID: "cpufreq-powersave", Severity: Info, Impact: 25,
		Title: fmt.Sprintf("CPUs %s: %s with energy_performance_preference %s", l, first.Driver, first.EPP),
		Evidence: []Evidence{
			snapEv(fmt.Sprintf("host.cpus.per_cpu[%d].driver", first.CPU), "%s", first.Driver),
			snapEv(fmt.Sprintf("host.cpus.per_cpu[%d].epp", first.CPU), "%s", first.EPP),
			snapEv(fmt.Sprintf("host.cpus.per_cpu[%d].available_governors", first.CPU), "%s", strings.Join(first.AvailableGovernors, " ")),
		},
		Why: first.Driver + " in active mode scales the clock itself under its powersave governor (it offers only performance and powersave: " +
			"writing schedutil answers EINVAL); its energy performance preference " + first.EPP + " makes it ramp late and stay low, so " +
			"per-packet work takes longer when the link is busy. Laptops set it on battery (power-profiles-daemon, TLP).",
		Fix:    &Fix{Caveat: caveat},
		Verify: "wirespeed bench ... before and after; compare throughput and CPU per Mbit",
	}
	if want == "" {
		f.Fix.Commands = []string{"# this host lists no balance_performance or performance preference (" + strings.Join(first.EPPAvailable, " ") + ")"}
		return f
	}
	for _, c := range cpus {
		p := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/energy_performance_preference", c)
		f.Fix.Actions = append(f.Fix.Actions, sysfsAction(fmt.Sprintf("epp:cpu%d", c), "", p, want))
	}
	f.Fix.Commands = commands(f.Fix.Actions)
	f.Fix.Caveat += " power-profiles-daemon or TLP set it back when the power source changes (powerprofilesctl set performance does the same)."
	return f
}
