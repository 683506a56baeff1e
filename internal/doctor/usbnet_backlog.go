package doctor

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
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

// ModuleKernels matches the kernels kernel/usbnet builds for, the rule of
// its dkms.conf: any kernel of the 6.1 or 6.12 family, whatever its name.
var ModuleKernels = regexp.MustCompile(`^(6\.1|6\.12)\.[0-9]+([^0-9].*)?$`)

// ModuleKernelsText says the same for people.
const ModuleKernelsText = "the Linux 6.1 and 6.12 families (Debian 12's default 6.1.0-N, 6.12.N+deb12/+bpo/+deb13, Raspberry Pi OS 6.12.N+rpt-*, self-built 6.1.y and 6.12.y)"

// ModuleVersion is kernel/usbnet's DKMS package version (dkms.conf).
const ModuleVersion = "0.2"

// moduleRefusal says, as build.sh and dkms.conf do, why kernel k gets no
// module and what the user can do instead.
func moduleRefusal(k string) string {
	var major, minor int
	if n, _ := fmt.Sscanf(k, "%d.%d", &major, &minor); n == 2 && (major > 6 || major == 6 && minor >= 19) {
		return "# wirespeed's usbnet module (kernel/usbnet) is not for kernel " + k + ": Linux 6.19+ has usbnet's BQL in tree; only the NAPI + GRO half is still missing upstream, and the module builds for " + ModuleKernelsText + " only"
	}
	how := "boot a kernel of one of them (Debian 12's linux-image-amd64/-arm64 is 6.1) to use it"
	if piKernel(k) {
		how = "apt full-upgrade brings Raspberry Pi OS's current kernel (6.12.N+rpt-rpi-v8 / -rpi-2712 on bookworm, 6.1 on bullseye), which it builds for"
	}
	return "# wirespeed's usbnet module (kernel/usbnet) does not apply to kernel " + k + ": it builds for " + ModuleKernelsText + "; " + how
}

// piKernel: a Raspberry Pi OS (or Ubuntu raspi) kernel by its name:
// 6.12.N+rpt-rpi-v8, 6.1.21-v8+, 5.15.4-0-rpi4, 5.15.0-1034-raspi.
func piKernel(k string) bool {
	return strings.Contains(k, "rpi") || strings.Contains(k, "raspi") || strings.HasSuffix(k, "-v8+")
}

func checkUSBNet(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	for _, d := range in.devices() {
		if d.Datapath.USBNet.State != "yes" || d.Datapath.OwnNAPI.State == "yes" {
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
				"The field's figures: mt76 USB WiFi 380 -> 588 Mbit/s once RX went through threaded NAPI + GRO (seed 000); " +
				"on a Raspberry Pi 4 the ax88179 (usbnet) trails the rtl8153 (r8152: own NAPI + GRO) on the same port (seed 003).",
			Verify: verifyRX(d.Name),
		}
		if rx := u64(d.Stats.RxPackets); rx > 0 {
			f.Evidence = append(f.Evidence, snapEv(devField(d, "stats.rx_packets"), "%d", rx))
		}
		if od != nil && od.NetifRx > 0 {
			f.Evidence = append(f.Evidence, obsEv(fmt.Sprintf("devices[%s].rx_path", d.Name), "%s, %.0f netif_rx/s", od.RXPath, od.NetifRxPerSec))
			if od.RXPath == observe.PathNetifRx && od.NetifRxPerSec >= 20000 {
				f.Severity = Crit
				f.Impact = 85
			}
		} else if in.Obs == nil {
			f.Unchecked = append(f.Unchecked, "how many packets take this path now: needs --observe")
		}
		f.Fix = usbnetFix(in.Snap, d)
		out = append(out, f)
	}
	return out, nil
}

func usbnetFix(s *inspect.Snapshot, d *inspect.Device) *Fix {
	fix := &Fix{}
	k := s.Host.Kernel
	if ModuleKernels.MatchString(k) {
		fix.Commands = append(fix.Commands,
			"# kernel "+k+" matches wirespeed's usbnet module (NAPI + GRO for usbnet RX, plus BQL):",
			"cp -r kernel/usbnet /usr/src/wirespeed-usbnet-"+ModuleVersion+" && dkms install wirespeed-usbnet/"+ModuleVersion,
			fmt.Sprintf("modprobe -r %s usbnet && modprobe %s", d.Driver, d.Driver))
	} else {
		fix.Commands = append(fix.Commands, moduleRefusal(k))
	}
	cpus, known := rpsCPUs(d)
	if known && len(cpus) == 0 && len(onlineCPUs(s)) > 1 {
		fix.Commands = append(fix.Commands,
			"# today, on any kernel: spread protocol processing with RPS (see finding irq-stuck-rps-off for the mask)")
	}
	fix.Caveat = "The module replaces usbnet and every minidriver on it (struct usbnet changes); `dkms remove wirespeed-usbnet/" + ModuleVersion + " --all` goes back to the stock modules."
	if ModuleKernels.MatchString(k) && piKernel(k) {
		fix.Caveat += " On Raspberry Pi OS the module is built from Debian's linux-source of the same family, which lacks the Raspberry Pi tree's own changes to drivers/net/usb (smsc95xx's extra parameters, say); to keep them, build with that tree: KSRC=DIR dkms install ..."
	}
	return fix
}
