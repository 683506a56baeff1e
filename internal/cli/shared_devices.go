// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"net"
	"time"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// What the commands that watch devices at work share (observe, watch).

// deviceIRQs asks inspect which interrupts serve the named devices that live
// in this network namespace (for a USB NIC: its host controller's), so
// observe can show them. Best effort: devices elsewhere are skipped.
func deviceIRQs(ctx context.Context, ifaces []string) map[string][]int {
	out := map[string][]int{}
	for _, name := range ifaces {
		if _, err := net.InterfaceByName(name); err != nil {
			continue
		}
		ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
		snap, err := inspect.Collect(ictx, inspect.Options{Ifaces: []string{name}})
		cancel()
		if err != nil {
			continue
		}
		for _, d := range snap.Devices {
			for _, q := range d.IRQs {
				out[d.Name] = append(out[d.Name], q.Number)
			}
		}
	}
	return out
}
