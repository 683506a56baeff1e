// SPDX-License-Identifier: Apache-2.0

package usbdev

// The AX88179's bulk IN aggregate, as ax88179_rx_fixup takes it apart:
//
//	frame 1: [2-byte pad][frame], zero-padded to a multiple of 8
//	...
//	frame N
//	header array (at hdr_off): per frame a 32-bit word - bits 16-28 the
//	  length with the pad, bit 31 drop, bit 29 CRC error, bits 2-4 the
//	  L4 type (TCP 16, UDP 4), bit 1 L3 and bit 0 L4 checksum error -
//	  followed by a dummy word (length 0, drop), as current firmware does
//	4 bytes of padding, then the trailer: packet count (words in the
//	  array) in the low 16 bits, hdr_off in the high 16.
const (
	axRxDrop     = 1 << 31
	axRxCRCErr   = 1 << 29
	axRxTypeTCP  = 16
	axRxTypeUDP  = 4
	axRxL3Err    = 2
	axRxL4Err    = 1
	axRxLenShift = 16
	axRxLenMask  = 0x1fff
)

// axLayout says where an aggregate's parts went, for the hostile mode.
type axLayout struct {
	offs   []int // where each frame's pad starts
	hdrOff int
	count  int // words in the header array
}

func align8(n int) int { return (n + 7) &^ 7 }

// axAggSize is the size of an aggregate of frames of these lengths.
func axAggSize(lens []int, pad int) int {
	n := 0
	for _, l := range lens {
		n += align8(l + pad)
	}
	return n + 8*len(lens) + 8
}

// buildAX lays out an aggregate; flags are each frame's header bits.
func buildAX(frames [][]byte, flags []uint32, pad int) ([]byte, axLayout) {
	lens := make([]int, len(frames))
	for i, f := range frames {
		lens[i] = len(f)
	}
	b := make([]byte, 0, axAggSize(lens, pad))
	lay := axLayout{count: 2 * len(frames)}
	for _, f := range frames {
		lay.offs = append(lay.offs, len(b))
		b = append(b, make([]byte, pad)...)
		b = append(b, f...)
		b = append(b, make([]byte, align8(len(b))-len(b))...)
	}
	lay.hdrOff = len(b)
	for i, f := range frames {
		b = le.AppendUint32(b, uint32(len(f)+pad)<<axRxLenShift|flags[i])
		b = le.AppendUint32(b, axRxDrop)
	}
	b = append(b, 0, 0, 0, 0)
	b = le.AppendUint32(b, uint32(lay.count)|uint32(lay.hdrOff)<<16)
	return b, lay
}

// rxState is what the registers say of receiving, read once per
// aggregate.
type rxState struct {
	on    bool
	ctl   uint16
	node  []byte
	pad   int
	coe   byte
	limit int
}

func (a *AX88179) rxState(max int) rxState {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := rxState{ctl: a.reg16(axRxCtl), node: append([]byte(nil), a.regs[axNodeID:axNodeID+6]...),
		coe: a.regs[axRxCOE], limit: max}
	st.on = a.linkUp && st.ctl&axRxCtlStart != 0 && a.reg16(axMediumStatus)&axMediumRxEn != 0
	if st.ctl&axRxCtlIPE != 0 {
		st.pad = 2
	}
	if q := a.regs[axBulkInQCtrl:]; q[0] != 0 {
		st.limit = min(max, 1024*(int(q[3])+2)) // what the driver sets rx_urb_size to
	}
	return st
}

// axFilter is the address filter of RX control ctl and node ID node
// (the AX88179's bits, and the AQC111's: the same registers).
func axFilter(ctl uint16, node []byte) macFilter {
	return macFilter{node: node, promisc: ctl&axRxCtlPRO != 0, bcast: ctl&axRxCtlAB != 0,
		mcast: ctl&(axRxCtlAMALL|axRxCtlAM) != 0, unicast: true}
}

// BulkIn implements Model: it waits for a frame the MAC took, then adds
// every one already waiting that fits the bulk-in size the driver chose,
// paces them to the link and lays out the aggregate.
func (a *AX88179) BulkIn(ep uint8, max int, done <-chan struct{}) []byte {
	st := a.rxState(max)
	frames, lens, ok := gatherFrames(a.rx, &a.pending, a.batch, func(lens []int) bool { return axAggSize(lens, st.pad) <= st.limit }, done)
	if !ok {
		return nil
	}
	a.inPace.take(lens...)
	flags := make([]uint32, len(frames))
	for i, f := range frames {
		flags[i] = a.rxChecksum(f, st.coe)
	}
	b, lay := buildAX(frames, flags, st.pad)
	return sendAggregate(&a.macDev, len(frames), axMutations, b, lay)
}

// BulkOut implements Model: one frame behind its 8-byte header (length;
// TSO MSS in the second word's low 15 bits, bits 15 and 31 saying usbnet
// may have added a byte), segmented if the MSS asks for it, checksummed
// as the TX checksum register says, onto the link.
func (a *AX88179) BulkOut(ep uint8, data []byte) {
	a.cnt.ntbsOut.Add(1)
	if len(data) < 8 {
		a.cnt.badOut.Add(1)
		return
	}
	n, mss := int(le.Uint32(data)), int(le.Uint32(data[4:])&0x7fff)
	if n < 14 || 8+n > len(data) || len(data) > 8+n+1 {
		a.cnt.badOut.Add(1)
		return
	}
	a.mu.Lock()
	coe := a.regs[axTxCOE]
	a.mu.Unlock()
	a.tx.send(append([]byte(nil), data[8:8+n]...), mss, coe, nil)
}
