package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule usbnet-no-gro: a USB NIC on usbnet hands every received frame to
// netif_rx(): no NAPI, no GRO, one stack traversal per TCP segment, all on
// the CPU that ran usbnet's bottom half (the host controller's IRQ CPU).

func init() {
	register(Rule{
		ID:      "usbnet-no-gro",
		Summary: "RX through usbnet's netif_rx backlog: no NAPI, no GRO",
		Check:   checkUSBNet,
	})
}

func checkUSBNet(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if d.Datapath.USBNet.State != datapath.Yes || d.Datapath.OwnNAPI.State == datapath.Yes {
			continue // not usbnet, or a usbnet with NAPI (our module)
		}
		od := obsDevice(in.Obs, d.Name)
		f := Finding{
			ID:       "usbnet-no-gro",
			Severity: Warn,
			Impact:   70,
			Devices:  []string{d.Name},
			Title:    fmt.Sprintf("%s (%s) receives through usbnet's netif_rx backlog: no NAPI, no GRO", d.Name, d.Driver),
			Evidence: []Evidence{
				snapEv(devField(d, "driver"), "%s", d.Driver),
				snapEv(devField(d, "datapath.usbnet"), "%s (%s)", d.Datapath.USBNet.State, d.Datapath.USBNet.Evidence),
				snapEv(devField(d, "datapath.rx_path"), "%s", d.Datapath.RXPath),
			},
			Why: "usbnet hands every received frame to netif_rx(): each TCP segment climbs the stack alone (GRO would merge ~30 into one), " +
				"and all of it runs on the CPU that took the USB host controller's interrupt. " +
				"Measured elsewhere: mt76 USB WiFi went 380 -> 588 Mbit/s once its RX went through threaded NAPI + GRO (" + srcMT76Article + "); " +
				"on a Raspberry Pi 4 the ax88179 (usbnet) trails the rtl8153 (r8152: own NAPI + GRO) on the same port (" + srcPi4Article + ").",
			Verify: verifyRX(d.Name),
		}
		if rx := u64(d.Stats.RxPackets); rx > 0 {
			f.Evidence = append(f.Evidence, snapEv(devField(d, "stats.rx_packets"), "%d", rx))
		}
		if od != nil && od.NetifRx > 0 {
			f.Evidence = append(f.Evidence, obsEv(fmt.Sprintf("devices[%s].rx_path", d.Name), "%s, %.0f netif_rx/s", od.RXPath, od.NetifRxPerSec))
			if od.RXPath.Class() == datapath.NetifRx && od.NetifRxPerSec >= 20000 {
				f.Severity = Crit
				f.Impact = 85
			}
		} else if in.Obs == nil {
			f.Unchecked = append(f.Unchecked, "how many packets take this path now: needs --observe")
		}
		f.Fix = usbnetFix(in.Snap, d)
		f.Unchecked = append(f.Unchecked, distroUnchecked(in.Snap.Host.Kernel)...)
		out = append(out, f)
	}
	return out, nil
}

func usbnetFix(s *inspect.Snapshot, d *inspect.Device) *Fix {
	fix := &Fix{}
	k := s.Host.Kernel
	h := distroOf(k)
	if ModuleKernels.MatchString(k) {
		on := ""
		if h.Distro != distroUnknown {
			on = " on " + h.label()
		}
		fix.Commands = append(fix.Commands,
			"# kernel "+k+" matches wirespeed's usbnet module (NAPI + GRO for usbnet RX, plus BQL)"+on+":")
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
	if known && len(cpus) == 0 && len(onlineCPUs(s)) > 1 {
		fix.Commands = append(fix.Commands,
			"# today, on any kernel: spread protocol processing with RPS ("+seeFinding("irq-stuck-rps-off", d.Name, " for the mask",
				"write a mask of every CPU but the one that takes the USB host controller's interrupt to /sys/class/net/"+d.Name+"/queues/rx-*/rps_cpus")+")")
	}
	fix.Caveat = "The module replaces usbnet and every minidriver on it (struct usbnet changes); `dkms remove wirespeed-usbnet/" + ModuleVersion + " --all` goes back to the stock modules."
	if ModuleKernels.MatchString(k) && piKernel(k) {
		fix.Caveat += " Raspberry Pi kernels are built from the Raspberry Pi tree, whose drivers/net/usb carries a few changes of its own (smsc95xx's extra parameters, say); the module is built from upstream's usbnet (Debian's linux-source or kernel.org's release), which lacks them; to keep them, build with that tree: KSRC=DIR dkms install ..."
	}
	return fix
}

// distroUnchecked: what the usbnet advice assumed about the distribution.
func distroUnchecked(kernel string) []string {
	h := distroOf(kernel)
	if h.Distro == distroUnknown {
		return []string{"the distribution (" + h.Why + "): the advice names the supported kernel families, not how this host gets one"}
	}
	if h.Inferred {
		return []string{"the distribution: " + h.label() + "; the snapshot does not record /etc/os-release"}
	}
	return nil
}
