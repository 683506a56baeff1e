// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReapSockets: a dead run's device socket goes, a live run's stays,
// and so does anything not named like one.
func TestReapSockets(t *testing.T) {
	dir := t.TempDir()
	dead := "ws-2147483646-vm-usbdev.sock" // no such pid
	live := fmt.Sprintf("ws-%d-vm-usbdev.sock", os.Getppid())
	for _, n := range []string{dead, live, "tune-net-1.lock"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := reapSockets(dir); strings.Join(got, ",") != dead {
		t.Fatalf("reaped %v, want only %s", got, dead)
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
