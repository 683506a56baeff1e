package tune

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/doctor"
)

// sysfsKnob writes one file below /sys: rps_cpus, rps_flow_cnt, xps_cpus,
// threaded, gro_flush_timeout, napi_defer_hard_irqs.
type sysfsKnob struct{}

func init() { registerKnob(doctor.KindSysfs, sysfsKnob{}) }

func (sysfsKnob) check(a doctor.Action) error {
	if !strings.HasPrefix(a.Target, "/sys/") || path.Clean(a.Target) != a.Target {
		return fmt.Errorf("sysfs target %q: want a clean absolute path below /sys", a.Target)
	}
	if a.Value == "" || strings.ContainsAny(a.Value, "\n\x00") {
		return fmt.Errorf("sysfs value %q: want one line", a.Value)
	}
	if a.Device != "" && strings.HasPrefix(a.Target, "/sys/class/net/") &&
		!strings.HasPrefix(a.Target, "/sys/class/net/"+a.Device+"/") {
		return fmt.Errorf("sysfs target %s is not a file of device %s", a.Target, a.Device)
	}
	return nil
}

func (sysfsKnob) read(_ context.Context, s *System, a doctor.Action) (string, error) {
	return s.readFile(a.Target)
}

func (sysfsKnob) apply(_ context.Context, s *System, a doctor.Action) error {
	return s.writeFile(a.Target, a.Value)
}

func (sysfsKnob) took(a doctor.Action, state string) (bool, string) {
	got := strings.TrimSpace(state)
	if got == a.Value {
		return true, ""
	}
	if strings.HasSuffix(a.Target, "_cpus") {
		// Masks read back zero-padded and comma-grouped.
		w, err1 := cpumask.ParseMask(a.Value)
		g, err2 := cpumask.ParseMask(got)
		if err1 == nil && err2 == nil && cpumask.FormatList(w) == cpumask.FormatList(g) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("%s reads %q after writing %q", a.Target, got, a.Value)
}

func (sysfsKnob) restore(_ context.Context, s *System, a doctor.Action, old string) error {
	return s.writeFile(a.Target, old)
}
