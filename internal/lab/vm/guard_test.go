// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The logs in testdata are real consoles of this package's guest (Debian
// 6.12.117, QEMU TCG): sysrq-trigger 'c', the ws_broken test module
// (testdata/wsbroken) with mode=warn, mode=null and mode=lockup
// (watchdog_thresh=2), an int3 Oops and panic in interrupt from a
// usb-gadget run (observe's tracepoint patching under multi-threaded TCG),
// and clean usb-gadget and usb-nic runs; two of the arm64 raspi3b guest.
func TestScanConsoleRealLogs(t *testing.T) {
	for _, tc := range []struct {
		file  string
		want  []string // guards, in order of first appearance
		fatal bool
		text  string // in the first hit's line
	}{
		{"panic-sysrq-crash.log", []string{"kernel panic"}, true, "sysrq triggered crash"},
		{"warning-then-init-exit-panic.log", []string{"WARNING", "kernel panic"}, false, "ws_broken.c:20"},
		{"oops-null-deref.log", []string{"BUG", "Oops"}, true, "NULL pointer dereference"},
		{"softlockup-rcu-stall.log", []string{"soft lockup", "RCU stall"}, false, "stuck for 6s"},
		{"oops-int3-panic-in-interrupt.log", []string{"Oops", "kernel panic"}, true, "Oops: int3"},
		{"clean-usb-gadget.log", nil, false, ""},
		{"clean-usb-nic.log", nil, false, ""},
		// the arm64 Pi 3-class guest (Debian 6.12.117 arm64, raspi3b):
		// sysrq 'c', and a clean usb-nic run with the board's own noise
		// (GPIO expander and wifi-pwrseq probe errors)
		{"arm64-panic-sysrq-crash.log", []string{"kernel panic"}, true, "sysrq triggered crash"},
		{"arm64-clean-usb-nic.log", nil, false, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			hits, err := ScanConsole(f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Guard)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("guards = %v, want %v", got, tc.want)
			}
			if len(hits) == 0 {
				return
			}
			h := hits[0]
			if h.Fatal != tc.fatal {
				t.Errorf("%s: fatal = %v, want %v", h.Guard, h.Fatal, tc.fatal)
			}
			if !strings.Contains(h.Text, tc.text) {
				t.Errorf("hit line %q does not contain %q", h.Text, tc.text)
			}
			if !strings.Contains(h.Excerpt, h.Text) || strings.Count(h.Excerpt, "\n") < 10 {
				t.Errorf("excerpt should hold the line and the trace after it:\n%s", h.Excerpt)
			}
		})
	}
}

func TestScanConsoleSynthetic(t *testing.T) {
	for line, want := range map[string]string{
		"[   12.3] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP":                  "general protection fault",
		"[    1.0] BUG: KASAN: slab-use-after-free in usbnet_bh+0x1/0x2":                                                "BUG",
		"[    1.0] ==================================================================\n[    1.0] KASAN: use-after-free": "KASAN",
		"[    9.9] Watchdog detected hard LOCKUP on cpu 1":                                                              "hard lockup",
		"[    9.9] rcu: INFO: rcu_sched self-detected stall on CPU":                                                     "RCU stall",
		"[    9.9] INFO: task kworker/0:1:12 blocked for more than 120 seconds.":                                        "hung task",
		"[    3.1] kernel BUG at net/core/dev.c:1234!":                                                                  "BUG",
		"[    3.1] WARNING: at drivers/net/usb/usbnet.c:100 usbnet_bh":                                                  "WARNING",
	} {
		hits := scanLines(strings.Split(line, "\n"))
		if len(hits) == 0 || hits[0].Guard != want {
			t.Errorf("%q: hits %v, want %s first", line, hits, want)
		}
	}
	// Our own markers and harmless kernel lines do not fire.
	for _, line := range []string{
		"@@WS fail BUG: in the script t=1.0",
		"[    0.5] Spectre V2 : WARNING: Unprivileged eBPF is enabled",
		"[    1.2] usb 1-1: new SuperSpeed USB device number 2 using dummy_hcd",
		"[    2.0] clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable",
	} {
		if hits := scanLines([]string{line}); len(hits) > 0 {
			t.Errorf("%q fired %v", line, hits)
		}
	}
}

// The live watcher sees guards split across writes, and each once.
func TestConsoleWatch(t *testing.T) {
	b, err := os.ReadFile("testdata/oops-null-deref.log")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	w := &consoleWatch{onHit: func(h Hit) { got = append(got, h.Guard) }}
	for i := 0; i < len(b); i += 7 {
		_, _ = w.Write(b[i:min(i+7, len(b))])
	}
	if !slices.Equal(got, []string{"BUG", "Oops"}) {
		t.Fatalf("watch hits = %v", got)
	}
}
