// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/lab/vm"
)

func TestLabVMBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"lab", "vm", "list"}, ExitOK, []string{"usb-gadget", "usb-nic", "wireguard", "bql", "boot"}},
		{[]string{"lab", "vm", "list"}, ExitOK, []string{"usb-gadget", "usb-nic", "wireguard", "bql", "boot"}},
		{[]string{"lab", "vm", "nosuch"}, ExitUsage, []string{`unknown scenario "nosuch"`}},
		{[]string{"lab", "vm", "nosuch"}, ExitUsage, []string{`unknown scenario "nosuch"`, "usb-gadget", "usb-nic"}},
		{[]string{"lab", "vm"}, ExitUsage, []string{"want one scenario"}},
		{[]string{"lab", "vm", "usb-gadget", "--speed", "warp"}, ExitUsage, []string{"super, high or full"}},
		{[]string{"lab", "vm", "wireguard", "--threaded", "maybe"}, ExitUsage, []string{"want on or off"}},
		{[]string{"lab", "vm", "usb-nic", "--direction", "up"}, ExitUsage, []string{"send, receive or both"}},
		{[]string{"lab", "vm", "usb-gadget", "--ab"}, ExitUsage, []string{"--ab needs --modules-dir"}},
		{[]string{"lab", "vm", "usb-gadget", "-t", "soon"}, ExitUsage, []string{"not a duration"}},
		{[]string{"lab", "vm", "usb-nic", "--bus-rate", "100"}, ExitUsage, []string{"--bus-rate is for the dummy_hcd scenarios"}},
		{[]string{"lab", "vm", "bql", "--bus-rate", "-5"}, ExitUsage, []string{"want 1-100000 Mbit/s"}},
		{[]string{"lab", "vm", "usbnet-stress", "--steps", "rebind,explode"}, ExitUsage, []string{`step "explode"`, "downsuspend"}},
		{[]string{"lab", "vm", "bql", "--accel", "fast"}, ExitUsage, []string{"tcg-icount"}},
		{[]string{"lab", "vm", "usb-gadget", "--gadget-function", "acm"}, ExitUsage, []string{`--gadget-function "acm"`, "ncm, ecm, eem, rndis, subset"}},
		{[]string{"lab", "vm", "usb-nic", "--gadget-function", "ecm"}, ExitUsage, []string{"not usb-nic"}},
		{[]string{"lab", "vm", "usbnet-stress", "--gadget-function", "rndis", "--steps", "rebind,downsuspend"}, ExitUsage, []string{"rndis_host", "no runtime autosuspend"}},
		{[]string{"lab", "vm", "list", "extra"}, ExitUsage, []string{"takes no arguments"}},
		{[]string{"lab", "vm", "boot", "--profile"}, ExitUsage, []string{"--profile samples the bench runs"}},
		{[]string{"lab", "down", "a", "b"}, ExitUsage, []string{"one lab's name"}},
		{[]string{"lab", "down", "--all", "a"}, ExitUsage, []string{"--all alone"}},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tc.args, &out, &errb)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %s)", tc.args, code, tc.code, errb.String())
		}
		all := out.String() + errb.String()
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, all)
			}
		}
	}
}

// TestPrintLabVMDriverPath: the device under test's line says whether
// its driver is on usbnet, as the guest found it (r8152 runs its own
// NAPI and GRO), and nothing where the guest did not say.
func TestPrintLabVMDriverPath(t *testing.T) {
	for _, c := range []struct{ usbnet, want string }{
		{"no", "device under test: eth0 (driver r8152, not on usbnet: its own RX path), USB speed 5000\n"},
		{"yes", "device under test: eth0 (driver r8152, on usbnet), USB speed 5000\n"},
		{"", "device under test: eth0 (driver r8152), USB speed 5000\n"},
	} {
		var out bytes.Buffer
		f := map[string]string{"dut_if": "eth0", "dut_driver": "r8152", "usb_speed": "5000"}
		if c.usbnet != "" {
			f["dut_usbnet"] = c.usbnet
		}
		printLabVM(Env{Stdout: &out, Stderr: io.Discard}, &vm.Outcome{OK: true, Facts: f, RXPaths: map[string]string{"eth0": "NAPI + GRO"}})
		if !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), "RX path (observe in the guest) eth0: NAPI + GRO") {
			t.Errorf("dut_usbnet=%q: output\n%s\nwant the line %q and the RX path", c.usbnet, out.String(), c.want)
		}
	}
}
