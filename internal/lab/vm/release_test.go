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

// fakeModule compiles an object whose .modinfo section holds the strings
// kbuild puts there (name, depends, vermagic), as a .ko would carry them.
func fakeModule(t *testing.T, dir, name, vermagic string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to make a module-shaped ELF with")
	}
	src := filepath.Join(dir, name+".c")
	kvs := []string{"name=" + name, "depends="}
	if vermagic != "" {
		kvs = append(kvs, "vermagic="+vermagic)
	}
	var b strings.Builder
	for i, kv := range kvs {
		fmt.Fprintf(&b, "const char mi%d[] __attribute__((section(\".modinfo\"), used, aligned(1))) = %q;\n", i, kv)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ko := filepath.Join(dir, name+".ko")
	if out, err := exec.Command(cc, "-c", "-o", ko, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	return ko
}

// A --modules-dir is read only when every module in it was built for the
// guest's release.
func TestOverridesCheckRelease(t *testing.T) {
	same, other, none := t.TempDir(), t.TempDir(), t.TempDir()
	fakeModule(t, same, "usbnet", "6.1.0-57-amd64 SMP preempt mod_unload modversions ")
	fakeModule(t, same, "cdc_ncm", "6.1.0-57-amd64 SMP preempt mod_unload modversions ")
	files, _, err := Overrides(same, "6.1.0-57-amd64")
	if err != nil {
		t.Fatalf("modules built for the guest's release: %v", err)
	}
	if len(files) != 2 {
		t.Fatalf("Overrides read %v, want the two modules", files)
	}
	fakeModule(t, other, "usbnet", "6.1.0-57-amd64 SMP preempt mod_unload modversions ")
	ko := fakeModule(t, other, "cdc_ncm", "6.1.0-56-amd64 SMP preempt mod_unload modversions ")
	_, _, err = Overrides(other, "6.1.0-57-amd64")
	if err == nil {
		t.Fatal("a module built for 6.1.0-56-amd64 passed on a 6.1.0-57-amd64 guest")
	}
	for _, w := range []string{ko, "built for kernel 6.1.0-56-amd64", "guest runs 6.1.0-57-amd64", "--kver 6.1.0-57-amd64", "--kernel-version 6.1.0-56-amd64"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	fakeModule(t, none, "cdc_ether", "")
	if _, _, err := Overrides(none, "6.1.0-57-amd64"); err == nil || !strings.Contains(err.Error(), "no vermagic") {
		t.Fatalf("a module without vermagic: err = %v", err)
	}
}
