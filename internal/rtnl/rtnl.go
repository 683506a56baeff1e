// SPDX-License-Identifier: Apache-2.0

// Package rtnl lists traffic-control qdiscs through rtnetlink
// (RTM_GETQDISC dump), parsing struct tcmsg and TCA_KIND directly.
package rtnl

import (
	"encoding/binary"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Qdisc is one queueing discipline attached to a device.
type Qdisc struct {
	Ifindex int `json:"ifindex"`
	// Kind is TCA_KIND, e.g. "noqueue", "pfifo_fast", "fq_codel", "mq".
	Kind string `json:"kind"`
	// Handle in tc's notation: "8001:" (always "major:"; "0:" for the
	// unnamed default qdiscs such as noqueue and pfifo_fast).
	Handle string `json:"handle"`
	// Parent in tc's notation: "root", "1:2", "ffff:fff1" (ingress/clsact).
	Parent string `json:"parent"`
	// Root is true when the qdisc is the device's root (egress) qdisc.
	Root bool `json:"root"`
}

const (
	tcaKind = 1 // TCA_KIND

	tcHRoot    = 0xFFFFFFFF // TC_H_ROOT
	tcHUnspec  = 0          // TC_H_UNSPEC
	tcmsgLen   = 20         // sizeof(struct tcmsg)
	familyNone = 0          // AF_UNSPEC
)

// DumpQdiscs returns every qdisc of every device in the caller's network
// namespace: root qdiscs (Root true, one per device that has one, including
// the default "noqueue") and non-root ones such as mq children and
// ingress/clsact, in kernel order.
func DumpQdiscs() ([]Qdisc, error) {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		return nil, fmt.Errorf("rtnl: dial rtnetlink: %w", err)
	}
	defer c.Close()

	req := netlink.Message{
		Header: netlink.Header{
			Type:  unix.RTM_GETQDISC,
			Flags: netlink.Request | netlink.Dump,
		},
		Data: make([]byte, tcmsgLen), // struct tcmsg, all zero: every device
	}
	msgs, err := c.Execute(req)
	if err != nil {
		return nil, fmt.Errorf("rtnl: RTM_GETQDISC dump: %w", err)
	}
	out := make([]Qdisc, 0, len(msgs))
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWQDISC {
			continue
		}
		q, err := parseQdisc(m.Data)
		if err != nil {
			return nil, fmt.Errorf("rtnl: RTM_NEWQDISC: %w", err)
		}
		out = append(out, q)
	}
	return out, nil
}

// parseQdisc decodes the payload of an RTM_NEWQDISC message: struct tcmsg
// (family u8, pad u8, pad u16, ifindex s32, handle u32, parent u32, info
// u32) followed by attributes.
func parseQdisc(b []byte) (Qdisc, error) {
	var q Qdisc
	if len(b) < tcmsgLen {
		return q, fmt.Errorf("short tcmsg (%d bytes)", len(b))
	}
	ne := binary.NativeEndian
	q.Ifindex = int(int32(ne.Uint32(b[4:])))
	handle := ne.Uint32(b[8:])
	parent := ne.Uint32(b[12:])
	q.Handle = fmt.Sprintf("%x:", handle>>16)
	if handle&0xFFFF != 0 {
		q.Handle = FormatHandle(handle)
	}
	q.Parent = FormatHandle(parent)
	q.Root = parent == tcHRoot

	if len(b) > tcmsgLen {
		ad, err := netlink.NewAttributeDecoder(b[tcmsgLen:])
		if err != nil {
			return q, err
		}
		for ad.Next() {
			if ad.Type() == tcaKind {
				q.Kind = ad.String()
			}
		}
		if err := ad.Err(); err != nil {
			return q, err
		}
	}
	if q.Kind == "" {
		return q, fmt.Errorf("ifindex %d: qdisc without TCA_KIND", q.Ifindex)
	}
	return q, nil
}

// FormatHandle renders a 32-bit tc handle as tc(8) does: "root", "none",
// "maj:", ":min" or "maj:min", in hex.
func FormatHandle(h uint32) string {
	maj, min := h>>16, h&0xFFFF
	switch {
	case h == tcHRoot:
		return "root"
	case h == tcHUnspec:
		return "none"
	case maj == 0:
		return fmt.Sprintf(":%x", min)
	case min == 0:
		return fmt.Sprintf("%x:", maj)
	default:
		return fmt.Sprintf("%x:%x", maj, min)
	}
}
