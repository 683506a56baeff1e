// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/lab"
)

// qdiscKnob replaces a device's root qdisc (tc qdisc replace dev D root
// KIND). The recorded state is tc's first line for the root ("qdisc
// noqueue 0: root refcnt 2"); a root the kernel attached by itself
// (handle 0:) is restored by deleting ours, which makes the kernel attach
// its default again.
type qdiscKnob struct{}

func init() { registerKnob(doctor.KindQdisc, qdiscKnob{}) }

func safeWord(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == ':')
	})
}

func (qdiscKnob) check(a doctor.Action) error {
	if a.Device == "" {
		return fmt.Errorf("qdisc action without a device")
	}
	if a.Target != "root" {
		return fmt.Errorf("qdisc target %q: only the root qdisc is changed", a.Target)
	}
	f := strings.Fields(a.Value)
	if len(f) == 0 {
		return fmt.Errorf("qdisc value is empty: want a kind such as fq_codel")
	}
	for _, w := range f {
		if !safeWord(w) {
			return fmt.Errorf("qdisc value %q: want a kind and tc options", a.Value)
		}
	}
	return nil
}

// RootQdisc parses tc qdisc show's output for the root line: the whole
// line, the kind and the handle.
func RootQdisc(out string) (line, kind, handle string, err error) {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "qdisc" && f[3] == "root" {
			return strings.TrimSpace(l), f[1], f[2], nil
		}
	}
	return "", "", "", fmt.Errorf("tc qdisc show: no root qdisc in %q", strings.TrimSpace(out))
}

func (qdiscKnob) read(ctx context.Context, s *System, a doctor.Action) (string, error) {
	out, err := s.run(ctx, "tc", "qdisc", "show", "dev", a.Device, "root")
	if err != nil {
		return "", err
	}
	line, _, _, err := RootQdisc(string(out))
	return line, err
}

func (qdiscKnob) apply(ctx context.Context, s *System, a doctor.Action) error {
	_, err := s.run(ctx, append([]string{"tc", "qdisc", "replace", "dev", a.Device, "root"}, strings.Fields(a.Value)...)...)
	return lab.QdiscError(strings.Fields(a.Value)[0], err)
}

func (qdiscKnob) took(a doctor.Action, state string) (bool, string) {
	_, kind, _, err := RootQdisc(state)
	if err == nil && kind == strings.Fields(a.Value)[0] {
		return true, ""
	}
	return false, fmt.Sprintf("root qdisc of %s is %q, not %s", a.Device, state, a.Value)
}

func (k qdiscKnob) restore(ctx context.Context, s *System, a doctor.Action, old string) error {
	_, kind, handle, err := RootQdisc(old)
	if err != nil {
		return fmt.Errorf("recorded qdisc: %w", err)
	}
	if handle == "0:" {
		_, err := s.run(ctx, "tc", "qdisc", "del", "dev", a.Device, "root")
		return err
	}
	// A qdisc someone configured: its kind and handle come back; options
	// tc printed are not all accepted back, so they are not replayed.
	_, err = s.run(ctx, "tc", "qdisc", "replace", "dev", a.Device, "root", "handle", handle, kind)
	return err
}
