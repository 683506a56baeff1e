// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"fmt"
)

// REMOTE_NDIS_PACKET_MSG (RNDIS 1.0, 2.2.11): MessageType 1,
// MessageLength, then DataOffset, DataLength, OOBDataOffset,
// OOBDataLength, NumOOBDataElements, PerPacketInfoOffset,
// PerPacketInfoLength, VcHandle and a reserved word; every offset counts
// from DataOffset's own field (byte 8). One transfer carries one or more
// such messages back to back.

// rndisLayout says where a transfer's messages went, for the hostile
// mode: the start and MessageLength of each.
type rndisLayout struct {
	msgs [][2]int
}

// rndisMsgLen is a packet message's length for a frame of n bytes: a
// message with another behind it is padded to the device's alignment,
// the last is not (rndis_host takes a last message with bytes behind it
// for one more, and counts the empty rest as an error).
func rndisMsgLen(n int, last bool) int {
	if last {
		return rndisPacketHdrLen + n
	}
	return align(rndisPacketHdrLen+n, 1<<rndisAlignShift)
}

// rndisSize is the transfer frames of the given lengths make.
func rndisSize(lens []int) int {
	n := 0
	for i, l := range lens {
		n += rndisMsgLen(l, i == len(lens)-1)
	}
	return n
}

// buildRNDISPackets lays frames out as packet messages, data right after
// each header.
func buildRNDISPackets(frames [][]byte) ([]byte, rndisLayout) {
	lens := make([]int, len(frames))
	for i, f := range frames {
		lens[i] = len(f)
	}
	b := make([]byte, rndisSize(lens))
	var lay rndisLayout
	off := 0
	for i, f := range frames {
		n := rndisMsgLen(len(f), i == len(frames)-1)
		le.PutUint32(b[off:], rndisMsgPacket)
		le.PutUint32(b[off+4:], uint32(n))
		le.PutUint32(b[off+8:], rndisPacketHdrLen-8)
		le.PutUint32(b[off+12:], uint32(len(f)))
		copy(b[off+rndisPacketHdrLen:], f)
		lay.msgs = append(lay.msgs, [2]int{off, n})
		off += n
	}
	return b, lay
}

// within says whether the region at off (from byte 8) of n bytes lies in
// a message of length msgLen, behind its 44-byte header.
func within(off, n, msgLen uint64) bool {
	return off >= rndisPacketHdrLen-8 && 8+off+n <= msgLen
}

// parseRNDISPackets takes a transfer the host sent apart: the frames of
// its packet messages, up to the first one that is wrong (and the error).
// It checks what a careful device checks: the type, MessageLength within
// the transfer and covering the header, the data inside the message and
// not empty, out-of-band data and per-packet information (ignored) inside
// it too. Zero bytes shorter than a header at the end are the host's pad
// (usbnet adds one to a transfer of a multiple of the packet size).
func parseRNDISPackets(b []byte) ([][]byte, error) {
	var out [][]byte
	for p := 0; p < len(b); {
		rest := b[p:]
		if len(rest) < rndisPacketHdrLen {
			if len(rest) < 8 && allZero(rest) {
				break
			}
			return out, fmt.Errorf("message %d: %d bytes, shorter than a header", len(out), len(rest))
		}
		typ, n := le.Uint32(rest), uint64(le.Uint32(rest[4:]))
		if typ != rndisMsgPacket {
			return out, fmt.Errorf("message %d: type %#x", len(out), typ)
		}
		if n < rndisPacketHdrLen || n > uint64(len(rest)) {
			return out, fmt.Errorf("message %d: MessageLength %d, %d bytes left", len(out), n, len(rest))
		}
		w := func(o int) uint64 { return uint64(le.Uint32(rest[o:])) }
		if w(12) == 0 || !within(w(8), w(12), n) {
			return out, fmt.Errorf("message %d: data at %d+%d of %d", len(out), w(8), w(12), n)
		}
		if (w(20) != 0 || w(24) != 0) && (w(20) == 0 || w(24) == 0 || !within(w(16), w(20), n)) {
			return out, fmt.Errorf("message %d: %d OOB elements at %d+%d", len(out), w(24), w(16), w(20))
		}
		if w(32) != 0 && !within(w(28), w(32), n) {
			return out, fmt.Errorf("message %d: per-packet info at %d+%d", len(out), w(28), w(32))
		}
		out = append(out, rest[8+w(8):8+w(8)+w(12)])
		p += int(n)
	}
	return out, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// BulkOut implements Model: the frames of the host's packet messages go
// to the link (those before a malformed one, which is counted).
func (r *RNDIS) BulkOut(ep uint8, data []byte) {
	frames, err := parseRNDISPackets(data)
	r.cnt.ntbsOut.Add(1)
	if err != nil {
		r.cnt.badOut.Add(1)
	}
	lens := make([]int, len(frames))
	for i, f := range frames {
		lens[i] = len(f)
		if r.link.WriteFrame(f) != nil {
			r.cnt.linkErrors.Add(1)
		}
	}
	r.cnt.framesOut.Add(uint64(len(frames)))
	r.outPace.take(lens...)
}

// BulkIn implements Model: it waits for a frame, then takes every frame
// already waiting that fits the transfer - the request's length and the
// host's MaxTransferSize - as a packet message each.
func (r *RNDIS) BulkIn(ep uint8, limit int, done <-chan struct{}) []byte {
	r.mu.Lock()
	if r.hostMax > 0 {
		limit = min(limit, r.hostMax)
	}
	r.mu.Unlock()
	var frames [][]byte
	var lens []int
	take := func(f []byte) bool {
		if rndisSize(append(lens, len(f))) > limit {
			if len(frames) == 0 {
				r.cnt.linkErrors.Add(1) // larger than the host takes at all
				return true
			}
			return false
		}
		frames, lens = append(frames, f), append(lens, len(f))
		return true
	}
	if !gather(r.rx, &r.pending, r.batch, take, func() bool { return len(frames) > 0 }, done) {
		return nil
	}
	r.inPace.take(lens...)
	b, lay := buildRNDISPackets(frames)
	r.cnt.ntbsIn.Add(1)
	r.cnt.framesIn.Add(uint64(len(frames)))
	if len(frames) > 1 {
		r.ctl.multi.Add(1) // rndis_host clones all but the last off the transfer
	}
	if kind, ok := r.faults.bad(len(rndisMutations)); ok {
		m := rndisMutations[kind]
		b = m.apply(b, lay)
		r.cnt.badKind(m.name)
	}
	return b
}
