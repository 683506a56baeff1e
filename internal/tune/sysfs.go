package tune

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/doctor"
)

// sysfsKnob writes one file below /sys: rps_cpus, rps_flow_cnt, xps_cpus,
// threaded, gro_flush_timeout, napi_defer_hard_irqs.
type sysfsKnob struct{}

func init() { registerKnob(doctor.KindSysfs, sysfsKnob{}) }

func (sysfsKnob) check(a doctor.Action) error {
	if err := checkSysfsTarget(a.Target, a.Device); err != nil {
		return err
	}
	if a.Value == "" || strings.ContainsAny(a.Value, "\n\x00") {
		return fmt.Errorf("sysfs value %q: want one line", a.Value)
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
