// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// sysctlKnob writes /proc/sys/net/...: net.core.netdev_budget,
// netdev_budget_usecs, netdev_max_backlog, rps_sock_flow_entries. Only the
// net. tree is accepted.
type sysctlKnob struct{}

func init() { registerKnob(doctor.KindSysctl, sysctlKnob{}) }

func (sysctlKnob) check(a doctor.Action) error {
	if !strings.HasPrefix(a.Target, "net.") {
		return fmt.Errorf("sysctl %q: tune changes only net.* sysctls", a.Target)
	}
	for _, part := range strings.Split(a.Target, ".") {
		if part == "" || part == ".." || strings.ContainsAny(part, "/ \x00") {
			return fmt.Errorf("sysctl %q: not a sysctl name", a.Target)
		}
	}
	if a.Value == "" || strings.ContainsAny(a.Value, "\n\x00") {
		return fmt.Errorf("sysctl value %q: want one line", a.Value)
	}
	return nil
}

func sysctlPath(name string) string {
	return "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
}

func (sysctlKnob) read(_ context.Context, s *System, a doctor.Action) (string, error) {
	v, err := s.readFile(sysctlPath(a.Target))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("this kernel (or network namespace) has no sysctl %s", a.Target)
	}
	return v, err
}

func (sysctlKnob) apply(_ context.Context, s *System, a doctor.Action) error {
	return s.writeFile(sysctlPath(a.Target), a.Value)
}

func (sysctlKnob) took(a doctor.Action, state string) (bool, string) {
	if strings.Join(strings.Fields(state), " ") == strings.Join(strings.Fields(a.Value), " ") {
		return true, ""
	}
	return false, fmt.Sprintf("%s reads %q after writing %q", a.Target, strings.TrimSpace(state), a.Value)
}

func (sysctlKnob) restore(_ context.Context, s *System, a doctor.Action, old string) error {
	return s.writeFile(sysctlPath(a.Target), old)
}
