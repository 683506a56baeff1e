// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

var sysctlNames = []string{
	"netdev_budget", "netdev_budget_usecs", "netdev_max_backlog", "dev_weight",
	"busy_poll", "busy_read", "rps_sock_flow_entries", "gro_normal_batch", "default_qdisc",
}

func (c *collector) host(devs []string) Host {
	h := Host{}
	h.Hostname, _ = c.str("/proc/sys/kernel/hostname")
	h.Kernel, _ = c.str("/proc/sys/kernel/osrelease")
	h.Arch, _ = c.str("/proc/sys/kernel/arch")
	h.OS = c.osRelease()
	h.OpenWrt = c.openWrt()
	h.Services = c.services()
	h.Features = c.features(devs, h.Kernel)
	switch c.a.IRQBalance {
	case "running":
		h.IRQBalance = Tri{datapath.Yes, "a process named irqbalance runs"}
	case "not running":
		h.IRQBalance = Tri{datapath.No, "no process named irqbalance"}
	default:
		h.IRQBalance = Tri{datapath.Unknown, "not recorded (snapshot taken before inspect asked)"}
	}
	h.CPUs = c.cpus()
	if b, err := c.fs.ReadFile("/proc/net/softnet_stat"); err == nil {
		if rows, err := procfs.ParseSoftnetStat(b); err == nil {
			h.Softnet = rows
		} else {
			h.Notes = append(h.Notes, "softnet_stat: "+err.Error())
		}
	} else {
		h.Notes = append(h.Notes, "softnet_stat: "+errName(err))
	}
	hidden := 0
	for _, n := range sysctlNames {
		v, e := c.str("/proc/sys/net/core/" + n)
		if e == "ENOENT" || e == "missing" {
			hidden++
		}
		h.Sysctls = append(h.Sysctls, Sysctl{Name: "net.core." + n, Value: v, Error: e})
	}
	// Forwarding decides which GRO features matter (doctor's UDP GRO
	// forwarding rule); it is per namespace, and older snapshots lack it.
	if v, e := c.str("/proc/sys/net/ipv4/ip_forward"); e == "" {
		h.Sysctls = append(h.Sysctls, Sysctl{Name: "net.ipv4.ip_forward", Value: v})
	}
	if hidden > 0 && c.fs.IsDir("/proc/sys/net/core") {
		h.Notes = append(h.Notes, fmt.Sprintf("%d net.core sysctls are missing: most are global and visible only from the initial network namespace", hidden))
	}
	return h
}

func kernelAtLeast(release string, major, minor int) (bool, bool) {
	var ma, mi int
	if _, err := fmt.Sscanf(release, "%d.%d", &ma, &mi); err != nil {
		return false, false
	}
	return ma > major || (ma == major && mi >= minor), true
}

func (c *collector) features(devs []string, release string) Features {
	var f Features
	byVersion := func(major, minor int, what string) Tri {
		ok, known := kernelAtLeast(release, major, minor)
		switch {
		case !known:
			return Tri{datapath.Unknown, "kernel version unreadable"}
		case ok:
			return Tri{datapath.Yes, fmt.Sprintf("by kernel version (%s >= %d.%d)", what, major, minor)}
		}
		return Tri{datapath.No, fmt.Sprintf("by kernel version (%s needs %d.%d)", what, major, minor)}
	}
	f.ThreadedSysfs = Tri{datapath.No, "no /sys/class/net/*/threaded"}
	for _, d := range devs {
		if c.fs.Exists("/sys/class/net/" + d + "/threaded") {
			f.ThreadedSysfs = Tri{datapath.Yes, "/sys/class/net/" + d + "/threaded exists"}
			break
		}
	}
	switch {
	case c.a.NAPIsError == "":
		f.NAPIGet = Tri{datapath.Yes, fmt.Sprintf("netdev netlink napi-get answered (%d NAPI instances)", len(c.a.NAPIs))}
	case c.a.NAPIsNoSup:
		f.NAPIGet = Tri{datapath.No, c.a.NAPIsError}
	default:
		f.NAPIGet = Tri{datapath.Unknown, c.a.NAPIsError}
	}
	var sawConfig, sawThreaded bool
	for _, n := range c.a.NAPIs {
		if n.DeferHardIRQs != nil || n.GROFlushTimeoutNS != nil {
			sawConfig = true
		}
		if n.Threaded != nil {
			sawThreaded = true
		}
	}
	switch {
	case sawConfig:
		f.PerNAPIConfig = Tri{datapath.Yes, "napi-get reports defer-hard-irqs / gro-flush-timeout"}
	case c.a.NAPIsError == "" && len(c.a.NAPIs) > 0:
		f.PerNAPIConfig = Tri{datapath.No, "napi-get answers without defer-hard-irqs / gro-flush-timeout"}
	default:
		f.PerNAPIConfig = byVersion(6, 13, "per-NAPI config")
	}
	switch {
	case sawThreaded:
		f.PerNAPIThreaded = Tri{datapath.Yes, "napi-get reports threaded per NAPI"}
	case c.a.NAPIsError == "" && len(c.a.NAPIs) > 0:
		f.PerNAPIThreaded = Tri{datapath.No, "napi-get answers without a threaded attribute"}
	default:
		f.PerNAPIThreaded = byVersion(6, 17, "per-NAPI threaded")
	}
	f.BQLStallStats = Tri{datapath.Unknown, "no device with a byte_queue_limits directory"}
	for _, d := range devs {
		q := "/sys/class/net/" + d + "/queues/tx-0/byte_queue_limits"
		if c.fs.IsDir(q) {
			if c.fs.Exists(q + "/stall_thrs") {
				f.BQLStallStats = Tri{datapath.Yes, q + "/stall_thrs exists"}
			} else {
				f.BQLStallStats = Tri{datapath.No, q + " has no stall_thrs"}
			}
			break
		}
	}
	return f
}

func (c *collector) cpus() CPUs {
	var out CPUs
	online, e := c.str("/sys/devices/system/cpu/online")
	if e != "" {
		out.Missing = append(out.Missing, "cpu/online: "+e)
		return out
	}
	out.Online = online
	list, err := cpumask.ParseList(online)
	if err != nil {
		out.Missing = append(out.Missing, "cpu/online: "+err.Error())
		return out
	}
	out.Count = len(list)
	for _, n := range list {
		base := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq", n)
		cpu := CPU{CPU: n, Capacity: c.cpuCapacity(n)}
		if c.fs.IsDir(base) {
			cpu.HasCpufreq = true
			cpu.Governor, _ = c.str(base + "/scaling_governor")
			cpu.Driver, _ = c.str(base + "/scaling_driver")
			cpu.CurKHz = c.int64p(base + "/scaling_cur_freq")
			cpu.MaxKHz = c.int64p(base + "/cpuinfo_max_freq")
			cpu.MinKHz = c.int64p(base + "/cpuinfo_min_freq")
			c.cpufreqChoices(base, &cpu)
		}
		out.PerCPU = append(out.PerCPU, cpu)
	}
	return out
}
