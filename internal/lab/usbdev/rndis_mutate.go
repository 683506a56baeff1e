// SPDX-License-Identifier: Apache-2.0

package usbdev

// rndisMutation turns a well-formed transfer of packet messages into one
// a broken or malicious device sends. The host must drop what is wrong
// (rndis_rx_fixup: the message and the rest of the transfer), count it,
// and keep going; none of these may make it read or write outside the
// transfer.
type rndisMutation struct {
	name  string
	apply func(b []byte, lay rndisLayout) []byte
}

// Fields of a packet message, by offset.
const (
	pmType, pmLen, pmDataOff, pmDataLen = 0, 4, 8, 12
	pmOOBOff, pmOOBLen, pmOOBNum        = 16, 20, 24
	pmPPIOff, pmPPILen                  = 28, 32
)

// setField writes word f of message i (-1: the last).
func setField(b []byte, lay rndisLayout, i, f int, v uint32) {
	if i < 0 {
		i = len(lay.msgs) - 1
	}
	le.PutUint32(b[lay.msgs[i][0]+f:], v)
}

// field reads word f of message i (-1: the last).
func field(b []byte, lay rndisLayout, i, f int) uint32 {
	if i < 0 {
		i = len(lay.msgs) - 1
	}
	return le.Uint32(b[lay.msgs[i][0]+f:])
}

// mutateField is a mutation setting one word of message i to what v makes
// of the message's MessageLength.
func mutateField(name string, i, f int, v func(msgLen uint32) uint32) rndisMutation {
	return rndisMutation{name, func(b []byte, lay rndisLayout) []byte {
		setField(b, lay, i, f, v(field(b, lay, i, pmLen)))
		return b
	}}
}

func constant(c uint32) func(uint32) uint32 { return func(uint32) uint32 { return c } }

// rndisMutations are the hostile mode's malformed transfers, each named
// in the device's counts. Some hit the first message (the whole transfer
// is lost), some the last (the host has cloned the others off already).
var rndisMutations = []rndisMutation{
	mutateField("bad-type", 0, pmType, constant(rndisMsgIndicate)),
	mutateField("bad-type-last", -1, pmType, constant(0xffffffff)),
	mutateField("length-past-transfer", -1, pmLen, func(n uint32) uint32 { return n + 64 }),
	mutateField("length-zero", -1, pmLen, constant(0)),
	mutateField("length-short-of-header", 0, pmLen, constant(36)),
	mutateField("data-in-header", 0, pmDataOff, constant(0)),
	mutateField("data-past-message", -1, pmDataLen, func(n uint32) uint32 { return n }),
	mutateField("data-offset-wraps", 0, pmDataOff, constant(0xffffffff-20)),
	mutateField("data-length-wraps", -1, pmDataLen, constant(0xfffffff8)),
	mutateField("data-length-zero", 0, pmDataLen, constant(0)),
	{"oob-outside", func(b []byte, lay rndisLayout) []byte {
		setField(b, lay, -1, pmOOBOff, field(b, lay, -1, pmLen))
		setField(b, lay, -1, pmOOBLen, 64)
		setField(b, lay, -1, pmOOBNum, 1)
		return b
	}},
	{"ppi-outside", func(b []byte, lay rndisLayout) []byte {
		setField(b, lay, 0, pmPPIOff, 0xfffffff0)
		setField(b, lay, 0, pmPPILen, 32)
		return b
	}},
	{"truncated-last", func(b []byte, lay rndisLayout) []byte {
		m := lay.msgs[len(lay.msgs)-1]
		return b[:m[0]+rndisPacketHdrLen+(m[1]-rndisPacketHdrLen)/2]
	}},
	{"truncated-header", func(b []byte, lay rndisLayout) []byte {
		return b[:lay.msgs[len(lay.msgs)-1][0]+12] // MessageType, MessageLength, DataOffset: no DataLength
	}},
}
