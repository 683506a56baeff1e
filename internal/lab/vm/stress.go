// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// usbnetStress is the guest side of the usbnet-stress scenario.
var usbnetStress = guestText("usbnet_stress.sh")

const defaultCycles = 30

// StressSteps are the usbnet-stress disruptions, run in this order (or in
// the order --steps gives).
var StressSteps = []string{"rebind", "linkflap", "mtu", "reload", "suspend", "downsuspend"}

// checkSteps returns an error for a step scenario does not know
// (usbdev-stress has steps of its own, DevStressSteps).
func checkSteps(scenario string, steps []string) error {
	known, name := StressSteps, "usbnet-stress"
	if scenario == "usbdev-stress" {
		known, name = DevStressSteps, scenario
	}
	for _, s := range steps {
		ok := false
		for _, k := range known {
			ok = ok || s == k
		}
		if !ok {
			return fmt.Errorf("%s step %q: want some of %s", name, s, strings.Join(known, ","))
		}
	}
	return nil
}

func init() {
	scenarios["usbnet-stress"] = &Scenario{
		Name: "usbnet-stress",
		Summary: "--cycles N of gadget rebind, link flap, MTU change, cdc_ncm/usbnet reload, runtime suspend/resume " +
			"(a packet sent while asleep) under traffic, and runtime suspend with the link down, on the NCM loop (or --gadget-function's) at high speed",
		Modules: func(o Options) []string { return gadgetModules(o) },
		// dummy_hcd cannot suspend a SuperSpeed port: high speed, so the
		// suspend cycles really suspend.
		Params:  func(o Options) map[string]string { return map[string]string{"dummy_hcd": busParams(o, "high")} },
		Script:  stressScript,
		MaxTime: func(o Options) time.Duration { return time.Duration(cycles(o))*8*time.Second + time.Minute },
		NoBench: true,
	}
}

func cycles(o Options) int {
	if o.Cycles > 0 {
		return o.Cycles
	}
	return defaultCycles
}

// stressScript runs the stress in a subshell, so that its failure ends in
// the scenario's fail (the run fails, with the reason) and not in an exit.
func stressScript(o Options) string {
	steps := o.Steps
	if len(steps) == 0 {
		steps = stressSteps(o)
	}
	vals := append([]string{"@N@", strconv.Itoa(cycles(o)), "@STEPS@", strings.Join(steps, " "),
		"@USBNET_STRESS@", usbnetStress}, gadgetVars(o)...)
	return busRateCheck(o) + guestScript("stress.sh", vals...)
}
