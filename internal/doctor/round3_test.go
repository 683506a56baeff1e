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
