// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

var irqsPiledCases = addCases("irqs-piled", []ruleCase{
	{name: "virtio input and output on CPU1", fixture: "firecracker-host", id: "irqs-piled", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth0")
			for i := range d.IRQs {
				if d.IRQs[i].Number == 38 {
					d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 90000}, 90000
				}
				if d.IRQs[i].Number == 39 {
					d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 40000}, 40000
				}
			}
			in.Snap.Host.IRQBalance = inspect.Tri{State: datapath.Yes, Evidence: "a process named irqbalance runs"}
		}, actions: []string{"irq:39=0"}, text: "irqbalance runs here"},
	{name: "virtio input on CPU1, output on CPU0", fixture: "firecracker-host", id: "irqs-piled"},
})

func TestRuleIrqsPiled(t *testing.T) { runCases(t, irqsPiledCases) }

// A multi-queue card's vectors: iwlwifi's notification (default) queue
// beside queue_1 on CPU0, every CPU with its queue - its layout, not a
// pile-up, also when one flow keeps the other queues idle. The same two
// busy vectors with nothing placed per CPU, or two devices' interrupts on
// one CPU while another idles, are a pile-up; where every CPU already
// takes a busy interrupt, none is "free" and nothing is proposed.
func TestMultiQueueIRQLayout(t *testing.T) {
	got, _ := findings(t, "ax210-iwlwifi", nil)
	expect(t, got, nil, "irqs-piled")
	got, _ = findings(t, "ax210-iwlwifi", func(in *Input) {
		d := dev(t, in.Snap, "wlp3s0")
		for i, q := range d.IRQs {
			if q.Number >= 143 && q.Number <= 145 { // one flow: queues 2-4 idle
				d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 0, 0, 0}, 0
			}
		}
	})
	expect(t, got, nil, "irqs-piled")
	// the same vectors all allowed everywhere and all firing on CPU0: piled
	got, _ = findings(t, "ax210-iwlwifi", func(in *Input) {
		d := dev(t, in.Snap, "wlp3s0")
		for i := range d.IRQs {
			d.IRQs[i].SMPAffinityList = "0-3"
			if d.IRQs[i].Total > 0 {
				d.IRQs[i].Counts = []uint64{d.IRQs[i].Total, 0, 0, 0}
			}
		}
	})
	expect(t, got, map[string]Severity{"irqs-piled": Warn})
	if f := got["irqs-piled"]; !strings.Contains(f.Title, "while 3 other CPU(s) take none") {
		t.Errorf("title %q", f.Title)
	}
	// queues spread and busy on every CPU, a second vector beside one: no CPU is free
	got, _ = findings(t, "ax210-iwlwifi", func(in *Input) {
		d := dev(t, in.Snap, "wlp3s0")
		for i := range d.IRQs {
			d.IRQs[i].SMPAffinityList = "0-3"
		}
	})
	expect(t, got, nil, "irqs-piled")
}

// Two busy virtio vectors on CPU1 while CPU0 is idle: piled (as in
// irqsPiledCases' first case). With a second device's busy interrupt on
// CPU0 no CPU takes none, so the finding's claim would be false: silent.
func TestIRQsPiledNeedsAFreeCPU(t *testing.T) {
	pile := func(in *Input) {
		d := dev(t, in.Snap, "eth0")
		for i := range d.IRQs {
			switch d.IRQs[i].Number {
			case 38:
				d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 90000}, 90000
			case 39:
				d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 40000}, 40000
			}
		}
	}
	got, _ := findings(t, "firecracker-host", pile)
	expect(t, got, map[string]Severity{"irqs-piled": Warn})
	got, _ = findings(t, "firecracker-host", func(in *Input) {
		pile(in)
		other := *dev(t, in.Snap, "eth0")
		other.Name = "eth1"
		other.IRQs = []inspect.IRQ{{Number: 60, Counts: []uint64{70000, 0}, CountCPUs: []int{0, 1}, Total: 70000,
			SMPAffinityList: "0-1", Changeable: inspect.Tri{State: datapath.Yes}}}
		in.Snap.Devices = append(in.Snap.Devices, other)
	})
	expect(t, got, nil, "irqs-piled")
}
