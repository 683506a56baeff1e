// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// What the NAPI threading rules share (wg-threaded-napi, wg-softirq-risk,
// napi-convergence): WireGuard devices, threaded NAPI and the actions that
// set it.

// wireguards lists the Input's WireGuard devices that are up.
func wireguards(in *Input) []*inspect.Device {
	var out []*inspect.Device
	for _, d := range in.devices() {
		if d.Driver == "wireguard" && isUp(d) {
			out = append(out, d)
		}
	}
	return out
}

// napiThreaded: the device's NAPIs are polled by kthreads (the sysfs knob,
// per-NAPI threaded, or napi/DEV-* threads seen).
func napiThreaded(d *inspect.Device) bool {
	if d.NAPISysfs.Threaded == "1" || d.NAPISysfs.Threaded == "2" || len(d.Threads) > 0 {
		return true
	}
	for _, n := range d.NAPIs {
		if n.PID != nil || (n.Threaded != "" && n.Threaded != "disabled") {
			return true
		}
	}
	return false
}

// wgThreadedCaveat is what anyone turning threaded NAPI on for WireGuard
// devices on kernel rel must know.
func wgThreadedCaveat(rel string) string {
	f := fact("wg-threaded-default")
	s := "WireGuard's threaded default (" + f.Cite() + ") was " + f.Note + "; the stable releases that carried it: " + f.StableRanges() + "."
	switch r, inRange, known := InStable(rel, f.Key); {
	case inRange:
		s += " Kernel " + rel + " is one of them: upgrade to " + r.After() + " or later before relying on threaded NAPI for WireGuard."
	case !known:
		s += " Whether kernel " + rel + " is one of them (" + r.String() + ") is unknown: " + patchUnknownNote(rel) + "."
	case Has(rel, f.Key) == datapath.Yes:
		s += " Kernel " + rel + " is not one of them: " + wgMainlineStall + ", so whether it can stall is not known."
	}
	return s + " A peer that stops receiving while its handshakes continue (wg show DEV latest-handshakes, transfer) is that stall."
}

// busyNAPIWork is the packets per (attached) second above which a NAPI
// counts as busy.
const busyNAPIWork = 1000

// threadedActions makes a device's NAPIs threaded: per NAPI where the
// kernel has napi-set threaded and the NAPIs have ids, else the device-wide
// sysfs knob.
func threadedActions(s *inspect.Snapshot, d *inspect.Device) []Action {
	if s.Host.Features.PerNAPIThreaded.State == datapath.Yes && len(d.NAPIs) > 0 {
		var acts []Action
		for _, n := range d.NAPIs {
			acts = append(acts, Action{ID: fmt.Sprintf("napi-threaded:%s:%d", d.Name, n.ID), Kind: KindNAPI, Device: d.Name,
				Target: fmt.Sprintf("%d:threaded", n.ID), Value: "enabled",
				Command: fmt.Sprintf("ynl --family netdev --do napi-set --json '{\"id\": %d, \"threaded\": \"enabled\"}'", n.ID)})
		}
		return acts
	}
	return []Action{sysfsAction("threaded:"+d.Name, d.Name, "/sys/class/net/"+d.Name+"/threaded", "1")}
}
