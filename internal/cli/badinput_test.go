// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const vmResult = "../../testdata/results/vm-usb-nic-ours.json"

// TestUnclearMessages: issue 21's list of bad inputs whose messages did not
// say what was wrong or what to do (or that exited 0). Each must exit
// non-zero with a message that names the input and what to give instead.
func TestUnclearMessages(t *testing.T) {
	dir := t.TempDir()
	_, doc, _ := run("doctor", "--from", rpiFixture, "--json")
	docFile := filepath.Join(dir, "doctor.json")
	os.WriteFile(docFile, []byte(doc), 0o644)
	for _, c := range []struct {
		args    []string
		code    int
		want    []string
		notWant string
	}{
		{[]string{"exporter", "--observe-sample", "150"}, ExitUsage, []string{"--observe-sample", "up to 100%"}, "write 150%"},
		{[]string{"exporter", "--refresh", "-5s"}, ExitUsage, []string{"--refresh", "want 0 (every scrape) or more"}, "give 0 or a positive duration"},
		{[]string{"observe", "--sample", "150"}, ExitUsage, []string{"--sample", "up to 100%"}, "write 150%"},
		{[]string{"observe", "--sample", "50"}, ExitUsage, []string{"write 50%"}, ""},
		{[]string{"report", docFile, "-o", filepath.Join(dir, "r.html")}, ExitFail, []string{"'wirespeed doctor --json' report", "wirespeed bench --out"}, "Go struct"},
		{[]string{"compare", docFile, docFile}, ExitFail, []string{"'wirespeed doctor --json' report", "wirespeed bench --out"}, "Go struct"},
		{[]string{"lab", "-h"}, ExitOK, nil, ""},
		{[]string{"lab", "vm", "usb-gadget", "--bus-rate", "abc"}, ExitUsage, []string{`--bus-rate "abc"`, "want a whole number"}, "parse error"},
		{[]string{"lab", "vm", "usbnet-stress", "--cycles", "-3"}, ExitUsage, []string{"--cycles -3", "want 1-"}, ""},
		{[]string{"lab", "vm", "usb-nic", "-P", "0"}, ExitUsage, []string{"-P 0", "want 1-128"}, ""},
		{[]string{"lab", "vm", "usb-nic", "-t", "0"}, ExitUsage, []string{"-t 0s", "want 1s to 1h"}, ""},
		{[]string{"lab", "vm", "usb-nic", "--timeout", "1ms"}, ExitUsage, []string{"--timeout 1ms", "want 0"}, ""},
		{[]string{"lab", "vm", "wireguard", "--tunnels", "0"}, ExitUsage, []string{"--tunnels 0", "want 1-64"}, ""},
		{[]string{"observe", "--duration", "0.0001"}, ExitUsage, []string{"--duration 100µs", "want 100ms or more"}, ""},
		{[]string{"observe", "nosuchif0", "--duration", "1s"}, ExitUsage, []string{`"nosuchif0"`, "ip netns exec"}, ""},
		{[]string{"watch", "nosuchif0", "--count", "1"}, ExitUsage, []string{`"nosuchif0"`}, ""},
		{[]string{"doctor", "--observe", "0"}, ExitUsage, []string{"--observe 0s", "leave --observe out"}, ""},
		{[]string{"doctor", "--observe", "-5s"}, ExitUsage, []string{"--observe -5s"}, ""},
		{[]string{"compare", vmResult + "," + vmResult, vmResult}, ExitUsage, []string{"A has 2 files and B 1", "as many on each side"}, ""},
		{[]string{"compare", "--a", "x", vmResult}, ExitUsage, []string{"--a and --b pick the variants of two files"}, ""},
		{[]string{"tune", "apply", "lo", "--verify-timeout", "abc"}, ExitUsage, []string{`--verify-timeout "abc": not a duration`}, "parse error"},
		{[]string{"tune", "apply", "lo", "--peer", "198.18.0.1", "--duration", "soon"}, ExitUsage, []string{`--duration "soon": not a duration`}, ""},
		{[]string{"tune", "apply", "lo", "--peer", "198.18.0.1", "--duration", "0.5"}, ExitUsage, []string{"want 1s or more"}, ""},
		{[]string{"report", vmResult, "--flent", "/proc/x"}, ExitUsage, []string{"/proc/x", "writable directory"}, "/proc/."},
		{[]string{"bench", "--bogus"}, ExitUsage, []string{"unknown flag --bogus", "wirespeed bench -h"}, ""},
		{[]string{"bench", "--port", "0"}, ExitUsage, []string{"--port 0", "want 1-65535"}, ""},
		{[]string{"lab", "status", "extra"}, ExitUsage, []string{`"extra"`}, ""},
		{[]string{"nosuchcmd"}, ExitUsage, []string{`"nosuchcmd"`, "wirespeed help"}, ""},
	} {
		code, _, errOut := run(c.args...)
		first := strings.SplitN(errOut, "\n", 2)[0]
		ok := code == c.code && (c.notWant == "" || !strings.Contains(errOut, c.notWant))
		for _, w := range c.want {
			ok = ok && strings.Contains(first, w)
		}
		if !ok {
			t.Errorf("%v: exit %d, first line %q; want exit %d with %q (and not %q)", c.args, code, first, c.code, c.want, c.notWant)
		}
	}
}

// TestDoctorResultWithoutSamples: a result without samples or observation
// leaves the runtime rules unchecked; the reason must say the file lacks the
// data, not tell the user to pass the --result they passed.
func TestDoctorResultWithoutSamples(t *testing.T) {
	b, err := os.ReadFile(vmResult)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, run := range r["runs"].([]any) {
		delete(run.(map[string]any), "samples")
		delete(run.(map[string]any), "observe")
	}
	b, _ = json.Marshal(r)
	f := filepath.Join(t.TempDir(), "nosamples.json")
	os.WriteFile(f, b, 0o644)
	code, out, errOut := run("doctor", "--result", f)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "(or --result") || !strings.Contains(out, f+" lacks the data") {
		t.Errorf("doctor --result without samples:\n%s", out)
	}
}
