// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule usbnet-no-gro: a USB NIC on usbnet hands every received frame to
// netif_rx(): no NAPI, no GRO, one stack traversal per TCP segment, all on
// the CPU that ran usbnet's bottom half (the host controller's IRQ CPU).

func init() {
	register(Rule{
		ID:       "usbnet-no-gro",
		Summary:  "RX through usbnet's netif_rx backlog: no NAPI, no GRO",
		Findings: []string{"usbnet-no-gro"},
		Check:    checkUSBNet,
	})
}

func checkUSBNet(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if d.Datapath.USBNet.State != datapath.Yes || d.Datapath.OwnNAPI.State == datapath.Yes {
			continue // not usbnet, or a usbnet with NAPI (our module)
		}
		od := obsDevice(in.Obs, d.Name)
		sev, impact, rateEv, rateWhy := usbnetImpact(d)
		f := Finding{
			ID:       "usbnet-no-gro",
			Severity: sev,
			Impact:   impact,
			Devices:  []string{d.Name},
			Title:    fmt.Sprintf("%s (%s) receives through usbnet's netif_rx backlog: no NAPI, no GRO", d.Name, d.Driver),
			Evidence: []Evidence{
				snapEv(devField(d, "driver"), "%s", d.Driver),
				snapEv(devField(d, "datapath.usbnet"), "%s (%s)", d.Datapath.USBNet.State, d.Datapath.USBNet.Evidence),
				snapEv(devField(d, "datapath.rx_path"), "%s", d.Datapath.RXPath),
			},
			Why: "usbnet hands every received frame to netif_rx(): each TCP segment climbs the stack alone (GRO would merge ~30 into one), " +
				"and all of it runs in usbnet's " + usbnetBHName(in.Snap.Host.Kernel) + " on the CPU that took the USB host controller's interrupt. " +
				"Measured elsewhere: mt76 USB WiFi went 380 -> 588 Mbit/s once its RX went through threaded NAPI + GRO (" + srcMT76Article + "); " +
				"on a Raspberry Pi 4 the ax88179 (usbnet) trails the rtl8153 (r8152: own NAPI + GRO) on the same port (" + srcPi4Article + ").",
			Verify: verifyRX(d.Name),
		}
		if rx := u64(d.Stats.RxPackets); rx > 0 {
			f.Evidence = append(f.Evidence, snapEv(devField(d, "stats.rx_packets"), "%d", rx))
		}
		f.Evidence = append(f.Evidence, rateEv...)
		f.Why += " " + rateWhy
		if od != nil && od.NetifRx > 0 {
			f.Evidence = append(f.Evidence, obsEv(fmt.Sprintf("devices[%s].rx_path", d.Name), "%s, %.0f netif_rx/s", od.RXPath, od.NetifRxPerSec))
			switch {
			case od.RXPath.Class() == datapath.NetifRx && od.NetifRxPerSec >= 20000:
				f.Severity, f.Impact = Crit, 85
			case od.RXPath.Class() == datapath.NetifRx && od.NetifRxPerSec >= 5000 && f.Severity == Info:
				f.Severity, f.Impact = Warn, 55 // busier than its link class suggested
			}
		} else if in.Obs == nil {
			f.Unchecked = append(f.Unchecked, "how many packets take this path now: needs --observe")
		}
		f.Fix = usbnetFix(in.Snap, d)
		if groBlockedDrivers[d.Driver] {
			no := d.Driver + " raises the device's hard_header_len for a transmit header of its own, and GRO compares that many bytes of every packet's headers when it is not 14, so segments of one flow never match: on this driver GRO merges nothing, with wirespeed's module too (read from the kernel's net/core/gro.c and drivers/net/usb; seen in wirespeed's lab for rndis_host and cdc_eem)."
			f.Why += " " + no
			f.Fix.Caveat += " The module still moves " + d.Driver + " to NAPI (a budget, threaded polling), but " + no
		}
		f.Unchecked = append(f.Unchecked, distroAssumed(hostDistroOf(in.Snap))...)
		out = append(out, f)
	}
	return out, nil
}

func usbnetFix(s *inspect.Snapshot, d *inspect.Device) *Fix {
	fix := &Fix{}
	k := s.Host.Kernel
	h := hostDistroOf(s)
	cmds, caveat, platform := platformModule(s, d, h)
	if platform {
		fix.Commands = append(fix.Commands, cmds...)
	} else if ModuleKernels.MatchString(k) {
		on := ""
		if h.Distro != distroUnknown {
			on = " on " + h.label()
		}
		fix.Commands = append(fix.Commands,
			"# kernel "+k+" matches wirespeed's usbnet module ("+moduleAdds(k)+")"+on+":")
		fix.Commands = append(fix.Commands, moduleNotes(k, h)...)
		fix.Commands = append(fix.Commands,
			"cp -r kernel/usbnet /usr/src/wirespeed-usbnet-"+ModuleVersion+" && dkms install wirespeed-usbnet/"+ModuleVersion,
			fmt.Sprintf("modprobe -r %s usbnet && modprobe %s", d.Driver, d.Driver))
	} else {
		if h.Distro != distroUnknown {
			fix.Commands = append(fix.Commands, "# this host: "+h.label())
		}
		fix.Commands = append(fix.Commands, moduleRefusal(k, h, s.Host.Arch)...)
	}
	cpus, known := rpsCPUs(d)
	if known && len(cpus) == 0 && len(onlineCPUs(s)) > 1 && s.Host.OpenWrt != nil {
		fix.Commands = append(fix.Commands, "# today, on any kernel: spread protocol processing with OpenWrt's packet steering ("+
			seeFinding("irq-stuck-rps-off", d.Name, "", "uci set network.@globals[0].packet_steering=1")+")")
	} else if known && len(cpus) == 0 && len(onlineCPUs(s)) > 1 {
		fix.Commands = append(fix.Commands,
			"# today, on any kernel: spread protocol processing with RPS ("+seeFinding("irq-stuck-rps-off", d.Name, " for the mask",
				"write a mask of every CPU but the one that takes the USB host controller's interrupt to /sys/class/net/"+d.Name+"/queues/rx-*/rps_cpus")+")")
	}
	fix.Caveat = "The module replaces usbnet and every minidriver on it (struct usbnet changes); `dkms remove wirespeed-usbnet/" + ModuleVersion + " --all` goes back to the stock modules."
	if caveat != "" {
		fix.Caveat = caveat
	}
	if ModuleKernels.MatchString(k) && piKernel(k) {
		fix.Caveat += " Raspberry Pi kernels are built from the Raspberry Pi tree, whose drivers/net/usb carries a few changes of its own (smsc95xx's extra parameters, say); the module is built from upstream's usbnet (Debian's linux-source or kernel.org's release), which lacks them; to keep them, build with that tree: KSRC=DIR dkms install ..."
	}
	return fix
}

// groBlockedDrivers raise their netdev's hard_header_len for a transmit
// header of their own (Linux 7.3.4's drivers/net/usb; needed_headroom is
// the kernel's field for that). gro_list_prepare() compares
// hard_header_len bytes from the MAC header when it is not ETH_HLEN, which
// takes in the IPv4 ID and checksum, so no two segments of a flow match.
var groBlockedDrivers = map[string]bool{"rndis_host": true, "cdc_eem": true, "kalmia": true, "sierra_net": true,
	"smsc95xx": true, "smsc75xx": true, "dm9601": true, "sr9700": true, "int51x1": true, "net1080": true,
	"gl620a": true, "zaurus": true}

// cellularDrivers are usbnet minidrivers of cellular modems: their rate is
// the radio's, and they report no link speed.
var cellularDrivers = map[string]bool{"qmi_wwan": true, "cdc_mbim": true, "sierra_net": true, "huawei_cdc_ncm": true, "lg-vl600": true, "kalmia": true}

// usbnetImpact: how much the missing GRO costs this device, by the rate it
// can receive at. Per-packet cost scales with packets per second: a
// gigabit adapter at line rate hands up ~80 000 frames a second, an LTE
// modem at 50 Mbit/s ~4 000. The link speed says the rate where the
// device reports one; a cellular modem reports none, and its USB speed
// bounds what its radio can deliver (USB 2: LTE-class rates; USB 3: 5G).
func usbnetImpact(d *inspect.Device) (Severity, int, []Evidence, string) {
	if phy, why := phyRate(d); !phy && d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
		// no made-up numbers: a speed the driver passes on from the
		// device says nothing of the frames it will hand up
		ev := []Evidence{snapEv(devField(d, "link.speed_mbps"), "%d (not a negotiated rate)", *d.Link.SpeedMbps)}
		return Warn, 55, ev, "How many frames a second that is depends on the rate the link really has, not known here: " + why + "; --observe counts them."
	}
	if d.Link.SpeedMbps != nil && *d.Link.SpeedMbps > 0 {
		r := *d.Link.SpeedMbps
		ev := []Evidence{snapEv(devField(d, "link.speed_mbps"), "%d", r)}
		switch {
		case r < 100:
			return Info, 30, ev, fmt.Sprintf("At %d Mbit/s (~%d frames/s at most) the per-packet cost is small on most CPUs: worth knowing, rarely the bottleneck.", r, r*1000/12)
		case r < 1000:
			return Warn, 55, ev, fmt.Sprintf("At %d Mbit/s that is up to ~%d frames/s through one CPU.", r, r*1000/12)
		}
		return Warn, 70, ev, fmt.Sprintf("At %d Mbit/s that is up to ~%d frames/s through one CPU.", r, r*1000/12)
	}
	if cellularDrivers[d.Driver] && d.USB != nil {
		ev := []Evidence{snapEv(devField(d, "driver"), "%s (a cellular modem: no link speed)", d.Driver),
			snapEv(devField(d, "usb.speed_mbps"), "%s", d.USB.SpeedMbps)}
		if usb, err := strconv.Atoi(strings.TrimSpace(d.USB.SpeedMbps)); err == nil && usb > 480 {
			return Warn, 50, ev, "A cellular modem's rate is its radio's; on a USB 3 port it is a 5G-class modem, which can deliver hundreds of Mbit/s: tens of thousands of frames a second through one CPU."
		}
		return Info, 30, ev, "A cellular modem's rate is its radio's; on a USB 2 port it is an LTE-class modem, typically tens of Mbit/s: a few thousand frames a second, a small per-packet cost (--observe tells how many)."
	}
	return Warn, 70, nil, ""
}

// usbnetBHName names the context usbnet_bh() runs in on kernel k.
func usbnetBHName(k string) string {
	f := fact("usbnet-bh-work")
	switch Has(k, f.Key) {
	case datapath.Yes:
		return "BH work (softirq context; " + f.Cite() + ")"
	case datapath.No:
		return "tasklet (softirq; BH work from Linux " + f.Release + ")"
	}
	return "bottom half (a tasklet before Linux " + f.Release + ", BH work since; softirq either way)"
}

// moduleAdds says what the module adds on kernel k: BQL only where the
// kernel's own usbnet lacks it.
func moduleAdds(k string) string {
	if Has(k, "usbnet-bql") == datapath.Yes {
		return "NAPI + GRO for usbnet RX; BQL is in this kernel's usbnet already (Linux " + fact("usbnet-bql").Release + "+)"
	}
	return "NAPI + GRO for usbnet RX, plus BQL"
}
