// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"strings"
	"testing"
)

// --gadget-function is checked before anything starts: a function the
// gadget framework does not have, a scenario without the gadget loop, or
// a suspend step for a host driver that cannot autosuspend is refused.
func TestGadgetFunctionValidate(t *testing.T) {
	for _, c := range []struct {
		scenario, fn string
		steps        []string
		err          string
	}{
		{"usb-gadget", "", nil, ""},
		{"usb-gadget", "rndis", nil, ""},
		{"bql", "subset", nil, ""},
		{"usbnet-stress", "eem", nil, ""},
		{"usbnet-stress", "ecm", []string{"downsuspend"}, ""},
		{"selftests", "ncm", nil, ""},
		{"usb-gadget", "acm", nil, `--gadget-function "acm": want one of ncm, ecm, eem, rndis, subset`},
		{"usb-gadget", "geth", nil, "want one of"},
		{"usb-nic", "ecm", nil, "not usb-nic"},
		{"selftests", "eem", nil, "not selftests"},
		{"usbnet-stress", "rndis", []string{"rebind", "suspend"}, "rndis_host (the rndis function's host driver) has no runtime autosuspend"},
		{"usbnet-stress", "subset", []string{"downsuspend"}, "cdc_subset"},
	} {
		cfg := Config{Options: Options{Scenario: c.scenario, Duration: 3e9, Streams: 2, Direction: "receive", GadgetFunction: c.fn, Steps: c.steps}}
		err := cfg.Validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s --gadget-function %q --steps %v: err %v, want %q", c.scenario, c.fn, c.steps, err, c.err)
		}
	}
}

// Each function's loop loads its gadget module and host driver, builds
// the configfs function under its own name, and the guest waits for that
// host driver (and fails naming it) - for receive, bql and the stress.
func TestGadgetFunctionScript(t *testing.T) {
	for _, f := range gadgetFunctions {
		o := Options{Duration: 3e9, Streams: 2, Direction: "receive", Speed: "super", GadgetFunction: f.Name}
		for _, name := range []string{"usb-gadget", "bql", "usbnet-stress"} {
			sc := scenarios[name]
			mods := strings.Join(sc.Modules(o), " ")
			if !strings.Contains(mods, " "+f.Module+" "+f.HostDriver+" ") {
				t.Errorf("%s %s: modules %q lack %s and %s", name, f.Name, mods, f.Module, f.HostDriver)
			}
			for _, other := range gadgetFunctions {
				if other.Name != f.Name && strings.Contains(mods+" ", " "+other.Module+" ") {
					t.Errorf("%s %s: loads %s too (%q)", name, f.Name, other.Module, mods)
				}
			}
		}
		g := scenarios["usb-gadget"].Script(o)
		for _, want := range []string{
			"mkdir -p $G/configs/c.1 $G/functions/" + f.Configfs + ".usb0 ||",
			"ln -s $G/functions/" + f.Configfs + ".usb0 $G/configs/c.1/",
			"echo " + f.Vendor + " > $G/idVendor",
			"HIF=$(ws_wait_driver " + f.HostDriver + " 20) || fail \"--gadget-function " + f.Name + ": no " + f.HostDriver + " network device",
			"echo \"dut_driver=" + f.HostDriver + "\"",
		} {
			if !strings.Contains(g, want) {
				t.Errorf("usb-gadget %s: script lacks %q:\n%s", f.Name, want, g)
			}
		}
		s := scenarios["usbnet-stress"].Script(o)
		want := "FUNC=" + f.Configfs + ".usb0 FUNC_NAME=" + f.Name + " FUNC_MODULE=" + f.Module + " HOSTDRV=" + f.HostDriver + " VENDOR=" + f.Vendor + " PRODUCT=" + f.Product + "\n"
		if !strings.Contains(s, want) {
			t.Errorf("usbnet-stress %s: script lacks %q", f.Name, want)
		}
		hasSuspend := strings.Contains(s, "STEPS=\"rebind linkflap mtu reload suspend downsuspend\"")
		if hasSuspend != f.Autosuspend || !strings.Contains(s, "STEPS=\"rebind linkflap mtu reload") {
			t.Errorf("usbnet-stress %s (autosuspend %v): default steps %q", f.Name, f.Autosuspend, s[strings.Index(s, "STEPS="):][:70])
		}
	}
	// the stress reloads the function's host driver, not cdc_ncm by name
	for _, want := range []string{"\t\tunload \"$HOSTDRV\"\n", "insmod \"$M/$HOSTDRV.ko\"", "ws_wait_driver \"$HOSTDRV\" 20"} {
		if !strings.Contains(usbnetStress, want) {
			t.Errorf("usbnet_stress.sh lacks %q", want)
		}
	}
	if strings.Contains(usbnetStress, "ncm.usb0/") || strings.Contains(usbnetStress, "unload cdc_ncm") {
		t.Error("usbnet_stress.sh still names the NCM function or cdc_ncm where it should use the function's")
	}
}

// The base image holds every function's modules, so one cached image
// serves every --gadget-function.
func TestGadgetFunctionImage(t *testing.T) {
	all := map[string]bool{}
	for _, m := range allModules("amd64", "pc") {
		all[m] = true
	}
	for _, f := range gadgetFunctions {
		if !all[f.Module] || !all[f.HostDriver] {
			t.Errorf("the base image lacks %s or %s (function %s)", f.Module, f.HostDriver, f.Name)
		}
	}
}
