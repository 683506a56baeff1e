// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

var usbnetNoGroCases = addCases("usbnet-no-gro", []ruleCase{
	{name: "usbnet on the Pi", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn, text: "does not apply to kernel 5.15.4-0-rpi4"},
	{name: "usbnet on the Pi's Alpine kernel: an unknown distribution is told the families and KSRC", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		text: "KSRC=DIR"},
	{name: "usbnet on a Raspberry Pi OS 6.6 kernel: the way to a supported one is Pi OS's own", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.6.74+rpt-rpi-2712" }, text: "apt full-upgrade"},
	{name: "usbnet on a Debian 6.12 kernel gets the module", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.12.57+deb12-arm64" }, text: "dkms install wirespeed-usbnet"},
	{name: "usbnet on a backports kernel gets the module", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.12.38+bpo-amd64" }, text: "dkms install wirespeed-usbnet"},
	{name: "usbnet on Debian 12's default 6.1 gets the module", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.1.0-56-arm64" }, text: "dkms install wirespeed-usbnet"},
	{name: "usbnet on a Raspberry Pi OS 6.12 kernel gets the module and the tree caveat", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.12.47+rpt-rpi-v8" }, text: "KSRC=DIR dkms install"},
	{name: "usbnet on 6.19: BQL in tree, only NAPI + GRO missing", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.19.3-arm64" }, text: "only the NAPI + GRO half"},
	{name: "usbnet on 6.6 (Raspberry Pi OS of 2024) is refused", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "6.6.51+rpt-rpi-v8" }, text: "does not apply to kernel 6.6.51+rpt-rpi-v8"},
	{name: "usbnet busy in the observation is critical", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Crit,
		change: func(t *testing.T, in *Input) {
			in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "eth1", RXPath: observe.PathNetifRx, NetifRx: 300000, NetifRxPerSec: 60000}}}
		}},
	{name: "usbnet with NAPI (our module)", fixture: "rpi4-ax88179", id: "usbnet-no-gro",
		change: func(t *testing.T, in *Input) {
			d := dev(t, in.Snap, "eth1")
			d.Datapath.OwnNAPI = inspect.Tri{State: datapath.Yes}
			d.Datapath.RXPath = datapath.NAPIPath(datapath.Yes, datapath.Softirq)
		}},
	{name: "smsc95xx (the Pi 3 B's own port): GRO cannot merge there, module or not", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").Driver = "smsc95xx" }, text: "on this driver GRO merges nothing"},
	{name: "virtio with NAPI + GRO is no usbnet", fixture: "firecracker-host", id: "usbnet-no-gro"},
	{name: "wireguard is no usbnet", fixture: "wg-gateway-16", id: "usbnet-no-gro"},
	{name: "Pi 3 guest: usbnet on Debian's arm64 6.12 gets the module", fixture: "vm-rpi3-usb-nic", id: "usbnet-no-gro", fire: true, sev: Warn,
		text: "6.12.117+deb12-arm64 matches"},
})

func TestRuleUsbnetNoGro(t *testing.T) { runCases(t, usbnetNoGroCases) }

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

// Severity follows the link: the same usbnet adapter at 1000, 100 and 10
// Mbit/s; an observation showing a busy path raises an info.
func TestUsbnetSeverityByRate(t *testing.T) {
	for speed, want := range map[int]Severity{1000: Warn, 100: Warn, 10: Info} {
		got, _ := findings(t, "rpi4-ax88179", func(in *Input) { dev(t, in.Snap, "eth1").Link.SpeedMbps = ptr(speed) })
		if f := got["usbnet-no-gro"]; f.Severity != want {
			t.Errorf("%d Mbit/s: %s, want %s", speed, f.Severity, want)
		}
	}
	g1, _ := findings(t, "rpi4-ax88179", nil)
	g2, _ := findings(t, "lte-qmi-wwan", nil)
	if g1["usbnet-no-gro"].Impact <= g2["usbnet-no-gro"].Impact || g2["usbnet-no-gro"].Severity != Info {
		t.Errorf("gigabit ax88179 %s/%d vs LTE modem %s/%d", g1["usbnet-no-gro"].Severity, g1["usbnet-no-gro"].Impact, g2["usbnet-no-gro"].Severity, g2["usbnet-no-gro"].Impact)
	}
}

// The GRO caveat is for the drivers that raise hard_header_len, not for
// ax88179_178a or cdc_ncm, whose segments GRO merges (the device lab).
func TestUsbnetGROCaveatOnlyWhereGROCannotMerge(t *testing.T) {
	for drv, want := range map[string]bool{"ax88179_178a": false, "cdc_ncm": false, "rndis_host": true, "smsc95xx": true} {
		got, _ := findings(t, "rpi4-ax88179", func(in *Input) { dev(t, in.Snap, "eth1").Driver = drv })
		f := got["usbnet-no-gro"]
		if has := strings.Contains(f.Why, "GRO merges nothing") && f.Fix != nil && strings.Contains(f.Fix.Caveat, "GRO merges nothing"); has != want {
			t.Errorf("%s: the GRO caveat in why and fix %v, want %v", drv, has, want)
		}
	}
}
