// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestProfileFold runs the guest's ws_fold (guest/lib.sh) over perf
// script output in the form perf prints it (comm right-aligned, a comm
// with a space and a ';', frames innermost first) under busybox's awk, the
// guest's, and this host's awk: one line per distinct stack, outermost
// first, with its count.
func TestProfileFold(t *testing.T) {
	lib := guestText("lib.sh")
	i := strings.Index(lib, "ws_fold() {")
	if i < 0 {
		t.Fatal("guest/lib.sh has no ws_fold")
	}
	j := strings.Index(lib[i:], "\n}\n")
	if j < 0 {
		t.Fatal("ws_fold has no end")
	}
	fn := lib[i : i+j+3]
	want, err := os.ReadFile("testdata/profile/folded.txt")
	if err != nil {
		t.Fatal(err)
	}
	awks := map[string][]string{}
	if bb, err := exec.LookPath("busybox"); err == nil {
		dir := t.TempDir()
		if err := os.Symlink(bb, filepath.Join(dir, "awk")); err != nil {
			t.Fatal(err)
		}
		awks["busybox"] = []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
	}
	awks["host"] = nil
	for name, env := range awks {
		cmd := exec.Command("sh", "-c", fn+"ws_fold < testdata/profile/perf-script.txt")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s awk: %v", name, err)
		}
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		sort.Strings(got)
		if g, w := strings.Join(got, "\n"), strings.TrimSpace(string(want)); g != w {
			t.Errorf("%s awk folded:\n%s\nwant:\n%s", name, g, w)
		}
	}
}

// --profile wraps each bench call in ws_profile_start/stop, and only then.
func TestProfileBenchCalls(t *testing.T) {
	o := Options{Direction: "both", Duration: 5e9, Streams: 2}
	if s := benchCalls(o, "198.18.0.1", ""); strings.Contains(s, "ws_profile") {
		t.Errorf("without --profile the bench calls profile:\n%s", s)
	}
	o.Profile = true
	s := benchCalls(o, "198.18.0.1", "")
	for _, d := range []string{"send", "receive"} {
		start := strings.Index(s, "ws_profile_start "+d+"\n")
		bench := strings.Index(s, "/results/bench-"+d+".json")
		stop := strings.Index(s, "ws_profile_stop "+d+"\n")
		if start < 0 || bench < start || stop < bench {
			t.Errorf("%s: profile start %d, bench %d, stop %d: want start < bench < stop\n%s", d, start, bench, stop, s)
		}
	}
}

// --profile is refused where it cannot run: a scenario without a bench,
// a guest root without perf.
func TestProfileRefused(t *testing.T) {
	base := Options{Scenario: "usb-gadget", Duration: 3e9, Streams: 2, Direction: "receive", Tunnels: 4, Profile: true}
	c := Config{Options: base}
	if err := c.Validate(); err != nil {
		t.Errorf("--profile on usb-gadget: %v", err)
	}
	o := base
	o.Scenario = "boot"
	c = Config{Options: o}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "runs none") {
		t.Errorf("--profile on boot: err %v, want a refusal", err)
	}
	if _, err := findPerf(t.TempDir()); err == nil || !strings.Contains(err.Error(), "linux-perf") {
		t.Errorf("findPerf in a root without perf: err %v, want one naming linux-perf", err)
	}
}

// --rps writes the mask to every receive queue of the device under test
// and records it; a bad mask, a scenario without one device under test or
// a mask naming no vCPU is refused before anything starts.
func TestRPSOption(t *testing.T) {
	if s := dutKnobs(Options{}, "HIF"); strings.Contains(s, "rps_cpus") {
		t.Errorf("without --rps: %s", s)
	}
	if s := dutKnobs(Options{BQLMin: 60000}, "HIF"); !strings.Contains(s, "for q in /sys/class/net/$HIF/queues/tx-*; do echo 60000 > $q/byte_queue_limits/limit_min") {
		t.Errorf("with --bql-min 60000:\n%s", s)
	}
	if s := dutKnobs(Options{BQLMax: 32004}, "HIF"); !strings.Contains(s, "for q in /sys/class/net/$HIF/queues/tx-*; do echo 32004 > $q/byte_queue_limits/limit_max") || !strings.Contains(s, "dut_bql_limit_max=") {
		t.Errorf("with --bql-max 32004:\n%s", s)
	}
	for _, c := range []struct {
		scenario string
		min, max int
		err      string
	}{
		{"usbdev", 60000, 0, ""}, {"usbdev", -1, 0, "want a byte count"}, {"wireguard", 60000, 0, "not wireguard"},
		{"usbdev", 0, 32004, ""}, {"usbdev", 16000, 32004, ""}, {"usbdev", 0, -1, "--bql-max -1: want a byte count"},
		{"wireguard", 0, 32004, "not wireguard"}, {"usbdev", 60000, 32004, "below --bql-min"},
	} {
		cfg := Config{Options: Options{Scenario: c.scenario, Duration: 3e9, Streams: 2, Direction: "receive", Tunnels: 4, BQLMin: c.min, BQLMax: c.max}}
		err := cfg.Validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("--bql-min %d --bql-max %d on %s: err %v, want %q", c.min, c.max, c.scenario, err, c.err)
		}
	}
	s := dutKnobs(Options{RPS: "d"}, "HIF")
	if !strings.Contains(s, "for q in /sys/class/net/$HIF/queues/rx-*; do echo d > $q/rps_cpus") || !strings.Contains(s, "dut_rps=") {
		t.Errorf("with --rps d:\n%s", s)
	}
	base := Options{Scenario: "usb-gadget", Duration: 3e9, Streams: 2, Direction: "receive", Tunnels: 4}
	for _, c := range []struct {
		scenario, rps, arch, err string
	}{
		{"usb-gadget", "d", "arm64", ""},
		{"usb-nic", "2", "", ""},
		{"usbdev", "e", "arm64", ""},
		{"usb-gadget", "00000000,0000000d", "arm64", ""},
		{"usb-gadget", "xyz", "", "want a hex CPU mask"},
		{"usb-gadget", "10", "", "names none of the guest's 2 vCPUs"},
		{"wireguard", "1", "", "not wireguard"},
	} {
		o := base
		o.Scenario, o.RPS, o.Arch = c.scenario, c.rps, c.arch
		cfg := Config{Options: o}
		err := cfg.Validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: err %v, want %q", c, err, c.err)
		}
	}
}
