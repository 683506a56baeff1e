// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/wirespeed/wirespeed/internal/selfexe"
)

// InspectSelf returns an Options.Inspect that re-executes this binary's
// 'inspect --json IFACE' inside the namespace (sysfs is per namespace),
// or nil when the binary cannot be found or is a Go test binary (see
// selfexe).
func InspectSelf() func(ctx context.Context, ns string, ifaces []string) (json.RawMessage, error) {
	exe, err := selfexe.Path()
	if err != nil {
		return nil
	}
	return func(ctx context.Context, ns string, ifaces []string) (json.RawMessage, error) {
		cargs := append([]string{"inspect", "--json"}, ifaces...)
		var cmd *exec.Cmd
		if ns == "" {
			cmd = exec.CommandContext(ctx, exe, cargs...)
		} else {
			cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, exe}, cargs...)...)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("wirespeed inspect in %q: %w: %s", ns, err, strings.TrimSpace(stderr.String()))
		}
		if !json.Valid(out) {
			return nil, fmt.Errorf("wirespeed inspect in %q printed no JSON", ns)
		}
		return json.RawMessage(out), nil
	}
}

func inspectOrError(ctx context.Context, f func(context.Context, string, []string) (json.RawMessage, error), ns string, ifs []string) json.RawMessage {
	b, err := f(ctx, ns, ifs)
	if err != nil {
		e, _ := json.Marshal(map[string]string{"error": err.Error()})
		return e
	}
	return b
}
