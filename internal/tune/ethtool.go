// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// ethtoolKnob switches one offload feature (rx-gro, rx-udp-gro-forwarding,
// ...) with ethtool(8) -K; the state is "on" or "off" as ethtool -k shows it.
type ethtoolKnob struct{}

func init() { registerKnob(doctor.KindEthtool, ethtoolKnob{}) }

func (ethtoolKnob) check(a doctor.Action) error {
	if a.Device == "" {
		return fmt.Errorf("ethtool action without a device")
	}
	if a.Target == "" || strings.ContainsFunc(a.Target, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
	}) {
		return fmt.Errorf("ethtool feature %q: want a name such as rx-gro", a.Target)
	}
	if a.Value != "on" && a.Value != "off" {
		return fmt.Errorf("ethtool feature value %q: want on or off", a.Value)
	}
	return nil
}

// legacyNames are the names ethtool -k prints for features whose kernel
// name (the one doctor and ethtool -K use) differs.
var legacyNames = map[string]string{
	"rx-gro":                  "generic-receive-offload",
	"rx-lro":                  "large-receive-offload",
	"tx-generic-segmentation": "generic-segmentation-offload",
	"rx-checksum":             "rx-checksumming",
	"rx-hashing":              "receive-hashing",
	"rx-ntuple-filter":        "ntuple-filters",
}

// ParseFeature finds feature in the output of ethtool -k: its state
// ("on"/"off") and whether the driver fixed it.
func ParseFeature(out, feature string) (state string, fixed bool, err error) {
	for _, line := range strings.Split(out, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != feature && (legacyNames[feature] == "" || name != legacyNames[feature])) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 || (f[0] != "on" && f[0] != "off") {
			return "", false, fmt.Errorf("ethtool -k: feature %s: cannot read %q", feature, rest)
		}
		return f[0], strings.Contains(rest, "[fixed]"), nil
	}
	return "", false, fmt.Errorf("ethtool -k does not list feature %s", feature)
}

func (ethtoolKnob) read(ctx context.Context, s *System, a doctor.Action) (string, error) {
	out, err := s.run(ctx, "ethtool", "-k", a.Device)
	if err != nil {
		return "", err
	}
	st, _, err := ParseFeature(string(out), a.Target)
	return st, err
}

func (ethtoolKnob) apply(ctx context.Context, s *System, a doctor.Action) error {
	_, err := s.run(ctx, "ethtool", "-K", a.Device, a.Target, a.Value)
	return err
}

func (ethtoolKnob) took(a doctor.Action, state string) (bool, string) {
	if state == a.Value {
		return true, ""
	}
	return false, fmt.Sprintf("%s %s stays %s (the driver may have it fixed or tied to another feature)", a.Device, a.Target, state)
}

func (ethtoolKnob) restore(ctx context.Context, s *System, a doctor.Action, old string) error {
	if old != "on" && old != "off" {
		return fmt.Errorf("recorded state %q of %s is not on/off", old, a.Target)
	}
	_, err := s.run(ctx, "ethtool", "-K", a.Device, a.Target, old)
	return err
}
