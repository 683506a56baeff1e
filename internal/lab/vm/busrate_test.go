// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"strings"
	"testing"
	"time"
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
	if err := checkSteps("usbnet-stress", []string{"rebind", "nope"}); err == nil {
		t.Error("checkSteps accepts an unknown step")
	}
}

// TestDevStressSteps: usbdev-stress takes its own steps (loadflap among
// them, refused by usbnet-stress), each with a case in its script, and
// by default the turn it always had.
func TestDevStressSteps(t *testing.T) {
	script := devStressScript(Options{Device: "aqc111"})
	for _, s := range DevStressSteps {
		if s != "idle" && !strings.Contains(script, "\n\t"+s+")") {
			t.Errorf("usbdev_stress.sh has no case for step %s", s)
		}
	}
	if !strings.Contains(script, "set -- idle flap mtu reload\n") {
		t.Errorf("the default steps are not idle flap mtu reload")
	}
	if s := devStressScript(Options{Device: "aqc111", Steps: []string{"loadflap"}}); !strings.Contains(s, "set -- loadflap\n") {
		t.Errorf("--steps loadflap does not reach the script")
	}
	if checkSteps("usbdev-stress", []string{"loadflap", "flap"}) != nil || checkSteps("usbnet-stress", []string{"loadflap"}) == nil ||
		checkSteps("usbdev-stress", []string{"rebind"}) == nil {
		t.Error("checkSteps mixes the two scenarios' steps")
	}
}

// TestDevStressCycleTime: --cycle-time sets usbdev-stress's budget per
// cycle, in the guest script's deadline and in the boot's time limit;
// other scenarios and budgets outside 1s-10m are refused.
func TestDevStressCycleTime(t *testing.T) {
	o := Options{Device: "ax88179", Cycles: 30}
	if s := devStressScript(o); !strings.Contains(s, "390") {
		t.Errorf("30 cycles at the default 12 s: no 390 s deadline in the script")
	}
	o.CycleTime = 40 * time.Second
	if s := devStressScript(o); !strings.Contains(s, "1230") {
		t.Errorf("30 cycles at 40 s: no 1230 s deadline in the script")
	}
	if got := scenarios["usbdev-stress"].MaxTime(o); got != 30*40*time.Second+time.Minute {
		t.Errorf("usbdev-stress's time limit at 40 s a cycle: %s", got)
	}
	for _, c := range []struct {
		scenario string
		d        time.Duration
		err      string
	}{
		{"usbdev-stress", 40 * time.Second, ""}, {"usbdev-stress", 0, ""},
		{"usbdev-stress", 500 * time.Millisecond, "want 1s-10m"}, {"usbdev-stress", time.Hour, "want 1s-10m"},
		{"usbdev-stress", -time.Second, "want 1s-10m"}, {"usbnet-stress", 40 * time.Second, "not usbnet-stress's"},
	} {
		cfg := Config{Options: Options{Scenario: c.scenario, Device: "ax88179", Duration: 3e9, Streams: 2, Direction: "both", Tunnels: 4, CycleTime: c.d}}
		err := cfg.Validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("--cycle-time %s on %s: err %v, want %q", c.d, c.scenario, err, c.err)
		}
	}
}
