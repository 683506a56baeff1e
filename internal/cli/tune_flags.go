// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"slices"
	"sort"
	"strings"
)

// measuredBy names tune apply's mode: how each action is measured.
func measuredBy(peer string, inLab bool, verify string) string {
	switch {
	case peer != "":
		return "--peer"
	case inLab:
		return "--lab"
	case verify != "":
		return "--verify-cmd"
	}
	return "static"
}

// tuneModeFlags are the flags that act only in some of tune apply's modes.
var tuneModeFlags = map[string][]string{
	"gro": {"--lab"}, "threaded": {"--lab"}, "sender-offloads": {"--lab"}, "rps": {"--lab"},
	"rate": {"--lab"}, "qdisc": {"--lab"}, "pin-sender": {"--lab"}, "pin-receiver": {"--lab"},
	"duration": {"--peer", "--lab"}, "P": {"--peer", "--lab"}, "bench-args": {"--peer", "--lab"},
	"direction": {"--peer"},
	"goal":      {"--peer", "--lab", "--verify-cmd"}, "guard": {"--peer", "--lab", "--verify-cmd"},
	"pairs": {"--peer", "--lab", "--verify-cmd"},
}

// refuseUnused refuses a flag the user set that does nothing in mode: a
// silently ignored flag is a setting the user believes in and does not get.
func refuseUnused(cmd string, set map[string]bool, mode string) error {
	var names []string
	for name := range set {
		if modes, ok := tuneModeFlags[name]; ok && !slices.Contains(modes, mode) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	name := names[0]
	what := "without a measurement (static apply)"
	if mode != "static" {
		what = "with " + mode
	}
	return usageErrorf("%s: --%s does nothing %s; it acts with %s: leave it out or pick that mode; nothing was applied", cmd, name, what, strings.Join(tuneModeFlags[name], " or "))
}
