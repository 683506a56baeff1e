// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

func TestRXOneCPU(t *testing.T) {
	veth := func(t *testing.T, rps string, shares ...float64) *Input {
		in := &Input{Snap: fixture(t, "firecracker-veth-threaded")}
		dev(t, in.Snap, "ws-fx1").RXQueues[0].RPSCPUs = rps
		in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "ws-fx1", RXPath: observe.PathNAPIGRO, DeliveredPerSec: 80000}}}
		for i, s := range shares {
			in.Obs.CPUs = append(in.Obs.CPUs, observe.CPU{CPU: i, NetRXShare: s})
		}
		return in
	}
	got, _ := run(t, veth(t, "0", 0.9, 0.02), "rx-one-cpu")
	if len(got) != 1 || strings.Join(actionIDs(got[0]), " ") != "rps_cpus:ws-fx1:rx-0=2" {
		t.Fatalf("lopsided NET_RX, RPS off: %+v", got)
	}
	for name, in := range map[string]*Input{
		"both CPUs busy": veth(t, "0", 0.9, 0.4),
		"RPS on":         veth(t, "3", 0.9, 0.02),
		"idle":           veth(t, "0", 0.03, 0.0),
	} {
		if got, _ := run(t, in, "rx-one-cpu"); len(got) != 0 {
			t.Errorf("%s: fired: %s", name, got[0].Title)
		}
	}
	in := veth(t, "0", 0.9, 0.02)
	in.Obs = nil
	if _, rep := run(t, in, "rx-one-cpu"); !strings.Contains(fmt.Sprint(rep.Skipped), "rx-one-cpu") {
		t.Errorf("without an observation the rule must say it could not check: %+v", rep.Skipped)
	}
}

// TestNoNAPISuperPackets: a veth receiving 64 KB GSO packets from a TSO
// peer has nothing for GRO to merge.
func TestNoNAPISuperPackets(t *testing.T) {
	mk := func(bytesPerSkb uint64) *Input {
		in := &Input{Snap: fixture(t, "firecracker-veth-threaded")}
		d := dev(t, in.Snap, "ws-fx1")
		d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.Yes}, RXPath: datapath.NAPIPath(datapath.Yes, datapath.Threaded)}
		in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "ws-fx1", RXPath: observe.PathNetifRx,
			NetifRx: 1000, Delivered: 1000, DeliveredBytes: 1000 * bytesPerSkb, NetifRxPerSec: 10000}}}
		return in
	}
	if got, _ := run(t, mk(61000), "rx-no-napi"); len(got) != 0 {
		t.Errorf("64 KB skbs: fired %s", got[0].Title)
	}
	if got, _ := run(t, mk(1514), "rx-no-napi"); len(got) != 1 {
		t.Errorf("MTU-sized skbs through netif_rx: want rx-no-napi, got %d", len(got))
	}
}

// TestVMUSBNIC: snapshots taken inside the VM lab's usb-nic guest (Debian
// 6.12, QEMU's USB NIC on cdc_ether/usbnet, xHCI IRQ on CPU0), with the
// stock modules and with kernel/usbnet's.
func TestVMUSBNIC(t *testing.T) {
	ids := func(name string) map[string]Finding {
		rep, err := Diagnose(&Input{Snap: fixture(t, name)})
		if err != nil {
			t.Fatal(err)
		}
		checkTraceable(t, &Input{Snap: fixture(t, name)}, rep)
		m := map[string]Finding{}
		for _, f := range rep.Findings {
			m[f.ID] = f
		}
		return m
	}
	stock := ids("vm-usb-nic-stock")
	if f, ok := stock["usbnet-no-gro"]; !ok || !strings.Contains(strings.Join(f.Fix.Commands, "\n"), "dkms install wirespeed-usbnet") {
		t.Errorf("stock: want usbnet-no-gro recommending the module, got %v", stock)
	}
	if f, ok := stock["irq-stuck-rps-off"]; !ok || f.Fix.Actions[0].Value != "2" {
		t.Errorf("stock: want irq-stuck-rps-off with RPS on CPU1, got %v", stock)
	}
	ours := ids("vm-usb-nic-ours")
	if _, ok := ours["usbnet-no-gro"]; ok {
		t.Errorf("with kernel/usbnet loaded usbnet-no-gro must be gone")
	}
	if _, ok := ours["tx-no-bql"]; ok {
		t.Errorf("with kernel/usbnet loaded (BQL) tx-no-bql must be gone")
	}
	if _, ok := ours["irq-stuck-rps-off"]; !ok {
		t.Errorf("with kernel/usbnet the xHCI IRQ is still on CPU0 only: want irq-stuck-rps-off")
	}
}

// TestModuleKernelsMatchDKMS: doctor recommends kernel/usbnet for exactly
// the kernels its dkms.conf (and build.sh, which reads it) accepts.
func TestModuleKernelsMatchDKMS(t *testing.T) {
	b, err := os.ReadFile("../../kernel/usbnet/dkms.conf")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^BUILD_EXCLUSIVE_KERNEL="([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no BUILD_EXCLUSIVE_KERNEL in dkms.conf")
	}
	if string(m[1]) != ModuleKernels.String() {
		t.Errorf("dkms.conf accepts %s, doctor recommends the module for %s", m[1], ModuleKernels)
	}
	// and on every name kernel/usbnet/test-kver.sh checks build.sh and
	// dkms.conf with, the same verdict
	tk, err := os.ReadFile("../../kernel/usbnet/test-kver.sh")
	if err != nil {
		t.Fatal(err)
	}
	for list, want := range map[string]bool{"accept": true, "refuse": false} {
		lm := regexp.MustCompile(`(?ms)^` + list + `="([^"]+)"`).FindSubmatch(tk)
		if lm == nil {
			t.Fatalf("no %s list in test-kver.sh", list)
		}
		names := strings.Fields(string(lm[1]))
		if len(names) < 20 {
			t.Fatalf("test-kver.sh's %s list has %d names", list, len(names))
		}
		for _, n := range names {
			if list == "accept" {
				n = n[strings.IndexByte(n, ':')+1:] // family:name
			}
			if ModuleKernels.MatchString(n) != want {
				t.Errorf("test-kver.sh has %s in its %s list, doctor's rule says the opposite", n, list)
			}
		}
	}
	// names users run (November 2026), each way
	for n, want := range map[string]bool{
		"6.18.15+deb13-amd64": true, "6.18.20+rpt-rpi-2712": true, "6.18.8-current-bcm2711": true,
		"7.0.0-15-generic": true, "7.0.0-1012-raspi": true, "7.3.2-200.fc44.aarch64": true, "7.2.13+deb14-amd64": true,
		"6.19.2-amd64": false, "7.4.1": false, "7.4.0-rc3": false, "6.8.0-45-generic": false, "8.0": false, "6.6.51+rpt-rpi-v8": false,
	} {
		if ModuleKernels.MatchString(n) != want {
			t.Errorf("doctor's rule on %s: %v, want %v", n, !want, want)
		}
	}
	v := regexp.MustCompile(`(?m)^PACKAGE_VERSION="([^"]+)"`).FindSubmatch(b)
	if v == nil || string(v[1]) != ModuleVersion {
		t.Errorf("dkms.conf's PACKAGE_VERSION is %q, doctor installs wirespeed-usbnet/%s", v, ModuleVersion)
	}
}

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
