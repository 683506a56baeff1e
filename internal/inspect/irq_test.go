// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"context"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
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

// irq.go: a platform USB controller described by a device tree, behind
// another chip (the Raspberry Pi 5's xHCI in RP1): no irq file and no
// msi_irqs/ anywhere up its path, and no handler carries its device name.
// Its interrupt is found by the name the USB core gives it after the
// controller's first root hub (xhci-hcd:usb1), not the other controller's
// (xhci-hcd:usb3); whether it can move is the probe's answer.
func TestIRQPlatformHCDByRootHub(t *testing.T) {
	s, a := openFixture(t, "pi5-rp1-ax88179")
	for _, probe := range []string{"accepted", "EIO"} {
		a.AffinityProbes["161"] = probe
		snap, err := Collect(context.Background(), Options{FS: s.FS, Answers: a, Ifaces: []string{"eth1"}})
		if err != nil {
			t.Fatal(err)
		}
		d := device(t, snap, "eth1")
		if len(d.IRQs) != 1 || d.IRQs[0].Number != 161 || !strings.Contains(d.IRQs[0].Via, "root hub usb1") {
			t.Fatalf("probe %s: irqs = %+v", probe, d.IRQs)
		}
		want := datapath.Yes
		if probe == "EIO" {
			want = datapath.No
		}
		if got := d.IRQs[0].Changeable.State; got != want {
			t.Errorf("probe %s: changeable %s, want %s (%s)", probe, got, want, d.IRQs[0].Changeable.Evidence)
		}
		if d.IRQs[0].Chip != "rp1_irq_chip" || d.IRQs[0].Total != 2891022 || len(d.IRQs[0].SharedWith) != 1 {
			t.Errorf("irq 161 = %+v", d.IRQs[0])
		}
	}
}

// osrelease.go: the distribution as the host says it; Raspberry Pi OS by
// /etc/rpi-issue; older snapshots have none.
func TestOSRelease(t *testing.T) {
	o := fromFixture(t, "pi5-rp1-ax88179").Host.OS
	if o == nil || o.ID != "debian" || o.VersionID != "13" || o.Codename != "trixie" || !o.RPiIssue || o.File != "/etc/os-release" {
		t.Errorf("pi5 os = %+v", o)
	}
	if o := fromFixture(t, "modem-5g-mbim").Host.OS; o == nil || o.VersionID != "12" || o.RPiIssue {
		t.Errorf("modem os = %+v", o)
	}
	if o := fromFixture(t, "rpi4-ax88179").Host.OS; o != nil {
		t.Errorf("an old snapshot has no os-release: %+v", o)
	}
	p := ParseOSRelease([]byte("# c\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\nPRETTY_NAME='Ubuntu 24.04.3 LTS'\ngarbage\n"))
	if p.ID != "ubuntu" || p.VersionID != "24.04" || p.Codename != "noble" || p.PrettyName != "Ubuntu 24.04.3 LTS" || len(p.IDLike) != 1 {
		t.Errorf("parsed %+v", p)
	}
}
