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
	// The name goes into /proc/sys and into sysctl.d (persist), a file
	// systemd-sysctl parses line by line: each part a name of letters,
	// digits, _ and -, as the kernel's net.* sysctls are (a newline would
	// start a setting of its own in sysctl.d).
	for _, part := range strings.Split(a.Target, ".") {
		if part == "" || strings.ContainsFunc(part, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) {
			return fmt.Errorf("sysctl %q: not a sysctl name (parts of letters, digits, _ and -, joined by dots)", a.Target)
		}
	}
	if a.Value == "" || strings.ContainsFunc(a.Value, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return fmt.Errorf("sysctl value %q: want one line without control characters", a.Value)
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
