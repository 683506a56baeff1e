// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// kfindings is findings (devices_test.go) without the report.
func kfindings(t *testing.T, name string, change func(in *Input)) map[string]Finding {
	t.Helper()
	m, _ := findings(t, name, change)
	return m
}

func allText(f Finding) string {
	s := f.Title + "\n" + f.Why
	if f.Fix != nil {
		s += "\n" + strings.Join(f.Fix.Commands, "\n") + "\n" + f.Fix.Caveat
	}
	return s
}

// TestUSBNet619: usbnet with BQL in tree, the interface reopened (limit 0,
// tx_packets counting): no "usbnet without BQL", no module offered; what
// is still missing (NAPI + GRO) is said, and the stuck xHCI IRQ of an x86
// laptop gets no Raspberry Pi sentence.
func TestUSBNet619(t *testing.T) {
	m := kfindings(t, "usbnet-619", nil)
	if _, ok := m["tx-no-bql"]; ok {
		t.Errorf("tx-no-bql on a 6.19 usbnet: %s", m["tx-no-bql"].Title)
	}
	for id, f := range m {
		if strings.Contains(allText(f), "dkms install") || strings.Contains(allText(f), "without BQL") {
			t.Errorf("%s offers the module or claims no BQL on 6.19: %s", id, allText(f))
		}
	}
	f, ok := m["usbnet-no-gro"]
	if !ok || !strings.Contains(allText(f), "only the NAPI + GRO half") || !strings.Contains(allText(f), fact("usbnet-bql-resume-fix").Commit) {
		t.Errorf("usbnet-no-gro on 6.19: want the NAPI + GRO half and the resume fix named, got %v", f)
	}
	s, ok := m["irq-stuck-rps-off"]
	if !ok {
		t.Fatal("the xHCI IRQ on CPU0 only with RPS off: want irq-stuck-rps-off")
	}
	if strings.Contains(s.Why, "Raspberry Pi") {
		t.Errorf("x86 laptop: %s", s.Why)
	}
	// The same laptop on 6.18: no BQL in tree, tx-no-bql is right.
	m = kfindings(t, "usbnet-619", func(in *Input) { in.Snap.Host.Kernel = "6.18.9-arch1-1" })
	if _, ok := m["tx-no-bql"]; !ok {
		t.Error("6.18: want tx-no-bql")
	}
	// An x86 MSI that cannot move: still no Pi sentence.
	m = kfindings(t, "usbnet-619", func(in *Input) {
		dev(t, in.Snap, "eth1").IRQs[0].Changeable.State = datapath.No
	})
	if strings.Contains(m["irq-stuck-rps-off"].Why, "Raspberry Pi") {
		t.Errorf("x86, IRQ cannot move: %s", m["irq-stuck-rps-off"].Why)
	}
	// The Pi 4 keeps its sentence, with a source a user can find.
	m = kfindings(t, "rpi4-ax88179", func(in *Input) { dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0" })
	if w := m["irq-stuck-rps-off"].Why; !strings.Contains(w, "Raspberry Pi") || !strings.Contains(w, "Raspberry PI 4B USB Network Performance") {
		t.Errorf("Pi 4: %s", w)
	}
}

// TestWireGuardGateways: threaded off, on (a stable kernel in the CVE
// range), on with the threads pinned to one CPU.
func TestWireGuardGateways(t *testing.T) {
	// Off: the risk as info with how to confirm it and the fix; nothing claimed as seen.
	m := kfindings(t, "wg-gw-softirq", nil)
	r, ok := m["wg-softirq-risk"]
	if !ok || r.Severity != Info || !strings.Contains(r.Verify, "--observe") || len(r.Fix.Actions) != 8 ||
		r.Fix.Actions[0].ID != "threaded:wg0" || !strings.Contains(r.Fix.Caveat, "CVE-2026-52945") || !strings.Contains(r.Title, "not seen") {
		t.Errorf("softirq gateway: want the info risk finding with threaded actions and the stall caveat, got %+v", r)
	}
	for _, id := range []string{"rx-no-napi", "napi-convergence", "wg-threaded-napi", "usbnet-no-gro"} {
		if _, ok := m[id]; ok {
			t.Errorf("softirq gateway: %s must not appear: %s", id, m[id].Title)
		}
	}
	// Observed busy and not converged: the risk is no longer a guess, stay silent.
	m = kfindings(t, "wg-gw-softirq", func(in *Input) {
		in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 1, "softirq"), busyNAPI("wg1", 2, "softirq")}}
	})
	if _, ok := m["wg-softirq-risk"]; ok {
		t.Error("observed under load: wg-softirq-risk must leave it to napi-convergence")
	}
	// Observed converged: napi-convergence, with the stall caveat on its threaded fix.
	m = kfindings(t, "wg-gw-softirq", func(in *Input) {
		in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "softirq"), busyNAPI("wg1", 3, "softirq")}}
	})
	if c, ok := m["napi-convergence"]; !ok || !strings.Contains(c.Fix.Caveat, "CVE-2026-52945") || strings.Contains(c.Why, "eed 00") {
		t.Errorf("converged wg: want napi-convergence with the stall caveat, got %+v", c)
	}
	// Debian 12's ABI name: whether it is in the range is unknown, and said.
	m = kfindings(t, "wg-gw-threaded", func(in *Input) { in.Snap.Host.Kernel = "6.1.0-56-amd64" })
	if w := m["wg-threaded-napi"]; w.Severity != Info || len(w.Unchecked) == 0 || !strings.Contains(w.Unchecked[0], "patch level") {
		t.Errorf("6.1.0-56: want info with the patch level unchecked, got %+v", w)
	}

	// On, by the stable backport (6.12.48): the stall is a warning with the upgrade.
	m = kfindings(t, "wg-gw-threaded", nil)
	w, ok := m["wg-threaded-napi"]
	if !ok || w.Severity != Warn || !strings.Contains(allText(w), "6.12.74 or later") || len(w.Fix.Actions) != 0 {
		t.Errorf("6.12.48 threaded: want a warning naming 6.12.74, no tune actions, got %+v", w)
	}
	for _, id := range []string{"wg-softirq-risk", "napi-threads-confined", "rx-no-napi"} {
		if _, ok := m[id]; ok {
			t.Errorf("threaded gateway: %s must not appear", id)
		}
	}
	// The same devices after the revert, threaded set by hand: info only.
	m = kfindings(t, "wg-gw-threaded", func(in *Input) { in.Snap.Host.Kernel = "6.12.80+deb13-amd64" })
	if w := m["wg-threaded-napi"]; w.Severity != Info || !strings.Contains(w.Title, "set by hand") {
		t.Errorf("6.12.80 threaded: %+v", w)
	}

	// On, pinned to CPU 0: confined threads are the problem.
	m = kfindings(t, "wg-gw-pinned", nil)
	if c, ok := m["napi-threads-confined"]; !ok || c.Severity != Warn || len(c.Evidence) != 8 {
		t.Errorf("pinned: want napi-threads-confined over 8 threads, got %+v", c)
	}
	if w := m["wg-threaded-napi"]; w.Severity != Info || !strings.Contains(w.Title, "default on this kernel") {
		t.Errorf("pinned 6.18: want the info with the default named, got %+v", w)
	}
	if _, ok := m["wg-softirq-risk"]; ok {
		t.Error("pinned (threaded): wg-softirq-risk must not appear")
	}
}

// TestWireGuardObservedNAPI: the snapshot of a wg device without threads
// reads its NAPI from the driver, and where a snapshot still infers no NAPI
// an observation of NAPI delivery wins.
func TestWireGuardObservedNAPI(t *testing.T) {
	s := fixture(t, "wg-gw-softirq")
	if d := dev(t, s, "wg0"); d.Datapath.OwnNAPI.State != datapath.Yes {
		t.Errorf("wg0 without threads: own_napi %+v", d.Datapath.OwnNAPI)
	}
	m := kfindings(t, "wg-gw-softirq", func(in *Input) {
		d := dev(t, in.Snap, "wg0")
		d.Datapath.OwnNAPI.State, d.Datapath.RXPath = datapath.No, datapath.NoNAPIPath // an older wirespeed's inference
		in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "wg0", RXPath: observe.PathNAPINoGRO, Delivered: 1000, DeliveredBytes: 1400000}}}
	})
	if f, ok := m["rx-no-napi"]; ok {
		t.Errorf("observation says NAPI: rx-no-napi must not appear: %s", f.Title)
	}
	// The other way round: the observation saw netif_rx, the finding says the observation won.
	m = kfindings(t, "firecracker-veth-threaded", func(in *Input) {
		d := dev(t, in.Snap, "ws-fx1")
		d.Stats.RxPackets = ptr(uint64(5000))
		in.Obs = &observe.Observation{Devices: []observe.Device{{Name: "ws-fx1", RXPath: observe.PathNetifRx, NetifRx: 5000, NetifRxPerSec: 500, Delivered: 5000, DeliveredBytes: 7000000}}}
	})
	if f, ok := m["rx-no-napi"]; !ok || !strings.Contains(f.Why, "what was seen wins") {
		t.Errorf("observed netif_rx on a NAPI device: want rx-no-napi saying the observation wins, got %+v", f)
	}
}
