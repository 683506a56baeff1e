// SPDX-License-Identifier: Apache-2.0

package cli

// The outputs and the terminal (issue 40): what a command writes never
// replaces a device, never carries screen codes into a pipe, and a host
// fault is not blamed on the user's file.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutputsNeverReplaceADevice (issue 40): an output path that is a
// character device is written through, never replaced by a regular file
// (report -o /dev/full once replaced /dev/full as root); "-" is standard
// output; a directory given to bench --out is refused before measuring.
// The device nodes are the test's own (mknod), never the host's.
func TestOutputsNeverReplaceADevice(t *testing.T) {
	dir := t.TempDir()
	node := func(name string, minor int) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
			t.Skipf("mknod: %v (needs root)", err)
		}
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err != nil {
			t.Skipf("a device node here cannot be opened: %v", err)
		} else {
			f.Close()
		}
		return p
	}
	null, full := node("null", 3), node("full", 7)
	result := filepath.Join(dir, "result.json")
	b, err := os.ReadFile("../../testdata/results/raspi3b-usb-nic-receive.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(result, b, 0o644)
	isDev := func(p string) bool {
		st, err := os.Lstat(p)
		return err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	if code, _, errOut := run("report", "-o", full, result); code != ExitFail || !strings.Contains(errOut, "no space left") {
		t.Errorf("report -o FULL: exit %d, stderr %q; want %d and the device's ENOSPC", code, errOut, ExitFail)
	}
	if code, _, errOut := run("report", "-o", null, result); code != 0 {
		t.Errorf("report -o NULL: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := run("report", "--flent", null, result); code != 0 {
		t.Errorf("report --flent NULL: exit %d, stderr %q", code, errOut)
	}
	if !isDev(null) || !isDev(full) {
		t.Fatal("a device node was replaced by a file")
	}
	if code, out, errOut := run("report", "-o", "-", result); code != 0 || !strings.Contains(out, "<html") || strings.Contains(out, "wrote -") {
		t.Errorf("report -o -: exit %d, stderr %q, stdout starts %.40q", code, errOut, out)
	}
	start := time.Now()
	code, _, errOut := run("bench", "--peer", "127.0.0.1", "--port", "9", "-t", "2s", "--out", dir)
	if code != ExitFail || !strings.Contains(errOut, "a directory") || time.Since(start) > 5*time.Second {
		t.Errorf("bench --out DIR: exit %d after %v, stderr %q; want %d at once, saying it is a directory", code, time.Since(start), errOut, ExitFail)
	}
}

// TestNoScreenCodesIntoPipes (issue 40): watch cleared the screen with
// escape codes into a pipe or file, even with TERM=dumb; intervals now
// follow each other there. Needs what watch needs (root, eBPF).
func TestNoScreenCodesIntoPipes(t *testing.T) {
	t.Setenv("TERM", "dumb")
	code, out, errOut := run("watch", "--count", "2", "--interval", "200ms", "lo")
	if code != 0 {
		t.Skipf("watch cannot run here: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("watch wrote escape codes into a pipe: %.80q", out)
	}
	if !strings.Contains(out, "lo") {
		t.Errorf("watch wrote no interval: %.200q", out)
	}
}

// TestSnapshotTempDirFault (issue 40): with no temporary directory to
// unpack a snapshot in, inspect and doctor said "cannot read the snapshot"
// as if the file were bad; they now name the host's TMPDIR.
func TestSnapshotTempDirFault(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "no", "such"))
	for _, args := range [][]string{
		{"inspect", "--from", "../../testdata/snapshots/rpi4-ax88179.tar.gz"},
		{"doctor", "--from", "../../testdata/snapshots/rpi4-ax88179.tar.gz"},
	} {
		code, _, errOut := run(args...)
		if code == 0 || !strings.Contains(errOut, "TMPDIR") || strings.Contains(errOut, "cannot read the snapshot") {
			t.Errorf("%v: exit %d, stderr %q; want the temporary directory named, not the file blamed", args, code, errOut)
		}
	}
}
