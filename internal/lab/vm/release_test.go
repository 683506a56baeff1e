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

// A --modules-dir file is whatever the user put there: parsing its
// .modinfo and its vermagic must end in a module's fields or an error,
// never a panic.
func FuzzModinfoRelease(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Add([]byte("name=x\x00vermagic=\x00"))
	if _, err := exec.LookPath("cc"); err == nil {
		dir := f.TempDir()
		for _, vm := range []string{"6.1.0-57-amd64 SMP preempt mod_unload ", " ", ""} {
			src := filepath.Join(dir, "m.c")
			ko := filepath.Join(dir, "m.ko")
			line := fmt.Sprintf("const char v[] __attribute__((section(\".modinfo\"), used)) = %q;\n", "vermagic="+vm)
			if os.WriteFile(src, []byte(line), 0o644) == nil && exec.Command("cc", "-c", "-o", ko, src).Run() == nil {
				if b, err := os.ReadFile(ko); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := Modinfo(b)
		if err != nil {
			return
		}
		_ = checkRelease("m.ko", info, "6.1.0-57-amd64")
	})
}
