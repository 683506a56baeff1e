// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReapSockets: a dead run's device and monitor sockets go, a live run's stays,
// and so does anything not named like one.
func TestReapSockets(t *testing.T) {
	dir := t.TempDir()
	dead := "ws-2147483646-vm-usbdev.sock" // no such pid
	deadMon := "ws-2147483646-vm-monitor.sock"
	live := fmt.Sprintf("ws-%d-vm-usbdev.sock", os.Getppid())
	for _, n := range []string{dead, deadMon, live, "tune-net-1.lock"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(reapSockets(dir), ","); got != dead+","+deadMon && got != deadMon+","+dead {
		t.Fatalf("reaped %v, want only %s and %s", got, dead, deadMon)
	}
	for _, n := range []string{live, "tune-net-1.lock"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed: %v", n, err)
		}
	}
}

// TestUSBAttachArgs: usb-redir on the xHCI, or on raspi3b's DWC2 at
// port 1 (else QEMU puts a full-speed hub in between); usb-net likewise.
func TestUSBAttachArgs(t *testing.T) {
	redir := strings.Join(usbAttach{Tap: "t", RedirSocket: "/run/s"}.args("virt"), " ")
	if !strings.Contains(redir, "qemu-xhci,id=xhci") || !strings.Contains(redir, "usb-redir,chardev=ud0,id=usbdev0,bus=xhci.0") ||
		!strings.Contains(redir, "socket,id=ud0,path=/run/s") {
		t.Errorf("virt: %s", redir)
	}
	pi := strings.Join(usbAttach{Tap: "t", RedirSocket: "/run/s"}.args("raspi3b"), " ")
	if strings.Contains(pi, "xhci") || !strings.Contains(pi, "usb-redir,chardev=ud0,id=usbdev0,port=1") {
		t.Errorf("raspi3b: %s", pi)
	}
	if a := (usbAttach{}).args("pc"); a != nil {
		t.Errorf("nothing attached: %v", a)
	}
}

// --tune on usbdev: tune apply against the host namespace's end of the
// adapter after the bench, and the re-plug waits for the model's own
// driver, not usb-nic's cdc_ether.
func TestDevTuneStep(t *testing.T) {
	for _, m := range DeviceModels() {
		o := Options{Scenario: "usbdev", Device: m, Duration: 8e9, Streams: 10, Direction: "receive", Tune: "--pairs 3 -P 10"}
		script := initScript(scenarios["usbdev"], o, nil)
		drv := deviceDrivers[m]
		for _, want := range []string{
			"'/usr/bin/wirespeed' 'tune' 'apply' '--peer' '" + nicHostAddr + "' '--json' '--pairs' '3' '-P' '10' \"$DIF\"",
			"DIF=$(ws_wait_driver " + drv + " 30) || { ws note \"no " + drv + " device after re-authorizing",
			"ws_replug no-udevd",
			"wirespeed tune revert --all",
		} {
			if !strings.Contains(script, want) {
				t.Errorf("usbdev --device %s --tune: the script lacks %q", m, want)
			}
		}
		if strings.Contains(script, "cdc_ether") || strings.Contains(script, "@DRIVER@") {
			t.Errorf("usbdev --device %s --tune: the script names cdc_ether or keeps @DRIVER@", m)
		}
		if b, a := strings.Index(script, "wirespeed' 'bench'"), strings.Index(script, "'tune' 'apply'"); b < 0 || a < b {
			t.Errorf("usbdev --device %s: the bench (at %d) does not come before tune apply (at %d)", m, b, a)
		}
		if sh, err := exec.LookPath("sh"); err == nil {
			cmd := exec.Command(sh, "-n")
			cmd.Stdin = strings.NewReader(script)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("usbdev --device %s --tune: the script does not parse: %v\n%s", m, err, out)
			}
		}
		if got, want := scenarios["usbdev"].MaxTime(o), benchTime(o)+tuneTime(o); got != want {
			t.Errorf("usbdev MaxTime with --tune = %v, want the bench's and tuneTime's %v", got, want)
		}
		o.Tune = ""
		if s := initScript(scenarios["usbdev"], o, nil); strings.Contains(s, "tune apply") || !strings.Contains(s, "wirespeed' 'bench'") {
			t.Errorf("usbdev --device %s without --tune does not run its bench alone", m)
		}
	}
}
