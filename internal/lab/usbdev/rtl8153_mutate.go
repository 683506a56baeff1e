// SPDX-License-Identifier: Apache-2.0

package usbdev

// rtlMutation is a malformed RTL8153 aggregate: r8152's rx_bottom must
// stop at what is wrong and never read outside the transfer.
type rtlMutation = mutation[rtlLayout]

// setRTLLen rewrites the length in descriptor i (0: the first; -1: the
// last).
func setRTLLen(b []byte, lay rtlLayout, i, n int) {
	if i < 0 {
		i = len(lay.descs) - 1
	}
	p := lay.descs[i]
	le.PutUint32(b[p:], le.Uint32(b[p:])&^rtlRxLenMask|uint32(n&rtlRxLenMask))
}

func rtlLen(b []byte, lay rtlLayout, i int) int {
	return int(le.Uint32(b[lay.descs[i]:]) & rtlRxLenMask)
}

// rtlMutations are the hostile mode's malformed aggregates, each named in
// the device's counts.
var rtlMutations = []rtlMutation{
	{"length-past-end", func(b []byte, lay rtlLayout) []byte {
		setRTLLen(b, lay, -1, rtlRxLenMask) // 32 KiB from the last descriptor on
		return b
	}},
	{"length-over-next", func(b []byte, lay rtlLayout) []byte {
		setRTLLen(b, lay, 0, len(b)-lay.descs[0]-rtlRxDesc+8) // the first frame runs 8 bytes past the transfer
		return b
	}},
	{"length-longer", func(b []byte, lay rtlLayout) []byte {
		setRTLLen(b, lay, 0, rtlLen(b, lay, 0)+8) // the next descriptor is read 8 bytes late
		return b
	}},
	{"length-shorter", func(b []byte, lay rtlLayout) []byte {
		setRTLLen(b, lay, 0, max(rtlMinFrame, rtlLen(b, lay, 0)-16)) // read early: frame bytes as a descriptor
		return b
	}},
	{"runt", func(b []byte, lay rtlLayout) []byte {
		setRTLLen(b, lay, 0, 20) // shorter than the minimum frame
		return b
	}},
	{"zero-length", func(b []byte, lay rtlLayout) []byte {
		setRTLLen(b, lay, -1, 0)
		return b
	}},
	{"truncated", func(b []byte, lay rtlLayout) []byte {
		return b[:len(b)/2]
	}},
	{"descriptor-only", func(b []byte, lay rtlLayout) []byte {
		return b[:rtlRxDesc]
	}},
	{"shorter-than-descriptor", func(b []byte, lay rtlLayout) []byte {
		return b[:10]
	}},
}
