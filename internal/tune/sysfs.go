// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// Every file tune writes takes a number, a CPU mask or a word; the
	// value also goes into a udev rule (persist), where a quote or a
	// space could start another assignment.
	if !sysfsValue(a.Value) {
		return fmt.Errorf("sysfs value %q: want a number, a CPU mask or a word (letters, digits, _ - . , :)", a.Value)
	}
	return nil
}

func sysfsValue(v string) bool {
	return v != "" && len(v) <= 256 && !strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.,:", r))
	})
}

func (sysfsKnob) read(_ context.Context, s *System, a doctor.Action) (string, error) {
	v, err := s.readFile(a.Target)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("this host has no %s (no such device, queue, CPU or cpufreq driver): was the plan made on another host? run 'wirespeed doctor' here: %w", a.Target, err)
	}
	return v, err
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
