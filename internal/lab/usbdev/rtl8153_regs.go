// SPDX-License-Identifier: Apache-2.0

package usbdev

import "sync/atomic"

// The RTL8153's registers that do more than hold what the driver wrote:
// those r8152's bind, open and link paths poll until the chip says it is
// ready (every one answers ready at once), the version, the link, the
// self-clearing reset, and the PHY behind its window.
const (
	rtlTxEmpty     = 0x0800 // PLA_TCR0
	rtlAutoload    = 0x0002 // PLA_BOOT_CTRL
	rtlALDPSOff    = 0x0100 // PLA 0xe000
	rtlOOBReady    = 0x32   // PLA_OOB_CTRL: link list ready, TX and RX FIFOs empty
	rtlStatLAN     = 3      // OCP_PHY_STATUS: LAN on
	rtlStatPDown   = 5      // powered down
	rtlLinkFull    = 0x01   // PLA_PHYSTATUS
	rtlLinkUp      = 0x02
	rtlLink1000    = 0x10
	rtlRcrAll      = 0x01 // PLA_RCR
	rtlRcrPhysical = 0x02
	rtlRcrMulti    = 0x04
	rtlRcrBcast    = 0x08
)

func (r *RTL8153) space(sp uint16) *[1 << 16]byte {
	if sp == rtlSpacePLA {
		return &r.pla
	}
	return &r.usb
}

func (r *RTL8153) pla16(a int) uint16 { return le.Uint16(r.pla[a:]) }

// read16 is the word at a (even) of space sp, as the chip answers it.
func (r *RTL8153) read16(sp uint16, a int) uint16 {
	v := le.Uint16(r.space(sp)[a:])
	if sp != rtlSpacePLA {
		return v
	}
	switch {
	case a >= rtlPhyWindow && a < rtlPhyWindow+0x1000:
		return r.phyRead(r.phyAddr(a))
	case a == rtlPlaTCR0:
		return v | rtlTxEmpty
	case a == rtlPlaTCR0+2:
		return v&^rtlVersionMask | rtlVersion
	case a == rtlPlaBoot:
		return v | rtlAutoload
	case a == rtlPlaExtra:
		return v | rtlALDPSOff
	case a == rtlPlaOOB-1:
		return v | rtlOOBReady<<8
	case a == rtlPlaPhyStat:
		if r.linkUp {
			return rtlLinkUp | rtlLinkFull | rtlLink1000
		}
		return 0
	}
	return v
}

// write16 writes the bytes of v that mask (bit 0 low, bit 1 high) lets
// through to the word at a of space sp.
func (r *RTL8153) write16(sp uint16, a int, v uint16, mask byte) {
	if sp == rtlSpacePLA && a >= rtlPhyWindow && a < rtlPhyWindow+0x1000 {
		pa := r.phyAddr(a)
		r.phyWrite(pa, merge16(r.phy[pa], v, mask))
		return
	}
	m := r.space(sp)
	w := merge16(le.Uint16(m[a:]), v, mask)
	if sp == rtlSpacePLA && a == rtlPlaCR-1 {
		w &^= rtlCRReset << 8 // the reset is done at once
	}
	le.PutUint16(m[a:], w)
}

func merge16(old, v uint16, mask byte) uint16 {
	if mask&1 == 0 {
		v = v&0xff00 | old&0x00ff
	}
	if mask&2 == 0 {
		v = v&0x00ff | old&0xff00
	}
	return v
}

// phyAddr is the PHY OCP address a PLA address in the window reaches.
func (r *RTL8153) phyAddr(a int) uint16 {
	return r.pla16(rtlPlaPhyBase)&0xf000 | uint16(a)&0x0fff
}

func (r *RTL8153) phyRead(pa uint16) uint16 {
	bmcr := r.phy[rtlPhyMII+2*miiBMCR]
	switch pa {
	case rtlPhyStatus:
		if bmcr&rtlBmcrPDown != 0 {
			return r.phy[pa]&^7 | rtlStatPDown
		}
		return r.phy[pa]&^7 | rtlStatLAN
	case rtlPhyMII + 2*miiBMSR:
		if r.linkUp {
			return bmsrDown | bmsrANComplete | bmsrLink
		}
		return bmsrDown
	}
	return r.phy[pa]
}

// phyWrite stores a PHY word. BMCR's reset and restart clear themselves;
// the link is up whenever the PHY is powered (a real one takes about 3 s
// of autoneg), down while powered down.
func (r *RTL8153) phyWrite(pa, v uint16) {
	switch pa {
	case rtlPhyStatus, rtlPhyMII + 2*miiBMSR:
		// read-only
	case rtlPhyMII + 2*miiBMCR:
		r.phy[pa] = v &^ (bmcrANRestart | bmcrReset)
		r.setLink(v&rtlBmcrPDown == 0)
	default:
		r.phy[pa] = v
	}
}

// setLink changes the link and says so on the interrupt endpoint.
func (r *RTL8153) setLink(up bool) {
	if r.linkUp == up {
		return
	}
	r.linkUp = up
	if r.sendStatus(up) {
		r.mc.intrs.Add(1)
	}
}

// sendStatus queues the 2-byte interrupt: the link bit of the first
// little-endian word, what intr_callback reads.
func (r *RTL8153) sendStatus(up bool) bool {
	msg := make([]byte, rtlIntrSize)
	if up {
		le.PutUint16(msg, rtlIntrLink)
	}
	select {
	case r.intr <- Interrupt{Endpoint: rtlEPIntr, Data: msg}:
		return true
	default:
		return false
	}
}

// sendIfUp repeats the status while the link is up, as the chip answers
// every poll of its interrupt endpoint.
func (r *RTL8153) sendIfUp() bool {
	r.mu.Lock()
	up := r.linkUp
	r.mu.Unlock()
	return up && r.sendStatus(true)
}

// rtlRx is what the registers say of receiving, read once per frame or
// aggregate.
type rtlRx struct {
	on, strip bool
	filter    macFilter
}

func (r *RTL8153) rxState() rtlRx {
	r.mu.Lock()
	defer r.mu.Unlock()
	rcr := r.pla[rtlPlaRCR]
	return rtlRx{
		on:    r.linkUp && r.pla[rtlPlaCR]&rtlCRRxEnable != 0 && r.pla16(rtlPlaMisc1)&rtlRxGated == 0,
		strip: r.pla16(rtlPlaCPCR)&rtlStripVLAN != 0,
		filter: macFilter{node: append([]byte(nil), r.pla[rtlPlaIDR:rtlPlaIDR+6]...), promisc: rcr&rtlRcrAll != 0,
			bcast: rcr&rtlRcrBcast != 0, mcast: rcr&rtlRcrMulti != 0, unicast: rcr&rtlRcrPhysical != 0},
	}
}

// drop is the MAC's verdict on a frame off the link: nil if it takes it,
// else the count it goes to (receiving stopped: the receiver off, the RX
// DMA gated, the link down; or filtered).
func (r *RTL8153) drop(f []byte) *atomic.Uint64 {
	switch st := r.rxState(); {
	case !st.on:
		return &r.mc.rxStopped
	case !st.filter.accepts(f):
		return &r.mc.rxFiltered
	}
	return nil
}
