// SPDX-License-Identifier: Apache-2.0

package usbdev

// ntbMutation turns a well-formed NTB16 into one a broken or malicious
// device sends. The host must drop what is wrong, count it, and keep
// going; none of these may make it read or write outside the transfer.
type ntbMutation struct {
	name  string
	apply func(b []byte, lay ntbLayout) []byte
}

// entry rewrites datagram pointer i of the (first) NDP.
func setEntry(b []byte, lay ntbLayout, i, idx, length int) {
	p := lay.ndpOff + ndpHeaderLen + 4*i
	if p+4 > len(b) {
		return
	}
	le.PutUint16(b[p:], uint16(idx))
	le.PutUint16(b[p+2:], uint16(length))
}

func last(lay ntbLayout) int { return len(lay.entries) - 1 }

// ntbMutations are the hostile mode's malformed aggregates, each named in
// the device's counts.
var ntbMutations = []ntbMutation{
	{"overlap", func(b []byte, lay ntbLayout) []byte {
		e := lay.entries[0]
		setEntry(b, lay, last(lay), e[0]+e[1]/2, e[1]) // the last datagram starts inside the first
		return b
	}},
	{"duplicate", func(b []byte, lay ntbLayout) []byte {
		e := lay.entries[0]
		setEntry(b, lay, last(lay), e[0], e[1])
		return b
	}},
	{"points-into-nth", func(b []byte, lay ntbLayout) []byte {
		setEntry(b, lay, 0, 0+2, 60) // index 2: inside the NTH, a non-zero pointer
		return b
	}},
	{"points-into-ndp", func(b []byte, lay ntbLayout) []byte {
		setEntry(b, lay, 0, lay.ndpOff, 64)
		return b
	}},
	{"length-past-end", func(b []byte, lay ntbLayout) []byte {
		e := lay.entries[last(lay)]
		setEntry(b, lay, last(lay), e[0], len(b)-e[0]+100)
		return b
	}},
	{"index-past-end", func(b []byte, lay ntbLayout) []byte {
		setEntry(b, lay, 0, len(b)+64, 60)
		return b
	}},
	{"zero-length-first", func(b []byte, lay ntbLayout) []byte {
		setEntry(b, lay, 0, lay.entries[0][0], 0)
		return b
	}},
	{"tiny-datagram", func(b []byte, lay ntbLayout) []byte {
		setEntry(b, lay, 0, lay.entries[0][0], 6) // shorter than an Ethernet header
		return b
	}},
	{"ndp-count-past-buffer", func(b []byte, lay ntbLayout) []byte {
		le.PutUint16(b[lay.ndpOff+4:], 0xfffc)
		return b
	}},
	{"ndp-length-short", func(b []byte, lay ntbLayout) []byte {
		le.PutUint16(b[lay.ndpOff+4:], 4)
		return b
	}},
	{"no-terminator", func(b []byte, lay ntbLayout) []byte {
		// the NDP's length counts its terminator as a datagram pointer
		// running into the first datagram's bytes
		le.PutUint16(b[lay.ndpOff+4:], uint16(ndpLen(len(lay.entries))+4*8))
		return b
	}},
	{"bad-nth-signature", func(b []byte, lay ntbLayout) []byte {
		b[0] ^= 0xff
		return b
	}},
	{"bad-ndp-signature", func(b []byte, lay ntbLayout) []byte {
		b[lay.ndpOff+3] ^= 0x55
		return b
	}},
	{"block-length-past-end", func(b []byte, lay ntbLayout) []byte {
		le.PutUint16(b[8:], uint16(len(b)+512))
		return b
	}},
	{"ndp-index-past-end", func(b []byte, lay ntbLayout) []byte {
		le.PutUint16(b[10:], uint16(len(b)+16))
		return b
	}},
	{"ndp-index-misaligned", func(b []byte, lay ntbLayout) []byte {
		le.PutUint16(b[10:], nthLen+1)
		return b
	}},
	{"ndp-loop", func(b []byte, lay ntbLayout) []byte {
		le.PutUint16(b[lay.ndpOff+6:], uint16(lay.ndpOff)) // next NDP is itself
		return b
	}},
	{"out-of-order", func(b []byte, lay ntbLayout) []byte {
		a, z := lay.entries[0], lay.entries[last(lay)]
		setEntry(b, lay, 0, z[0], z[1])
		setEntry(b, lay, last(lay), a[0], a[1])
		return b
	}},
	{"truncated", func(b []byte, lay ntbLayout) []byte {
		return b[:len(b)/2]
	}},
	{"nth-only", func(b []byte, lay ntbLayout) []byte {
		return b[:nthLen]
	}},
}
