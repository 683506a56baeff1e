// SPDX-License-Identifier: Apache-2.0

package usbdev

import "encoding/binary"

// What the AX88179 does for the driver's offloads, done here for real:
// ax88179_178a claims TX checksums (IPv4 and IPv6), TSO (IPv4, up to
// 16384 bytes) and RX checksums in bind, whatever the chip says, so the
// device must fill checksums, segment, and check what it receives. The
// checksum registers (RXCOE 0x34, TXCOE 0x35) say for which protocols.
const (
	coeIP    = 0x01
	coeTCP   = 0x02
	coeUDP   = 0x04
	coeTCPv6 = 0x20
	coeUDPv6 = 0x40
	protoTCP = 6
	protoUDP = 17
	tcpCWR   = 0x80
	tcpPSH   = 0x08
	tcpFIN   = 0x01
)

var be = binary.BigEndian

// ipPacket is where an Ethernet frame's IP packet and its transport
// header are.
type ipPacket struct {
	l3, l4, end int // end: where the IP packet ends (frames may be padded)
	v6, frag    bool
	proto       byte
}

func parseIP(f []byte) (ipPacket, bool) {
	p := ipPacket{l3: 14}
	if len(f) < 14 {
		return p, false
	}
	typ := be.Uint16(f[12:])
	if typ == 0x8100 || typ == 0x88a8 {
		if len(f) < 18 {
			return p, false
		}
		p.l3, typ = 18, be.Uint16(f[16:])
	}
	switch {
	case typ == 0x0800 && len(f) >= p.l3+20 && f[p.l3]>>4 == 4:
		p.l4 = p.l3 + int(f[p.l3]&0x0f)*4
		p.end = p.l3 + int(be.Uint16(f[p.l3+2:]))
		p.proto = f[p.l3+9]
		p.frag = be.Uint16(f[p.l3+6:])&0x3fff != 0
		return p, p.l4 >= p.l3+20 && p.end >= p.l4 && p.end <= len(f)
	case typ == 0x86dd && len(f) >= p.l3+40 && f[p.l3]>>4 == 6:
		p.v6, p.l4, p.proto = true, p.l3+40, f[p.l3+6]
		p.end = p.l4 + int(be.Uint16(f[p.l3+4:]))
		return p, p.end <= len(f)
	}
	return p, false
}

// csumAdd adds b to a ones' complement sum, 32 bits at a time (2^32 is 1
// modulo 0xffff, so the fold below is exact).
func csumAdd(sum uint64, b []byte) uint64 {
	for len(b) >= 8 {
		sum += uint64(be.Uint32(b)) + uint64(be.Uint32(b[4:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(be.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

func csumFold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// l4Sum is the transport checksum's sum over the pseudo-header and the
// segment as it is.
func (p ipPacket) l4Sum(f []byte) uint64 {
	var sum uint64
	if p.v6 {
		sum = csumAdd(0, f[p.l3+8:p.l3+40])
	} else {
		sum = csumAdd(0, f[p.l3+12:p.l3+20])
	}
	return csumAdd(sum+uint64(p.proto)+uint64(p.end-p.l4), f[p.l4:p.end])
}

// l4CsumAt is where the checksum of a TCP or UDP segment is, if the
// register bits coe cover it; -1 otherwise.
func (p ipPacket) l4CsumAt(coe byte) int {
	off, bit := -1, byte(0)
	switch p.proto {
	case protoTCP:
		off, bit = p.l4+16, coeTCP
	case protoUDP:
		off, bit = p.l4+6, coeUDP
	}
	if p.v6 {
		bit <<= 4 // TCPv6 0x20, UDPv6 0x40
	}
	if off < 0 || p.frag || coe&bit == 0 || off+2 > p.end {
		return -1
	}
	return off
}

// txChecksum fills the IPv4 header's and the transport checksum of f as
// the TX checksum register coe says; it says whether it filled one.
func txChecksum(f []byte, coe byte) bool {
	p, ok := parseIP(f)
	if !ok {
		return false
	}
	did := false
	if !p.v6 && coe&coeIP != 0 {
		f[p.l3+10], f[p.l3+11] = 0, 0
		be.PutUint16(f[p.l3+10:], ^csumFold(csumAdd(0, f[p.l3:p.l4])))
		did = true
	}
	if at := p.l4CsumAt(coe); at >= 0 {
		f[at], f[at+1] = 0, 0
		c := ^csumFold(p.l4Sum(f))
		if c == 0 && p.proto == protoUDP {
			c = 0xffff
		}
		be.PutUint16(f[at:], c)
		did = true
	}
	return did
}

// rxChecksum is the header bits the device gives a received frame: the
// L4 type where it checked a TCP or UDP checksum, with the error bits of
// what failed; 0 (the driver then leaves checking to the stack) for what
// it did not check.
func (a *AX88179) rxChecksum(f []byte, coe byte) uint32 {
	flags, verdict := rxCsumFlags(f, coe)
	a.checksummed(verdict)
	return flags
}

// rxCsumFlags checks a received frame's checksums as the RX checksum
// register coe says, in the bits the AX88179 and the AQC111 share (L4
// error 0, L3 error 1, L4 type UDP 4 or TCP 16); verdict is 1 for a good
// transport checksum, -1 for a bad one, 0 where none was checked.
func rxCsumFlags(f []byte, coe byte) (flags uint32, verdict int) {
	p, ok := parseIP(f)
	if !ok {
		return 0, 0
	}
	if !p.v6 && coe&coeIP != 0 && csumFold(csumAdd(0, f[p.l3:p.l4])) != 0xffff {
		flags |= axRxL3Err
	}
	at := p.l4CsumAt(coe)
	if at < 0 {
		return flags, 0
	}
	typ := uint32(axRxTypeTCP)
	if p.proto == protoUDP {
		typ = axRxTypeUDP
	}
	if (p.proto == protoUDP && !p.v6 && be.Uint16(f[at:]) == 0) || csumFold(p.l4Sum(f)) == 0xffff {
		return flags | typ, 1
	}
	return flags | typ | axRxL4Err, -1
}

// tsoSegment cuts a TCP frame into segments of mss payload bytes, as the
// chip's TSO does: the headers copied, sequence numbers advanced, IPv4
// total length and id (one more per segment) or IPv6 payload length set,
// CWR kept on the first segment only and FIN and PSH on the last only;
// the checksums are for txChecksum. nil: not a TCP frame longer than mss.
func tsoSegment(f []byte, mss int) [][]byte {
	p, ok := parseIP(f)
	if !ok || p.proto != protoTCP || p.frag || p.l4+20 > p.end {
		return nil
	}
	hdr := p.l4 + int(f[p.l4+12]>>4)*4
	if hdr < p.l4+20 || hdr > p.end || p.end-hdr <= mss {
		return nil
	}
	payload := f[hdr:p.end]
	seq, flags := be.Uint32(f[p.l4+4:]), f[p.l4+13]
	var id uint16
	if !p.v6 {
		id = be.Uint16(f[p.l3+4:])
	}
	var segs [][]byte
	for off, i := 0, 0; off < len(payload); off, i = off+mss, i+1 {
		n := min(mss, len(payload)-off)
		s := make([]byte, hdr+n)
		copy(s, f[:hdr])
		copy(s[hdr:], payload[off:off+n])
		be.PutUint32(s[p.l4+4:], seq+uint32(off))
		fl := flags
		if off > 0 {
			fl &^= tcpCWR
		}
		if off+n < len(payload) {
			fl &^= tcpFIN | tcpPSH
		}
		s[p.l4+13] = fl
		if p.v6 {
			be.PutUint16(s[p.l3+4:], uint16(len(s)-p.l4))
		} else {
			be.PutUint16(s[p.l3+2:], uint16(len(s)-p.l3))
			be.PutUint16(s[p.l3+4:], id+uint16(i))
		}
		segs = append(segs, s)
	}
	return segs
}
