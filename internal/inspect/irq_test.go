package inspect

import (
	"github.com/wirespeed/wirespeed/internal/datapath"
	"strings"
	"testing"
)

// irq.go: the Pi 3's DWC2 is a device-tree device without an irq file in
// sysfs; its interrupt is found by the handler named after it, and its
// chip (ARMCTRL-level) cannot steer: the probe's EPERM and the chip name
// both say no.
func TestIRQByHandlerName(t *testing.T) {
	d := device(t, fromFixture(t, "vm-rpi3-usb-nic", "usb0"), "usb0")
	if len(d.IRQs) != 1 {
		t.Fatalf("irqs = %+v", d.IRQs)
	}
	q := d.IRQs[0]
	if q.Number != 51 || q.Via != "handler named after USB host controller 3f980000.usb (dwc2)" {
		t.Errorf("irq %d via %q", q.Number, q.Via)
	}
	if q.Chip != "ARMCTRL-level" || q.Total != 25117 || len(q.Actions) != 2 || q.Actions[0] != "3f980000.usb" {
		t.Errorf("irq details = %+v", q)
	}
	if q.Changeable.State != datapath.No || !strings.HasPrefix(q.Changeable.Evidence, "the BCM2835 interrupt controller") ||
		!strings.HasSuffix(q.Changeable.Evidence, "probe write answered EPERM") {
		t.Errorf("changeable = %+v", q.Changeable)
	}
	// The controller's own handlers are not "shared"; the other USB
	// devices on it would be.
	if len(q.SharedWith) != 1 || !strings.HasPrefix(q.SharedWith[0], "every USB device on this controller") {
		t.Errorf("shared with %q", q.SharedWith)
	}
}

// irq.go: the Pi 4's PCIe MSI chip passes the kernel's gate but refuses
// every mask, so chipsRefusingAffinity, not the probe, says no.
func TestIRQRefusingChip(t *testing.T) {
	s := fromFixture(t, "rpi4-ax88179")
	q := device(t, s, "eth1").IRQs[0]
	if q.Chip != "BRCM STB PCIe MSI" || q.Changeable.State != datapath.No || q.Changeable.Evidence != chipsRefusingAffinity["BRCM STB PCIe MSI"] {
		t.Errorf("irq 46 = %s %+v", q.Chip, q.Changeable)
	}
	// GIC lines named after the interface: found by handler name, movable.
	for _, q := range device(t, s, "eth0").IRQs {
		if q.Via != "handler named eth0" || q.Chip != "GICv2" || q.Changeable.State != datapath.Yes {
			t.Errorf("eth0 irq %d: via %q chip %q %+v", q.Number, q.Via, q.Chip, q.Changeable)
		}
	}
}
