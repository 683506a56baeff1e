// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"strings"
)

// gadgetFunction is one USB network function of the kernel's gadget
// framework (u_ether's functions, each a usb_f_* module Debian builds) and
// the usbnet driver that binds it on the host side of the dummy_hcd loop.
type gadgetFunction struct {
	Name string // the --gadget-function value
	// Configfs is the function's directory name under functions/ (the
	// subset function registers as "geth").
	Configfs string
	// Module is the gadget side's module, HostDriver the host side's
	// (usbnet minidriver), which the guest checks bound.
	Module, HostDriver string
	// Vendor and Product are the gadget's IDs: the class-matched drivers
	// take the lab's 1d6b:0104; cdc_subset matches by ID only, and
	// 0525:a4a2 is the Linux Ethernet gadget entry it has (CONFIG_USB_ARMLINUX).
	Vendor, Product string
	// Autosuspend: the host driver supports runtime autosuspend
	// (cdc_ncm and cdc_ether set supports_autosuspend; cdc_eem,
	// rndis_host and cdc_subset do not), which usbnet-stress's suspend
	// and downsuspend steps need.
	Autosuspend bool
}

// gadgetFunctions are the functions --gadget-function takes, the default
// first. Debian's 7.3.4 amd64 config has all five (CONFIG_USB_F_NCM, _ECM,
// _EEM, _RNDIS and _SUBSET =m, their CONFIG_USB_CONFIGFS_* =y), and so has
// the lab's KASAN kernel.
var gadgetFunctions = []gadgetFunction{
	{"ncm", "ncm", "usb_f_ncm", "cdc_ncm", "0x1d6b", "0x0104", true},
	{"ecm", "ecm", "usb_f_ecm", "cdc_ether", "0x1d6b", "0x0104", true},
	{"eem", "eem", "usb_f_eem", "cdc_eem", "0x1d6b", "0x0104", false},
	{"rndis", "rndis", "usb_f_rndis", "rndis_host", "0x1d6b", "0x0104", false},
	{"subset", "geth", "usb_f_ecm_subset", "cdc_subset", "0x0525", "0xa4a2", false},
}

// GadgetFunctionNames lists the --gadget-function values, the default first.
func GadgetFunctionNames() []string {
	var n []string
	for _, f := range gadgetFunctions {
		n = append(n, f.Name)
	}
	return n
}

// lookupGadgetFunction returns the function a --gadget-function value
// names ("" is ncm).
func lookupGadgetFunction(name string) (gadgetFunction, error) {
	if name == "" {
		return gadgetFunctions[0], nil
	}
	for _, f := range gadgetFunctions {
		if f.Name == name {
			return f, nil
		}
	}
	return gadgetFunction{}, fmt.Errorf("--gadget-function %q: want one of %s (the gadget's usb_f_* function; its host driver binds the other end)",
		name, strings.Join(GadgetFunctionNames(), ", "))
}

// gadgetFn is o's function; Validate has checked the name, so an unknown
// one (a caller that skipped it) falls back to the default.
func gadgetFn(o Options) gadgetFunction {
	f, err := lookupGadgetFunction(o.GadgetFunction)
	if err != nil {
		return gadgetFunctions[0]
	}
	return f
}

// gadgetModules are the modules of a dummy_hcd loop with o's function.
func gadgetModules(o Options, extra ...string) []string {
	f := gadgetFn(o)
	return append([]string{"dummy_hcd", "libcomposite", f.Module, f.HostDriver, "configfs"}, extra...)
}

// gadgetScenario says whether a scenario builds the gadget loop whose
// function --gadget-function picks.
func gadgetScenario(name string) bool {
	switch name {
	case "usb-gadget", "bql", "usbnet-stress":
		return true
	}
	return false
}

// validateGadgetFunction checks --gadget-function for scenario s: a known
// function, on a scenario with the gadget loop. selftests keeps NCM: its
// expectations were set on cdc_ncm, and it has not run on the others.
func (c *Config) validateGadgetFunction(s *Scenario) error {
	if _, err := lookupGadgetFunction(c.GadgetFunction); err != nil {
		return err
	}
	if c.GadgetFunction != "" && c.GadgetFunction != "ncm" && !gadgetScenario(s.Name) {
		return fmt.Errorf("--gadget-function %s: only usb-gadget, bql and usbnet-stress loop other functions than ncm, not %s: leave it out", c.GadgetFunction, s.Name)
	}
	f := gadgetFn(c.Options)
	for _, st := range c.Steps {
		if s.Name == "usbnet-stress" && !f.Autosuspend && (st == "suspend" || st == "downsuspend") {
			return fmt.Errorf("--steps %s: %s (the %s function's host driver) has no runtime autosuspend, so it cannot suspend; leave %s out", st, f.HostDriver, f.Name, st)
		}
	}
	return nil
}

// stressSteps are usbnet-stress's default steps for o's function: all of
// StressSteps, less the suspend ones where the host driver cannot
// autosuspend.
func stressSteps(o Options) []string {
	if gadgetFn(o).Autosuspend {
		return StressSteps
	}
	var out []string
	for _, s := range StressSteps {
		if s != "suspend" && s != "downsuspend" {
			out = append(out, s)
		}
	}
	return out
}

// gadgetVars are the gadget scripts' placeholders for o's function.
func gadgetVars(o Options) []string {
	f := gadgetFn(o)
	return []string{"@FUNC@", f.Configfs + ".usb0", "@FUNC_NAME@", f.Name, "@FUNC_MODULE@", f.Module,
		"@HOSTDRV@", f.HostDriver, "@VENDOR@", f.Vendor, "@PRODUCT@", f.Product}
}
