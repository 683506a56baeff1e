// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/doctor"
)

// governorKnob sets the cpufreq governor of a CPU list. The state is
// "CPU=governor" per CPU, space-separated ("0=schedutil 1=schedutil").
type governorKnob struct{}

func init() { registerKnob(doctor.KindGovernor, governorKnob{}) }

func (governorKnob) check(a doctor.Action) error {
	if cpus, err := cpumask.ParseList(a.Target); err != nil || len(cpus) == 0 {
		return fmt.Errorf("governor CPUs %q: want a CPU list such as 0-3", a.Target)
	}
	if !safeWord(a.Value) || strings.Contains(a.Value, ":") {
		return fmt.Errorf("governor %q: want a name such as performance", a.Value)
	}
	return nil
}

func govPath(cpu int) string {
	return "/sys/devices/system/cpu/cpu" + strconv.Itoa(cpu) + "/cpufreq/scaling_governor"
}

func (governorKnob) read(_ context.Context, s *System, a doctor.Action) (string, error) {
	cpus, _ := cpumask.ParseList(a.Target)
	var parts []string
	for _, c := range cpus {
		v, err := s.readFile(govPath(c))
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("CPU %d has no cpufreq governor", c)
		}
		if err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%d=%s", c, strings.TrimSpace(v)))
	}
	return strings.Join(parts, " "), nil
}

func (governorKnob) apply(_ context.Context, s *System, a doctor.Action) error {
	cpus, _ := cpumask.ParseList(a.Target)
	for _, c := range cpus {
		if err := s.writeFile(govPath(c), a.Value); err != nil {
			return fmt.Errorf("CPU %d: %w", c, err)
		}
	}
	return nil
}

func (governorKnob) took(a doctor.Action, state string) (bool, string) {
	for _, p := range strings.Fields(state) {
		if _, g, _ := strings.Cut(p, "="); g != a.Value {
			return false, fmt.Sprintf("governors read %q", state)
		}
	}
	return true, ""
}

func (governorKnob) restore(_ context.Context, s *System, a doctor.Action, old string) error {
	for _, p := range strings.Fields(old) {
		c, g, ok := strings.Cut(p, "=")
		n, err := strconv.Atoi(c)
		if !ok || err != nil || !safeWord(g) {
			return fmt.Errorf("recorded governor state %q", old)
		}
		if err := s.writeFile(govPath(n), g); err != nil {
			return fmt.Errorf("CPU %d: %w", n, err)
		}
	}
	return nil
}
