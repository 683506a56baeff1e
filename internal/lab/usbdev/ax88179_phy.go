// SPDX-License-Identifier: Apache-2.0

package usbdev

// The AX88179's gigabit PHY at MII address 3, as ax88179_178a and the
// kernel's mii library use it: the IEEE registers (0-15), the vendor's
// status register 0x11 (speed, duplex, link, resolved), register 31 as
// the page select (pages other than 0 are plain storage: the LED and EEE
// set-up the driver writes there), and the clause 45 registers reached
// through 13 and 14 (EEE, which this PHY does not offer).
const (
	miiBMCR        = 0x00
	miiBMSR        = 0x01
	miiMMDCtrl     = 0x0d
	miiMMDData     = 0x0e
	phyPHYSR       = 0x11
	phyPageSelect  = 0x1f
	bmcrANRestart  = 0x0200
	bmcrReset      = 0x8000
	bmsrDown       = 0x7949 // 10/100 half and full, extended status, preamble suppression, autoneg able, extended
	bmsrANComplete = 0x0020
	bmsrLink       = 0x0004
	physrGiga      = 0x8000
	physr100       = 0x4000
	physrFull      = 0x2000
	physrResolved  = 0x0800
	physrLink      = 0x0400
	mmdFuncMask    = 0xc000 // 0: the data register takes an address
)

// gigaPHY is a gigabit PHY's IEEE registers at power-on, its partner
// (the lab's switch port) offering everything up to 1000 full duplex.
func gigaPHY() map[uint16]uint16 {
	return map[uint16]uint16{
		0x00: 0x1140, // BMCR: autoneg on, full duplex, 1000
		0x04: 0x0de1, // ADVERTISE: 10/100 half and full, pause, asymmetric pause
		0x05: 0xcde1, // LPA: the same, acknowledged
		0x09: 0x0300, // CTRL1000: 1000 half and full
		0x0a: 0x3c00, // STAT1000: partner 1000 full and half, receivers OK
		0x0f: 0x3000, // ESTATUS: 1000BASE-T full and half
	}
}

// physr is register 0x11's value: the link at the paced rate (an unpaced
// device says 1000), full duplex, resolved, up - or 0 while down.
func (a *AX88179) physr() uint16 {
	if !a.linkUp {
		return 0
	}
	v := uint16(physrFull | physrResolved | physrLink)
	switch {
	case a.mbit <= 0 || a.mbit >= 1000:
		v |= physrGiga
	case a.mbit >= 100:
		v |= physr100
	}
	return v
}

func (a *AX88179) phyRead(reg uint16) uint16 {
	page := a.phy[phyPageSelect]
	switch {
	case reg == phyPageSelect:
		return page
	case page != 0:
		return a.phy[page<<8|reg]
	case reg == miiBMSR:
		if a.linkUp {
			return bmsrDown | bmsrANComplete | bmsrLink
		}
		return bmsrDown
	case reg == phyPHYSR:
		return a.physr()
	case reg == miiMMDData:
		if a.mmdCtl&mmdFuncMask == 0 {
			return a.mmdAdr
		}
		return a.mmd[uint32(a.mmdCtl&0x1f)<<16|uint32(a.mmdAdr)]
	}
	return a.phy[reg]
}

// phyWrite stores a register; restarting autoneg on a PHY out of reset
// brings the link up at once (a real one takes about 3 s).
func (a *AX88179) phyWrite(reg, v uint16) {
	page := a.phy[phyPageSelect]
	switch {
	case reg == phyPageSelect:
		a.phy[reg] = v
	case page != 0:
		a.phy[page<<8|reg] = v
	case reg == miiBMSR, reg == phyPHYSR:
		// read-only
	case reg == miiMMDCtrl:
		a.mmdCtl = v
	case reg == miiMMDData:
		if a.mmdCtl&mmdFuncMask == 0 {
			a.mmdAdr = v
		} else {
			a.mmd[uint32(a.mmdCtl&0x1f)<<16|uint32(a.mmdAdr)] = v
		}
	case reg == miiBMCR:
		a.phy[reg] = v &^ (bmcrANRestart | bmcrReset) // self-clearing
		if v&(bmcrANRestart|bmcrReset) != 0 && a.reg16(axPhyPwrRstCtl)&axPwrIPRL != 0 {
			a.setLink(true)
		}
	default:
		a.phy[reg] = v
	}
}

// sendStatus queues the 8-byte status: the link bit (16) of the first
// word.
func (a *AX88179) sendStatus(up bool) bool {
	msg := make([]byte, 8)
	if up {
		le.PutUint32(msg, axIntLink)
	}
	select {
	case a.intr <- Interrupt{Endpoint: axEPIntr, Data: msg}:
		return true
	default:
		return false
	}
}

// sendIfUp repeats the status while the link is up.
func (a *AX88179) sendIfUp() bool {
	a.mu.Lock()
	up := a.linkUp
	a.mu.Unlock()
	return up && a.sendStatus(true)
}
