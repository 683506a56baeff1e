// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// TestRules: every rule on the snapshot fixtures, changed per case to fire
// and to stay silent.
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
		{name: "forwarding WireGuard host without UDP GRO forwarding", fixture: "firecracker-host", id: "udp-gro-forwarding-off", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
				setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
			}, actions: []string{"rx-udp-gro-forwarding:eth0=on"}, text: "Tailscale"},
		{name: "Tailscale subnet router (tun) with GRO lists on", fixture: "firecracker-host", id: "udp-gro-forwarding-off", fire: true, sev: Warn,
			change: func(t *testing.T, in *Input) {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "tailscale0", Driver: "tun", Bus: "virtual"})
				setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
				setOffload(dev(t, in.Snap, "eth0"), "rx-gro-list", true, false)
			}, actions: []string{"rx-udp-gro-forwarding:eth0=on", "rx-gro-list:eth0=off"}, text: "ethtool -K eth0 rx-udp-gro-forwarding on rx-gro-list off"},
		{name: "forwarding tunnel host on a kernel before the advice's release", fixture: "firecracker-host", id: "udp-gro-forwarding-off",
			change: func(t *testing.T, in *Input) {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
				setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
				in.Snap.Host.Kernel = "6.1.0-56-amd64"
			}},
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
