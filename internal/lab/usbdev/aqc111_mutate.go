// SPDX-License-Identifier: Apache-2.0

package usbdev

// aqMutation is a malformed AQC111 aggregate: aqc111_rx_fixup must drop
// what is wrong and never read outside the transfer.
type aqMutation = mutation[aqLayout]

// setAQHeader rewrites the aggregate's last 64 bits: count and desc_off.
func setAQHeader(b []byte, count, descOff int) {
	le.PutUint64(b[len(b)-8:], uint64(count&aqRxCntMask)|uint64(descOff&0x7ffff)<<aqRxOffShift)
}

// aqDesc is where frame i's descriptor is.
func aqDesc(lay aqLayout, i int) int { return lay.descOff + 8*i }

// setAQLen rewrites the length of frame i's descriptor.
func setAQLen(b []byte, lay aqLayout, i, n int) {
	p := aqDesc(lay, i)
	d := le.Uint64(b[p:])&^(0x7fff<<aqRxLenShift) | uint64(n&0x7fff)<<aqRxLenShift
	le.PutUint64(b[p:], d)
}

func aqCount(lay aqLayout) int { return len(lay.offs) }

// aqMutations are the hostile mode's malformed aggregates, each named in
// the device's counts.
var aqMutations = []aqMutation{
	{"zero-count", func(b []byte, lay aqLayout) []byte {
		setAQHeader(b, 0, len(b)-8) // no descriptors: they would end where the header starts
		return b
	}},
	{"count-past-end", func(b []byte, lay aqLayout) []byte {
		setAQHeader(b, aqRxCntMask, lay.descOff) // the descriptors would start before the transfer
		return b
	}},
	{"offset-past-end", func(b []byte, lay aqLayout) []byte {
		setAQHeader(b, aqCount(lay), len(b)+64)
		return b
	}},
	{"offset-into-frames", func(b []byte, lay aqLayout) []byte {
		setAQHeader(b, aqCount(lay), lay.offs[0]) // the frames' bytes read as descriptors
		return b
	}},
	{"length-past-descriptors", func(b []byte, lay aqLayout) []byte {
		i := aqCount(lay) - 1
		setAQLen(b, lay, i, lay.descOff-lay.offs[i]+16) // the last frame runs into the descriptors
		return b
	}},
	{"length-max", func(b []byte, lay aqLayout) []byte {
		setAQLen(b, lay, 0, 0x7fff) // 32 KiB from the first frame on
		return b
	}},
	{"lengths-short", func(b []byte, lay aqLayout) []byte {
		setAQLen(b, lay, 0, 1) // the padded lengths no longer reach desc_off
		return b
	}},
	{"not-rx-ok", func(b []byte, lay aqLayout) []byte {
		p := aqDesc(lay, 0)
		le.PutUint64(b[p:], le.Uint64(b[p:])&^aqRxOK)
		return b
	}},
	{"truncated", func(b []byte, lay aqLayout) []byte {
		return b[:len(b)/2]
	}},
	{"header-only", func(b []byte, lay aqLayout) []byte {
		return b[len(b)-8:]
	}},
	{"shorter-than-header", func(b []byte, lay aqLayout) []byte {
		return b[:5]
	}},
}
