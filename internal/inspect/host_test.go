// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

func sysctl(h Host, name string) (Sysctl, bool) {
	for _, s := range h.Sysctls {
		if s.Name == name {
			return s, true
		}
	}
	return Sysctl{}, false
}

// host.go: on 5.15 without napi-get the per-NAPI features are judged by
// kernel version; on a kernel whose napi-get answers, by what it answers.
func TestHostFacts(t *testing.T) {
	h := fromFixture(t, "rpi4-ax88179").Host
	if h.Hostname != "lbox" || h.Kernel != "5.15.4-0-rpi4" || h.Arch != "aarch64" {
		t.Errorf("identity = %q %q %q", h.Hostname, h.Kernel, h.Arch)
	}
	f := h.Features
	if f.NAPIGet.State != datapath.No || f.PerNAPIConfig != (Tri{datapath.No, "by kernel version (per-NAPI config needs 6.13)"}) ||
		f.PerNAPIThreaded != (Tri{datapath.No, "by kernel version (per-NAPI threaded needs 6.17)"}) ||
		f.ThreadedSysfs.State != datapath.Yes || f.BQLStallStats.State != datapath.No {
		t.Errorf("5.15 features = %+v", f)
	}
	if h.IRQBalance.State != datapath.Unknown {
		t.Errorf("irqbalance = %+v", h.IRQBalance)
	}
	if h.CPUs.Count != 4 || h.CPUs.Online != "0-3" || len(h.CPUs.PerCPU) != 4 || h.CPUs.PerCPU[0].Governor != "performance" {
		t.Errorf("cpus = %+v", h.CPUs)
	}
	if len(h.Softnet) != 4 || h.Softnet[0].Processed != 9143277 {
		t.Errorf("softnet = %+v", h.Softnet)
	}
	if s, ok := sysctl(h, "net.core.netdev_budget"); !ok || s.Value != "300" {
		t.Errorf("netdev_budget = %+v", s)
	}
	if _, ok := sysctl(h, "net.ipv4.ip_forward"); ok {
		t.Error("ip_forward present in a snapshot that did not record it")
	}
	if len(h.Sysctls) != len(sysctlNames) {
		t.Errorf("%d sysctls, want %d", len(h.Sysctls), len(sysctlNames))
	}

	h = fromFixture(t, "vm-rpi3-usb-nic").Host
	f = h.Features
	// napi-get answers, but with no NAPI to show attributes on: by version.
	if f.NAPIGet != (Tri{datapath.Yes, "netdev netlink napi-get answered (0 NAPI instances)"}) ||
		f.PerNAPIConfig != (Tri{datapath.No, "by kernel version (per-NAPI config needs 6.13)"}) ||
		f.BQLStallStats.State != datapath.Yes || h.IRQBalance.State != datapath.No {
		t.Errorf("6.12 features = %+v irqbalance %+v", f, h.IRQBalance)
	}
	if s, ok := sysctl(h, "net.ipv4.ip_forward"); !ok || s.Value != "0" {
		t.Errorf("ip_forward = %+v", s)
	}
	if h.CPUs.PerCPU[0].HasCpufreq {
		t.Error("the VM has no cpufreq policy")
	}

	f = fromFixture(t, "firecracker-host").Host.Features
	if f.PerNAPIConfig != (Tri{datapath.Yes, "napi-get reports defer-hard-irqs / gro-flush-timeout"}) ||
		f.PerNAPIThreaded != (Tri{datapath.Yes, "napi-get reports threaded per NAPI"}) {
		t.Errorf("features from napi-get = %+v", f)
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		release       string
		major, minor  int
		ok, knownWant bool
	}{
		{"6.13.0", 6, 13, true, true},
		{"6.12.117+deb12-arm64", 6, 13, false, true},
		{"7.0", 6, 17, true, true},
		{"5.15.4-0-rpi4", 6, 0, false, true},
		{"", 6, 0, false, false},
	} {
		ok, known := kernelAtLeast(c.release, c.major, c.minor)
		if ok != c.ok || known != c.knownWant {
			t.Errorf("kernelAtLeast(%q, %d, %d) = %v, %v", c.release, c.major, c.minor, ok, known)
		}
	}
}

// Snapshot format 2 carries cpu_capacity, OpenWrt's files and the
// knob-owning services; a format 1 snapshot still reads, with those facts
// absent (nil), not empty.
func TestSnapshotV2FactsAndV1Read(t *testing.T) {
	old := fromFixture(t, "rpi4-ax88179")
	if old.Host.Services != nil || old.Host.OpenWrt != nil || old.Host.CPUs.PerCPU[0].Capacity != nil {
		t.Errorf("a version 1 snapshot grew facts it does not hold: %+v %+v", old.Host.Services, old.Host.OpenWrt)
	}
	ow := fromFixture(t, "openwrt-mt7621-dsa")
	if o := ow.Host.OpenWrt; o == nil || o.Release != "24.10.4" || o.Target != "ramips/mt7621" || o.Globals != "globals" || o.PacketSteering != "0" {
		t.Errorf("OpenWrt facts: %+v", ow.Host.OpenWrt)
	}
	if len(ow.Host.Services) != 1 || ow.Host.Services[0].Name != "netifd" {
		t.Errorf("services: %+v", ow.Host.Services)
	}
	rk := fromFixture(t, "rk3588-armbian-vendor")
	if c := rk.Host.CPUs.PerCPU; len(c) != 8 || c[0].Capacity == nil || *c[0].Capacity != 397 || *c[7].Capacity != 1024 {
		t.Errorf("cpu_capacity not read: %+v", c)
	}
	if rk.Host.Services == nil || len(rk.Host.Services) != 0 {
		t.Errorf("a version 2 snapshot with no service running: want [], got %v", rk.Host.Services)
	}
}
