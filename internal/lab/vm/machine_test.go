// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMachines: --arch and --machine pick a board and its defaults, and
// what a board cannot do is a usage error naming what it can.
func TestMachines(t *testing.T) {
	base := Options{Scenario: "usb-nic", Duration: 3e9, Streams: 2, Direction: "receive", Tunnels: 4}
	for _, c := range []struct {
		arch, machine string
		cpus, mem     int
		accel         string
		wantMachine   string
		wantCPUs      int
		err           string
	}{
		{wantMachine: "pc", wantCPUs: 2},
		{arch: "arm64", wantMachine: "raspi3b", wantCPUs: 4},
		{arch: "arm64", machine: "virt", wantMachine: "virt", wantCPUs: 2},
		{arch: "arm64", machine: "virt", cpus: 3, wantMachine: "virt", wantCPUs: 3},
		{arch: "arm64", cpus: 2, err: "raspi3b board has 4"},
		{arch: "arm64", mem: 2048, err: "has 1024 MB"},
		{machine: "raspi3b", err: "arm64 board, not amd64"},
		{arch: "arm64", machine: "pc", err: "the arm64 boards: raspi3b, virt"},
		{arch: "riscv64", err: "want amd64 or arm64"},
		{arch: "arm64", machine: "raspi4b", err: "want one of"},
		{arch: "arm64", accel: "kvm", err: "arm64 host only"},
	} {
		o := base
		o.Arch, o.Machine = c.arch, c.machine
		cfg := Config{Options: o, CPUs: c.cpus, MemMB: c.mem, Accel: c.accel}
		err := cfg.Validate()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err %v, want one with %q", c, err, c.err)
			}
			continue
		}
		if err != nil || cfg.Machine != c.wantMachine || cfg.CPUs != c.wantCPUs {
			t.Errorf("%+v: machine %q, %d CPUs, err %v; want %q, %d", c, cfg.Machine, cfg.CPUs, err, c.wantMachine, c.wantCPUs)
		}
	}
}

// TestArmArgs: each arm64 board's QEMU command has what its guest needs:
// raspi3b the kernel's Pi 3 device tree, its two UARTs and usb-net on the
// DWC2; virt a virtio console for the results and usb-net on an xHCI.
func TestArmArgs(t *testing.T) {
	dtbDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dtbDir, "broadcom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dtbDir, "broadcom", "bcm2837-rpi-3-b.dtb"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := &Kernel{Image: "/k/vmlinuz", DTBDir: dtbDir}
	a, err := machines["raspi3b"].armArgs("ws-1-vm", k, "/i", "tcg", 4, 1024, "stdio", "/r", usbAttach{Tap: "tap0"}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(a, " ")
	for _, want := range []string{"qemu-system-aarch64 -name ws-1-vm", "-M raspi3b", "-dtb " + dtbDir + "/broadcom/bcm2837-rpi-3-b.dtb",
		"console=ttyAMA0", "-serial stdio -serial file:/r", "-device usb-net,netdev=n0", "-accel tcg,thread=multi"} {
		if !strings.Contains(got, want) {
			t.Errorf("raspi3b: %q lacks %q", got, want)
		}
	}
	a, err = machines["virt"].armArgs("ws-1-vm", k, "/i", "tcg-icount", 2, 1024, "stdio", "/r", usbAttach{Tap: "tap0"}, "")
	if err != nil {
		t.Fatal(err)
	}
	got = strings.Join(a, " ")
	for _, want := range []string{"-M virt,gic-version=2", "-cpu cortex-a72", "virtconsole,chardev=wsres", "path=/r",
		"usb-net,netdev=n0,bus=xhci.0", "-icount shift=0,sleep=off"} {
		if !strings.Contains(got, want) {
			t.Errorf("virt: %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "-dtb") {
		t.Errorf("virt takes QEMU's own device tree: %q", got)
	}
	// raspi3b without the package's device trees (a --kernel image) says so
	if _, err := machines["raspi3b"].armArgs("n", &Kernel{Image: "/k"}, "/i", "tcg", 4, 1024, "stdio", "/r", usbAttach{}, ""); err == nil {
		t.Error("raspi3b without a DTB dir: no error")
	}
}

// TestGuestRootHelpers: the dependency closure keeps libraries (zlib1g
// too) and leaves install-time packages out; symlinks resolve inside the
// root, absolute ones too.
func TestGuestRootHelpers(t *testing.T) {
	out := "iproute2\n  Depends: libbpf1\nlibbpf1\n  Depends: libc6\n<debconf-2.0>\n  debconf\nlibc6\nzlib1g\nperl-base\nlibperl5.36\nlibpam0g\nadduser\n"
	var kept []string
	for _, n := range parseDepends(out) {
		if guestLibPackage(n) {
			kept = append(kept, n)
		}
	}
	if got := strings.Join(kept, " "); got != "libbpf1 libc6 zlib1g" {
		t.Errorf("kept %q", got)
	}
	root := t.TempDir()
	for _, d := range []string{"bin", "sbin", "lib/aarch64-linux-gnu"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "bin/ip"), []byte("ip"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/ip", filepath.Join(root, "sbin/ip")); err != nil { // absolute, as iproute2 ships it
		t.Fatal(err)
	}
	if err := os.Symlink("aarch64-linux-gnu/ld.so", filepath.Join(root, "lib/ld.so")); err != nil {
		t.Fatal(err)
	}
	if got := inRoot(root, "/sbin/ip"); got != filepath.Join(root, "bin/ip") {
		t.Errorf("inRoot(/sbin/ip) = %s", got)
	}
	if got := inRoot(root, "/lib/ld.so"); got != filepath.Join(root, "lib/aarch64-linux-gnu/ld.so") {
		t.Errorf("inRoot(/lib/ld.so) = %s", got)
	}
	if got := inRoot("", "/sbin/ip"); got != "/sbin/ip" {
		t.Errorf("inRoot on the host = %s", got)
	}
}
