// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestParseSample(t *testing.T) {
	for in, want := range map[string]float64{"10%": 0.1, "0.1": 0.1, "12.5%": 0.125, "100%": 1, "1": 1, " 20% ": 0.2, "1e-1": 0.1} {
		got, err := parseSample(in)
		if err != nil || got != want {
			t.Errorf("parseSample(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":     "want a percentage",
		"abc":  "want a percentage",
		"%":    "want a percentage",
		"10%%": "want a percentage",
		"NaN":  "want a percentage",
		"inf%": "want a percentage",
		"0":    "more than 0%",
		"0%":   "more than 0%",
		"-5%":  "more than 0%",
		"10":   "write 10%",
		"150%": "at most 100%",
	} {
		if _, err := parseSample(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseSample(%q): err %v, want %q", in, err, want)
		}
	}
}

// A bad --sample is a usage error (exit 2) found before anything is loaded:
// these return before observe.Start, so they also pass as root.
func TestSampleFlagRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"observe", "--sample", "0"}, "more than 0%"},
		{[]string{"observe", "--sample", "10"}, "write 10%"},
		{[]string{"observe", "--sample", "lots"}, "want a percentage"},
		{[]string{"observe", "--sample", "0.5%"}, "shortest window"},
		{[]string{"observe", "eth0", "--sample", "200%"}, "at most 100%"},
		{[]string{"watch", "--sample", "0%"}, "more than 0%"},
		{[]string{"watch", "--interval", "100ms", "--sample", "5%"}, "shortest window"},
		{[]string{"bench", "--observe-sample", "0"}, "more than 0%"},
		{[]string{"bench", "--observe-sample", "0.2%"}, "shortest window"},
		{[]string{"bench", "--observe", "off", "--observe-sample", "20%"}, "need --observe light or full"},
		{[]string{"bench", "--observe", "off", "--observe-programs", "btf"}, "need --observe light or full"},
		{[]string{"bench", "--observe-programs", "ebpf"}, "--observe-programs: programs \"ebpf\": want auto, btf"},
		{[]string{"observe", "--programs", "raw"}, "--programs: programs \"raw\": want auto, btf"},
		{[]string{"watch", "--programs", ""}, "want auto, btf"},
		{[]string{"bench", "--observe", "some"}, "want light, full or off"},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), c.args, &out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

func TestSampleFlagDefaults(t *testing.T) {
	for cmd, want := range map[string]string{"observe": "(default 100%)", "watch": "(default 100%)", "bench": "(default 10%)"} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), []string{cmd, "-h"}, &out, &errb); code != ExitOK {
			t.Fatalf("%s -h: exit %d", cmd, code)
		}
		flag := "-sample"
		if cmd == "bench" {
			flag = "-observe-sample"
		}
		_, help, found := strings.Cut(errb.String(), "  "+flag+" PCT\n")
		help, _, _ = strings.Cut(help, "\n")
		if !found || !strings.Contains(help, want) {
			t.Errorf("%s -h: %s not documented with %s:\n%s", cmd, flag, want, errb.String())
		}
	}
}
