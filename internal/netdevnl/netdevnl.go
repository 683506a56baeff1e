// SPDX-License-Identifier: Apache-2.0

// Package netdevnl is a small client for the "netdev" generic netlink
// family (Documentation/netlink/specs/netdev.yaml in the kernel tree).
//
// It reports NAPI instances and their configuration (napi-get) and the
// RX/TX queues of each device with the NAPI serving them (queue-get).
// Both dumps cover every device in the caller's network namespace.
//
// The family appeared in Linux 6.5; queue-get and napi-get in 6.8. On older
// kernels every call fails with an error satisfying
// errors.Is(err, ErrNotSupported).
package netdevnl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ErrNotSupported is matched (errors.Is) by errors returned when the running
// kernel lacks the netdev family or the requested command, so callers can
// record "unknown on this kernel" rather than failing.
var ErrNotSupported = errors.New("not supported by this kernel")

// Family name and the command/attribute numbers used here, from
// include/uapi/linux/netdev.h (generated from netdev.yaml).
const (
	familyName = "netdev"

	cmdQueueGet = 10 // NETDEV_CMD_QUEUE_GET
	cmdNAPIGet  = 11 // NETDEV_CMD_NAPI_GET
)

// NETDEV_A_NAPI_*
const (
	attrNAPIIfindex           = 1 // u32
	attrNAPIID                = 2 // u32
	attrNAPIIRQ               = 3 // u32
	attrNAPIPID               = 4 // u32
	attrNAPIDeferHardIRQs     = 5 // u32 (6.13+)
	attrNAPIGROFlushTimeout   = 6 // uint, ns (6.13+)
	attrNAPIIRQSuspendTimeout = 7 // uint, ns (6.13+)
	attrNAPIThreaded          = 8 // u32 enum napi-threaded (6.17+)
)

// NETDEV_A_QUEUE_*
const (
	attrQueueID      = 1 // u32
	attrQueueIfindex = 2 // u32
	attrQueueType    = 3 // u32 enum queue-type
	attrQueueNAPIID  = 4 // u32
)

// enum netdev_queue_type
const (
	queueTypeRX = 0
	queueTypeTX = 1
)

// Values of NAPI.Threaded (enum netdev_napi_threaded). Kernels may add more.
const (
	ThreadedDisabled = 0
	ThreadedEnabled  = 1
	ThreadedBusyPoll = 2 // 6.19+
)

// NAPI is one NAPI instance as reported by netdev napi-get. Optional
// attributes are nil when the kernel did not report them (older kernel, or
// not applicable, e.g. no IRQ or no kthread).
type NAPI struct {
	ID      uint32 `json:"id"`
	Ifindex int    `json:"ifindex"`
	// IRQ is the interrupt line serving this NAPI, if the driver set one.
	IRQ *int `json:"irq,omitempty"`
	// PID is the kthread (comm "napi/<dev>-<id>") when threaded NAPI is on.
	PID                 *int    `json:"pid,omitempty"`
	DeferHardIRQs       *uint32 `json:"defer_hard_irqs,omitempty"`
	GROFlushTimeoutNS   *uint64 `json:"gro_flush_timeout_ns,omitempty"`
	IRQSuspendTimeoutNS *uint64 `json:"irq_suspend_timeout_ns,omitempty"`
	// Threaded: 0 disabled, 1 enabled, 2 busy-poll (6.19+).
	Threaded *uint32 `json:"threaded,omitempty"`
}

// Queue is one RX or TX queue as reported by netdev queue-get.
type Queue struct {
	ID      uint32 `json:"id"`
	Ifindex int    `json:"ifindex"`
	// Type is "rx" or "tx" ("type-N" for a type this package does not know).
	Type string `json:"type"`
	// NAPIID is the NAPI serving the queue, if any.
	NAPIID *uint32 `json:"napi_id,omitempty"`
}

// DumpNAPIs returns every NAPI instance of every device in the caller's
// network namespace. Devices without NAPI (or with NAPI disabled, e.g. a
// down veth) contribute nothing.
func DumpNAPIs() ([]NAPI, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("netdevnl: dial generic netlink: %w", err)
	}
	defer c.Close()
	return dumpNAPIs(c)
}

// DumpQueues returns every queue of every device in the caller's network
// namespace.
func DumpQueues() ([]Queue, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("netdevnl: dial generic netlink: %w", err)
	}
	defer c.Close()
	return dumpQueues(c)
}

func dumpNAPIs(c *genetlink.Conn) ([]NAPI, error) {
	msgs, err := dump(c, cmdNAPIGet, "napi-get")
	if err != nil {
		return nil, err
	}
	out := make([]NAPI, 0, len(msgs))
	for _, m := range msgs {
		n, err := parseNAPI(m.Data)
		if err != nil {
			return nil, fmt.Errorf("netdevnl: napi-get: %w", err)
		}
		out = append(out, n)
	}
	return out, nil
}

func dumpQueues(c *genetlink.Conn) ([]Queue, error) {
	msgs, err := dump(c, cmdQueueGet, "queue-get")
	if err != nil {
		return nil, err
	}
	out := make([]Queue, 0, len(msgs))
	for _, m := range msgs {
		q, err := parseQueue(m.Data)
		if err != nil {
			return nil, fmt.Errorf("netdevnl: queue-get: %w", err)
		}
		out = append(out, q)
	}
	return out, nil
}

// dump resolves the family and runs cmd as a dump with no filter attributes.
func dump(c *genetlink.Conn, cmd uint8, name string) ([]genetlink.Message, error) {
	fam, err := c.GetFamily(familyName)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("netdevnl: generic netlink family %q: %w: %w", familyName, ErrNotSupported, err)
		}
		return nil, fmt.Errorf("netdevnl: resolve family %q: %w", familyName, err)
	}
	req := genetlink.Message{Header: genetlink.Header{Command: cmd, Version: fam.Version}}
	msgs, err := c.Execute(req, fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		// An unknown command (or one without a dump handler) is answered
		// with EOPNOTSUPP by the genetlink core.
		if errors.Is(err, unix.EOPNOTSUPP) {
			return nil, fmt.Errorf("netdevnl: %s dump: %w: %w", name, ErrNotSupported, err)
		}
		return nil, fmt.Errorf("netdevnl: %s dump: %w", name, err)
	}
	return msgs, nil
}

func parseNAPI(b []byte) (NAPI, error) {
	var n NAPI
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return n, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrNAPIIfindex:
			n.Ifindex = int(ad.Uint32())
		case attrNAPIID:
			n.ID = ad.Uint32()
		case attrNAPIIRQ:
			v := int(ad.Uint32())
			n.IRQ = &v
		case attrNAPIPID:
			v := int(ad.Uint32())
			n.PID = &v
		case attrNAPIDeferHardIRQs:
			v := ad.Uint32()
			n.DeferHardIRQs = &v
		case attrNAPIGROFlushTimeout:
			if v, ok := decodeUint(ad); ok {
				n.GROFlushTimeoutNS = &v
			}
		case attrNAPIIRQSuspendTimeout:
			if v, ok := decodeUint(ad); ok {
				n.IRQSuspendTimeoutNS = &v
			}
		case attrNAPIThreaded:
			v := ad.Uint32()
			n.Threaded = &v
		}
	}
	if err := ad.Err(); err != nil {
		return n, err
	}
	return n, nil
}

func parseQueue(b []byte) (Queue, error) {
	var q Queue
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return q, err
	}
	for ad.Next() {
		switch ad.Type() {
		case attrQueueID:
			q.ID = ad.Uint32()
		case attrQueueIfindex:
			q.Ifindex = int(ad.Uint32())
		case attrQueueType:
			q.Type = queueTypeString(ad.Uint32())
		case attrQueueNAPIID:
			v := ad.Uint32()
			q.NAPIID = &v
		}
	}
	if err := ad.Err(); err != nil {
		return q, err
	}
	return q, nil
}

func queueTypeString(t uint32) string {
	switch t {
	case queueTypeRX:
		return "rx"
	case queueTypeTX:
		return "tx"
	default:
		return fmt.Sprintf("type-%d", t)
	}
}

// decodeUint reads a netlink "uint" (NLA_UINT) attribute: the kernel sends
// 4 bytes when the value fits in 32 bits and 8 bytes otherwise.
func decodeUint(ad *netlink.AttributeDecoder) (uint64, bool) {
	b := ad.Bytes()
	switch len(b) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(b)), true
	case 8:
		return binary.NativeEndian.Uint64(b), true
	default:
		return 0, false
	}
}
