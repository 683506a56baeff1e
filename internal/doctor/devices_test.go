// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"slices"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// findings diagnoses a fixture (after change) and returns its findings by id.
func findings(t *testing.T, name string, change func(in *Input)) (map[string]Finding, *Report) {
	t.Helper()
	in := &Input{Snap: fixture(t, name)}
	if change != nil {
		change(in)
	}
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	checkTraceable(t, in, rep)
	m := map[string]Finding{}
	for _, f := range rep.Findings {
		m[f.ID] = f
	}
	return m, rep
}

func fixText(f Finding) string {
	s := f.Title + "\n" + f.Why
	if f.Fix != nil {
		s += "\n" + strings.Join(f.Fix.Commands, "\n") + "\n" + f.Fix.Caveat
	}
	return s
}

// expect: want fire, none must not appear.
func expect(t *testing.T, got map[string]Finding, want map[string]Severity, none ...string) {
	t.Helper()
	for id, sev := range want {
		f, ok := got[id]
		if !ok {
			t.Errorf("want %s, got %v", id, ids(got))
			continue
		}
		if f.Severity != sev {
			t.Errorf("%s: severity %s, want %s", id, f.Severity, sev)
		}
	}
	for _, id := range none {
		if f, ok := got[id]; ok {
			t.Errorf("%s must not appear: %s", id, f.Title)
		}
	}
}

func ids(m map[string]Finding) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	return out
}

// Never print a command the snapshot shows will fail: every governor or
// EPP a fix writes is one the host lists.
func checkAccepted(t *testing.T, s *inspect.Snapshot, rep *Report) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Fix == nil {
			continue
		}
		for _, a := range f.Fix.Actions {
			for _, c := range s.Host.CPUs.PerCPU {
				if a.Kind == KindGovernor && len(c.AvailableGovernors) > 0 && !slices.Contains(c.AvailableGovernors, a.Value) {
					t.Errorf("%s writes governor %s; cpu%d offers %v", f.ID, a.Value, c.CPU, c.AvailableGovernors)
				}
				if strings.HasSuffix(a.Target, "energy_performance_preference") && len(c.EPPAvailable) > 0 && !slices.Contains(c.EPPAvailable, a.Value) {
					t.Errorf("%s writes EPP %s; cpu%d offers %v", f.ID, a.Value, c.CPU, c.EPPAvailable)
				}
			}
		}
	}
}

// mt76 USB WiFi on a stock kernel: RX in the usb-rx worker, no GRO. Warn,
// name the upstream commit, and today's help: the worker off the
// interrupt's CPU, RPS on the WiFi netdev. Not "rx-no-napi", not the
// Ethernet TX findings.
func TestMT76UStock(t *testing.T) {
	got, rep := findings(t, "mt7921u-stock", nil)
	expect(t, got, map[string]Severity{"mt76u-no-gro": Warn, "wifi-queueing": Info},
		"rx-no-napi", "xps-not-applicable", "xps-unset", "tx-no-bql", "qdisc-fifo", "usbnet-no-gro", "cpufreq-powersave")
	f := got["mt76u-no-gro"]
	txt := fixText(f)
	for _, want := range []string{fact("mt76u-threaded-napi").Commit, "taskset -p -c 0-1,3 812", "netif_receive_skb_list"} {
		if !strings.Contains(txt, want) {
			t.Errorf("mt76u-no-gro: want %q in\n%s", want, txt)
		}
	}
	if g := strings.Join(actionIDs(f), " "); !strings.HasPrefix(g, "rps_cpus:wlan0:rx-0=b") {
		t.Errorf("mt76u-no-gro actions %s: want RPS on wlan0 without CPU2 (mask b)", g)
	}
	if strings.Contains(txt, "veth") || strings.Contains(txt, "netif_rx backlog") {
		t.Errorf("mt76u-no-gro talks about the backlog or veth:\n%s", txt)
	}
	checkAccepted(t, fixture(t, "mt7921u-stock"), rep)
}

// The same adapter on a kernel with the mt76u threaded NAPI: napi/phy0-*
// kthread, GRO - no RX finding at all.
func TestMT76UThreadedNAPI(t *testing.T) {
	got, _ := findings(t, "mt7921u-napi", nil)
	expect(t, got, map[string]Severity{"wifi-queueing": Info},
		"mt76u-no-gro", "rx-no-napi", "irq-stuck-rps-off", "xps-not-applicable", "tx-no-bql", "qdisc-fifo")
	// Stale snapshot of the same host without any RX kthread: unknown, so silent.
	got, _ = findings(t, "mt7921u-stock", func(in *Input) {
		d := dev(t, in.Snap, "wlan0")
		d.Wireless.RXWorkers = nil
		d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.Unknown}, RXPath: datapath.MT76UnseenPath}
	})
	expect(t, got, nil, "mt76u-no-gro", "rx-no-napi")
}

// A PCIe WiFi card on mac80211 (Intel AX210): NAPI on iwlwifi's internal
// netdev, root qdisc noqueue, one TX queue, BQL unused - no XPS, BQL or
// qdisc finding, also with the four AC queues of older kernels; on battery
// (EPP power) the fix writes an EPP the host lists, never schedutil.
func TestPCIeWiFi(t *testing.T) {
	got, rep := findings(t, "ax210-iwlwifi", nil)
	expect(t, got, map[string]Severity{"wifi-queueing": Info, "cpufreq-powersave": Info},
		"rx-no-napi", "xps-not-applicable", "xps-unset", "tx-no-bql", "qdisc-fifo", "irqs-piled", "irq-stuck-rps-off", "mt76u-no-gro")
	f := got["cpufreq-powersave"]
	if g := strings.Join(actionIDs(f), " "); g != "epp:cpu0=balance_performance epp:cpu1=balance_performance epp:cpu2=balance_performance epp:cpu3=balance_performance" {
		t.Errorf("cpufreq actions %s", g)
	}
	if strings.Contains(strings.Join(f.Fix.Commands, "\n"), "schedutil") {
		t.Errorf("intel_pstate (active) does not accept schedutil: %v", f.Fix.Commands)
	}
	checkAccepted(t, fixture(t, "ax210-iwlwifi"), rep)
	// Older kernels (a driver without mac80211's internal TX queues): four
	// AC queues, xps_cpus readable and 0 - still nothing to do.
	got, _ = findings(t, "ax210-iwlwifi", func(in *Input) {
		d := dev(t, in.Snap, "wlp3s0")
		q := d.TXQueues[0]
		q.XPSCPUs, q.XPSNote = "0", ""
		d.TXQueues = []inspect.TXQueue{q, q, q, q}
		for i := range d.TXQueues {
			d.TXQueues[i].Name = "tx-" + string(rune('0'+i))
		}
		d.Link.Qdisc = "mq"
	})
	expect(t, got, nil, "xps-unset", "tx-no-bql", "qdisc-fifo")
	// EPP balance_performance: powersave is intel_pstate's scaling mode, fine.
	got, _ = findings(t, "mt7921u-stock", nil)
	expect(t, got, nil, "cpufreq-powersave")
}

// A phone tethered over cdc_ncm (USB 2) on a laptop whose xHCI interrupt
// can move: usbnet without GRO (module for 6.12), RPS spreading, the
// interrupt's movability said; the same over rndis_host.
func TestPhoneTether(t *testing.T) {
	for _, drv := range []string{"cdc_ncm", "rndis_host"} {
		got, _ := findings(t, "phone-cdc-ncm", func(in *Input) { dev(t, in.Snap, "usb0").Driver = drv })
		expect(t, got, map[string]Severity{"usbnet-no-gro": Warn, "irq-stuck-rps-off": Warn},
			"rx-no-napi", "mt76u-no-gro", "wifi-queueing", "xps-unset", "qdisc-fifo")
		if f := got["irq-stuck-rps-off"]; !strings.HasPrefix(strings.Join(actionIDs(f), " "), "rps_cpus:usb0:rx-0=e") {
			t.Errorf("%s: RPS should leave out CPU0: %v", drv, actionIDs(f))
		}
		if f := got["usbnet-no-gro"]; !strings.Contains(fixText(f), "dkms install wirespeed-usbnet") {
			t.Errorf("%s: 6.12 gets the module: %s", drv, fixText(f))
		}
	}
}

// The phone's NCM speed is its USB bit rate, not an Ethernet link:
// usb-bus-slower-than-link must not fire on it (it did until the rule
// learned CDC speed notifications).
func TestPhoneTetherNotSlowerThanLink(t *testing.T) {
	// cdc_ncm/rndis report the phone's USB rate (425 Mbit/s on USB 2) as
	// the link speed: no Ethernet PHY is behind the bus
	got, _ := findings(t, "phone-cdc-ncm", nil)
	if f, ok := got["usb-bus-slower-than-link"]; ok {
		t.Errorf("a tethered phone: %s", f.Title)
	}
}

// A gigabit adapter (r8152) in a Pi 4's USB 2 port: the bus caps it.
func TestUSB2Gigabit(t *testing.T) {
	got, _ := findings(t, "pi4-r8152-usb2", nil)
	expect(t, got, map[string]Severity{"usb-bus-slower-than-link": Warn},
		"usbnet-no-gro", "rx-no-napi", "tx-no-bql", "irq-stuck-rps-off", "wifi-queueing", "cpufreq-powersave")
}

// r8152 healthy on a Pi 4's USB 3 port: own NAPI + GRO, BQL in use, RPS
// spreading the xHCI interrupt that cannot leave CPU0. No warning.
func TestR8152Healthy(t *testing.T) {
	got, _ := findings(t, "pi4-r8152", nil)
	for id, f := range got {
		if f.Severity.Rank() >= Warn.Rank() {
			t.Errorf("healthy r8152: %s %s: %s", f.Severity, id, f.Title)
		}
	}
	expect(t, got, nil, "usbnet-no-gro", "rx-no-napi", "tx-no-bql", "usb-bus-slower-than-link", "irq-stuck-rps-off", "cpufreq-powersave", "gro-off")
	// The same with powersave on cpufreq-dt: the governor proposed is one
	// the Pi lists.
	_, rep := findings(t, "pi4-r8152", func(in *Input) {
		for i := range in.Snap.Host.CPUs.PerCPU {
			in.Snap.Host.CPUs.PerCPU[i].Governor = "powersave"
		}
	})
	checkAccepted(t, fixture(t, "pi4-r8152"), rep)
	g, _ := findings(t, "pi4-r8152", func(in *Input) {
		for i := range in.Snap.Host.CPUs.PerCPU {
			in.Snap.Host.CPUs.PerCPU[i].Governor = "powersave"
			in.Snap.Host.CPUs.PerCPU[i].AvailableGovernors = []string{"powersave", "performance"}
		}
	})
	if f := g["cpufreq-powersave"]; strings.Join(actionIDs(f), " ") != "governor:0-3=performance" {
		t.Errorf("without schedutil or ondemand on offer: %v", actionIDs(f))
	}
}

// An LTE modem on qmi_wwan (usbnet, raw IP, no link speed, USB 2): the
// missing GRO costs little at LTE rates, so info, not the warning a
// gigabit adapter gets - unless an observation shows it busy.
func TestLTEQMI(t *testing.T) {
	got, _ := findings(t, "lte-qmi-wwan", nil)
	expect(t, got, map[string]Severity{"usbnet-no-gro": Info, "tx-no-bql": Info},
		"rx-no-napi", "usb-bus-slower-than-link", "wifi-queueing", "mt76u-no-gro", "qdisc-fifo", "cpufreq-powersave")
	if f := got["tx-no-bql"]; len(f.Unchecked) == 0 {
		t.Errorf("tx-no-bql without a link speed must say it could not tell the ms: %+v", f)
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
