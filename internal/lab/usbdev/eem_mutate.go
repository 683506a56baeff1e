// SPDX-License-Identifier: Apache-2.0

package usbdev

// eemMutation turns a well-formed transfer of EEM packets into one a
// broken or malicious device sends, without making it longer (it must
// still fit the host's request). cdc_eem's eem_rx_fixup must drop what
// is wrong - a length past the transfer or a header cut short ends the
// transfer, a runt or a bad CRC loses its packet - and must not read or
// write outside the transfer; the packets it cloned off before the fault
// go up.
type eemMutation struct {
	name  string
	apply func(b []byte, lay eemLayout) []byte
}

// setHeader rewrites packet i's header.
func setHeader(b []byte, lay eemLayout, i int, h uint16) {
	le.PutUint16(b[lay.pkts[i][0]:], h)
}

// header reads packet i's header.
func header(b []byte, lay eemLayout, i int) uint16 { return le.Uint16(b[lay.pkts[i][0]:]) }

// dataMutation rewrites the header of the first (or last) data packet
// to what h makes of it.
func dataMutation(name string, last bool, h func(old uint16, rest int) uint16) eemMutation {
	return eemMutation{name, func(b []byte, lay eemLayout) []byte {
		i := lay.firstData()
		if last {
			i = lay.lastData()
		}
		rest := len(b) - lay.pkts[i][0] - eemHdrLen // the bytes behind the header
		setHeader(b, lay, i, h(header(b, lay, i), rest))
		return b
	}}
}

// eemMutations are the hostile mode's malformed transfers, each named in
// the device's counts. Those on the first data packet lose the transfer
// (or, for the ones the host reads past, make it parse frame bytes as
// headers); those on the last come after the host cloned the others.
var eemMutations = []eemMutation{
	dataMutation("length-past-end", true, func(old uint16, rest int) uint16 {
		return old&eemCRCBit | uint16(min(rest+64, eemLenMask))
	}),
	dataMutation("first-length-past-end", false, func(old uint16, rest int) uint16 { return old&eemCRCBit | eemLenMask }),
	dataMutation("zero-length-crc", false, func(uint16, int) uint16 { return eemCRCBit }), // length 0, bmCRC: a runt
	dataMutation("zero-length-pad", false, func(uint16, int) uint16 { return 0 }),         // the frame's bytes read as headers
	dataMutation("runt", false, func(old uint16, _ int) uint16 { return old&eemCRCBit | 10 }),
	dataMutation("echo-past-end", false, func(uint16, int) uint16 { return eemCmdBit | eemEcho<<eemCmdShift | eemParamMask }),
	dataMutation("unsolicited-echo-response", false, func(uint16, int) uint16 {
		return eemCmdBit | eemEchoResponse<<eemCmdShift | 8 // cdc_eem skips the header only: its payload is read as headers
	}),
	dataMutation("reserved-command", false, func(uint16, int) uint16 { return eemCmdBit | eemCRCBit | 0x123 }),
	dataMutation("tickle-to-host", false, func(uint16, int) uint16 { return eemCmdBit | eemTickle<<eemCmdShift }),
	{"bad-crc", func(b []byte, lay eemLayout) []byte {
		i := lay.firstData()
		setHeader(b, lay, i, header(b, lay, i)|eemCRCBit)
		end := lay.pkts[i][0] + lay.pkts[i][1]
		le.PutUint32(b[end-eemCRCLen:], ^ethCRC(b[lay.pkts[i][0]+eemHdrLen:end-eemCRCLen]))
		return b
	}},
	{"bad-sentinel", func(b []byte, lay eemLayout) []byte {
		i := lay.firstData()
		setHeader(b, lay, i, header(b, lay, i)&^eemCRCBit)
		end := lay.pkts[i][0] + lay.pkts[i][1]
		copy(b[end-eemCRCLen:], []byte{0xbe, 0xef, 0xde, 0xad})
		return b
	}},
	{"truncated-header", func(b []byte, lay eemLayout) []byte {
		return b[:lay.pkts[len(lay.pkts)-1][0]+1] // one byte of the last packet's header
	}},
	{"truncated-last", func(b []byte, lay eemLayout) []byte {
		p := lay.pkts[len(lay.pkts)-1]
		return b[:p[0]+eemHdrLen+(p[1]-eemHdrLen)/2]
	}},
	{"only-padding", func(b []byte, lay eemLayout) []byte {
		for i := range b[:len(b)&^1] {
			b[i] = 0
		}
		return b[:len(b)&^1]
	}},
}
