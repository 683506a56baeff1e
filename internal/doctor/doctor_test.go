package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

const fixtures = "../../testdata/snapshots"

var fixtureJSON = map[string][]byte{}

// fixture reads a snapshot fixture as `doctor --from` does. Each call
// returns a fresh Snapshot the test may change.
func fixture(t *testing.T, name string) *inspect.Snapshot {
	t.Helper()
	if _, ok := fixtureJSON[name]; !ok {
		b, err := json.Marshal(readFixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		fixtureJSON[name] = b
	}
	var snap inspect.Snapshot
	if err := json.Unmarshal(fixtureJSON[name], &snap); err != nil {
		t.Fatal(err)
	}
	return &snap
}

func readFixture(t *testing.T, name string) *inspect.Snapshot {
	s, err := hostfs.OpenSnapshot(filepath.Join(fixtures, name+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := inspect.ReplayAnswers(s.Answers)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := inspect.Collect(context.Background(), inspect.Options{FS: s.FS, Answers: a})
	if err != nil {
		t.Fatal(err)
	}
	snap.Source = inspect.Source{Kind: "snapshot", File: name, Root: a.Euid == 0}
	return snap
}

func dev(t *testing.T, s *inspect.Snapshot, name string) *inspect.Device {
	t.Helper()
	if d := deviceByName(s, name); d != nil {
		return d
	}
	t.Fatalf("no device %s in the snapshot", name)
	return nil
}

func setOffload(d *inspect.Device, name string, on, fixed bool) {
	for i := range d.Offloads {
		if d.Offloads[i].Name == name {
			d.Offloads[i].Active = &on
			d.Offloads[i].Fixed = fixed
		}
	}
}

func setSysctl(s *inspect.Snapshot, name, value string) {
	for i := range s.Host.Sysctls {
		if s.Host.Sysctls[i].Name == name {
			s.Host.Sysctls[i].Value = value
			s.Host.Sysctls[i].Error = ""
			return
		}
	}
	s.Host.Sysctls = append(s.Host.Sysctls, inspect.Sysctl{Name: name, Value: value})
}

func ptr[T any](v T) *T { return &v }

// run diagnoses in and returns the findings with the given id.
func run(t *testing.T, in *Input, id string) ([]Finding, *Report) {
	t.Helper()
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	checkTraceable(t, in, rep)
	var out []Finding
	for _, f := range rep.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out, rep
}

func actionIDs(f Finding) []string {
	var ids []string
	if f.Fix != nil {
		for _, a := range f.Fix.Actions {
			ids = append(ids, a.ID+"="+a.Value)
		}
	}
	return ids
}

func TestRules(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		change  func(t *testing.T, in *Input)
		id      string
		fire    bool
		sev     Severity
		actions []string // expected "ID=VALUE", in order (nil: not checked)
		text    string   // a substring of the fix or title
	}{
		// 1. usbnet backlog
		{name: "usbnet on the Pi", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn, text: "does not apply to kernel 5.15.4-0-rpi4"},
		{name: "usbnet on the Pi's old kernel: the way to a supported one is Pi OS's own", fixture: "rpi4-ax88179", id: "usbnet-no-gro", fire: true, sev: Warn,
			text: "apt full-upgrade"},
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
		{name: "virtio with NAPI + GRO is no usbnet", fixture: "firecracker-host", id: "usbnet-no-gro"},
		{name: "wireguard is no usbnet", fixture: "wg-gateway-16", id: "usbnet-no-gro"},

		// rx-no-napi
		{name: "veth without NAPI, receiving", fixture: "firecracker-veth-threaded", id: "rx-no-napi", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "ws-fx1")
				d.NAPIs, d.Threads = nil, nil
				d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.No}, RXPath: datapath.NoNAPIPath}
				setOffload(d, "rx-gro", false, false)
				d.Stats.RxPackets = ptr(uint64(5000))
			}, actions: []string{"rx-gro:ws-fx1=on"}},
		{name: "veth with NAPI + GRO", fixture: "firecracker-veth-threaded", id: "rx-no-napi"},
		{name: "ifbs that are down and loopback", fixture: "firecracker-host", id: "rx-no-napi"},

		// 2. a stuck interrupt
		{name: "Pi xHCI on CPU0, RPS off", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
			change:  func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0" },
			actions: []string{"rps_cpus:eth1:rx-0=e", "sysctl:net.core.rps_sock_flow_entries=32768", "rps_flow_cnt:eth1:rx-0=32768"},
			text:    "leaves out CPU0"},
		{name: "RPS off on a forwarding Pi: no RFS", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
				setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
			}, actions: []string{"rps_cpus:eth1:rx-0=e"}},
		{name: "two CPUs: RPS to the other one", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
				in.Snap.Host.CPUs.Online = "0-1"
			}, actions: []string{"rps_cpus:eth1:rx-0=2", "sysctl:net.core.rps_sock_flow_entries=32768", "rps_flow_cnt:eth1:rx-0=32768"}},
		{name: "one CPU: nothing to spread", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
			change: func(t *testing.T, in *Input) {
				dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
				in.Snap.Host.CPUs.Online = "0"
			}},
		{name: "RPS already on (f): the Pi fixture as captured", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off"},
		{name: "RPS on including the IRQ CPU", fixture: "rpi4-ax88179", id: "rps-on-irq-cpu", fire: true, sev: Info,
			actions: []string{"rps_cpus:eth1:rx-0=e"}},
		{name: "RPS on without the IRQ CPU", fixture: "rpi4-ax88179", id: "rps-on-irq-cpu",
			change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "e" }},
		{name: "an interrupt that moves (60/40), RPS off", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth1")
				d.RXQueues[0].RPSCPUs = "0"
				d.IRQs[0].Counts, d.IRQs[0].Total = []uint64{60000, 40000, 0, 0}, 100000
			}},
		{name: "observed: the interrupt fires on CPU0 only", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth1")
				d.RXQueues[0].RPSCPUs = "0"
				d.IRQs[0].Counts, d.IRQs[0].Total = []uint64{40, 0, 0, 0}, 40 // a fresh boot
				in.Obs = &observe.Observation{IRQs: []observe.IRQ{{IRQ: 46, Count: 5000, PerCPU: []uint64{5000, 0, 0, 0}}}}
			}},
		{name: "observed: the interrupt moves", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
			change: func(t *testing.T, in *Input) {
				dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
				in.Obs = &observe.Observation{IRQs: []observe.IRQ{{IRQ: 46, Count: 5000, PerCPU: []uint64{2500, 2500, 0, 0}}}}
			}},
		{name: "a movable virtio IRQ with NAPI", fixture: "firecracker-host", id: "irq-stuck-rps-off"},
		// the arm64 lab's Raspberry Pi 3 B: the DWC2's interrupt, found by
		// its handler's name, refused by the ARMCTRL chip (EPERM on 6.12)
		{name: "Pi 3 DWC2 on CPU0 (arm64 lab guest), RPS off", fixture: "vm-rpi3-usb-nic", id: "irq-stuck-rps-off", fire: true, sev: Warn,
			actions: []string{"rps_cpus:usb0:rx-0=e", "sysctl:net.core.rps_sock_flow_entries=32768", "rps_flow_cnt:usb0:rx-0=32768"},
			text:    "cannot leave CPU0"},
		{name: "Pi 3 guest: usbnet on Debian's arm64 6.12 gets the module", fixture: "vm-rpi3-usb-nic", id: "usbnet-no-gro", fire: true, sev: Warn,
			text: "6.12.117+deb12-arm64 matches"},
		{name: "counts that did not move since the earlier reading", fixture: "rpi4-ax88179", id: "irq-stuck-rps-off",
			change: func(t *testing.T, in *Input) {
				dev(t, in.Snap, "eth1").RXQueues[0].RPSCPUs = "0"
				in.Before = fixture(t, "rpi4-ax88179") // same counts: no interrupts in between
			}},

		// 3. movable IRQs piled up
		{name: "virtio input and output on CPU1", fixture: "firecracker-host", id: "irqs-piled", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth0")
				for i := range d.IRQs {
					if d.IRQs[i].Number == 38 {
						d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 90000}, 90000
					}
					if d.IRQs[i].Number == 39 {
						d.IRQs[i].Counts, d.IRQs[i].Total = []uint64{0, 40000}, 40000
					}
				}
				in.Snap.Host.IRQBalance = inspect.Tri{State: datapath.Yes, Evidence: "a process named irqbalance runs"}
			}, actions: []string{"irq:39=0"}, text: "irqbalance runs here"},
		{name: "virtio input on CPU1, output on CPU0", fixture: "firecracker-host", id: "irqs-piled"},

		// 4. NAPI convergence
		{name: "two WireGuard NAPIs in softirq on CPU3", fixture: "wg-gateway-16", id: "napi-convergence", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "softirq"), busyNAPI("wg1", 3, "softirq")}}
			}, actions: []string{"threaded:wg0=1", "threaded:wg1=1"}},
		{name: "per-NAPI threaded where napi-set has it", fixture: "firecracker-veth-threaded", id: "napi-convergence", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				d := busyNAPI("ws-fx1", 1, "softirq")
				d.NAPIs = append(d.NAPIs, d.NAPIs[0])
				d.NAPIs[1].Napi = "0xffff2"
				in.Obs = &observe.Observation{Devices: []observe.Device{d}}
			}, actions: []string{"napi-threaded:ws-fx1:278=enabled"}},
		{name: "the same NAPIs in their threads", fixture: "wg-gateway-16", id: "napi-convergence",
			change: func(t *testing.T, in *Input) {
				in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "thread"), busyNAPI("wg1", 3, "thread")}}
			}},
		{name: "softirq NAPIs on different CPUs", fixture: "wg-gateway-16", id: "napi-convergence",
			change: func(t *testing.T, in *Input) {
				in.Obs = &observe.Observation{Devices: []observe.Device{busyNAPI("wg0", 3, "softirq"), busyNAPI("wg1", 4, "softirq")}}
			}},
		{name: "napi kthreads confined to CPU0", fixture: "wg-gateway-16", id: "napi-threads-confined", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				dev(t, in.Snap, "wg0").Threads[0].AllowedCPU = "0"
				dev(t, in.Snap, "wg1").Threads[0].AllowedCPU = "0"
			}, text: "taskset -p -c 0-31 900"},
		{name: "napi kthreads free to move", fixture: "wg-gateway-16", id: "napi-threads-confined"},

		// 5. USB bus
		{name: "gigabit adapter on USB 2", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").USB.SpeedMbps = "480" }},
		{name: "gigabit adapter without carrier on USB 2", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth1")
				d.USB.SpeedMbps, d.Link.SpeedMbps = "480", nil
			}},
		{name: "gigabit adapter on USB 3", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link"},
		{name: "2.5G adapter on 5 Gbit/s USB", fixture: "rpi4-ax88179", id: "usb-bus-slower-than-link",
			change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").Link.SpeedMbps = ptr(2500) }},
		{name: "storage on the same controller", fixture: "rpi4-ax88179", id: "usb-shared-controller", fire: true, sev: Info,
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth1")
				d.USB.Neighbours = append(d.USB.Neighbours, inspect.USBDevice{Path: "2-1", Product: "SSD", Drivers: []string{"uas"}})
			}},
		{name: "nothing else on the controller", fixture: "rpi4-ax88179", id: "usb-shared-controller"},

		// 6. GRO
		{name: "virtio NAPI with GRO off", fixture: "firecracker-host", id: "gro-off", fire: true, sev: Warn,
			change:  func(t *testing.T, in *Input) { setOffload(dev(t, in.Snap, "eth0"), "rx-gro", false, false) },
			actions: []string{"rx-gro:eth0=on"}},
		{name: "GRO off and fixed: nothing to do", fixture: "firecracker-host", id: "gro-off",
			change: func(t *testing.T, in *Input) { setOffload(dev(t, in.Snap, "eth0"), "rx-gro", false, true) }},
		{name: "GRO on", fixture: "firecracker-host", id: "gro-off"},
		{name: "forwarding WireGuard host without UDP GRO forwarding", fixture: "firecracker-host", id: "udp-gro-forwarding-off", fire: true, sev: Info,
			change: func(t *testing.T, in *Input) {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
				setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
			}, actions: []string{"rx-udp-gro-forwarding:eth0=on"}},
		{name: "not forwarding", fixture: "firecracker-host", id: "udp-gro-forwarding-off",
			change: func(t *testing.T, in *Input) {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
				setSysctl(in.Snap, "net.ipv4.ip_forward", "0")
			}},

		// 7. TX queueing
		{name: "usbnet without BQL at 1 Gbit/s", fixture: "rpi4-ax88179", id: "tx-no-bql", fire: true, sev: Warn, text: "~3.6 ms at 1000 Mbit/s",
			actions: []string{"qdisc:eth1=cake bandwidth 950mbit"}},
		{name: "usbnet without BQL at 100 Mbit/s", fixture: "rpi4-ax88179", id: "tx-no-bql", fire: true, sev: Warn, text: "~36.4 ms at 100 Mbit/s",
			change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").Link.SpeedMbps = ptr(100) }},
		{name: "usbnet without BQL on USB 2 at 1 Gbit/s: a short queue", fixture: "rpi4-ax88179", id: "tx-no-bql", fire: true, sev: Info,
			change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth1").USB.SpeedMbps = "480" }},
		{name: "a driver that drives BQL (genet, virtio)", fixture: "firecracker-host", id: "tx-no-bql"},
		{name: "nothing transmitted since the earlier reading", fixture: "rpi4-ax88179", id: "tx-no-bql",
			change: func(t *testing.T, in *Input) { in.Before = fixture(t, "rpi4-ax88179") }},
		{name: "FIFO root qdisc over BQL", fixture: "firecracker-host", id: "qdisc-fifo", fire: true, sev: Info, actions: []string{"qdisc:eth0=fq_codel"}},
		{name: "fq_codel root qdisc", fixture: "firecracker-host", id: "qdisc-fifo",
			change: func(t *testing.T, in *Input) { dev(t, in.Snap, "eth0").Link.Qdisc = "fq_codel" }},

		// 8. softnet
		{name: "time_squeeze grew", fixture: "firecracker-host", id: "softnet-squeeze", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				in.Before = fixture(t, "firecracker-host")
				in.Snap.Host.Softnet[1].Processed += 100000
				in.Snap.Host.Softnet[1].TimeSqueeze += 500
			}, actions: []string{"sysctl:net.core.netdev_budget=600"}},
		{name: "a few squeezes for many packets", fixture: "firecracker-host", id: "softnet-squeeze",
			change: func(t *testing.T, in *Input) {
				in.Before = fixture(t, "firecracker-host")
				in.Snap.Host.Softnet[1].Processed += 1000000
				in.Snap.Host.Softnet[1].TimeSqueeze += 20
			}},
		{name: "backlog drops", fixture: "firecracker-host", id: "softnet-drops", fire: true, sev: Crit,
			change: func(t *testing.T, in *Input) {
				in.Before = fixture(t, "firecracker-host")
				in.Snap.Host.Softnet[0].Processed += 1000
				in.Snap.Host.Softnet[0].Dropped += 3
			}, actions: []string{"sysctl:net.core.netdev_max_backlog=10000"}},
		{name: "drops since boot only (one reading)", fixture: "firecracker-host", id: "softnet-drops",
			change: func(t *testing.T, in *Input) { in.Snap.Host.Softnet[0].Dropped = 999 }},

		// 9. CPU frequency
		{name: "powersave on a Pi", fixture: "rpi4-ax88179", id: "cpufreq-powersave", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				for i := range in.Snap.Host.CPUs.PerCPU {
					in.Snap.Host.CPUs.PerCPU[i].Governor = "powersave"
				}
			}, actions: []string{"governor:0-3=schedutil"}},
		{name: "performance on a Pi", fixture: "rpi4-ax88179", id: "cpufreq-powersave"},
		{name: "clock low under load", fixture: "rpi4-ax88179", id: "cpufreq-low-under-load", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				in.Snap.Host.CPUs.PerCPU[0].CurKHz = ptr(int64(600000))
				in.Obs = &observe.Observation{CPUs: []observe.CPU{{CPU: 0, NetRXShare: 0.6}, {CPU: 1, NetRXShare: 0.05}}}
			}},
		{name: "clock low on an idle CPU", fixture: "rpi4-ax88179", id: "cpufreq-low-under-load",
			change: func(t *testing.T, in *Input) {
				in.Snap.Host.CPUs.PerCPU[1].CurKHz = ptr(int64(600000))
				in.Obs = &observe.Observation{CPUs: []observe.CPU{{CPU: 0, NetRXShare: 0.6}, {CPU: 1, NetRXShare: 0.05}}}
			}},

		// 10. XPS
		{name: "one TX queue on a USB NIC", fixture: "rpi4-ax88179", id: "xps-not-applicable", fire: true, sev: Info, text: "ENOENT"},
		{name: "multiqueue without XPS", fixture: "firecracker-host", id: "xps-unset", fire: true, sev: Info,
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth0")
				d.TXQueues = []inspect.TXQueue{{Name: "tx-0", XPSCPUs: "0"}, {Name: "tx-1", XPSCPUs: "0"}}
			}, actions: []string{"xps_cpus:eth0:tx-0=1", "xps_cpus:eth0:tx-1=2"}},
		{name: "multiqueue with XPS", fixture: "firecracker-host", id: "xps-unset",
			change: func(t *testing.T, in *Input) {
				d := dev(t, in.Snap, "eth0")
				d.TXQueues = []inspect.TXQueue{{Name: "tx-0", XPSCPUs: "1"}, {Name: "tx-1", XPSCPUs: "2"}}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := &Input{Snap: fixture(t, c.fixture)}
			if c.change != nil {
				c.change(t, in)
			}
			got, _ := run(t, in, c.id)
			if !c.fire {
				if len(got) > 0 {
					t.Fatalf("%s fired, should stay silent: %s", c.id, got[0].Title)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%s: %d findings, want 1", c.id, len(got))
			}
			f := got[0]
			if f.Severity != c.sev {
				t.Errorf("severity %s, want %s (%s)", f.Severity, c.sev, f.Title)
			}
			if len(f.Evidence) == 0 || f.Why == "" {
				t.Errorf("finding without evidence or why: %+v", f)
			}
			if c.actions != nil {
				if g := strings.Join(actionIDs(f), " "); g != strings.Join(c.actions, " ") {
					t.Errorf("actions\n got %s\nwant %s", g, strings.Join(c.actions, " "))
				}
			}
			if c.text != "" {
				all := f.Title + "\n" + f.Why
				if f.Fix != nil {
					all += "\n" + strings.Join(f.Fix.Commands, "\n") + "\n" + f.Fix.Caveat
				}
				if !strings.Contains(all, c.text) {
					t.Errorf("want %q in\n%s", c.text, all)
				}
			}
		})
	}
}

// busyNAPI is an observed device with one NAPI doing 50k packets/s, all of
// its polls in ctx on cpu.
func busyNAPI(dev string, cpu int, ctx observe.PollKind) observe.Device {
	return observe.Device{Name: dev, RXPath: observe.PathNAPIGRO, NAPIs: []observe.NAPI{{
		Napi: "0xffff1", Polls: 10000, Work: 500000, WorkPerSec: 50000,
		Contexts: []observe.PollContext{{Kind: ctx, Polls: 10000, Work: 500000, PollShare: 1}},
		CPUs:     []observe.NAPICPU{{CPU: cpu, Polls: 10000, Work: 500000, PollShare: 1, WorkShare: 1}},
	}}}
}

// TestHealthy: devices the issue names as healthy raise no warning.
func TestHealthy(t *testing.T) {
	for _, name := range []string{"firecracker-host", "firecracker-veth-threaded", "wg-gateway-16"} {
		rep, err := Diagnose(&Input{Snap: fixture(t, name)})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Severity.Rank() >= Warn.Rank() {
				t.Errorf("%s: %s %s: %s", name, f.Severity, f.ID, f.Title)
			}
		}
	}
	// An r8152 on a Pi 4 with RPS spreading the stuck xHCI IRQ: its own
	// NAPI + GRO, BQL in use.
	s := fixture(t, "rpi4-ax88179")
	d := dev(t, s, "eth1")
	d.Driver = "r8152"
	d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.Yes}, RXPath: datapath.NAPIPath(datapath.Yes, datapath.Softirq)}
	d.NAPIs = []inspect.NAPI{{ID: 9}}
	d.RXQueues[0].RPSCPUs = "e"
	d.TXQueues[0].BQL.Limit, d.TXQueues[0].BQL.Inflight = ptr(int64(30280)), ptr(int64(0))
	rep, err := Diagnose(&Input{Snap: s, Ifaces: []string{"eth1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity.Rank() >= Warn.Rank() {
			t.Errorf("r8152: %s %s: %s", f.Severity, f.ID, f.Title)
		}
	}
}

// TestUnknownStaysSilent: a snapshot from a kernel without napi-get (RX
// path unknown) and taken without root (affinity unknown) says what it
// could not check instead of guessing.
func TestUnknownStaysSilent(t *testing.T) {
	s := fixture(t, "rpi4-ax88179")
	d := dev(t, s, "eth1")
	d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.Unknown}, OwnNAPI: inspect.Tri{State: datapath.Unknown}, RXPath: datapath.NoNAPIGetPath}
	d.RXQueues[0].RPSCPUs = "0"
	for i := range d.IRQs {
		d.IRQs[i].Changeable = inspect.Tri{State: datapath.Unknown, Evidence: "needs root"}
	}
	s.Host.Sysctls = nil
	rep, err := Diagnose(&Input{Snap: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.ID == "usbnet-no-gro" || f.ID == "irq-stuck-rps-off" {
			t.Errorf("fired on unknowns: %s", f.Title)
		}
	}
	skipped := map[string]bool{}
	for _, s := range rep.Skipped {
		skipped[s.Rule] = true
	}
	for _, r := range []string{"softnet", "napi-convergence", "cpufreq"} {
		if !skipped[r] {
			t.Errorf("rule %s did not say what it could not check", r)
		}
	}
}

func TestOrderAndFailOn(t *testing.T) {
	in := &Input{Snap: fixture(t, "rpi4-ax88179"), Before: fixture(t, "rpi4-ax88179")}
	in.Snap.Host.Softnet[0].Processed += 1000
	in.Snap.Host.Softnet[0].Dropped += 5
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rep.Findings); i++ {
		a, b := rep.Findings[i-1], rep.Findings[i]
		if a.Severity.Rank() < b.Severity.Rank() || (a.Severity == b.Severity && a.Impact < b.Impact) {
			t.Errorf("out of order: %s (%s %d) before %s (%s %d)", a.ID, a.Severity, a.Impact, b.ID, b.Severity, b.Impact)
		}
	}
	if rep.Findings[0].ID != "softnet-drops" || rep.Worst() != Crit {
		t.Errorf("first %s, worst %s; want softnet-drops, crit", rep.Findings[0].ID, rep.Worst())
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Schema != SchemaVersion || len(back.Findings) != len(rep.Findings) {
		t.Fatalf("JSON round trip: %v", err)
	}
}

func TestIfacesFilter(t *testing.T) {
	in := &Input{Snap: fixture(t, "rpi4-ax88179"), Ifaces: []string{"eth0"}}
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		for _, d := range f.Devices {
			if d != "eth0" {
				t.Errorf("finding about %s with the filter eth0: %s", d, f.Title)
			}
		}
	}
}

// splitPath splits at dots outside brackets: host.sysctls[net.core.x].value.
func splitPath(p string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range p {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

var pathElem = regexp.MustCompile(`^([a-z_]+)(?:\[([^\]]+)\])?$`)

// checkTraceable resolves every evidence field in the JSON of the source it
// names: each must point at something that exists.
func checkTraceable(t *testing.T, in *Input, rep *Report) {
	t.Helper()
	toMap := func(v any) any {
		b, _ := json.Marshal(v)
		var m any
		json.Unmarshal(b, &m)
		return m
	}
	snap, obs := toMap(in.Snap), toMap(in.Obs)
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			root := snap
			if e.Source == "observation" {
				root = obs
			}
			if err := resolve(root, e.Field); err != nil {
				t.Errorf("%s: evidence %s (%s) does not resolve: %v", f.ID, e.Field, e.Source, err)
			}
		}
	}
}

func resolve(v any, path string) error {
	for _, part := range splitPath(path) {
		m := pathElem.FindStringSubmatch(part)
		if m == nil {
			return fmt.Errorf("bad element %q", part)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", part)
		}
		if v, ok = obj[m[1]]; !ok {
			return fmt.Errorf("no key %s", m[1])
		}
		if m[2] == "" {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: not an array", m[1])
		}
		key := m[2]
		if key == "*" {
			if len(arr) == 0 {
				return fmt.Errorf("%s: empty", m[1])
			}
			v = arr[0]
			continue
		}
		k, val, hasEq := strings.Cut(key, "=")
		var found any
		for _, el := range arr {
			o, _ := el.(map[string]any)
			for _, field := range []string{"name", "irq", "cpu", "napi", "pid"} {
				if hasEq && field != k {
					continue
				}
				want := key
				if hasEq {
					want = val
				}
				if x, ok := o[field]; ok && fmt.Sprint(x) == want {
					found = el
				}
			}
		}
		if found == nil {
			return fmt.Errorf("%s: no element %s", m[1], key)
		}
		v = found
	}
	return nil
}

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
