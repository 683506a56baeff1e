// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Device lookups and names several rules share.

func deviceNames(ds []*inspect.Device) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

// nameList shortens a long device list for a title: "wg0, wg1, ... (16
// devices)".
func nameList(names []string) string {
	if len(names) <= 4 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, %s, ... (%d devices)", names[0], names[1], len(names))
}

func deviceByName(s *inspect.Snapshot, name string) *inspect.Device {
	for i := range s.Devices {
		if s.Devices[i].Name == name {
			return &s.Devices[i]
		}
	}
	return nil
}

// isMac80211: a SoftMAC WiFi interface, whose TX goes through mac80211's
// own queues.
func isMac80211(d *inspect.Device) bool {
	return d.Wireless != nil && d.Wireless.Stack == inspect.StackMac80211
}
