// SPDX-License-Identifier: Apache-2.0

package datapath

import "fmt"

// Class is the kind of RX path a device has: how received packets reach
// the stack. inspect infers it from sysfs and netlink, observe from
// tracepoint counts; some classes only one of them gives.
type Class uint8

// RX path classes.
const (
	// Unrecognised is a text this version does not know (a newer or
	// older file): Path keeps it as read. The zero Path, "", is one too.
	Unrecognised Class = iota
	// NAPI: the device's NAPI poll delivers; Path.GRO says whether
	// through GRO.
	NAPI
	// NetifRx: netif_rx() into the per-CPU backlog; no NAPI of the
	// device's own, no GRO (loopback, stock usbnet, veth without GRO).
	NetifRx
	// NoNAPI (inspect): napi-get lists no NAPI for the device, so packets
	// take netif_rx() and the backlog - or the device is down.
	NoNAPI
	// Worker (inspect): a driver's RX kthread hands frames up without
	// NAPI or GRO (mt76u's usb-rx worker).
	Worker
	// Direct (observe): netif_receive_skb outside a NAPI poll, no GRO.
	Direct
	// Backlog (observe): the per-CPU backlog NAPIs themselves
	// (process_backlog), which serve every netif_rx device and RPS.
	Backlog
	// Idle (observe): no RX event named the device.
	Idle
	// Other (observe): skbs delivered without a traced entry point.
	Other
	// Undetermined (inspect): could not tell; the text says what was
	// missing (napi-get, a WiFi driver's hidden NAPIs).
	Undetermined
	// Borrowed (inspect): the device receives in another device's
	// context and has no receive queue of its own to tune - a bridge in
	// its ports' NAPI poll, a DSA user port in its conduit's (through
	// gro_cells: per-CPU NAPIs with GRO but no NAPI id). RPS or threaded
	// NAPI on it changes nothing; the knobs are the other device's.
	Borrowed
	// Injected (inspect): a tun/tap device whose packets a writer hands
	// in (vhost-net's worker for a guest, a userspace tunnel through
	// write()): delivered with netif_receive_skb() in the writer's
	// context, not through the netif_rx backlog, and with IFF_VNET_HDR
	// already as GSO super-packets. There is no NAPI to thread.
	Injected
)

var className = [...]string{Unrecognised: "unrecognised", NAPI: "NAPI", NetifRx: "netif_rx", NoNAPI: "no NAPI",
	Worker: "worker", Direct: "direct", Backlog: "backlog", Idle: "idle", Other: "other", Undetermined: "undetermined",
	Borrowed: "borrowed", Injected: "injected"}

// String names the class (for messages; the JSON carries Path's text).
func (c Class) String() string {
	if int(c) < len(className) {
		return className[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Mode is where a NAPI is polled, as inspect infers it; observe's classes
// leave it unset (its poll contexts say more).
type Mode uint8

// Modes.
const (
	ModeUnset Mode = iota
	Softirq
	Threaded
)

// Path is an RX path: its class, and for NAPI whether GRO is on and where
// the poll runs. It is comparable (==) and marshals to the text inspect
// and observe have always written (docs/inspect-schema.md, "rx_path");
// text it does not know reads back as class Unrecognised with the text
// kept, and is written out unchanged.
type Path struct {
	class  Class
	gro    State // NAPI only
	mode   Mode  // NAPI only
	detail detail
	text   string // Unrecognised only
}

// detail tells apart paths of one class that say different things: which
// driver family, what was missing.
type detail uint8

const (
	detailNone detail = iota
	detailLoopback
	detailUSBNet
	detailMT76USB
	detailNoNAPIGet
	detailWiFiHidden
	detailBridge
	detailDSA
	detailVhost
	detailTunnel
	detailWriter
	detailDummyNetdev
)

// The paths other than NAPI's.
var (
	// observe: netif_rx events.
	NetifRxPath = Path{class: NetifRx}
	// inspect: the loopback device.
	LoopbackPath = Path{class: NetifRx, detail: detailLoopback}
	// inspect: a driver on stock usbnet.
	USBNetPath = Path{class: NetifRx, detail: detailUSBNet}
	// inspect: napi-get lists no NAPI.
	NoNAPIPath = Path{class: NoNAPI}
	// inspect: mt76u's usb-rx worker.
	MT76WorkerPath = Path{class: Worker, detail: detailMT76USB}
	// inspect: napi-get is missing (kernels before 6.8).
	NoNAPIGetPath = Path{class: Undetermined, detail: detailNoNAPIGet}
	// inspect: an mt76 USB driver with neither RX kthread seen.
	MT76UnseenPath = Path{class: Undetermined, detail: detailMT76USB}
	// inspect: a WiFi driver whose NAPIs, if any, napi-get cannot list.
	WiFiHiddenPath = Path{class: Undetermined, detail: detailWiFiHidden}
	// inspect: a bridge, in its ports' receive path.
	BridgePath = Path{class: Borrowed, detail: detailBridge}
	// inspect: a DSA user port, in its conduit's NAPI through gro_cells.
	DSAPath = Path{class: Borrowed, detail: detailDSA}
	// inspect: a tap that vhost-net feeds (a VM's interface).
	VhostTapPath = Path{class: Injected, detail: detailVhost}
	// inspect: a tun with a virtio-net header: a userspace tunnel
	// (wireguard-go, Tailscale) writing coalesced GSO packets.
	TunnelTunPath = Path{class: Injected, detail: detailTunnel}
	// inspect: a tun or tap written by a process, one packet a write.
	WriterTunPath = Path{class: Injected, detail: detailWriter}
	// inspect: a driver that polls its NAPI on an internal netdev that is
	// never registered (alloc_netdev_dummy()), so napi-get cannot list it.
	DummyNetdevNAPIPath = Path{class: NAPI, gro: Unknown, detail: detailDummyNetdev}
	// observe's other classes.
	DirectPath  = Path{class: Direct}
	BacklogPath = Path{class: Backlog}
	IdlePath    = Path{class: Idle}
	OtherPath   = Path{class: Other}
)

// fixedText is the text of every path but NAPI's, which is composed.
var fixedText = map[Path]string{
	NetifRxPath:         "netif_rx backlog (no NAPI, no GRO)",
	LoopbackPath:        "netif_rx backlog (loopback)",
	USBNetPath:          "netif_rx backlog (usbnet: no NAPI, no GRO)",
	NoNAPIPath:          "no NAPI registered",
	MT76WorkerPath:      "mt76 usb-rx worker (no NAPI, no GRO)",
	NoNAPIGetPath:       "unknown (napi-get unavailable)",
	MT76UnseenPath:      "unknown (mt76 USB: no RX kthread seen)",
	WiFiHiddenPath:      "unknown (WiFi driver: NAPI not visible)",
	DirectPath:          "netif_receive_skb outside NAPI (no GRO)",
	BridgePath:          "bridge: in its ports' NAPI poll (no RX path of its own)",
	DSAPath:             "DSA user port: gro_cells in the conduit's NAPI (per-CPU NAPI + GRO, no NAPI id)",
	VhostTapPath:        "tap fed by vhost-net (the guest's GSO frames, in the vhost worker)",
	TunnelTunPath:       "tun fed by a userspace tunnel (coalesced GSO packets, in the writer's context)",
	WriterTunPath:       "tun/tap fed by a process (netif_receive_skb in the writer's context)",
	DummyNetdevNAPIPath: "NAPI on the driver's internal netdev (not in napi-get)",
	BacklogPath:         "per-CPU backlog NAPIs (process_backlog: netif_rx and RPS queues)",
	IdlePath:            "no RX seen",
	OtherPath:           "unclassified",
}

// NAPIPath is a NAPI path: GRO on (Yes), off (No) or not known, polled in
// mode (ModeUnset: not known, as observe has it).
func NAPIPath(gro State, mode Mode) Path {
	return Path{class: NAPI, gro: gro, mode: mode}
}

// byText reads every known text back to its path.
var byText = func() map[string]Path {
	m := map[string]Path{}
	add := func(p Path) {
		t := p.String()
		if _, dup := m[t]; dup {
			panic("datapath: two paths share the text " + t)
		}
		m[t] = p
	}
	for p := range fixedText {
		add(p)
	}
	for _, g := range []State{Unknown, Yes, No} {
		for _, md := range []Mode{ModeUnset, Softirq, Threaded} {
			add(NAPIPath(g, md))
		}
	}
	return m
}()

// ParsePath reads a path's text. A text no path has gives class
// Unrecognised with the text kept, never a guess at a class.
func ParsePath(s string) Path {
	if p, ok := byText[s]; ok {
		return p
	}
	return Path{class: Unrecognised, text: s}
}

// Class is the path's class.
func (p Path) Class() Class { return p.class }

// GRO says whether packets on this path go through GRO: NAPI's as inspect
// or observe found it; No for the paths that never do; Unknown otherwise.
func (p Path) GRO() State {
	switch p.class {
	case NAPI:
		return p.gro
	case NetifRx, NoNAPI, Worker, Direct:
		return No
	}
	return Unknown
}

// Mode is where a NAPI path is polled, ModeUnset if not known or not NAPI.
func (p Path) Mode() Mode { return p.mode }

// IsZero: no path at all (the zero Path, text "").
func (p Path) IsZero() bool { return p == Path{} }

// String is the path's text: the JSON value and what the text views show.
// inspect's NAPI paths carry the mode and read the rx-gro offload ("NAPI +
// GRO (threaded)", "NAPI, GRO off (softirq)"); observe's carry no mode and
// say what the events showed ("NAPI + GRO", "NAPI, no GRO").
func (p Path) String() string {
	switch p.class {
	case Unrecognised:
		return p.text
	case NAPI:
		if t, ok := fixedText[p]; ok {
			return t // a NAPI of a known kind with a text of its own
		}
		s := "NAPI"
		switch {
		case p.gro == Yes:
			s += " + GRO"
		case p.gro == No && p.mode == ModeUnset:
			s += ", no GRO"
		case p.gro == No:
			s += ", GRO off"
		}
		switch p.mode {
		case Softirq:
			s += " (softirq)"
		case Threaded:
			s += " (threaded)"
		}
		return s
	}
	if t, ok := fixedText[p]; ok {
		return t
	}
	return fmt.Sprintf("Path(%d/%d)", p.class, p.detail)
}

// MarshalText writes the path's text.
func (p Path) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a path's text (ParsePath); it never fails.
func (p *Path) UnmarshalText(b []byte) error {
	*p = ParsePath(string(b))
	return nil
}
