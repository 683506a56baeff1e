package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
