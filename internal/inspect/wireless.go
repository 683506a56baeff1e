// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"path"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// WiFi interfaces. A cfg80211 device has /sys/class/net/DEV/phy80211 (a
// link to its wiphy, /sys/class/ieee80211/phyN), usually a wireless/
// directory and DEVTYPE=wlan in its uevent. Its RX path is not what
// napi-get shows: mac80211 drivers that use NAPI poll it on a netdev of
// their own that is never registered (mt76's and iwlwifi's
// alloc_netdev_dummy()), so napi-get lists no NAPI for the interface and a
// threaded NAPI's kthread is named after that netdev (mt76: the wiphy,
// "napi/phy0-<id>"), not the interface. And some drivers have no NAPI at
// all: mt76's USB path (mt76u) completes URBs into a worker kthread,
// "mt76-usb-rx <wiphy>" (mt76_worker_setup() in mt76/util.h), which hands
// the frames to netif_receive_skb_list() without GRO (mt76_rx_complete()
// with a NULL napi, mt76/mac80211.c) - until the kernel carries "wifi:
// mt76: mt76u: use a threaded NAPI for the RX path", which gives mt76u the
// same threaded NAPI on an internal netdev as mt76's PCIe path.

// Wireless describes a WiFi interface.
type Wireless struct {
	// Phy is the wiphy's name ("phy0"), from the phy80211 link.
	Phy string `json:"phy,omitempty"`
	// Evidence says what showed it is wireless.
	Evidence string `json:"evidence"`
	// Stack is mac80211 (a SoftMAC driver: mac80211 builds and queues
	// the frames), full-MAC (cfg80211 only: the firmware does) or unknown,
	// by driver name.
	Stack WiFiStack `json:"stack"`
	// Family names driver families whose RX path inspect knows.
	Family WiFiFamily `json:"family,omitempty"`
	// RXWorkers are the driver's RX kthreads that are not NAPIs: mt76u's
	// usb-rx worker ("mt76-usb-rx phyN", cut to 15 characters).
	RXWorkers []NAPIThread `json:"rx_workers,omitempty"`
}

// WiFiStack is which layer builds a WiFi interface's frames.
type WiFiStack string

// WiFi stacks.
const (
	StackMac80211 WiFiStack = "mac80211"
	StackFullMAC  WiFiStack = "full-MAC"
	StackUnknown  WiFiStack = "unknown"
)

// WiFiFamily is a WiFi driver family whose RX path inspect knows ("" for
// the others).
type WiFiFamily string

// WiFi driver families.
const (
	FamilyMT76USB  WiFiFamily = "mt76 USB"
	FamilyMT76PCIe WiFiFamily = "mt76 PCIe"
	FamilyIwlwifi  WiFiFamily = "iwlwifi"
	FamilyAth1xk   WiFiFamily = "ath1xk"
)

// mt76USB are mt76's USB drivers (mt76x0u, mt76x2u, mt7663u, mt7921u,
// mt7925u in 6.12); mt76PCIe its PCIe ones.
var (
	mt76USB  = map[string]bool{"mt76x0u": true, "mt76x2u": true, "mt7663u": true, "mt7921u": true, "mt7925u": true}
	mt76PCIe = map[string]bool{"mt7603e": true, "mt76x0e": true, "mt76x2e": true, "mt7615e": true, "mt7915e": true,
		"mt7921e": true, "mt7925e": true, "mt7996e": true}
	// napiSoftirqWiFi poll a NAPI in softirq on a netdev of their own and
	// deliver through napi_gro_receive() (ieee80211_rx_napi()).
	napiSoftirqWiFi = map[string]WiFiFamily{"iwlwifi": FamilyIwlwifi, "ath10k_pci": FamilyAth1xk, "ath11k_pci": FamilyAth1xk, "ath12k_pci": FamilyAth1xk}
	// fullMAC drivers: cfg80211 only, the firmware builds the frames.
	fullMAC = map[string]bool{"brcmfmac": true, "mwifiex_pcie": true, "mwifiex_sdio": true, "mwifiex_usb": true,
		"qtnfmac_pcie": true, "wilc1000_sdio": true, "wilc1000_spi": true}
)

// mac80211Driver: the SoftMAC drivers by name or family prefix.
func mac80211Driver(drv string) bool {
	if mt76USB[drv] || mt76PCIe[drv] || napiSoftirqWiFi[drv] != "" {
		return true
	}
	for _, p := range []string{"ath9k", "ath10k", "ath11k", "ath12k", "rtw88", "rtw_", "rtw89", "rtl8", "rt2", "iwl", "carl9170", "p54", "mt7601u", "brcmsmac", "mwl8k", "wcn36xx", "ath5k", "b43"} {
		if strings.HasPrefix(drv, p) {
			return true
		}
	}
	return false
}

// mt76uNAPIThread begins the kthread name of mt76u's RX NAPI since "wifi:
// mt76: mt76u: use a threaded NAPI for the RX path" (5323d3e50c20, Linux
// 7.3): the NAPI sits on a dummy netdev named "mt76u-rx", not on one named
// after the wiphy as mt76's PCIe path does, so its thread is
// "napi/mt76u-rx-<id>" (cut to 15 characters). Every mt76u adapter's
// dummy netdev has that name: with two adapters, which thread is whose is
// not known. The "mt76-usb-rx phyN" worker stays on such kernels (for the
// MCU queue), so its presence alone no longer means RX without NAPI.
const mt76uNAPIThread = "napi/mt76u-rx"

// mt76uNAPIRelease is the first release with that change: on it and later
// a worker without a NAPI thread is not proof of the old RX path.
var mt76uNAPIRelease = [2]int{7, 3}

// wirelessWorker: a kthread comm the thread scan records for WiFi RX.
func wirelessWorker(comm string) bool {
	return strings.HasPrefix(comm, "mt76-usb-rx")
}

// commFor matches a kthread comm against the name the kernel gave it,
// which it cuts at 15 characters.
func commFor(comm, full string) bool {
	return comm == full || (len(comm) == 15 && strings.HasPrefix(full, comm))
}

// wireless fills d.Wireless for a WiFi interface, and adds the threads of
// NAPIs polled on the driver's internal netdev (napi/<phy>-<id>).
func (c *collector) wireless(d *Device) {
	base := "/sys/class/net/" + d.Name
	w := &Wireless{}
	var ev []string
	if t, err := c.fs.Readlink(base + "/phy80211"); err == nil {
		w.Phy = path.Base(t)
		ev = append(ev, "phy80211 -> "+w.Phy)
	}
	if c.fs.IsDir(base + "/wireless") {
		ev = append(ev, "wireless/ exists")
	}
	if ue, err := c.fs.ReadString(base + "/uevent"); err == nil && strings.Contains(ue, "DEVTYPE=wlan") {
		ev = append(ev, "DEVTYPE=wlan")
	}
	if len(ev) == 0 {
		return
	}
	w.Evidence = strings.Join(ev, ", ")
	switch {
	case mac80211Driver(d.Driver):
		w.Stack = StackMac80211
	case fullMAC[d.Driver]:
		w.Stack = StackFullMAC
	default:
		w.Stack = StackUnknown
	}
	switch {
	case mt76USB[d.Driver]:
		w.Family = FamilyMT76USB
	case mt76PCIe[d.Driver]:
		w.Family = FamilyMT76PCIe
	default:
		w.Family = napiSoftirqWiFi[d.Driver]
	}
	if w.Phy != "" {
		c.threadsOf("") // scan once
		for _, t := range c.threads {
			if (strings.HasPrefix(t.Comm, "napi/"+w.Phy+"-") || w.Family == FamilyMT76USB && strings.HasPrefix(t.Comm, mt76uNAPIThread)) &&
				!hasThread(d.Threads, t.PID) {
				d.Threads = append(d.Threads, t)
			}
			if wirelessWorker(t.Comm) && commFor(t.Comm, "mt76-usb-rx "+w.Phy) {
				w.RXWorkers = append(w.RXWorkers, t)
			}
		}
	}
	d.Wireless = w
}

func hasThread(l []NAPIThread, pid int) bool {
	for _, t := range l {
		if t.PID == pid {
			return true
		}
	}
	return false
}

// wirelessDatapath classifies a WiFi interface that napi-get lists no NAPI
// for.
func wirelessDatapath(d *Device, dp *Datapath, gro datapath.State, mode datapath.Mode, kernel string) {
	w := d.Wireless
	switch {
	case len(d.Threads) > 0:
		dp.OwnNAPI = Tri{datapath.Yes, fmt.Sprintf("%d kthread(s) %s: a threaded NAPI on the driver's internal netdev, which napi-get cannot list", len(d.Threads), threadComms(d.Threads))}
		dp.RXPath = datapath.NAPIPath(gro, mode)
		dp.RXPathNote = "the driver polls a NAPI on a netdev of its own and delivers through napi_gro_receive(); GRO follows this interface's rx-gro"
	case w.Family == FamilyMT76USB && len(w.RXWorkers) > 0 && kernelNewer(kernel, mt76uNAPIRelease):
		dp.OwnNAPI = Tri{datapath.Unknown, fmt.Sprintf("mt76u's worker %s (pid %d) runs, but on Linux %d.%d+ it serves the MCU queue and RX polls a threaded NAPI (%s-*), whose thread was not seen",
			w.RXWorkers[0].Comm, w.RXWorkers[0].PID, mt76uNAPIRelease[0], mt76uNAPIRelease[1], mt76uNAPIThread)}
		dp.RXPath = datapath.MT76UnseenPath
	case w.Family == FamilyMT76USB && len(w.RXWorkers) > 0:
		dp.OwnNAPI = Tri{datapath.No, fmt.Sprintf("mt76u RX runs in its usb-rx worker kthread (%s, pid %d), no napi/%s-* kthread", w.RXWorkers[0].Comm, w.RXWorkers[0].PID, w.Phy)}
		dp.RXPath = datapath.MT76WorkerPath
		dp.RXPathNote = "URB completions wake the usb-rx kthread, which hands frames to netif_receive_skb_list() with no NAPI: no GRO whatever ethtool says; " +
			"a kernel with \"wifi: mt76: mt76u: use a threaded NAPI for the RX path\" polls a threaded NAPI instead"
	case w.Family == FamilyMT76USB:
		dp.OwnNAPI = Tri{datapath.Unknown, "mt76 USB driver, but neither its usb-rx worker nor a napi/" + w.Phy + "-* kthread was seen"}
		dp.RXPath = datapath.MT76UnseenPath
	case w.Family == FamilyMT76PCIe:
		dp.OwnNAPI = Tri{datapath.Yes, "mt76's PCIe path polls threaded NAPIs on an internal netdev (mt76_dma_init()); no napi/" + w.Phy + "-* kthread seen"}
		dp.RXPath = datapath.NAPIPath(gro, datapath.Threaded)
	case w.Family != "":
		dp.OwnNAPI = Tri{datapath.Yes, d.Driver + " polls NAPIs in softirq on an internal netdev, which napi-get cannot list; frames go through ieee80211_rx_napi() -> napi_gro_receive()"}
		dp.RXPath = datapath.NAPIPath(gro, datapath.Softirq)
	default:
		dp.OwnNAPI = Tri{datapath.Unknown, "a WiFi driver (" + string(w.Stack) + ") whose NAPIs, if any, sit on an internal netdev napi-get cannot list"}
		dp.RXPath = datapath.WiFiHiddenPath
	}
}

func wirelessSummary(w *Wireless) string {
	s := orDash(w.Phy) + ", " + string(w.Stack)
	if w.Family != "" {
		s += " (" + string(w.Family) + ")"
	}
	s += "; " + w.Evidence
	for _, t := range w.RXWorkers {
		s += fmt.Sprintf("; RX worker %q pid %d on CPU%d (allowed %s)", t.Comm, t.PID, t.CPU, orDash(t.AllowedCPU))
	}
	return s
}

func threadComms(l []NAPIThread) string {
	var s []string
	for _, t := range l {
		s = append(s, t.Comm)
	}
	return strings.Join(s, ", ")
}

// kernelNewer: is release at least major.minor (false when unreadable)?
func kernelNewer(release string, mm [2]int) bool {
	ok, known := kernelAtLeast(release, mm[0], mm[1])
	return ok && known
}
