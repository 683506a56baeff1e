// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"strings"
	"testing"
)

// usb.go: the Pi 4's USB 3 ports are the VL805 xHCI behind PCIe
// (0000:01:00.0 under fd500000.pcie); the AX88179 sits on one at 5000
// Mbit/s, and the walk up from its interface reaches that controller.
func TestUSBTopology(t *testing.T) {
	d := device(t, fromFixture(t, "rpi4-ax88179", "eth1"), "eth1")
	u := d.USB
	if u == nil {
		t.Fatal("eth1 has no USB facts")
	}
	if u.Interface != "2-2:1.0" || u.Path != "2-2" || u.SpeedMbps != "5000" || u.Version != "3.00" {
		t.Errorf("usb device = %+v", u)
	}
	hc := u.HostController
	if hc.BusID != "0000:01:00.0" || hc.Bus != "pci" || hc.Driver != "xhci_hcd" ||
		!strings.HasSuffix(hc.Path, "/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0") {
		t.Errorf("host controller = %+v", hc)
	}

	// Behind the VL805's internal hub (1-1): the walk goes through the hub
	// to the root hub, and the hub is no neighbour.
	d = device(t, fromFixture(t, "pi4-r8152-usb2", "eth1"), "eth1")
	if d.USB.Path != "1-1.3" || d.USB.SpeedMbps != "480" || d.USB.HostController.BusID != "0000:01:00.0" {
		t.Errorf("r8152 on USB 2 = %+v", d.USB)
	}
	if len(d.USB.Neighbours) != 0 {
		t.Errorf("neighbours = %+v, want none (hub 1-1 left out)", d.USB.Neighbours)
	}

	// A platform (device-tree) host controller: the Pi 3's DWC2.
	d = device(t, fromFixture(t, "vm-rpi3-usb-nic", "usb0"), "usb0")
	if hc := d.USB.HostController; hc.BusID != "3f980000.usb" || hc.Bus != "platform" || hc.Driver != "dwc2" {
		t.Errorf("rpi3 host controller = %+v", hc)
	}
}
