package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

// Rule cpufreq: CPUs on the powersave governor, or running far below their
// maximum frequency while NET_RX keeps them busy (seed 003's throttled
// runs on a Raspberry Pi).

func init() {
	register(Rule{
		ID:      "cpufreq",
		Summary: "powersave governor, or CPUs far below their maximum clock under network load",
		Check:   checkCPUFreq,
	})
}

func checkCPUFreq(in *Input) ([]Finding, []Skipped) {
	s := in.Snap
	small := strings.HasPrefix(s.Host.Arch, "aarch64") || strings.HasPrefix(s.Host.Arch, "arm")
	caveat := "a higher clock makes more heat: on a board without a heatsink the firmware throttles anyway (check vcgencmd get_throttled on a Pi)."
	var powersave []int
	for _, c := range s.Host.CPUs.PerCPU {
		if c.HasCpufreq && c.Governor == "powersave" {
			powersave = append(powersave, c.CPU)
		}
	}
	var out []Finding
	if len(powersave) > 0 {
		l := cpumask.FormatList(powersave)
		gov := "schedutil"
		a := Action{ID: "governor:" + l, Kind: KindGovernor, Target: l, Value: gov,
			Command: fmt.Sprintf("for c in %s; do echo %s > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done", spaceList(powersave), gov)}
		f := Finding{
			ID: "cpufreq-powersave", Severity: Info, Impact: 30,
			Title:    fmt.Sprintf("CPUs %s run the powersave governor", l),
			Evidence: []Evidence{snapEv("host.cpus.per_cpu[*].governor", "powersave on CPUs %s", l)},
			Why: "powersave (with acpi-cpufreq or cpufreq-dt) holds the lowest clock, so per-packet work takes longest exactly when the link is busy; " +
				"with intel_pstate/amd-pstate powersave still scales, and this matters less.",
			Fix:    &Fix{Commands: []string{a.Command}, Actions: []Action{a}, Caveat: caveat + " performance holds the maximum clock; schedutil follows load."},
			Verify: "wirespeed bench ... before and after; compare throughput and CPU per Mbit",
		}
		if small {
			f.Severity, f.Impact = Warn, 45
		}
		if drv := s.Host.CPUs.PerCPU[0].Driver; strings.Contains(drv, "pstate") {
			f.Severity, f.Impact = Info, 10
			f.Evidence = append(f.Evidence, snapEv("host.cpus.per_cpu[0].driver", "%s", drv))
		}
		out = append(out, f)
	}
	if in.Obs == nil {
		return out, []Skipped{{Rule: "cpufreq", Reason: "clock under load: needs --observe (the snapshot's clock is the idle one)"}}
	}
	var slow []string
	var ev []Evidence
	for _, oc := range in.Obs.CPUs {
		if oc.NetRXShare < 0.2 {
			continue
		}
		for _, c := range s.Host.CPUs.PerCPU {
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
	if len(slow) > 0 {
		f := Finding{
			ID: "cpufreq-low-under-load", Severity: Warn, Impact: 40,
			Title:    fmt.Sprintf("%s below 70%% of their maximum clock while NET_RX keeps them busy", strings.Join(slow, ", ")),
			Evidence: ev,
			Why:      "a CPU doing network work at a reduced clock takes proportionally longer per packet; seed 003's Raspberry Pi runs lost throughput when throttled.",
			Fix:      &Fix{Commands: []string{"# check the governor (performance or schedutil) and throttling: cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; vcgencmd get_throttled"}, Caveat: caveat},
			Verify:   "wirespeed bench ... before and after; compare throughput and CPU per Mbit",
		}
		out = append(out, f)
	}
	return out, nil
}

func spaceList(cpus []int) string {
	var parts []string
	for _, c := range cpus {
		parts = append(parts, fmt.Sprint(c))
	}
	return strings.Join(parts, " ")
}
