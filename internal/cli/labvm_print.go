// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wirespeed/wirespeed/internal/lab/vm"
)

// The text view of a VM lab outcome.

func printLabVM(env Env, r *vm.Outcome) {
	w := env.Stdout
	status := "ok"
	if !r.OK {
		status = "FAILED"
	}
	src := r.Kernel.Package + " " + r.Kernel.PackageVersion
	if r.Kernel.Package == "" {
		src = r.Kernel.Image
	}
	fmt.Fprintf(w, "scenario %s: %s in %.0fs (guest %s from %s, %s, init at %.1fs)\n", r.Scenario, status, r.Elapsed,
		r.Kernel.Release, src, r.Accel, r.BootS)
	if f := r.Facts; f != nil && f["dut_if"] != "" {
		fmt.Fprintf(w, "device under test: %s (driver %s", f["dut_if"], f["dut_driver"])
		switch f["dut_usbnet"] {
		case "yes":
			fmt.Fprint(w, ", on usbnet")
		case "no":
			fmt.Fprint(w, ", not on usbnet: its own RX path")
		}
		fmt.Fprint(w, ")")
		if s := f["usb_speed"]; s != "" {
			fmt.Fprintf(w, ", USB speed %s", s)
		}
		fmt.Fprintln(w)
		for _, d := range []string{"send", "receive"} {
			tb := factDelta(f, d, "tx_bytes")
			rb := factDelta(f, d, "rx_bytes")
			if tb >= 0 || rb >= 0 {
				fmt.Fprintf(w, "  %-7s device counters: tx %.1f MB, rx %.1f MB\n", d, tb/1e6, rb/1e6)
			}
		}
	}
	if len(r.RXPaths) > 0 {
		var ks []string
		for k := range r.RXPaths {
			if !strings.HasPrefix(k, "(") { // observe's pseudo-devices, e.g. "(no_device)"
				ks = append(ks, k)
			}
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Fprintf(w, "  RX path (observe in the guest) %s: %s\n", k, r.RXPaths[k])
		}
	}
	for _, h := range r.Hits {
		fmt.Fprintf(w, "GUARD %s\n", h)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, f := range r.Files {
		if strings.HasPrefix(f, "bench-") && strings.HasSuffix(f, ".json") {
			fmt.Fprintf(w, "result: %s/%s (wirespeed show)\n", r.OutDir, f)
		}
	}
	fmt.Fprintf(w, "console: %s; outcome: %s/vm.json\n", r.ConsoleLg, r.OutDir)
}

func factDelta(f map[string]string, dir, c string) float64 {
	var a, b float64
	if _, err := fmt.Sscan(f["before-"+dir+"."+c], &a); err != nil {
		return -1
	}
	if _, err := fmt.Sscan(f["after-"+dir+"."+c], &b); err != nil {
		return -1
	}
	return b - a
}
