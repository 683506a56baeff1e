// SPDX-License-Identifier: Apache-2.0

package vm

import (
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
	var b strings.Builder
	for i, kv := range []string{"name=" + name, "depends=", "vermagic=" + vermagic} {
		if kv == "vermagic=" {
			continue
		}
		b.WriteString("const char mi" + string(rune('a'+i)) + "[] __attribute__((section(\".modinfo\"), used, aligned(1))) = \"" + kv + "\";\n")
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

func TestCheckReleases(t *testing.T) {
	dir := t.TempDir()
	same := fakeModule(t, dir, "usbnet", "6.1.0-57-amd64 SMP preempt mod_unload modversions ")
	other := fakeModule(t, dir, "cdc_ncm", "6.1.0-56-amd64 SMP preempt mod_unload modversions ")
	none := fakeModule(t, dir, "cdc_ether", "")
	files, _, err := Overrides(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("Overrides read %v, want the three modules", files)
	}
	if err := CheckReleases(map[string]string{"usbnet": same}, "6.1.0-57-amd64"); err != nil {
		t.Fatalf("a module built for the guest's release: %v", err)
	}
	err = CheckReleases(map[string]string{"usbnet": same, "cdc_ncm": other}, "6.1.0-57-amd64")
	if err == nil {
		t.Fatal("a module built for 6.1.0-56-amd64 passed on a 6.1.0-57-amd64 guest")
	}
	for _, w := range []string{other, "built for kernel 6.1.0-56-amd64", "guest runs 6.1.0-57-amd64", "--kver 6.1.0-57-amd64", "--kernel-version 6.1.0-56-amd64"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if err := CheckReleases(map[string]string{"cdc_ether": none}, "6.1.0-57-amd64"); err == nil || !strings.Contains(err.Error(), "no vermagic") {
		t.Fatalf("a module without vermagic: err = %v", err)
	}
}
