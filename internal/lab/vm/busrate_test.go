// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"strings"
	"testing"
)

// --bus-rate reaches dummy_hcd as rate_mbit, and the guest refuses to run
// when the dummy_hcd it loaded does not have it (the stock one only warns
// about an unknown parameter and would run uncapped).
func TestBusRate(t *testing.T) {
	for _, name := range []string{"usb-gadget", "bql", "usbnet-stress"} {
		sc := scenarios[name]
		o := Options{Scenario: name, Duration: 3e9, Streams: 2, Direction: "send", Speed: "super", BusRate: 100}
		if p := sc.Params(o)["dummy_hcd"]; !strings.Contains(p, "rate_mbit=100") {
			t.Errorf("%s --bus-rate 100: dummy_hcd params %q", name, p)
		}
		script := sc.Script(o)
		if !strings.Contains(script, `"$(cat /sys/module/dummy_hcd/parameters/rate_mbit 2>/dev/null)" = 100 ] || fail`) {
			t.Errorf("%s --bus-rate 100: the guest does not check that dummy_hcd applies it:\n%s", name, script)
		}
		o.BusRate = 0
		if p := sc.Params(o)["dummy_hcd"]; strings.Contains(p, "rate_mbit") {
			t.Errorf("%s without --bus-rate: dummy_hcd params %q", name, p)
		}
		if strings.Contains(sc.Script(o), "rate_mbit") {
			t.Errorf("%s without --bus-rate checks rate_mbit", name)
		}
	}
}

// --steps picks usbnet-stress's disruptions; the default is all of them,
// downsuspend (runtime suspend with the link down) included.
func TestStressSteps(t *testing.T) {
	sc := scenarios["usbnet-stress"]
	def := sc.Script(Options{Scenario: "usbnet-stress"})
	if !strings.Contains(def, `STEPS="rebind linkflap mtu reload suspend downsuspend"`) {
		t.Errorf("default steps: %s", def[:200])
	}
	one := sc.Script(Options{Scenario: "usbnet-stress", Steps: []string{"downsuspend"}})
	if !strings.Contains(one, `STEPS="downsuspend"`) {
		t.Errorf("--steps downsuspend: %s", one[:200])
	}
	for _, s := range StressSteps {
		if !strings.Contains(usbnetStress, "\n\t"+s+")") {
			t.Errorf("usbnet_stress.sh has no case for step %s", s)
		}
	}
	if err := checkSteps([]string{"rebind", "nope"}); err == nil {
		t.Error("checkSteps accepts an unknown step")
	}
}
