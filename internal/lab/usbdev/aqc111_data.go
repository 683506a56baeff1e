// SPDX-License-Identifier: Apache-2.0

package usbdev

import "sync/atomic"

// The AQC111's bulk IN aggregate, as aqc111_rx_fixup takes it apart:
//
//	frame 1: [2-byte pad][frame], zero-padded to a multiple of 8
//	...
//	frame N
//	descriptors (at desc_off, right after the frames): per frame 64 bits -
//	  bits 16-30 the length with the pad, bit 31 drop, bit 11 RX OK,
//	  bit 10 VLAN (tag in bits 32-47), bits 5-6 the L3 type (IPv4 0x20,
//	  IPv6 0x40), bits 2-4 the L4 type (TCP 16, UDP 4), bit 1 L3 and bit 0
//	  L4 checksum error
//	the header, 64 bits: the frame count in bits 0-12, desc_off in bits
//	  13-31
//
// The driver insists that the padded lengths add up to desc_off exactly
// and that the descriptors end where the header starts.
const (
	aqRxOK       = 1 << 11
	aqRxDrop     = 1 << 31
	aqRxL3IPv4   = 0x20
	aqRxL3IPv6   = 0x40
	aqRxLenShift = 16
	aqRxCntMask  = 0x1fff
	aqRxOffShift = 13
	aqRxPad      = 2

	aqTxLenMask  = 0x1fffff
	aqTxDropPad  = 1 << 28 // 8 bytes of padding added so the transfer is no multiple of the packet size
	aqTxVLAN     = 1 << 29
	aqTxMSSShift = 32
	aqTxMSSMask  = 0x7fff
	aqTxTagShift = 48
)

// aqLayout says where an aggregate's parts went, for the hostile mode.
type aqLayout struct {
	offs    []int // where each frame's pad starts
	descOff int
}

// aqAggSize is the size of an aggregate of frames of these lengths.
func aqAggSize(lens []int, pad int) int {
	n := 0
	for _, l := range lens {
		n += align8(l + pad)
	}
	return n + 8*len(lens) + 8
}

// buildAQ lays out an aggregate; flags are each frame's descriptor bits
// besides its length.
func buildAQ(frames [][]byte, flags []uint64, pad int) ([]byte, aqLayout) {
	lens := make([]int, len(frames))
	for i, f := range frames {
		lens[i] = len(f)
	}
	b := make([]byte, 0, aqAggSize(lens, pad))
	var lay aqLayout
	for _, f := range frames {
		lay.offs = append(lay.offs, len(b))
		b = append(b, make([]byte, pad)...)
		b = append(b, f...)
		b = append(b, make([]byte, align8(len(b))-len(b))...)
	}
	lay.descOff = len(b)
	for i, f := range frames {
		b = le.AppendUint64(b, uint64(len(f)+pad)<<aqRxLenShift|flags[i])
	}
	b = le.AppendUint64(b, uint64(len(frames))|uint64(lay.descOff)<<aqRxOffShift)
	return b, lay
}

// aqRxState is what the registers say of receiving, read once per
// aggregate.
type aqRxState struct {
	on   bool
	ctl  uint16
	node []byte
	pad  int
	coe  byte
}

func (q *AQC111) rxState() aqRxState {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := aqRxState{ctl: le.Uint16(q.regs[axRxCtl:]), node: append([]byte(nil), q.regs[axNodeID:axNodeID+6]...),
		coe: q.regs[axRxCOE]}
	st.on = q.linkAt != 0 && st.ctl&axRxCtlStart != 0 && le.Uint16(q.regs[axMediumStatus:])&axMediumRxEn != 0
	if st.ctl&axRxCtlIPE != 0 {
		st.pad = aqRxPad
	}
	return st
}

// readLink feeds the frames the MAC takes to the bulk IN side: none while
// receiving is stopped (RX control's start bit, the medium mode's
// receive enable, the link), and only those the address filter passes.
func (q *AQC111) readLink() {
	feedMAC(q.link, q.rx, func(f []byte) *atomic.Uint64 {
		switch st := q.rxState(); {
		case !st.on:
			return &q.mc.rxStopped
		case !axFilter(st.ctl, st.node).accepts(f):
			return &q.mc.rxFiltered
		}
		return nil
	})
}

// rxFlags is a received frame's descriptor bits: RX OK, its L3 type and
// the checksum verdict where the RX checksum register asks for one.
func (q *AQC111) rxFlags(f []byte, coe byte) uint64 {
	flags, verdict := rxCsumFlags(f, coe)
	q.checksummed(verdict)
	if p, ok := parseIP(f); ok {
		if p.v6 {
			flags |= aqRxL3IPv6
		} else {
			flags |= aqRxL3IPv4
		}
	}
	return uint64(flags) | aqRxOK
}

// BulkIn implements Model: it waits for a frame the MAC took, then adds
// every one already waiting that fits the request (at most the driver's
// 62 KiB), paces them to the link and lays out the aggregate.
func (q *AQC111) BulkIn(ep uint8, max int, done <-chan struct{}) []byte {
	st := q.rxState()
	limit := min(max, aqURBSize)
	frames, lens, ok := gatherFrames(q.rx, &q.pending, q.batch, func(lens []int) bool { return aqAggSize(lens, st.pad) <= limit }, done)
	if !ok {
		return nil
	}
	q.inPace.take(lens...)
	flags := make([]uint64, len(frames))
	for i, f := range frames {
		flags[i] = q.rxFlags(f, st.coe)
	}
	b, lay := buildAQ(frames, flags, st.pad)
	return sendAggregate(&q.macDev, len(frames), aqMutations, b, lay)
}

// BulkOut implements Model: frames behind their 64-bit descriptors
// (length, the TSO MSS, a VLAN tag to insert), each padded to 8 bytes, 8
// bytes more where the driver set the drop-padding bit; segmented where
// the MSS asks for it, checksummed as the TX checksum register says,
// tagged, onto the link.
func (q *AQC111) BulkOut(ep uint8, data []byte) {
	q.cnt.ntbsOut.Add(1)
	if len(data) < 8 {
		q.cnt.badOut.Add(1)
		return
	}
	for off := 0; off+8 <= len(data); {
		d := le.Uint64(data[off:])
		n := int(d & aqTxLenMask)
		if n == 0 && off > 0 {
			return // the drop-padding's zeros
		}
		if n < 14 || off+8+n > len(data) {
			q.cnt.badOut.Add(1)
			return
		}
		q.sendFrame(append([]byte(nil), data[off+8:off+8+n]...), d)
		off = align8(off + 8 + n)
		if d&aqTxDropPad != 0 {
			off += 8
		}
	}
}

// sendFrame puts one frame the host sent onto the link as its descriptor
// d says.
func (q *AQC111) sendFrame(f []byte, d uint64) {
	q.mu.Lock()
	coe := q.regs[axTxCOE]
	q.mu.Unlock()
	var tag []byte
	if d&aqTxVLAN != 0 {
		tag = []byte{0x81, 0x00, byte(d >> (aqTxTagShift + 8)), byte(d >> aqTxTagShift)}
	}
	q.tx.send(f, int(d>>aqTxMSSShift&aqTxMSSMask), coe, tag)
}
