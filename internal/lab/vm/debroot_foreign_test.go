// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An unpacked root gets base-passwd's users and groups and the
// alternatives' links, which its maintainer scripts never made.
func TestDebRootFixups(t *testing.T) {
	tree := t.TempDir()
	for _, d := range []string{"etc", "usr/bin", "usr/share/base-passwd"} {
		if err := os.MkdirAll(filepath.Join(tree, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"usr/share/base-passwd/passwd.master": "root:*:0:0:root:/root:/bin/sh\n",
		"usr/share/base-passwd/group.master":  "root:*:0:\n",
		"usr/bin/mawk":                        "x",
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(tree, f), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := debRootFixups(tree); err != nil {
		t.Fatal(err)
	}
	for f, master := range map[string]string{"etc/passwd": "passwd.master", "etc/group": "group.master"} {
		b, err := os.ReadFile(filepath.Join(tree, f))
		if err != nil || string(b) != files["usr/share/base-passwd/"+master] {
			t.Errorf("%s: %q, %v; want base-passwd's %s", f, b, err, master)
		}
	}
	if l, err := os.Readlink(filepath.Join(tree, "usr/bin/awk")); err != nil || l != "mawk" {
		t.Errorf("usr/bin/awk -> %q, %v; want mawk", l, err)
	}
	// which.debianutils is not in this tree: no dangling link
	if _, err := os.Lstat(filepath.Join(tree, "usr/bin/which")); err == nil {
		t.Error("usr/bin/which links to a program the tree lacks")
	}
	if err := debRootFixups(t.TempDir()); err == nil || !strings.Contains(err.Error(), "base-passwd") {
		t.Errorf("a tree without base-passwd: err %v", err)
	}
}

// The foreign root's cache key names how it is made and what goes in, so
// a change of either makes it again; the host's root keeps its key.
func TestDebRootKey(t *testing.T) {
	foreign := map[string]string{"amd64": "arm64", "arm64": "amd64"}[hostArch()]
	k := debRootKey(foreign)
	for _, want := range []string{" extract ", foreign, "util-linux", "bpftrace"} {
		if !strings.Contains(k, want) {
			t.Errorf("debRootKey(%s) = %q: lacks %q", foreign, k, want)
		}
	}
	if h := debRootKey(hostArch()); strings.Contains(h, "extract") || !strings.Contains(h, "minbase") {
		t.Errorf("debRootKey(%s) = %q: want debootstrap's minbase", hostArch(), h)
	}
}

// The selftests of another architecture are cross-built against its
// sysroot, the host's without any of that; both out of the tree (O=).
func TestKsftMakeArgs(t *testing.T) {
	foreign := map[string]string{"amd64": "arm64", "arm64": "amd64"}[hostArch()]
	cross := ksftMakeArgs("/src", foreign, "/sr", "/obj", "/dst")
	for _, want := range []string{"ARCH=" + kernelArch(foreign), "CROSS_COMPILE=" + crossPrefix(foreign),
		"CC=" + crossPrefix(foreign) + "gcc --sysroot=/sr", "CLANG=clang --sysroot=/sr", "O=/obj", "INSTALL_PATH=/dst", "TARGETS=drivers/net"} {
		if !slices.Contains(cross, want) {
			t.Errorf("ksftMakeArgs for %s: %q lacks %q", foreign, cross, want)
		}
	}
	native := ksftMakeArgs("/src", hostArch(), "", "/obj", "/dst")
	for _, a := range native {
		if strings.HasPrefix(a, "ARCH=") || strings.HasPrefix(a, "CROSS_COMPILE=") || strings.HasPrefix(a, "CC=") {
			t.Errorf("ksftMakeArgs for this host: %q has %q", native, a)
		}
	}
	if native[len(native)-2] != "install" || !slices.Contains(native, "O=/obj") {
		t.Errorf("ksftMakeArgs for this host: %q", native)
	}
}

// On arm64 the selftests run on virt (its Debian root is a virtio disk
// on PCI), not on raspi3b, which has no PCI.
func TestSelftestsArm64Machine(t *testing.T) {
	for _, c := range []struct {
		machine string
		refused bool
	}{{"", true}, {"raspi3b", true}, {"virt", false}} {
		cfg := Config{Options: Options{Scenario: "selftests", Arch: "arm64", Machine: c.machine}}
		err := cfg.Validate()
		refused := err != nil && strings.Contains(err.Error(), "--machine virt")
		if refused != c.refused {
			t.Errorf("selftests on arm64 %q: err %v; refused %v, want %v", c.machine, err, refused, c.refused)
		}
	}
}
