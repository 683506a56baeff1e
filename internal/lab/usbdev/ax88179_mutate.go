// SPDX-License-Identifier: Apache-2.0

package usbdev

// axMutation is a malformed AX88179 aggregate: ax88179_rx_fixup must
// drop what is wrong and never read outside the transfer.
type axMutation = mutation[axLayout]

// setTrailer rewrites the aggregate's last word: count and hdr_off.
func setTrailer(b []byte, count, hdrOff int) {
	le.PutUint32(b[len(b)-4:], uint32(uint16(count))|uint32(uint16(hdrOff))<<16)
}

// setLen rewrites the length field of frame i's header word.
func setLen(b []byte, lay axLayout, i, n int) {
	p := lay.hdrOff + 8*i
	w := le.Uint32(b[p:])&^(axRxLenMask<<axRxLenShift) | uint32(n&axRxLenMask)<<axRxLenShift
	le.PutUint32(b[p:], w)
}

func frameLen(b []byte, lay axLayout, i int) int {
	return int(le.Uint32(b[lay.hdrOff+8*i:]) >> axRxLenShift & axRxLenMask)
}

func lastFrame(lay axLayout) int { return len(lay.offs) - 1 }

// axMutations are the hostile mode's malformed aggregates, each named in
// the device's counts.
var axMutations = []axMutation{
	{"zero-count", func(b []byte, lay axLayout) []byte {
		setTrailer(b, 0, lay.hdrOff)
		return b
	}},
	{"count-past-end", func(b []byte, lay axLayout) []byte {
		setTrailer(b, 0xffff, lay.hdrOff) // the array would run far past the transfer
		return b
	}},
	{"count-over-trailer", func(b []byte, lay axLayout) []byte {
		setTrailer(b, lay.count+3, lay.hdrOff) // the array would cover the trailer itself
		return b
	}},
	{"offset-past-end", func(b []byte, lay axLayout) []byte {
		setTrailer(b, lay.count, len(b)+64)
		return b
	}},
	{"array-in-data", func(b []byte, lay axLayout) []byte {
		setTrailer(b, lay.count, lay.offs[0]) // the frames' bytes read as headers
		return b
	}},
	{"array-overlaps-last-frame", func(b []byte, lay axLayout) []byte {
		setTrailer(b, lay.count, lay.hdrOff-8)
		return b
	}},
	{"length-past-urb", func(b []byte, lay axLayout) []byte {
		setLen(b, lay, lastFrame(lay), axRxLenMask) // 8191 bytes from the last frame on
		return b
	}},
	{"length-past-array", func(b []byte, lay axLayout) []byte {
		i := lastFrame(lay)
		setLen(b, lay, i, lay.hdrOff-lay.offs[i]+8) // the last frame runs into the header array
		return b
	}},
	{"length-longer", func(b []byte, lay axLayout) []byte {
		setLen(b, lay, 0, frameLen(b, lay, 0)+8) // the next frames are read 8 bytes late
		return b
	}},
	{"runt", func(b []byte, lay axLayout) []byte {
		setLen(b, lay, 0, 10) // shorter than the pad and an Ethernet header
		return b
	}},
	{"crc-error", func(b []byte, lay axLayout) []byte {
		p := lay.hdrOff
		le.PutUint32(b[p:], le.Uint32(b[p:])|axRxCRCErr)
		return b
	}},
	{"truncated", func(b []byte, lay axLayout) []byte {
		return b[:len(b)/2]
	}},
	{"trailer-only", func(b []byte, lay axLayout) []byte {
		return b[len(b)-4:]
	}},
	{"shorter-than-trailer", func(b []byte, lay axLayout) []byte {
		return b[:3]
	}},
}
