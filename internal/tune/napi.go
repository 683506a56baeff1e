// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/netdevnl"
)

// napiKnob sets one per-NAPI attribute over netdev netlink (napi-set,
// Linux 6.13+). Target is "ID:attr" ("12:gro-flush-timeout"); the state is
// the attribute's number. It works in this process's network namespace
// only, and never under System.Root.
type napiKnob struct{}

func init() { registerKnob(doctor.KindNAPI, napiKnob{}) }

func napiTarget(t string) (uint32, string, error) {
	id, attr, ok := strings.Cut(t, ":")
	n, err := strconv.ParseUint(id, 10, 32)
	if !ok || err != nil || !slices.Contains(netdevnl.NAPIAttrs, attr) {
		return 0, "", fmt.Errorf("napi target %q: want ID:ATTR with ATTR one of %s", t, strings.Join(netdevnl.NAPIAttrs, ", "))
	}
	return uint32(n), attr, nil
}

func (napiKnob) check(a doctor.Action) error {
	if _, _, err := napiTarget(a.Target); err != nil {
		return err
	}
	if _, err := strconv.ParseUint(a.Value, 10, 64); err != nil {
		return fmt.Errorf("napi value %q: want a number", a.Value)
	}
	return nil
}

func (napiKnob) read(_ context.Context, _ *System, a doctor.Action) (string, error) {
	id, attr, _ := napiTarget(a.Target)
	ns, err := netdevnl.DumpNAPIs()
	if err != nil {
		return "", err
	}
	for _, n := range ns {
		if n.ID == id {
			v, ok := netdevnl.NAPIValue(n, attr)
			if !ok {
				return "", fmt.Errorf("NAPI %d: this kernel does not report %s", id, attr)
			}
			return strconv.FormatUint(v, 10), nil
		}
	}
	return "", &goneError{fmt.Sprintf("there is no NAPI instance %d here (see 'ip -d link' or 'wirespeed inspect'): NAPI ids change with every boot and re-plug; run 'wirespeed doctor' again for this host's", id)}
}

func (napiKnob) set(v string, a doctor.Action) error {
	id, attr, _ := napiTarget(a.Target)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("napi value %q: %w", v, err)
	}
	return netdevnl.SetNAPI(id, attr, n)
}

func (k napiKnob) apply(_ context.Context, _ *System, a doctor.Action) error {
	return k.set(a.Value, a)
}

func (napiKnob) took(a doctor.Action, state string) (bool, string) {
	if state == a.Value {
		return true, ""
	}
	return false, fmt.Sprintf("NAPI %s reads %s after writing %s", a.Target, state, a.Value)
}

func (k napiKnob) restore(_ context.Context, _ *System, a doctor.Action, old string) error {
	return k.set(old, a)
}
