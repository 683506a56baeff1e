// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// usbnetMinidrivers are the drivers built on usbnet in 6.x kernels; used
// when /sys/module/usbnet/holders cannot tell (usbnet built in).
var usbnetMinidrivers = map[string]bool{
	"asix": true, "ax88172a": true, "ax88179_178a": true, "aqc111": true, "cdc_eem": true,
	"cdc_ether": true, "cdc_mbim": true, "cdc_ncm": true, "cdc_subset": true, "ch9200": true,
	"cx82310_eth": true, "dm9601": true, "gl620a": true, "huawei_cdc_ncm": true, "int51x1": true,
	"kalmia": true, "lg-vl600": true, "mcs7830": true, "net1080": true, "plusb": true,
	"qmi_wwan": true, "rndis_host": true, "sierra_net": true, "smsc75xx": true, "smsc95xx": true,
	"sr9700": true, "sr9800": true, "zaurus": true,
}

// datapath classifies how received packets reach the stack.
func (c *collector) datapath(d *Device) Datapath {
	dp := Datapath{USBNet: Tri{datapath.No, "not a USB device"}}
	if d.Bus == "usb" {
		switch {
		case d.Driver == "":
			dp.USBNet = Tri{datapath.Unknown, "no driver bound"}
		case c.fs.Exists("/sys/module/usbnet/holders/" + d.Driver):
			dp.USBNet = Tri{datapath.Yes, "module usbnet is held by " + d.Driver}
		case usbnetMinidrivers[d.Driver]:
			dp.USBNet = Tri{datapath.Yes, d.Driver + " is a usbnet minidriver"}
		default:
			dp.USBNet = Tri{datapath.No, d.Driver + " is not on usbnet"}
		}
	}
	gro := datapath.Unknown
	for _, o := range d.Offloads {
		if o.Name == "rx-gro" && o.Active != nil {
			gro = datapath.Of(*o.Active)
		}
	}
	threaded := d.NAPISysfs.Threaded == "1" || len(d.Threads) > 0
	for _, n := range d.NAPIs {
		if n.PID != nil {
			threaded = true
		}
	}
	mode := datapath.Softirq
	if threaded {
		mode = datapath.Threaded
	}
	napi := datapath.NAPIPath(gro, mode)
	switch {
	case d.Driver == "loopback":
		dp.OwnNAPI = Tri{datapath.No, "loopback hands packets to netif_rx()"}
		dp.RXPath = datapath.LoopbackPath
	case dp.USBNet.State == datapath.Yes && (len(d.NAPIs) > 0 || len(d.Threads) > 0):
		// A usbnet with NAPI: wirespeed's patched usbnet (kernel/usbnet),
		// or a kernel that gained it.
		dp.OwnNAPI = Tri{datapath.Yes, fmt.Sprintf("usbnet registers a NAPI (%d in napi-get, %d kthreads): a usbnet with NAPI, such as wirespeed's kernel/usbnet", len(d.NAPIs), len(d.Threads))}
		dp.RXPath = napi
		dp.RXPathNote = "usbnet delivers through NAPI: rx_complete -> NAPI poll -> rx_fixup -> napi_gro_receive()"
	case dp.USBNet.State == datapath.Yes:
		dp.OwnNAPI = Tri{datapath.No, "usbnet hands every packet to netif_rx()"}
		dp.RXPath = datapath.USBNetPath
		dp.RXPathNote = "usbnet RX has no NAPI: rx_complete -> " + usbnetBH(c.kernel) + " -> usbnet_bh -> rx_fixup -> netif_rx(); no GRO whatever ethtool says"
	case d.Wireless != nil && len(d.NAPIs) == 0:
		// WiFi drivers poll their NAPIs on an internal netdev napi-get
		// cannot list, or have none: see wireless.go.
		wirelessDatapath(d, &dp, gro, mode, c.kernel)
	case c.otherContext(d, &dp, gro):
		// receives in another device's or a writer's context: othercontext.go
	case len(d.NAPIs) > 0:
		dp.OwnNAPI = Tri{datapath.Yes, fmt.Sprintf("%d NAPI instance(s) in napi-get", len(d.NAPIs))}
		dp.RXPath = napi
	case d.Driver == "wireguard":
		// Known from the driver: per-peer NAPIs without an id, so napi-get
		// never lists them; without threads nothing in sysfs shows them.
		dp.OwnNAPI = Tri{datapath.Yes, fmt.Sprintf("WireGuard registers one NAPI per peer, without a NAPI id: napi-get does not list them (%d napi/%s-* kthread(s) seen)", len(d.Threads), d.Name)}
		dp.RXPath = napi
		dp.RXPathNote = "WireGuard delivers each peer's decrypted packets from the peer's NAPI poll with napi_gro_receive()"
	case len(d.Threads) > 0:
		dp.OwnNAPI = Tri{datapath.Yes, fmt.Sprintf("%d napi/%s-* kthread(s); no NAPI id, so napi-get does not list them", len(d.Threads), d.Name)}
		dp.RXPath = napi
	case d.NAPIsKnown:
		dp.OwnNAPI = Tri{datapath.No, "napi-get lists no NAPI for this device"}
		dp.RXPath = datapath.NoNAPIPath
		dp.RXPathNote = "packets reach the stack through netif_rx() and the per-CPU backlog, or the device is down"
		if d.Driver == "veth" {
			dp.RXPathNote = "veth without NAPI hands packets to netif_rx(); it registers NAPI only with GRO or XDP on (and the link up)"
		}
	default:
		dp.OwnNAPI = Tri{datapath.Unknown, "napi-get unavailable: " + c.a.NAPIsError}
		dp.RXPath = datapath.NoNAPIGetPath
	}
	return dp
}

// usbnetBHRelease: usbnet's deferred work moved from a tasklet to BH work
// in Linux 6.17 (2c04d279e857 "net: usb: Convert tasklet API to new bottom
// half workqueue mechanism"). Both run in softirq context on the CPU that
// queued them - the host controller's interrupt CPU.
var usbnetBHRelease = [2]int{6, 17}

// usbnetBH names the context usbnet_bh() runs in on this kernel.
func usbnetBH(kernel string) string {
	ok, known := kernelAtLeast(kernel, usbnetBHRelease[0], usbnetBHRelease[1])
	switch {
	case !known:
		return "usbnet's bottom half (tasklet before 6.17, BH work since)"
	case ok:
		return "BH work (dev->bh_work, softirq)"
	}
	return "tasklet (dev->bh, softirq)"
}
