// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// Issue 44's kinds of fault, on the platform fixtures
// (testdata/snapshots/mkplatforms.py), each with what must and what must
// not be said.

// byDevice: every finding of rep that names dev, by id.
func byDevice(rep *Report, dev string) map[string]Finding {
	m := map[string]Finding{}
	for _, f := range rep.Findings {
		for _, d := range f.Devices {
			if d == dev {
				m[f.ID] = f
			}
		}
	}
	return m
}

// Kind 1: bridges, DSA user ports, a vhost-fed tap and a tunnel's tun
// receive in another context: no finding calls them "no NAPI" or proposes
// RPS, threaded NAPI or a qdisc for them, and inspect names their class.
func TestOtherContextDevices(t *testing.T) {
	cases := []struct {
		fixture string
		devs    map[string]datapath.Class
	}{
		{"openwrt-mt7621-dsa", map[string]datapath.Class{"br-lan": datapath.Borrowed, "lan1": datapath.Borrowed, "wan": datapath.Borrowed, "eth0": datapath.NAPI}},
		{"proxmox-vhost", map[string]datapath.Class{"vmbr0": datapath.Borrowed, "tap100i0": datapath.Injected}},
		{"tailscale-exit-70", map[string]datapath.Class{"tailscale0": datapath.Injected}},
	}
	for _, c := range cases {
		_, rep := findings(t, c.fixture, nil)
		s := fixture(t, c.fixture)
		for name, class := range c.devs {
			d := dev(t, s, name)
			if got := d.Datapath.RXPath.Class(); got != class {
				t.Errorf("%s %s: rx path %q (class %v), want class %v", c.fixture, name, d.Datapath.RXPath, got, class)
			}
			if class == datapath.NAPI {
				continue // receives in its own NAPI: any advice may apply
			}
			for id, f := range byDevice(rep, name) {
				switch id {
				case "rx-no-napi", "irq-stuck-rps-off", "rps-on-irq-cpu", "rx-one-cpu", "napi-convergence", "qdisc-fifo", "irqs-piled", "tx-no-bql":
					t.Errorf("%s %s: %s fired: %s", c.fixture, name, id, f.Title)
				}
			}
		}
	}
	s := fixture(t, "openwrt-mt7621-dsa")
	if via := dev(t, s, "lan1").Datapath.RXVia; len(via) != 1 || via[0] != "eth0" {
		t.Errorf("lan1 receives via %v, want its conduit eth0", via)
	}
	if via := dev(t, s, "br-lan").Datapath.RXVia; strings.Join(via, ",") != "lan1,lan2" {
		t.Errorf("br-lan's ports %v, want lan1,lan2", via)
	}
	if irqs := dev(t, s, "eth0").IRQs; len(irqs) != 1 || irqs[0].Number != 21 {
		t.Errorf("eth0 (platform device 1e100000.ethernet) has interrupts %v, want its handler's 21", irqs)
	}
	if irqs := dev(t, s, "lan1").IRQs; len(irqs) != 0 {
		t.Errorf("lan1 lists its conduit's interrupts %v", irqs)
	}
}

// Kind 2: OpenWrt gets no apt, DKMS or sysfs RPS write (its packet
// steering service rewrites rps_cpus), and the uci setting instead;
// Proxmox VE never Debian's linux-image; a vendor BSP kernel its own tree
// and Armbian's header package by branch and family.
func TestPlatformAdvice(t *testing.T) {
	_, rep := findings(t, "openwrt-mt7621-dsa", nil)
	eth1 := byDevice(rep, "eth1")
	mustSay(t, "openwrt usbnet-no-gro", fixText(eth1["usbnet-no-gro"]),
		[]string{"kmod package", "SDK", "OpenWrt 25.12 runs Linux 6.12", "apk"},
		[]string{"apt ", "dkms install", "linux-headers", "linux-image"})
	rps := eth1["irq-stuck-rps-off"]
	mustSay(t, "openwrt irq-stuck-rps-off", fixText(rps),
		[]string{"uci set network.globals.packet_steering=1", "uci commit network", "/etc/init.d/packet_steering reload"},
		[]string{"echo ", "sysctl -w"})
	if rps.Fix != nil && len(rps.Fix.Actions) != 0 {
		t.Errorf("OpenWrt RPS fix has tune actions the packet steering service would undo: %+v", rps.Fix.Actions)
	}

	_, rep = findings(t, "proxmox-vhost", nil)
	f := byDevice(rep, "enx00e04c680001")["usbnet-no-gro"]
	mustSay(t, "proxmox usbnet-no-gro", fixText(f),
		[]string{"proxmox-kernel-X.Y", "proxmox-headers-X.Y", "apt list 'proxmox-kernel-*'"},
		[]string{"linux-image-amd64", "this host: Debian"})

	_, rep = findings(t, "rk3588-armbian-vendor", nil)
	f = byDevice(rep, "eth1")["usbnet-no-gro"]
	mustSay(t, "vendor usbnet-no-gro", fixText(f),
		[]string{"vendor BSP kernel", "apt install linux-headers-vendor-rk35xx", "KSRC="},
		[]string{"kernel.org's release", "linux-headers-BRANCH-BOARD", "\ncp -r kernel/usbnet"})
}

// Kind 3: on big.LITTLE the RPS mask takes the big cores (4-7 on an
// RK3588), and the finding says why and cites cpu_capacity.
func TestBigLittleRPS(t *testing.T) {
	_, rep := findings(t, "rk3588-armbian-vendor", nil)
	f, ok := byDevice(rep, "eth1")["irq-stuck-rps-off"]
	if !ok || f.Fix == nil || len(f.Fix.Actions) == 0 {
		t.Fatalf("no RPS fix: %v", ids(byDevice(rep, "eth1")))
	}
	if v := f.Fix.Actions[0].Value; v != "f0" {
		t.Errorf("RPS mask %s, want f0 (the Cortex-A76 CPUs 4-7)", v)
	}
	mustSay(t, "big.LITTLE caveat", f.Fix.Caveat, []string{"cpu_capacity 397 to 1024", "CPUs 4-7"}, nil)
	// Alike CPUs: the mask stays every CPU but the interrupt's.
	_, rep = findings(t, "proxmox-vhost", nil)
	if f := byDevice(rep, "enx00e04c680001")["irq-stuck-rps-off"]; f.Fix == nil || f.Fix.Actions[0].Value != "fe" {
		t.Errorf("symmetric CPUs: want mask fe, got %+v", f.Fix)
	}
}

// Kind 4: the UDP GSO corruption concerns tunnel devices with software
// UDP segmentation too; UDP GRO forwarding is about the UDP the host
// forwards, not the tunnels' own datagrams.
func TestTunnelsRound4(t *testing.T) {
	_, rep := findings(t, "tailscale-exit-70", nil)
	if _, ok := byDevice(rep, "wg0")["udp-gso-corruption"]; !ok {
		t.Errorf("udp-gso-corruption not said of wg0 (software UDP segmentation): %v", ids(byDevice(rep, "wg0")))
	}
	if _, ok := byDevice(rep, "eth0")["udp-gso-corruption"]; !ok {
		t.Error("udp-gso-corruption not said of eth0 (USO)")
	}
	f := byDevice(rep, "eth0")["udp-gro-forwarding-off"]
	mustSay(t, "udp-gro-forwarding-off", f.Title+"\n"+f.Why,
		[]string{"own datagrams", "this host's socket", "forwards"},
		[]string{"forwards UDP tunnel traffic"})
}

// Kind 5: no shaping at a speed the driver reports whatever the link does
// (a phone's NCM notification, a cdc_ncm adapter without MII); a PHY's
// negotiated rate still gets it.
func TestNoMadeUpRates(t *testing.T) {
	for _, c := range []struct{ fixture, dev string }{{"phone-cdc-ncm", "usb0"}, {"proxmox-vhost", "enx00e04c680001"}} {
		_, rep := findings(t, c.fixture, nil)
		for id, f := range byDevice(rep, c.dev) {
			if f.Fix == nil {
				continue
			}
			for _, a := range f.Fix.Actions {
				if a.Kind == KindQdisc && strings.Contains(a.Value, "bandwidth") {
					t.Errorf("%s %s: %s shapes at a reported constant: %s", c.fixture, c.dev, id, a.Command)
				}
			}
			if id == "tx-no-bql" {
				mustSay(t, c.fixture+" tx-no-bql", fixText(f), []string{"measure it", "not one a PHY negotiated"}, nil)
			}
		}
	}
	_, rep := findings(t, "rk3588-armbian-vendor", nil)
	shaped := false
	for _, a := range byDevice(rep, "eth1")["tx-no-bql"].Fix.Actions {
		shaped = shaped || a.Value == "cake bandwidth 950mbit"
	}
	if !shaped {
		t.Error("a PHY-negotiated 1000 Mbit/s full-duplex link lost its shaping advice")
	}
}

// Kind 5 in words: a title or severity estimate quotes a rate only where
// one was negotiated by a PHY (or measured: --observe's counts); a speed
// the driver passes on from the device (a phone's 425 Mbit/s over NCM)
// appears in evidence, never as "~N ms at 425 Mbit/s" or "~N frames/s".
func TestNoMadeUpRateInWords(t *testing.T) {
	_, rep := findings(t, "phone-cdc-ncm", nil)
	usb0 := byDevice(rep, "usb0")
	for _, id := range []string{"tx-no-bql", "usbnet-no-gro"} {
		f, ok := usb0[id]
		if !ok {
			t.Fatalf("phone-cdc-ncm usb0: no %s: %v", id, ids(usb0))
		}
		mustSay(t, "phone "+id, f.Title+"\n"+f.Why, nil, []string{"At 425", "at 425", "frames/s", " ms at "})
	}
	mustSay(t, "phone tx-no-bql", strings.Join(usb0["tx-no-bql"].Unchecked, "\n"), []string{"not one a PHY negotiated"}, nil)
	_, rep = findings(t, "rk3588-armbian-vendor", nil)
	eth1 := byDevice(rep, "eth1")
	mustSay(t, "PHY tx-no-bql", eth1["tx-no-bql"].Title, []string{"ms at 1000 Mbit/s"}, nil)
	mustSay(t, "PHY usbnet-no-gro", eth1["usbnet-no-gro"].Why, []string{"At 1000 Mbit/s"}, nil)
}
