// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"errors"
	"fmt"
)

// NTB16 (USB CDC NCM 1.0, section 3): a transfer block holds a 12-byte
// NTH16, one or more NDP16s (datagram pointer tables, each a list of
// index/length pairs ended by a zero pair) and the datagrams.
const (
	nthSig       = 0x484d434e // "NCMH"
	ndpSigNCM    = 0x304d434e // "NCM0": Ethernet frames, no CRC
	ndpSigIPS    = 0x00535049 // "IPS" + session id: MBIM's IP datagrams
	nthLen       = 12
	ndpHeaderLen = 8
)

// ntbLayout says where an NTB's parts went, for the hostile mode.
type ntbLayout struct {
	ndpOff  int
	entries [][2]int // index, length of each datagram
}

// ndpLen is the length of an NDP16 of n datagrams (and its terminator).
func ndpLen(n int) int { return ndpHeaderLen + 4*(n+1) }

// align rounds off up to a multiple of a.
func align(off, a int) int {
	if a <= 1 {
		return off
	}
	return (off + a - 1) / a * a
}

// ntbFits says whether n datagrams of the given total payload fit a
// block of max bytes (each datagram aligned to div).
func ntbSize(lens []int, div int) int {
	off := align(nthLen+ndpLen(len(lens)), div)
	for i, l := range lens {
		if i > 0 {
			off = align(off, div)
		}
		off += l
	}
	return off
}

// buildNTB16 lays out an NTB: NTH16, one NDP16 of signature sig right
// after it, then the datagrams, each starting at a multiple of div.
func buildNTB16(seq uint16, sig uint32, dgs [][]byte, div int) ([]byte, ntbLayout) {
	lens := make([]int, len(dgs))
	for i, d := range dgs {
		lens[i] = len(d)
	}
	b := make([]byte, ntbSize(lens, div))
	le.PutUint32(b, nthSig)
	le.PutUint16(b[4:], nthLen)
	le.PutUint16(b[6:], seq)
	le.PutUint16(b[8:], uint16(len(b)))
	le.PutUint16(b[10:], nthLen)
	lay := ntbLayout{ndpOff: nthLen}
	ndp := b[nthLen:]
	le.PutUint32(ndp, sig)
	le.PutUint16(ndp[4:], uint16(ndpLen(len(dgs))))
	off := nthLen + ndpLen(len(dgs))
	for i, d := range dgs {
		off = align(off, div)
		copy(b[off:], d)
		le.PutUint16(ndp[ndpHeaderLen+4*i:], uint16(off))
		le.PutUint16(ndp[ndpHeaderLen+4*i+2:], uint16(len(d)))
		lay.entries = append(lay.entries, [2]int{off, len(d)})
		off += len(d)
	}
	return b, lay
}

// parseNTB16 returns the datagrams of an NTB the host sent, with the
// signature of the NDP each came from. It checks what a careful device
// checks: signatures, every offset and length inside the block, NDPs not
// looping.
func parseNTB16(b []byte) ([][]byte, []uint32, error) {
	if len(b) < nthLen {
		return nil, nil, fmt.Errorf("NTB of %d bytes, shorter than its NTH16", len(b))
	}
	if le.Uint32(b) != nthSig || le.Uint16(b[4:]) != nthLen {
		return nil, nil, errors.New("no NTH16 signature")
	}
	if bl := int(le.Uint16(b[8:])); bl > len(b) || bl < nthLen {
		return nil, nil, fmt.Errorf("NTH16 block length %d, transfer %d", bl, len(b))
	} else if bl != 0 {
		b = b[:bl]
	}
	var out [][]byte
	var sigs []uint32
	seen := map[int]bool{}
	for off := int(le.Uint16(b[10:])); off != 0; {
		if seen[off] || off%4 != 0 || off+ndpHeaderLen > len(b) {
			return nil, nil, fmt.Errorf("NDP16 at %d: outside the block, misaligned or looping", off)
		}
		seen[off] = true
		sig, n := le.Uint32(b[off:]), int(le.Uint16(b[off+4:]))
		if n < ndpLen(1) || off+n > len(b) {
			return nil, nil, fmt.Errorf("NDP16 at %d of length %d", off, n)
		}
		for p := off + ndpHeaderLen; p+4 <= off+n; p += 4 {
			idx, l := int(le.Uint16(b[p:])), int(le.Uint16(b[p+2:]))
			if idx == 0 || l == 0 {
				break
			}
			if idx+l > len(b) {
				return nil, nil, fmt.Errorf("datagram at %d of %d bytes past the block's %d", idx, l, len(b))
			}
			out = append(out, b[idx:idx+l])
			sigs = append(sigs, sig)
		}
		off = int(le.Uint16(b[off+6:]))
	}
	return out, sigs, nil
}
