// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"reflect"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// rtlRxWords are one received frame's descriptor words the tests read.
type rtlRxWords struct{ opts2, opts3 uint32 }

// strictRTL takes an RTL8153 aggregate apart as a careful host must, from
// r8152's rx_desc description, independently of the device's builder:
// descriptors of 24 bytes at multiples of 8, each length at least 64 (60
// and the FCS) and within the transfer, the FCS right, the last frame
// ending the transfer. It returns the frames (without FCS) and words.
func strictRTL(b []byte) ([][]byte, []rtlRxWords, error) {
	var frames [][]byte
	var words []rtlRxWords
	for p := 0; ; p = (p + 7) &^ 7 {
		if p+24 > len(b) {
			return nil, nil, fmt.Errorf("descriptor at %d of %d bytes", p, len(b))
		}
		n := int(binary.LittleEndian.Uint32(b[p:]) & 0x7fff)
		if n < 64 || p+24+n > len(b) {
			return nil, nil, fmt.Errorf("frame of %d at %d in %d bytes", n, p, len(b))
		}
		f := b[p+24 : p+24+n-4]
		if crc32.ChecksumIEEE(f) != binary.LittleEndian.Uint32(b[p+24+n-4:]) {
			return nil, nil, fmt.Errorf("frame %d: bad FCS", len(frames))
		}
		frames = append(frames, f)
		words = append(words, rtlRxWords{binary.LittleEndian.Uint32(b[p+4:]), binary.LittleEndian.Uint32(b[p+8:])})
		if p += 24 + n; p == len(b) {
			return frames, words, nil
		}
	}
}

// tagged is f with an 802.1Q tag of tci after its addresses.
func tagged(f []byte, tci uint16) []byte {
	return append(append(append([]byte(nil), f[:12]...), 0x81, 0x00, byte(tci>>8), byte(tci)), f[12:]...)
}

// TestRTL8153Receives: frames the MAC takes are aggregated within the
// host's 32 KiB with their FCS, a short one padded to 60, in the format
// rx_bottom parses; a TCP checksum is claimed good only where it holds;
// a VLAN tag is stripped into the descriptor once the driver asks;
// frames for another address are filtered; nothing is received before
// the driver starts the receiver.
func TestRTL8153Receives(t *testing.T) {
	l := newMemLink()
	m := NewRTL8153(l, 0, testMAC, nil)
	l.toDev <- tcpFrame(testMAC, 1, 100, true) // before the driver started receiving: dropped
	time.Sleep(50 * time.Millisecond)
	h := startRTL(t, m, nil)
	h.setWord(tPLA, 0xe854, 0x0040) // CPCR_RX_VLAN
	var want [][]byte
	for i := 0; i < 40; i++ {
		f := tcpFrame(testMAC, uint32(i), 1400-i*7, i != 3)
		switch i {
		case 5:
			f = tcpFrame([6]byte{2, 9, 9, 9, 9, 9}, 5, 100, true)
		case 7:
			want = append(want, f)
			f = tagged(f, 0x0123)
		case 9:
			f = append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, f[6:42]...) // 42 bytes, an ARP's size
			want = append(want, append(append([]byte(nil), f...), make([]byte, 18)...))
		default:
			want = append(want, f)
		}
		l.toDev <- f
	}
	time.Sleep(100 * time.Millisecond)
	got, words := collectAggregates(h.testHost, m, rtlEPBulkIn, 32768, 32768, len(want), 3, strictRTL)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d differs", i)
		}
		w := words[i]
		if tcp := len(want[i]) > 60; tcp && (w.opts2&(1<<19) == 0 || w.opts3&(1<<23) != 0) {
			t.Errorf("frame %d: opts2 %#x opts3 %#x, want IPv4 checked and good", i, w.opts2, w.opts3)
		}
		claimed := w.opts2&(1<<22) != 0 && w.opts3&(1<<21) == 0
		if ok := len(want[i]) > 60 && tcpOK(want[i]); claimed != ok {
			t.Errorf("frame %d: opts2 %#x opts3 %#x claim a good TCP checksum %v; it holds %v", i, w.opts2, w.opts3, claimed, ok)
		}
		if tag := w.opts2&(1<<16) != 0; tag != (i == 6) || tag && w.opts2&0xffff != 0x2301 {
			t.Errorf("frame %d: opts2 %#x, want the tag 0x0123 (byte-swapped) on frame 6 only", i, w.opts2)
		}
	}
	c := m.Counters()
	if c["rx_dropped_stopped"] != 1 || c["rx_filtered"] != 1 || c["rx_checksum_bad"] != 1 || c["rx_vlan_stripped"] != 1 {
		t.Errorf("counts %v", c)
	}
}

// txDesc is a tx_desc as r8152_tx_csum writes it.
func txDesc(n int, opts1, opts2 uint32) []byte {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(n)|1<<31|1<<30|opts1), opts2)
}

// TestRTL8153Sends: frames behind their tx_desc, several in a transfer at
// multiples of 4, reach the link: checksums filled where the descriptor
// asks, a TSO frame cut into segments of its MSS with their own lengths,
// ids, sequence numbers, flags and checksums, a VLAN tag inserted; a
// descriptor that is not a whole frame, or says more than the transfer
// holds, is refused.
func TestRTL8153Sends(t *testing.T) {
	l := newMemLink()
	m := NewRTL8153(l, 0, testMAC, nil)
	h := startRTL(t, m, nil)
	send := func(b []byte) {
		t.Helper()
		h.id++
		if err := h.c.SendBulkOut(h.id, rtlEPBulkOut, b); err != nil {
			t.Fatal(err)
		}
		if a := usbredir.ParseBulk(h.next(usbredir.TypeBulkPacket).Hdr); a.Status != 0 {
			t.Fatalf("bulk OUT status %d", a.Status)
		}
	}
	peer := [6]byte{2, 0, 0, 0, 0, 9}
	small := tcpFrame(peer, 7, 301, false)
	big := tcpFrame(peer, 1000, 4000, false)
	big[14+33] |= 0x01 // FIN on the last segment only
	odd := tcpFrame(peer, 9, 7, true)
	agg := append(txDesc(len(small), 0, 1<<30|1<<29|34<<17), small...) // TCP_CS | IPV4_CS, transport offset 34
	agg = append(agg, make([]byte, (4-len(agg)%4)%4)...)
	agg = append(append(agg, txDesc(len(big), 1<<28|34<<18, 1448<<17)...), big...) // GTSENDV4, MSS 1448
	agg = append(agg, make([]byte, (4-len(agg)%4)%4)...)
	agg = append(append(agg, txDesc(len(odd), 0, 1<<16|0x2301)...), odd...) // VLAN 0x0123
	send(agg)
	if f := <-l.fromDev; len(f) != len(small) || !tcpOK(f) || !bytes.Equal(f[54:], small[54:]) {
		t.Fatalf("frame of %d bytes, checksums hold %v", len(f), tcpOK(f))
	}
	for i, n := range []int{1448, 1448, 1104} {
		f := <-l.fromDev
		ip := f[14:34]
		if len(f) != 54+n || binary.BigEndian.Uint16(ip[2:]) != uint16(40+n) || !tcpOK(f) {
			t.Fatalf("segment %d: %d bytes, IP length %d, checksums %v", i, len(f), binary.BigEndian.Uint16(ip[2:]), tcpOK(f))
		}
		if binary.BigEndian.Uint16(ip[4:]) != 0x1234+uint16(i) || binary.BigEndian.Uint32(f[38:]) != uint32(1000+1448*i) {
			t.Errorf("segment %d: id %#x seq %d", i, binary.BigEndian.Uint16(ip[4:]), binary.BigEndian.Uint32(f[38:]))
		}
		if fin := f[47]&1 != 0; fin != (i == 2) {
			t.Errorf("segment %d: flags %#x", i, f[47])
		}
		if !bytes.Equal(f[54:], big[54+1448*i:54+1448*i+n]) {
			t.Errorf("segment %d: payload differs", i)
		}
	}
	if f := <-l.fromDev; !bytes.Equal(f, tagged(odd, 0x0123)) {
		t.Errorf("VLAN frame % x, want the tag 81 00 01 23 after the addresses", f[:18])
	}
	send(append(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 60), 0), make([]byte, 60)...))
	send(append(txDesc(2000, 0, 0), make([]byte, 100)...))
	if c := m.Counters(); c["bad_aggregates_from_host"] != 2 || c["tso_segments"] != 3 || c["frames_from_host"] != 5 ||
		c["tx_vlan_tagged"] != 1 {
		t.Errorf("counts %v", c)
	}
}

// rtlReceiving makes m receive as r8152's open leaves it, without a host.
func rtlReceiving(m *RTL8153) {
	m.mu.Lock()
	m.linkUp = true
	m.pla[rtlPlaRCR] = rtlRcrPhysical | rtlRcrBcast
	m.pla[rtlPlaCR] = rtlCRRxEnable
	m.mu.Unlock()
}

// TestRTL8153MutationsAreMalformed: every hostile aggregate is one the
// strict parser refuses, or whose frames are not the ones sent.
func TestRTL8153MutationsAreMalformed(t *testing.T) {
	frames := [][]byte{frame(1, 300), frame(2, 1514), frame(3, 61)}
	for _, m := range rtlMutations {
		b, lay := buildRTL(frames, make([]uint32, 3), make([]uint32, 3))
		if got, _, err := strictRTL(b); err != nil || !reflect.DeepEqual(got, frames) {
			t.Fatalf("the well-formed aggregate does not parse: %v", err)
		}
		got, _, err := strictRTL(m.apply(b, lay))
		if err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: the aggregate is still well-formed", m.name)
		}
	}
}

// TestRTL8153HostileRepeatable: the same seed malforms the same
// aggregates the same way, each kind is counted, and a malformed
// aggregate still goes out.
func TestRTL8153HostileRepeatable(t *testing.T) {
	checkHostileRepeatable(t, func(seed int64) map[string]uint64 {
		l := newMemLink()
		m := NewRTL8153(l, 0, testMAC, &Faults{Seed: seed, BadPerMille: 500})
		rtlReceiving(m)
		return hostileRun(t, m, l, rtlEPBulkIn, 32768, func(i int) []byte { return tcpFrame(testMAC, uint32(i), 200, true) })
	}, len(rtlMutations)/2)
}
