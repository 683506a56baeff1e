// SPDX-License-Identifier: Apache-2.0

package usbdev

import "hash/crc32"

// The RTL8153's bulk aggregates, as r8152's rx_bottom and
// r8152_tx_agg_fill lay them out:
//
//	bulk IN: per frame a 24-byte rx_desc - opts1 bits 0-14 the length on
//	  the wire (with the 4-byte FCS, at least 60 + 4), opts2 bit 19 IPv4
//	  and 20 IPv6 checked, 22 TCP and 23 UDP checked, bit 16 a VLAN tag
//	  stripped (its TCI byte-swapped in bits 0-15), opts3 bit 23 IP, 22
//	  UDP and 21 TCP checksum failed - then the frame and its FCS; the
//	  next descriptor at the next multiple of 8; as many as fit the
//	  host's buffer (32 KiB at SuperSpeed).
//	bulk OUT: per frame an 8-byte tx_desc - opts1 bits 0-17 the length,
//	  31 first and 30 last segment, 28/27 TSO for IPv4/IPv6; opts2 bits
//	  29/28 IPv4/IPv6 checksum, 30 TCP and 31 UDP checksum, the MSS (TSO)
//	  or the transport offset in bits 17-27, bit 16 a VLAN tag to insert
//	  (TCI byte-swapped in bits 0-15) - then the frame; the next
//	  descriptor at the next multiple of 4.
const (
	rtlRxDesc    = 24
	rtlTxDesc    = 8
	rtlFCS       = 4
	rtlMinFrame  = 60
	rtlRxLenMask = 0x7fff
	rtlRdIPv4    = 1 << 19
	rtlRdIPv6    = 1 << 20
	rtlRdTCP     = 1 << 22
	rtlRdUDP     = 1 << 23
	rtlRdVLAN    = 1 << 16
	rtlRdIPF     = 1 << 23
	rtlRdUDPF    = 1 << 22
	rtlRdTCPF    = 1 << 21
	rtlTxFS      = 1 << 31
	rtlTxLS      = 1 << 30
	rtlTxTSOv4   = 1 << 28
	rtlTxTSOv6   = 1 << 27
	rtlTxLenMask = 0x3ffff
	rtlTxUDPCS   = 1 << 31
	rtlTxTCPCS   = 1 << 30
	rtlTxIPv4CS  = 1 << 29
	rtlTxMSSMask = 0x7ff
	rtlTxMSSShft = 17
	rtlTxVLAN    = 1 << 16
)

// rtlWire is a frame's length on the wire: padded to the minimum, with
// the FCS.
func rtlWire(n int) int { return max(n, rtlMinFrame) + rtlFCS }

// rtlAggSize is the size of an aggregate of frames of these lengths.
func rtlAggSize(lens []int) int {
	n := 0
	for i, l := range lens {
		if i > 0 {
			n = align8(n)
		}
		n += rtlRxDesc + rtlWire(l)
	}
	return n
}

// rtlLayout says where an aggregate's descriptors went, for the hostile
// mode.
type rtlLayout struct{ descs []int }

// buildRTL lays out an aggregate; opts2 and opts3 are each frame's
// descriptor words besides its length.
func buildRTL(frames [][]byte, opts2, opts3 []uint32) ([]byte, rtlLayout) {
	lens := make([]int, len(frames))
	for i, f := range frames {
		lens[i] = len(f)
	}
	b := make([]byte, 0, rtlAggSize(lens))
	var lay rtlLayout
	for i, f := range frames {
		b = append(b, make([]byte, align8(len(b))-len(b))...)
		lay.descs = append(lay.descs, len(b))
		b = le.AppendUint32(b, uint32(rtlWire(len(f))))
		b = le.AppendUint32(b, opts2[i])
		b = le.AppendUint32(b, opts3[i])
		b = append(b, make([]byte, 12)...)
		start := len(b)
		b = append(b, f...)
		b = append(b, make([]byte, max(0, rtlMinFrame-len(f)))...)
		b = le.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	}
	return b, lay
}

// rxDesc is what the device says of a received frame: the VLAN tag it
// stripped (the frame returned without it) when the driver asked for
// that, and the checksums it checked - an IPv4 header, a TCP or UDP
// segment - with those that failed; nothing for what it did not check.
func (r *RTL8153) rxDesc(f []byte, strip bool) (out []byte, opts2, opts3 uint32) {
	if strip && len(f) >= 18 && be.Uint16(f[12:]) == 0x8100 {
		opts2 = rtlRdVLAN | uint32(f[15])<<8 | uint32(f[14])
		f = append(append([]byte(nil), f[:12]...), f[16:]...)
		r.vlanStripped.Add(1)
	}
	p, ok := parseIP(f)
	if !ok {
		return f, opts2, 0
	}
	flags, verdict := rxCsumFlags(f, coeIP|coeTCP|coeUDP|coeTCPv6|coeUDPv6)
	if p.v6 {
		opts2 |= rtlRdIPv6
	} else {
		opts2 |= rtlRdIPv4
		if flags&axRxL3Err != 0 {
			opts3 |= rtlRdIPF
		}
	}
	switch flags & (axRxTypeTCP | axRxTypeUDP) {
	case axRxTypeTCP:
		opts2 |= rtlRdTCP
		if flags&axRxL4Err != 0 {
			opts3 |= rtlRdTCPF
		}
	case axRxTypeUDP:
		opts2 |= rtlRdUDP
		if flags&axRxL4Err != 0 {
			opts3 |= rtlRdUDPF
		}
	}
	r.checksummed(verdict)
	return f, opts2, opts3
}

// BulkIn implements Model: it waits for a frame the MAC took, then adds
// every one already waiting that fits the host's buffer, paces them to
// the link and lays out the aggregate.
func (r *RTL8153) BulkIn(ep uint8, max int, done <-chan struct{}) []byte {
	frames, lens, ok := gatherFrames(r.rx, &r.pending, r.batch, func(lens []int) bool { return rtlAggSize(lens) <= max }, done)
	if !ok {
		return nil
	}
	r.inPace.take(lens...)
	strip := r.rxState().strip
	opts2, opts3 := make([]uint32, len(frames)), make([]uint32, len(frames))
	for i, f := range frames {
		frames[i], opts2[i], opts3[i] = r.rxDesc(f, strip)
	}
	b, lay := buildRTL(frames, opts2, opts3)
	return sendAggregate(&r.macDev, len(frames), rtlMutations, b, lay)
}

// BulkOut implements Model: frames behind their tx_desc, each one whole
// (first and last segment), segmented where TSO asks for it, checksummed
// where the descriptor asks, tagged, onto the link. A descriptor that
// does not hold ends the transfer's frames.
func (r *RTL8153) BulkOut(ep uint8, data []byte) {
	r.cnt.ntbsOut.Add(1)
	if len(data) < rtlTxDesc {
		r.cnt.badOut.Add(1)
		return
	}
	for off := 0; off < len(data); {
		if off+rtlTxDesc > len(data) {
			r.cnt.badOut.Add(1)
			return
		}
		o1, o2 := le.Uint32(data[off:]), le.Uint32(data[off+4:])
		n := int(o1 & rtlTxLenMask)
		if o1&(rtlTxFS|rtlTxLS) != rtlTxFS|rtlTxLS || n < 14 || off+rtlTxDesc+n > len(data) {
			r.cnt.badOut.Add(1)
			return
		}
		r.sendFrame(append([]byte(nil), data[off+rtlTxDesc:off+rtlTxDesc+n]...), o1, o2)
		off = (off + rtlTxDesc + n + 3) &^ 3
	}
}

// sendFrame puts one frame the host sent on the link as its descriptor
// says.
func (r *RTL8153) sendFrame(f []byte, o1, o2 uint32) {
	mss, coe := 0, byte(0)
	if o1&(rtlTxTSOv4|rtlTxTSOv6) != 0 {
		mss, coe = int(o2>>rtlTxMSSShft&rtlTxMSSMask), 0xff // TSO fills every checksum, one segment or many
	}
	if o2&rtlTxIPv4CS != 0 {
		coe |= coeIP
	}
	if o2&rtlTxTCPCS != 0 {
		coe |= coeTCP | coeTCPv6
	}
	if o2&rtlTxUDPCS != 0 {
		coe |= coeUDP | coeUDPv6
	}
	var tag []byte
	if o2&rtlTxVLAN != 0 {
		tag = []byte{0x81, 0x00, byte(o2), byte(o2 >> 8)}
	}
	r.tx.send(f, mss, coe, tag)
}
