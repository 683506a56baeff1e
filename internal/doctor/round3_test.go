// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Issue 31's device classes and kernel facts, each with what must and
// what must not be said.

func mustSay(t *testing.T, what, text string, must, mustNot []string) {
	t.Helper()
	for _, s := range must {
		if !strings.Contains(text, s) {
			t.Errorf("%s: want %q in\n%s", what, s, text)
		}
	}
	for _, s := range mustNot {
		if strings.Contains(text, s) {
			t.Errorf("%s: must not say %q:\n%s", what, s, text)
		}
	}
}

// A Raspberry Pi 5 (xHCI in RP1, a device-tree controller without an irq
// file): the interrupt is found, so RPS advice comes; whether it can move
// is the probe's answer, not the board's - a movable one is not said to
// be stuck on CPU0. Raspberry Pi OS from os-release, not inferred. The
// FIFO root qdisc above usbnet's BQL-less queue gets qdisc advice.
func TestPi5RP1(t *testing.T) {
	got, rep := findings(t, "pi5-rp1-ax88179", nil)
	expect(t, got, map[string]Severity{"usbnet-no-gro": Warn, "irq-stuck-rps-off": Warn, "tx-no-bql": Warn, "qdisc-fifo": Info},
		"irqs-piled", "rx-no-napi", "usb-bus-slower-than-link")
	checkRefs(t, "pi5", rep)
	f := got["irq-stuck-rps-off"]
	if g := strings.Join(actionIDs(f), " "); !strings.HasPrefix(g, "rps_cpus:eth1:rx-0=e") {
		t.Errorf("RPS should leave out CPU0: %s", g)
	}
	mustSay(t, "irq-stuck movable", fixText(f), []string{"IRQ 161 (xhci-hcd:usb1)"}, []string{"cannot leave CPU0", "cannot be changed"})
	mustSay(t, "usbnet on Pi OS", fixText(got["usbnet-no-gro"]), []string{"on Raspberry Pi OS", "dkms install wirespeed-usbnet", "apt full-upgrade keeps the kernel current",
		"BH work"}, []string{"(inferred", "HWE", "dnf", "linux-image-", "tasklet (softirq"})
	if u := strings.Join(got["usbnet-no-gro"].Unchecked, "\n"); strings.Contains(u, "distribution") {
		t.Errorf("os-release says the distribution: %s", u)
	}
	if g := strings.Join(actionIDs(got["qdisc-fifo"]), " "); g != "qdisc:eth1=cake bandwidth 950mbit" {
		t.Errorf("qdisc-fifo with a known link rate shapes as tx-no-bql does (one action for tune): %s", g)
	}
	for _, id := range []string{"qdisc-fifo", "tx-no-bql"} {
		if !strings.Contains(strings.Join(got[id].Unchecked, "\n"), "sch_cake") {
			t.Errorf("%s proposes cake: say whether the kernel has it is unchecked: %v", id, got[id].Unchecked)
		}
	}
	// The kernel refuses the affinity (probe EIO): still found, now stuck.
	got, _ = findings(t, "pi5-rp1-ax88179", func(in *Input) {
		d := dev(t, in.Snap, "eth1")
		d.IRQs[0].Changeable = inspect.Tri{State: datapath.No, Evidence: "kernel refuses user affinity: probe write answered EIO"}
	})
	mustSay(t, "irq-stuck refused", fixText(got["irq-stuck-rps-off"]), []string{"cannot be changed (kernel refuses user affinity"}, nil)
	// No IRQ found (an older inspect): no RPS finding, and none invented.
	got, _ = findings(t, "pi5-rp1-ax88179", func(in *Input) { dev(t, in.Snap, "eth1").IRQs = nil })
	expect(t, got, nil, "irq-stuck-rps-off", "irqs-piled")
}

// A 5G modem on cdc_mbim (usbnet, no BQL before usbnet's BQL release) under
// pfifo_fast with no link speed: qdisc advice (fq_codel) although BQL is
// not in use; not when the root qdisc is already fair; severity of the
// missing GRO follows the modem's class, below a gigabit adapter's.
func TestModem5G(t *testing.T) {
	got, rep := findings(t, "modem-5g-mbim", nil)
	expect(t, got, map[string]Severity{"qdisc-fifo": Info, "tx-no-bql": Info, "usbnet-no-gro": Warn, "irq-stuck-rps-off": Warn},
		"usb-bus-slower-than-link", "wifi-queueing", "udp-gro-forwarding-off")
	checkRefs(t, "modem", rep)
	q := got["qdisc-fifo"]
	if g := strings.Join(actionIDs(q), " "); g != "qdisc:wwan0=fq_codel" {
		t.Errorf("qdisc-fifo actions %s", g)
	}
	mustSay(t, "qdisc-fifo", fixText(q), []string{"pfifo_fast", "without BQL", "see finding tx-no-bql"}, []string{"queues with BQL", "cake bandwidth 0"})
	if len(q.Unchecked) == 0 || !strings.Contains(q.Unchecked[0], "fq_codel") {
		t.Errorf("default_qdisc pfifo_fast: say fq_codel's presence is unchecked: %v", q.Unchecked)
	}
	if a, b := got["usbnet-no-gro"].Impact, 70; a >= b {
		t.Errorf("5G modem's missing GRO impact %d, want below a gigabit adapter's %d", a, b)
	}
	mustSay(t, "usbnet on Debian 12", fixText(got["usbnet-no-gro"]), []string{"on Debian 12", "apt install linux-headers-6.1.0-56-amd64"}, []string{"(inferred", "HWE", "dnf", "full-upgrade"})
	got, _ = findings(t, "modem-5g-mbim", func(in *Input) { dev(t, in.Snap, "wwan0").Link.Qdisc = "fq_codel" })
	expect(t, got, map[string]Severity{"tx-no-bql": Info}, "qdisc-fifo")
	// on a USB 2 port: an LTE-class modem, info
	got, _ = findings(t, "modem-5g-mbim", func(in *Input) { dev(t, in.Snap, "wwan0").USB.SpeedMbps = "480" })
	expect(t, got, map[string]Severity{"usbnet-no-gro": Info})
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

// mt76 USB WiFi on 7.3 (trixie-backports): RX on mt76u's threaded NAPI,
// the worker kept for the MCU: no mt76u finding. The reordering
// regression's fix is not recorded per release: an info that says so on
// 6.19+, nothing before.
func TestMT76U73(t *testing.T) {
	got, _ := findings(t, "mt7921u-73", nil)
	expect(t, got, map[string]Severity{"mt76-usb-no-reorder": Info}, "mt76u-no-gro", "rx-no-napi")
	f := got["mt76-usb-no-reorder"]
	mustSay(t, "reorder", fixText(f), []string{fact("mt76-usb-reorder-fix").Commit, "retransmits"}, nil)
	if len(f.Unchecked) == 0 {
		t.Error("mt76-usb-no-reorder must say the fix's presence is unchecked")
	}
	got, _ = findings(t, "mt7921u-stock", nil)
	expect(t, got, map[string]Severity{"mt76u-no-gro": Warn}, "mt76-usb-no-reorder")
	// a stale 7.3 snapshot with only the worker: no finding from the worker alone
	got, _ = findings(t, "mt7921u-stock", func(in *Input) { in.Snap.Host.Kernel = "7.3.4+deb13-amd64" })
	expect(t, got, nil, "mt76u-no-gro")
}

// The mt76u advice fits the distribution (os-release, else the kernel's
// name): the release that has the change and how this host gets it, or
// that its distribution has none yet; never another distribution's
// command; Debian 12's closed backports said.
func TestMT76UAdviceFitsDistro(t *testing.T) {
	for _, c := range []struct {
		name, kernel string
		os           *inspect.OS
		must, not    []string
	}{
		{"Debian 13", "6.12.117+deb13-amd64", &inspect.OS{ID: "debian", VersionID: "13", File: "/etc/os-release"},
			[]string{"on Debian 13: Debian 13's trixie-backports (7.3) has it: apt install -t trixie-backports linux-image-amd64", "reboot"}, []string{"HWE", "dnf", "full-upgrade", "(inferred"}},
		{"Debian 12", "6.1.0-56-amd64", &inspect.OS{ID: "debian", VersionID: "12", File: "/etc/os-release"},
			[]string{"no kernel of Debian 12 has it yet", "bookworm-backports closed 2026-07-11", "after an upgrade to Debian 13"}, []string{"apt install -t trixie-backports linux-image-amd64, then", "HWE", "dnf"}},
		{"Ubuntu 24.04", "7.0.0-15-generic", &inspect.OS{ID: "ubuntu", VersionID: "24.04", File: "/etc/os-release"},
			[]string{"no kernel of Ubuntu 24.04 has it yet"}, []string{"linux-image-", "trixie", "dnf", "full-upgrade"}},
		{"Fedora", "7.1.4-200.fc44.x86_64", &inspect.OS{ID: "fedora", VersionID: "44", File: "/etc/os-release"},
			[]string{"dnf upgrade --refresh 'kernel*'"}, []string{"apt ", "linux-image-"}},
		{"Pi OS", "6.18.20+rpt-rpi-v8", &inspect.OS{ID: "debian", VersionID: "13", RPiIssue: true, File: "/etc/os-release"},
			[]string{"no kernel of Raspberry Pi OS has it yet"}, []string{"trixie-backports", "HWE", "dnf"}},
		{"Ubuntu os-release wins over a Debian-like name", "6.12.117+deb13-amd64", &inspect.OS{ID: "ubuntu", VersionID: "26.04", File: "/etc/os-release"},
			[]string{"Ubuntu 26.04"}, []string{"trixie-backports", "Debian"}},
		{"old snapshot: assumed", "6.12.117+deb13-amd64", nil,
			[]string{"Debian 13 (inferred from the kernel name 6.12.117+deb13-amd64)", "trixie-backports"}, []string{"HWE"}},
		{"unknown", "6.12.9-custom", nil, []string{"needs Linux 7.3 or later"}, []string{"apt", "dnf", "linux-image-"}},
		{"alpine", "6.12.9-0-lts", &inspect.OS{ID: "alpine", VersionID: "3.21", File: "/etc/os-release"}, []string{"needs Linux 7.3 or later"}, []string{"apt", "dnf"}},
	} {
		got, _ := findings(t, "mt7921u-stock", func(in *Input) {
			in.Snap.Host.Kernel, in.Snap.Host.OS = c.kernel, c.os
		})
		f, ok := got["mt76u-no-gro"]
		if !ok {
			t.Errorf("%s: no mt76u-no-gro", c.name)
			continue
		}
		mustSay(t, c.name, fixText(f)+"\n"+strings.Join(f.Unchecked, "\n"), c.must, c.not)
		if c.os == nil && !strings.Contains(strings.Join(f.Unchecked, "\n"), "the distribution") {
			t.Errorf("%s: an old snapshot's advice must say what it assumed: %v", c.name, f.Unchecked)
		}
	}
}

// UDP GSO corruption: warn on 7.0-7.1.4 with UDP tunnels and a device
// whose tx-udp-segmentation is on and changeable; silent once fixed, without
// tunnels, or where the feature is fixed or unknown (a command the host
// would refuse is never printed).
func TestUDPGSOCorruption(t *testing.T) {
	tun := func(kernel string, drv string) func(in *Input) {
		return func(in *Input) {
			in.Snap.Host.Kernel = kernel
			if drv != "" {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "tun0", Driver: drv, Bus: "virtual"})
			}
			setOffload(dev(t, in.Snap, "eth0"), "uso", true, false)
		}
	}
	for _, c := range []struct {
		kernel, drv string
		fire        bool
	}{
		{"7.1.4", "wireguard", true}, {"7.0.9", "tun", true}, {"7.0.0-15-generic", "wireguard", true},
		{"7.1.5", "wireguard", false}, {"7.2.13+deb14-amd64", "wireguard", false}, {"6.18.44", "wireguard", false},
		{"7.1.4", "", false},
	} {
		got, _ := findings(t, "firecracker-host", tun(c.kernel, c.drv))
		f, ok := got["udp-gso-corruption"]
		if ok != c.fire {
			t.Errorf("%s %s: fired %v, want %v", c.kernel, c.drv, ok, c.fire)
			continue
		}
		if ok {
			if g := strings.Join(actionIDs(f), " "); g != "tx-udp-segmentation:eth0=off" || f.Severity != Warn {
				t.Errorf("%s: %s %s", c.kernel, f.Severity, g)
			}
		}
		if c.kernel == "7.0.0-15-generic" && !strings.Contains(strings.Join(f.Unchecked, "\n"), "backport") {
			t.Errorf("Ubuntu's ABI name: say a backport cannot be seen: %v", f.Unchecked)
		}
	}
	// the captured virtio device has uso off [fixed]: nothing to print
	got, _ := findings(t, "firecracker-host", func(in *Input) {
		in.Snap.Host.Kernel = "7.1.4"
		in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
	})
	expect(t, got, nil, "udp-gso-corruption")
}

// WireGuard threaded on mainline: outside the CVE's stable ranges, what is
// known (the default stays) and what is not (a mainline fix of the race).
func TestWGThreadedMainline(t *testing.T) {
	got, _ := findings(t, "wg-gw-pinned", nil)
	f := got["wg-threaded-napi"]
	mustSay(t, "mainline", fixText(f)+strings.Join(f.Unchecked, "\n"), []string{"no mainline fix of the race was found", "whether kernel 6.18.5 can stall"}, []string{"is one of them: upgrade"})
	got, _ = findings(t, "wg-gw-threaded", nil)
	mustSay(t, "stable range", fixText(got["wg-threaded-napi"]), []string{"upgrade to 6.12.74 or later"}, []string{"no mainline fix"})
}

// Every action a finding proposes is one the host accepts: a governor or
// EPP it lists, an ethtool feature the device has and may change.
func TestCommandsAccepted(t *testing.T) {
	for _, name := range allFixtures(t) {
		s := fixture(t, name)
		rep, err := Diagnose(&Input{Snap: s})
		if err != nil {
			t.Fatal(err)
		}
		checkAccepted(t, s, rep)
		for _, f := range rep.Findings {
			if f.Fix == nil {
				continue
			}
			for _, a := range f.Fix.Actions {
				if a.Kind != KindEthtool {
					continue
				}
				d := dev(t, s, a.Device)
				found := false
				for _, o := range d.Offloads {
					if o.Kernel == a.Target && o.Active != nil && !o.Fixed {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: %s proposes %s, which %s cannot change", name, f.ID, a.Command, a.Device)
				}
			}
		}
	}
}
