// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A trimmed copy of what depmod wrote for Debian's 6.12.117 kernel.
const testModulesDep = `kernel/drivers/usb/common/usb-common.ko.xz:
kernel/drivers/usb/core/usbcore.ko.xz: kernel/drivers/usb/common/usb-common.ko.xz
kernel/drivers/net/mii.ko.xz:
kernel/drivers/net/usb/usbnet.ko.xz: kernel/drivers/net/mii.ko.xz kernel/drivers/usb/core/usbcore.ko.xz kernel/drivers/usb/common/usb-common.ko.xz
kernel/drivers/net/usb/cdc_ether.ko.xz: kernel/drivers/net/usb/usbnet.ko.xz kernel/drivers/net/mii.ko.xz kernel/drivers/usb/core/usbcore.ko.xz kernel/drivers/usb/common/usb-common.ko.xz
kernel/drivers/net/usb/cdc_ncm.ko.xz: kernel/drivers/net/usb/cdc_ether.ko.xz kernel/drivers/net/usb/usbnet.ko.xz kernel/drivers/net/mii.ko.xz kernel/drivers/usb/core/usbcore.ko.xz kernel/drivers/usb/common/usb-common.ko.xz
kernel/drivers/usb/gadget/udc/udc-core.ko.xz: kernel/drivers/usb/common/usb-common.ko.xz
kernel/drivers/usb/gadget/udc/dummy_hcd.ko.xz: kernel/drivers/usb/gadget/udc/udc-core.ko.xz kernel/drivers/usb/core/usbcore.ko.xz kernel/drivers/usb/common/usb-common.ko.xz
kernel/drivers/loop/a.ko.xz: kernel/drivers/loop/b.ko.xz
kernel/drivers/loop/b.ko.xz: kernel/drivers/loop/a.ko.xz
kernel/drivers/broken/needs-missing.ko.xz: kernel/drivers/broken/not-there.ko.xz
`

const testModulesAlias = `# Aliases extracted from modules themselves.
alias usb:v0BDAp8153d*dc*dsc*dp*ic*isc*ip*in* cdc_ether
alias net-pf-16-proto-21 some_builtin
alias fs-configfs configfs
`

func testIndex(t *testing.T) *ModuleIndex {
	t.Helper()
	dir := t.TempDir()
	for name, s := range map[string]string{
		"modules.dep":     testModulesDep,
		"modules.alias":   testModulesAlias,
		"modules.builtin": "kernel/fs/configfs/configfs.ko\nkernel/net/some_builtin.ko\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := LoadModuleIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func TestResolveOrder(t *testing.T) {
	idx := testIndex(t)
	got, err := idx.Resolve("cdc_ncm", "dummy-hcd")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mii", "usb_common", "usbcore", "usbnet", "cdc_ether", "cdc_ncm", "udc_core", "dummy_hcd"}
	if !slices.Equal(got, want) {
		t.Fatalf("Resolve = %v, want %v", got, want)
	}
	// Every module comes after all of its dependencies, and only once.
	pos := map[string]int{}
	for i, m := range got {
		if _, dup := pos[m]; dup {
			t.Fatalf("%s listed twice", m)
		}
		pos[m] = i
	}
	for _, m := range got {
		for _, d := range idx.Deps[m] {
			if pos[d] > pos[m] {
				t.Errorf("%s loads before its dependency %s", m, d)
			}
		}
	}
	if idx.Path["cdc_ncm"] != "kernel/drivers/net/usb/cdc_ncm.ko.xz" {
		t.Errorf("path of cdc_ncm = %q", idx.Path["cdc_ncm"])
	}
}

func TestResolveBuiltinAndAlias(t *testing.T) {
	idx := testIndex(t)
	got, err := idx.Resolve("configfs", "fs-configfs", "net-pf-16-proto-21", "usb:v0BDAp8153d3000dc00dsc00dp00ic02isc06ip00in00")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mii", "usb_common", "usbcore", "usbnet", "cdc_ether"}
	if !slices.Equal(got, want) {
		t.Fatalf("Resolve = %v, want %v (built-ins dropped, the USB alias resolved to cdc_ether)", got, want)
	}
}

func TestResolveErrors(t *testing.T) {
	idx := testIndex(t)
	if _, err := idx.Resolve("r8152"); err == nil || !strings.Contains(err.Error(), `"r8152"`) {
		t.Errorf("unknown module: err = %v, want one naming r8152", err)
	}
	if _, err := idx.Resolve("a"); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: err = %v", err)
	}
	if _, err := idx.Resolve("needs-missing"); err == nil || !strings.Contains(err.Error(), "not_there") {
		t.Errorf("missing dependency: err = %v, want one naming not_there", err)
	}
	if _, err := LoadModuleIndex(t.TempDir()); err == nil || !strings.Contains(err.Error(), "depmod") {
		t.Errorf("no modules.dep: err = %v", err)
	}
}

func TestModuleName(t *testing.T) {
	for in, want := range map[string]string{
		"kernel/drivers/usb/gadget/udc/dummy_hcd.ko.xz": "dummy_hcd",
		"usb-common.ko.zst":                             "usb_common",
		"cdc-ether":                                     "cdc_ether",
		"x.ko":                                          "x",
	} {
		if got := ModuleName(in); got != want {
			t.Errorf("ModuleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOverridesReplaceStock(t *testing.T) {
	idx := testIndex(t)
	// A patched usbnet that no longer needs mii, and a new module.
	applyOverrides(idx, map[string]string{"usbnet": "/build/usbnet.ko", "ws_new": "/build/ws_new.ko"},
		map[string][]string{"usbnet": {"usbcore"}, "ws_new": {"usbnet"}})
	_, err := planLoads(idx, scenarios["usb-nic"], Options{Load: []string{"ws_new mode=1"}})
	if err == nil {
		t.Fatal("usb-nic needs xhci_pci, which the test index lacks: want an error naming it")
	} else if !strings.Contains(err.Error(), "xhci_pci") {
		t.Fatalf("err = %v", err)
	}
	loads, err := planLoads(idx, scenarios["boot"], Options{Load: []string{"cdc_ether", "ws_new mode=1"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range loads {
		got = append(got, l.Name+"="+l.Source+"|"+l.Params)
	}
	want := []string{"mii=stock|", "usb_common=stock|", "usbcore=stock|", "usbnet=modules-dir /build/usbnet.ko|",
		"cdc_ether=stock|", "ws_new=modules-dir /build/ws_new.ko|mode=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("loads =\n%v\nwant\n%v", got, want)
	}
}
