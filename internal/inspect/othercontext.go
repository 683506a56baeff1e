// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// Devices that receive in someone else's context. napi-get lists no NAPI
// for them, yet none of them takes the netif_rx backlog:
//
//   - a bridge receives in its ports' receive path: br_handle_frame() is
//     the port's rx_handler, run from the port's NAPI poll, and
//     br_pass_frame_up() hands the frame on right there;
//   - a DSA user port receives in its conduit's NAPI: the tagger's
//     dsa_switch_rcv() passes each frame to gro_cells_receive(), per-CPU
//     NAPIs with GRO that are created NO_BUSY_POLL and so have no NAPI id
//     (net/core/gro_cells.c);
//   - a tap that vhost-net feeds receives in the vhost worker: the
//     guest's frames, GSO super-frames with a virtio-net header,
//     tun_sendmsg() -> netif_receive_skb();
//   - a tun or tap a process writes to receives in that write():
//     tun_get_user() -> netif_receive_skb(), with IFF_VNET_HDR already as
//     GSO super-packets (wireguard-go and Tailscale coalesce before they
//     write);
//   - drivers that poll their NAPI on an internal netdev that is never
//     registered (alloc_netdev_dummy()): napi-get cannot list it, and a
//     threaded NAPI's kthread carries that netdev's name.
//
// Threaded NAPI and the device's own rps_cpus do not reach any of them:
// the knobs are the other device's (ports, conduit) or the writer's.

// tun_flags bits (include/uapi/linux/if_tun.h).
const (
	iffTAP     = 0x0002
	iffNAPI    = 0x0010
	iffVnetHdr = 0x4000
)

// dummyNetdevNAPI: Ethernet drivers that poll on an internal netdev, with
// that netdev's name (their threaded NAPIs' kthreads are napi/NAME-ID).
// mtk_soc_eth (MediaTek's SoC Ethernet, OpenWrt's mt7621/mt7622/filogic
// routers): OpenWrt's packet steering script matches its kthreads as
// napi/mtk_eth-* (package/network/config/netifd/.../packet-steering.uc).
var dummyNetdevNAPI = map[string]string{"mtk_soc_eth": "mtk_eth"}

// otherContext classifies a device that receives in another context; false
// when d is none of them.
func (c *collector) otherContext(d *Device, dp *Datapath, gro datapath.State) bool {
	base := "/sys/class/net/" + d.Name
	switch {
	case c.fs.IsDir(base+"/bridge") || d.Driver == "bridge":
		ports, _ := c.fs.ReadDir(base + "/brif")
		sort.Strings(ports)
		dp.RXVia = ports
		dp.OwnNAPI = Tri{datapath.No, "a bridge has no NAPI: it receives in its ports' NAPI poll"}
		dp.RXPath = datapath.BridgePath
		dp.RXPathNote = "br_handle_frame() runs as each port's rx_handler, in the port's NAPI poll, and passes frames up in that context: " +
			"threaded NAPI and RPS on the bridge change nothing; the ports' (" + orNone(ports) + ") are the knobs"
	case c.devtype(base) == "dsa" || d.Driver == "dsa":
		conduit := c.lowers(base)
		dp.RXVia = conduit
		dp.OwnNAPI = Tri{datapath.Yes, "DSA user ports receive through gro_cells: one NAPI per CPU, NO_BUSY_POLL, so without a NAPI id napi-get could list"}
		dp.RXPath = datapath.DSAPath
		dp.RXPathNote = "the conduit (" + orNone(conduit) + ") receives the tagged frames in its NAPI; dsa_switch_rcv() queues each to the gro_cell of that CPU, " +
			"whose NAPI runs GRO (with rx-gro on) on the same CPU: RPS and threaded NAPI belong on the conduit"
	case d.Driver == "tun" && len(d.NAPIs) == 0:
		c.tunContext(d, dp)
	case dummyNetdevNAPI[d.Driver] != "":
		name := dummyNetdevNAPI[d.Driver]
		d.Threads = c.threadsOf(name)
		how := "in softirq"
		if len(d.Threads) > 0 {
			how = fmt.Sprintf("threaded (%d napi/%s-* kthread(s))", len(d.Threads), name)
		}
		dp.OwnNAPI = Tri{datapath.Yes, d.Driver + " polls its NAPIs on an internal netdev (" + name + ") that is never registered: napi-get cannot list them"}
		dp.RXPath = datapath.DummyNetdevNAPIPath
		dp.RXPathNote = fmt.Sprintf("%s delivers from its NAPI poll with napi_gro_receive() (rx-gro %s), %s; the sysfs threaded knob of %s does not reach that netdev",
			d.Driver, gro, how, d.Name)
	default:
		return false
	}
	return true
}

// tunContext: a tun or tap device without NAPI (IFF_NAPI unset), by its
// tun_flags and whether vhost-net is in use.
func (c *collector) tunContext(d *Device, dp *Datapath) {
	base := "/sys/class/net/" + d.Name
	flags := -1
	if s, e := c.str(base + "/tun_flags"); e == "" {
		if v, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 32); err == nil {
			flags = int(v)
		}
	}
	dp.OwnNAPI = Tri{datapath.No, fmt.Sprintf("tun_flags %#x: no IFF_NAPI, the writer's context delivers", max(flags, 0))}
	vhost := 0
	if n := c.intp("/sys/module/vhost_net/refcnt"); n != nil {
		vhost = *n
	}
	switch {
	case flags < 0:
		dp.OwnNAPI = Tri{datapath.No, "a tun/tap device (tun_flags unreadable): the writer's context delivers"}
		dp.RXPath = datapath.WriterTunPath
	case flags&iffTAP != 0 && vhost > 0:
		dp.RXPath = datapath.VhostTapPath
		dp.RXPathNote = fmt.Sprintf("a tap with vhost-net in use (/sys/module/vhost_net/refcnt %d): the guest's frames arrive as GSO super-frames from the vhost worker thread "+
			"through tun_sendmsg() -> netif_receive_skb(), no backlog; the worker's CPU is the knob (the VM's vhost thread affinity), not RPS or threaded NAPI", vhost)
		return
	case flags&iffTAP == 0 && flags&iffVnetHdr != 0:
		dp.RXPath = datapath.TunnelTunPath
		dp.RXPathNote = "a tun with IFF_VNET_HDR: a userspace tunnel (wireguard-go, Tailscale) writes packets it has already coalesced, as GSO super-packets, " +
			"and tun_get_user() -> netif_receive_skb() delivers them in the writer's thread; the tunnel's own threads are the knob, not threaded NAPI"
		return
	default:
		dp.RXPath = datapath.WriterTunPath
	}
	dp.RXPathNote = "the process writing to the device delivers each packet with netif_receive_skb() in its write() (tun_get_user()): " +
		"no NAPI and no backlog; threaded NAPI does not apply, and RPS only moves the stack's work off the writer's CPU"
}

// devtype is the DEVTYPE of a netdev's uevent ("dsa", "wlan", "bridge").
func (c *collector) devtype(base string) string {
	ue, err := c.fs.ReadString(base + "/uevent")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(ue, "\n") {
		if v, ok := strings.CutPrefix(l, "DEVTYPE="); ok {
			return v
		}
	}
	return ""
}

// lowers lists the devices below a stacked netdev (its lower_* links).
func (c *collector) lowers(base string) []string {
	ents, _ := c.fs.ReadDir(base)
	var out []string
	for _, e := range ents {
		if l, ok := strings.CutPrefix(e, "lower_"); ok {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none found"
	}
	return strings.Join(s, ", ")
}
