// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
)

// Observer watches the datapath while a run's load is on (the eBPF collector
// of `wirespeed observe` implements it). Start is called right before the
// load starts with the interfaces the run involves; stop is called when the
// load ends and its JSON is stored under "observe" in that run's result.
// For lab runs the interfaces live in the lab's namespaces (Run.Namespaces
// says which); a Start error is recorded in the run, not fatal.
type Observer interface {
	Start(ctx context.Context, ifaces []string) (stop func() (json.RawMessage, error), err error)
}
