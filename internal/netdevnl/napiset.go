// SPDX-License-Identifier: Apache-2.0

package netdevnl

import (
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

const cmdNAPISet = 14 // NETDEV_CMD_NAPI_SET (6.13+)

// NAPIAttrs are the attribute names napi-set takes, as in netdev.yaml.
var NAPIAttrs = []string{"defer-hard-irqs", "gro-flush-timeout", "irq-suspend-timeout", "threaded"}

// NAPIValue returns attribute attr of n ("" and false when the kernel did
// not report it).
func NAPIValue(n NAPI, attr string) (uint64, bool) {
	switch attr {
	case "defer-hard-irqs":
		if n.DeferHardIRQs != nil {
			return uint64(*n.DeferHardIRQs), true
		}
	case "gro-flush-timeout":
		if n.GROFlushTimeoutNS != nil {
			return *n.GROFlushTimeoutNS, true
		}
	case "irq-suspend-timeout":
		if n.IRQSuspendTimeoutNS != nil {
			return *n.IRQSuspendTimeoutNS, true
		}
	case "threaded":
		if n.Threaded != nil {
			return uint64(*n.Threaded), true
		}
	}
	return 0, false
}

// SetNAPI sets one attribute of the NAPI instance id with napi-set.
func SetNAPI(id uint32, attr string, v uint64) error {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(attrNAPIID, id)
	switch attr {
	case "defer-hard-irqs":
		ae.Uint32(attrNAPIDeferHardIRQs, uint32(v))
	case "gro-flush-timeout":
		ae.Uint64(attrNAPIGROFlushTimeout, v)
	case "irq-suspend-timeout":
		ae.Uint64(attrNAPIIRQSuspendTimeout, v)
	case "threaded":
		ae.Uint32(attrNAPIThreaded, uint32(v))
	default:
		return fmt.Errorf("netdevnl: napi-set: unknown attribute %q (want one of %v)", attr, NAPIAttrs)
	}
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	c, err := genetlink.Dial(nil)
	if err != nil {
		return fmt.Errorf("netdevnl: dial generic netlink: %w", err)
	}
	defer c.Close()
	fam, err := c.GetFamily(familyName)
	if err != nil {
		return fmt.Errorf("netdevnl: resolve family %q: %w: %w", familyName, ErrNotSupported, err)
	}
	req := genetlink.Message{Header: genetlink.Header{Command: cmdNAPISet, Version: fam.Version}, Data: b}
	if _, err := c.Execute(req, fam.ID, netlink.Request|netlink.Acknowledge); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return fmt.Errorf("netdevnl: napi-set: %w: %w", ErrNotSupported, err)
		}
		return fmt.Errorf("netdevnl: napi-set id %d %s=%d: %w", id, attr, v, err)
	}
	return nil
}
