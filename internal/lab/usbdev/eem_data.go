// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"fmt"
	"hash/crc32"
)

// ethCRC is an Ethernet frame's CRC (IEEE 802.3 CRC-32), sent least
// significant byte first.
func ethCRC(f []byte) uint32 { return crc32.ChecksumIEEE(f) }

// eemLayout says where a transfer's packets went, for the hostile mode:
// the offset and whole length (header included) of each, and which are
// data.
type eemLayout struct {
	pkts [][2]int
	data []bool
}

// firstData and lastData are the indexes of the first and last data
// packets (-1: none).
func (l eemLayout) firstData() int {
	for i, d := range l.data {
		if d {
			return i
		}
	}
	return -1
}

func (l eemLayout) lastData() int {
	for i := len(l.data) - 1; i >= 0; i-- {
		if l.data[i] {
			return i
		}
	}
	return -1
}

// buildEEM concatenates packets into a transfer.
func buildEEM(pkts [][]byte) ([]byte, eemLayout) {
	var b []byte
	var lay eemLayout
	for _, p := range pkts {
		lay.pkts = append(lay.pkts, [2]int{len(b), len(p)})
		lay.data = append(lay.data, le.Uint16(p)&eemCmdBit == 0)
		b = append(b, p...)
	}
	return b, lay
}

// BulkIn implements Model: it waits for a packet, then takes every
// packet already waiting (or, batching, coming) that fits the host's
// request; every 64th transfer starts with an echo command.
func (e *EEM) BulkIn(ep uint8, limit int, done <-chan struct{}) []byte {
	e.mu.Lock()
	var echo []byte
	if e.sent%eemEchoEvery == 0 {
		echo = eemCommand(eemEcho, []byte(fmt.Sprintf("wirespeed echo %08d", e.sent/eemEchoEvery)))
	}
	e.mu.Unlock()
	total := func(lens []int) int {
		n := len(echo)
		for _, l := range lens {
			n += l
		}
		return n
	}
	pkts, _, ok := gatherFrames(e.rx, &e.pending, e.batch, func(lens []int) bool { return total(lens) <= limit }, done)
	if !ok {
		return nil
	}
	if total([]int{len(pkts[0])}) > limit {
		echo = nil // a packet alone as large as the request: no room for the echo
	}
	if echo != nil {
		pkts = append([][]byte{echo}, pkts...)
	}
	b, lay := buildEEM(pkts)
	var frames []int
	for i, p := range pkts {
		if lay.data[i] {
			frames = append(frames, len(p)-eemHdrLen-eemCRCLen)
		}
	}
	e.inPace.take(frames...)
	e.mu.Lock()
	e.sent++
	if echo != nil {
		e.echoWant = echo[eemHdrLen:]
	}
	e.mu.Unlock()
	if echo != nil {
		e.eem.echoSent.Add(1)
	}
	e.cnt.ntbsIn.Add(1)
	e.cnt.framesIn.Add(uint64(len(frames)))
	if kind, ok := e.faults.bad(len(eemMutations)); ok && lay.firstData() >= 0 {
		m := eemMutations[kind]
		b = m.apply(b, lay)
		e.cnt.badKind(m.name)
	}
	return b
}

// eemPacket is one packet of a transfer: data (a frame whose CRC was
// checked), a zero-length packet, or a command with its payload.
type eemPacket struct {
	zero    bool
	cmd     bool
	code    int
	payload []byte // the frame (CRC stripped) or the command's payload
	crcOK   bool
}

// parseEEM takes a transfer apart into its packets, up to the first one
// that is malformed (and the error): a header cut short, a length past
// the transfer, a data packet too short for a frame and its CRC, a
// command with the reserved bit. A lone zero byte at the end is a bus's
// pad.
func parseEEM(b []byte) ([]eemPacket, error) {
	var out []eemPacket
	for p := 0; p < len(b); {
		if len(b)-p < eemHdrLen {
			if len(b)-p == 1 && b[p] == 0 {
				break
			}
			return out, fmt.Errorf("packet %d: %d byte(s), a header cut short", len(out), len(b)-p)
		}
		h := int(le.Uint16(b[p:]))
		p += eemHdrLen
		if h == 0 {
			out = append(out, eemPacket{zero: true})
			continue
		}
		if h&eemCmdBit != 0 {
			if h&eemCRCBit != 0 {
				return out, fmt.Errorf("packet %d: command %#04x with the reserved bit", len(out), h)
			}
			code, n := h>>eemCmdShift&7, 0
			if code == eemEcho || code == eemEchoResponse {
				n = h & eemParamMask
			}
			if n > len(b)-p {
				return out, fmt.Errorf("packet %d: command %d's %d bytes past the transfer", len(out), code, n)
			}
			out = append(out, eemPacket{cmd: true, code: code, payload: b[p : p+n]})
			p += n
			continue
		}
		n := h & eemLenMask
		if n > len(b)-p || n < eemMinData {
			return out, fmt.Errorf("packet %d: data length %d, %d bytes left", len(out), n, len(b)-p)
		}
		f, crc := b[p:p+n-eemCRCLen], b[p+n-eemCRCLen:p+n]
		ok := bytes.Equal(crc, []byte{0xde, 0xad, 0xbe, 0xef})
		if h&eemCRCBit != 0 {
			ok = le.Uint32(crc) == ethCRC(f)
		}
		out = append(out, eemPacket{payload: f, crcOK: ok})
		p += n
	}
	return out, nil
}

// BulkOut implements Model: data packets with a good CRC go to the link;
// an echo is answered on bulk IN, an echo response checked against the
// echo sent, a tickle counted; a malformed transfer is counted (the
// packets before the fault are taken).
func (e *EEM) BulkOut(ep uint8, data []byte) {
	pkts, err := parseEEM(data)
	e.cnt.ntbsOut.Add(1)
	if err != nil {
		e.cnt.badOut.Add(1)
	}
	var lens []int
	for _, pk := range pkts {
		switch {
		case pk.zero:
			e.eem.zeroFromHost.Add(1)
		case !pk.cmd && !pk.crcOK:
			e.eem.badCRC.Add(1)
		case !pk.cmd:
			lens = append(lens, len(pk.payload))
			if e.link.WriteFrame(pk.payload) != nil {
				e.cnt.linkErrors.Add(1)
			}
		default:
			e.command(pk)
		}
	}
	e.cnt.framesOut.Add(uint64(len(lens)))
	e.outPace.take(lens...)
}

// command takes a command packet from the host.
func (e *EEM) command(pk eemPacket) {
	switch pk.code {
	case eemEcho:
		e.eem.echoFromHost.Add(1)
		select {
		case e.rx <- eemCommand(eemEchoResponse, append([]byte(nil), pk.payload...)):
		default:
			e.eem.dropped.Add(1)
		}
	case eemEchoResponse:
		e.mu.Lock()
		want := e.echoWant
		if bytes.Equal(pk.payload, want) {
			e.echoWant = nil
		}
		e.mu.Unlock()
		if want != nil && bytes.Equal(pk.payload, want) {
			e.eem.echoAnswered.Add(1)
		} else {
			e.eem.echoWrong.Add(1)
		}
	case eemTickle:
		e.eem.tickles.Add(1)
	default: // hints go the other way; 6 and 7 are reserved
		e.eem.badCommands.Add(1)
	}
}
