// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// Bad input is rejected with exit code 2 before anything starts (no lab, no
// iperf3): each of these would otherwise build a lab as root.
func TestBenchRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "-t", "5x"}, "not a duration"},
		{[]string{"bench", "-t", "1.7s"}, "multiple of 0.5s"},
		{[]string{"bench", "--omit", "-1s"}, "negative"},
		{[]string{"bench", "--rate", "10Q"}, "not a rate"},
		{[]string{"bench", "--bitrate", "fast"}, "not a rate"},
		{[]string{"bench", "--rps", "zz"}, `--rps "zz": want a hex CPU mask`},
		{[]string{"bench", "--tos", "300"}, "TOS"},
		{[]string{"bench", "--probe-interval", "5ms"}, "10ms-200ms"},
		{[]string{"bench", "--direction", "up"}, "send, receive or both"},
		{[]string{"bench", "--threaded"}, "needs receiver GRO"},
		{[]string{"bench", "--gro", "maybe"}, "on or off"},
		{[]string{"bench", "--pin-sender", "4096"}, "CPU"},
		{[]string{"bench", "--peer", "198.18.0.9", "--gro", "on"}, "lab knob"},
		{[]string{"bench", "--peer", "198.18.0.9:0"}, "the port is not a number"},
		{[]string{"bench", "--variant", "nameonly"}, "NAME: lab flags"},
		{[]string{"bench", "--variant", "x: --threaded"}, "needs receiver GRO"},
		{[]string{"bench", "--variant", "a: --gro on", "--variant", "a: --gro off"}, "used twice"},
		{[]string{"bench", "198.18.0.9"}, "--peer"},
		{[]string{"lab", "frob"}, "want up, down"},
		{[]string{"lab", "up", "--rate", "0"}, "unshaped"},
		{[]string{"compare"}, "want A.json B.json"},
		{[]string{"show"}, "one result file"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

func TestParseRateAndTOS(t *testing.T) {
	for in, want := range map[string]float64{"100M": 100, "2.5G": 2500, "500k": 0.5, "100Mbit": 100, "1e9": 1000, "10mbps": 10} {
		got, err := parseRate(in)
		if err != nil || got != want {
			t.Errorf("rate %q = %g %v, want %g", in, got, err, want)
		}
	}
	for in, want := range map[string]int{"ef": 184, "EF": 184, "0xb8": 184, "cs1": 32, "af41": 136, "0": 0, "16": 16} {
		got, err := parseTOS(in)
		if err != nil || got != want {
			t.Errorf("tos %q = %d %v, want %d", in, got, err, want)
		}
	}
}

func TestVariantInheritsOuterKnobs(t *testing.T) {
	c := commands["bench"]
	env := Env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	fs := newFlagSet(c, env)
	outer := addLabFlags(fs)
	if _, err := parseFlags(fs, []string{"--sender-offloads", "off", "--rps", "1"}); err != nil {
		t.Fatal(err)
	}
	v, err := parseVariant(c, env, "thr: --gro on --threaded", outer)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "thr" || !v.Lab.GRO || !v.Lab.Threaded || !v.Lab.SenderOffloadsOff || v.Lab.RPSMask != "1" {
		t.Errorf("variant = %s %+v", v.Name, *v.Lab)
	}
}

func TestShowAndCompareFiles(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, mbit ...float64) string {
		r := &bench.Result{Schema: bench.Schema, Complete: true, Variants: []bench.Variant{{Name: name}}}
		for i, m := range mbit {
			r.Runs = append(r.Runs, bench.Run{Variant: name, Rep: i + 1, Metrics: map[string]float64{"send_mbit": m}})
		}
		r.Summarize()
		p := filepath.Join(dir, name+".json")
		if err := r.Save(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := mk("nogro", 8000, 8100, 7950), mk("gro", 10900, 11000, 10850)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"compare", a, b}, &out, &errb); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errb.String())
	}
	// The headline: the ratio with its interval and a verdict; no table.
	if s := out.String(); !strings.Contains(s, "= 1.36x") || !strings.Contains(s, "+36% throughput vs "+a+", significant at n=3") || strings.Contains(s, "send_mbit") {
		t.Errorf("compare output:\n%s", s)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"compare", a, b, "--all"}, &out, &errb); code != 0 {
		t.Fatalf("compare --all: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "send_mbit") || !strings.Contains(out.String(), "B better") {
		t.Errorf("compare --all output:\n%s", out.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"show", a}, &out, &errb); code != 0 || !strings.Contains(out.String(), "nogro:     8017 Mbit/s") || strings.Contains(out.String(), "nogro (n=3)") {
		t.Errorf("show: exit %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"show", "--all", a}, &out, &errb); code != 0 || !strings.Contains(out.String(), "nogro (n=3)") {
		t.Errorf("show --all: exit %d:\n%s", code, out.String())
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"nope"}`), 0o644)
	if code := Main(context.Background(), []string{"show", bad}, &out, &errb); code != ExitFail {
		t.Errorf("show of a foreign file: exit %d", code)
	}
}

// An unwritable result file is refused before the lab is built or
// anything is measured.
func TestBenchUnwritableOut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: without it bench stops earlier, at the lab check")
	}
	code, _, errOut := run("bench", "-t", "2s", "--out", "/proc/wirespeed-nope.json")
	if code != ExitFail || !strings.Contains(errOut, "cannot write the result") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	// A directory that is not there is not made (nor anything above it).
	code, _, errOut = run("bench", "-t", "2s", "--out", "/wirespeed-nope/x.json")
	if code != ExitUsage || !strings.Contains(errOut, "does not exist") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if _, err := os.Stat("/wirespeed-nope"); err == nil {
		os.Remove("/wirespeed-nope")
		t.Errorf("bench made a directory at /")
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), fmt.Sprintf("ws-%d-", os.Getpid())) {
		t.Errorf("a lab was built: %s", out)
	}
}
