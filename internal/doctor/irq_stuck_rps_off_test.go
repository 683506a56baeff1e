// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/observe"
)

var irqStuckRpsOffCases = addCases("irq-stuck-rps-off", []ruleCase{
	{name: "Pi xHCI on CPU0, RPS off", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
		change:  func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0" },
		actions: []string{"rps_cpus:eth1:rx-0=e", "sysctl:net.core.rps_sock_flow_entries=32768", "rps_flow_cnt:eth1:rx-0=32768"},
		text:    "leaves out CPU0"},
	{name: "RPS off on a forwarding Pi: no RFS", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
			setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
		}, actions: []string{"rps_cpus:eth1:rx-0=e"}},
	{name: "two CPUs: RPS to the other one", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
			in.Snap.Host.CPUs.Online = "0-1"
		}, actions: []string{"rps_cpus:eth1:rx-0=2", "sysctl:net.core.rps_sock_flow_entries=32768", "rps_flow_cnt:eth1:rx-0=32768"}},
	{name: "one CPU: nothing to spread", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
		change: func(t *testing.T, in *Input) {
			dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
			in.Snap.Host.CPUs.Online = "0"
		}},
	{name: "RPS already on (f): the Pi fixture as captured", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off"},
	{name: "an interrupt that moves (60/40), RPS off", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth1")
			d.RXQueues[0].RPSCPUs = "0"
			d.IRQs[0].Counts, d.IRQs[0].Total = []uint64{60000, 40000, 0, 0}, 100000
		}},
	{name: "observed: the interrupt fires on CPU0 only", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth1")
			d.RXQueues[0].RPSCPUs = "0"
			d.IRQs[0].Counts, d.IRQs[0].Total = []uint64{40, 0, 0, 0}, 40 // a fresh boot
			in.Obs = &observe.Observation{IRQs: []observe.IRQ{{IRQ: 46, Count: 5000, PerCPU: []uint64{5000, 0, 0, 0}}}}
		}},
	{name: "observed: the interrupt moves", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
		change: func(t *testing.T, in *Input) {
			dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
			in.Obs = &observe.Observation{IRQs: []observe.IRQ{{IRQ: 46, Count: 5000, PerCPU: []uint64{2500, 2500, 0, 0}}}}
		}},
	{name: "a movable virtio IRQ with NAPI", fixture: "firecracker-host", id: "irq-stuck-rps-off"},
	// the arm64 lab's Raspberry Pi 3 B: the DWC2's interrupt, found by
	// its handler's name, refused by the ARMCTRL chip (EPERM on 6.12)
	{name: "Pi 3 DWC2 on CPU0 (arm64 lab guest), RPS off", fixture: "vm-rpi3-usb-nic", id: "irq-stuck-rps-off", fire: true, sev: Warn,
		actions: []string{"rps_cpus:usb0:rx-0=e", "sysctl:net.core.rps_sock_flow_entries=32768", "rps_flow_cnt:usb0:rx-0=32768"},
		text:    "cannot leave CPU0"},
	{name: "counts that did not move since the earlier reading", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
		change: func(t *testing.T, in *Input) {
			dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
			in.Before = fixture(t, "rpi4-ax88179") // same counts: no interrupts in between
		}},
})

func TestRuleIrqStuckRpsOff(t *testing.T) { runCases(t, irqStuckRpsOffCases) }

// TestRFSNeedsRPS: doctor marks the RFS actions as useful only with the RPS
// action(s) of the same device, so tune does not try them alone.
func TestRFSNeedsRPS(t *testing.T) {
	in := &Input{Snap: fixture(t, "rpi4-ax88179")}
	dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
	got, _ := run(t, in, "irq-stuck-rps-off")
	if len(got) != 1 {
		t.Fatalf("want irq-stuck-rps-off, got %d", len(got))
	}
	for _, a := range got[0].Fix.Actions {
		needs := strings.Join(a.Needs, ",")
		switch {
		case strings.HasPrefix(a.ID, "rps_cpus:") && needs != "":
			t.Errorf("%s needs %s", a.ID, needs)
		case !strings.HasPrefix(a.ID, "rps_cpus:") && needs != "rps_cpus:eth1:rx-0":
			t.Errorf("%s needs %q, want rps_cpus:eth1:rx-0", a.ID, needs)
		}
	}
}
