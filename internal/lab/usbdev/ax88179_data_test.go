// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// strictAX takes an AX88179 aggregate apart as a careful host must, from
// ax88179_rx_fixup's description of the format, independently of the
// device's builder: a trailer (count, offset) at the end; the header
// array 8-aligned, right after the frames, within the transfer and
// ending at most 4 bytes before the trailer; each frame's word a length
// of at least the pad and an Ethernet header with no error bits, the
// frames back to back at multiples of 8 exactly up to the array; dummy
// words (length 0) marked drop. It returns the frames and their words.
func strictAX(b []byte) ([][]byte, []uint32, error) {
	if len(b) < 12 || len(b)%8 != 0 {
		return nil, nil, fmt.Errorf("length %d", len(b))
	}
	tr := binary.LittleEndian.Uint32(b[len(b)-4:])
	cnt, off := int(tr&0xffff), int(tr>>16)
	if cnt == 0 || off%8 != 0 || off+4*cnt > len(b)-4 || len(b)-4-(off+4*cnt) > 4 {
		return nil, nil, fmt.Errorf("trailer: %d words at %d in %d bytes", cnt, off, len(b))
	}
	var frames [][]byte
	var words []uint32
	p := 0
	for i := 0; i < cnt; i++ {
		w := binary.LittleEndian.Uint32(b[off+4*i:])
		n := int(w>>16) & 0x1fff
		if n == 0 {
			if w&(1<<31) == 0 {
				return nil, nil, fmt.Errorf("word %d: empty but not a dummy", i)
			}
			continue
		}
		if w&(1<<31|1<<29) != 0 || n < 16 || p+n > off {
			return nil, nil, fmt.Errorf("word %d: %#x, frame at %d+%d before %d", i, w, p, n, off)
		}
		frames, words = append(frames, b[p+2:p+n]), append(words, w)
		p += (n + 7) / 8 * 8
	}
	if p != off || len(frames) == 0 {
		return nil, nil, fmt.Errorf("frames end at %d, array at %d (%d frames)", p, off, len(frames))
	}
	return frames, words, nil
}

// sum16 is the Internet checksum's sum, written plainly for the tests.
func sum16(b []byte, sum uint32) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum
}

// tcpFrame is an Ethernet/IPv4/TCP frame to dst with n payload bytes
// and correct checksums (csum false: the TCP checksum left 0, as a
// driver sends it for the device to fill).
func tcpFrame(dst [6]byte, seq uint32, n int, csum bool) []byte {
	f := append(dst[:], 2, 0, 0, 0, 0, 9, 0x08, 0x00)
	ip := []byte{0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	binary.BigEndian.PutUint16(ip[2:], uint16(40+n))
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum16(ip, 0)))
	tcp := []byte{0x13, 0x89, 0xa0, 0x00, 0, 0, 0, 0, 0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(tcp[4:], seq)
	for i := 0; i < n; i++ {
		tcp = append(tcp, byte(i*7+int(seq)))
	}
	if csum {
		ph := append(append([]byte(nil), ip[12:20]...), 0, 6, byte(len(tcp)>>8), byte(len(tcp)))
		binary.BigEndian.PutUint16(tcp[16:], ^uint16(sum16(tcp, sum16(ph, 0))))
	}
	return append(append(f, ip...), tcp...)
}

// tcpOK says whether an IPv4/TCP frame's checksums hold.
func tcpOK(f []byte) bool {
	ip, tcp := f[14:34], f[34:]
	ph := append(append([]byte(nil), ip[12:20]...), 0, 6, byte(len(tcp)>>8), byte(len(tcp)))
	return sum16(ip, 0) == 0xffff && sum16(tcp, sum16(ph, 0)) == 0xffff
}

// TestAX88179Receives: frames the MAC takes are aggregated, within the
// 20 KiB the driver set, in the format its rx_fixup parses, with the TCP
// checksum type claimed only where it holds; frames for another address
// are filtered; nothing is received before the driver starts the MAC.
func TestAX88179Receives(t *testing.T) {
	l := newMemLink()
	m := NewAX88179(l, 0, testMAC, nil)
	l.toDev <- tcpFrame(testMAC, 1, 100, true) // before the driver started receiving: dropped
	time.Sleep(50 * time.Millisecond)
	h := startAX(t, m, nil)
	var want [][]byte
	for i := 0; i < 40; i++ {
		f := tcpFrame(testMAC, uint32(i), 1400-i*7, i != 3)
		if i == 5 {
			f = tcpFrame([6]byte{2, 9, 9, 9, 9, 9}, 5, 100, true)
		} else {
			want = append(want, f)
		}
		l.toDev <- f
	}
	time.Sleep(100 * time.Millisecond)
	// the device keeps to the 20 KiB set in the bulk-in control
	got, words := collectAggregates(h.testHost, m, axEPBulkIn, 65536, 20480, len(want), 4, strictAX)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d differs", i)
		}
		claimed := words[i]&0x1c == 16 && words[i]&3 == 0
		if claimed != tcpOK(want[i]) {
			t.Errorf("frame %d: header %#x claims a good TCP checksum %v; it holds %v", i, words[i], claimed, tcpOK(want[i]))
		}
	}
	c := m.Counters()
	if c["rx_dropped_stopped"] != 1 || c["rx_filtered"] != 1 || c["rx_checksum_bad"] != 1 {
		t.Errorf("counts %v", c)
	}
}

// TestAX88179Sends: a frame behind its header reaches the link with its
// checksums filled; a TSO frame (MSS in the header) leaves as segments
// of that MSS with their own lengths, ids, sequence numbers, flags and
// checksums; a header saying more than the transfer holds is refused.
func TestAX88179Sends(t *testing.T) {
	l := newMemLink()
	m := NewAX88179(l, 0, testMAC, nil)
	h := startAX(t, m, nil)
	send := func(f []byte, mss uint32) {
		t.Helper()
		h.id++
		b := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(len(f))), mss)
		if err := h.c.SendBulkOut(h.id, axEPBulkOut, append(b, f...)); err != nil {
			t.Fatal(err)
		}
		if a := usbredir.ParseBulk(h.next(usbredir.TypeBulkPacket).Hdr); a.Status != 0 {
			t.Fatalf("bulk OUT status %d", a.Status)
		}
	}
	peer := [6]byte{2, 0, 0, 0, 0, 9}
	send(tcpFrame(peer, 7, 300, false), 0)
	if f := <-l.fromDev; len(f) != 14+40+300 || !tcpOK(f) {
		t.Fatalf("frame of %d bytes, checksums hold %v", len(f), tcpOK(f))
	}
	big := tcpFrame(peer, 1000, 4000, false)
	big[14+33] |= 0x01 // FIN on the last segment only
	send(big, 1448)
	for i, n := range []int{1448, 1448, 1104} {
		f := <-l.fromDev
		ip := f[14:34]
		if len(f) != 54+n || binary.BigEndian.Uint16(ip[2:]) != uint16(40+n) || !tcpOK(f) {
			t.Fatalf("segment %d: %d bytes, IP length %d, checksums %v", i, len(f), binary.BigEndian.Uint16(ip[2:]), tcpOK(f))
		}
		if binary.BigEndian.Uint16(ip[4:]) != 0x1234+uint16(i) || binary.BigEndian.Uint32(f[38:]) != uint32(1000+1448*i) {
			t.Errorf("segment %d: id %#x seq %d", i, binary.BigEndian.Uint16(ip[4:]), binary.BigEndian.Uint32(f[38:]))
		}
		if fin := f[47]&1 != 0; fin != (i == 2) || (f[47]&0x08 != 0) != (i == 2) {
			t.Errorf("segment %d: flags %#x", i, f[47])
		}
		if !bytes.Equal(f[54:], big[54+1448*i:54+1448*i+n]) {
			t.Errorf("segment %d: payload differs", i)
		}
	}
	for _, n := range []uint32{2000, 50} { // more than the transfer holds; far less
		h.id++
		bad := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, n), 0)
		if err := h.c.SendBulkOut(h.id, axEPBulkOut, append(bad, make([]byte, 100)...)); err != nil {
			t.Fatal(err)
		}
		h.next(usbredir.TypeBulkPacket)
	}
	if c := m.Counters(); c["bad_aggregates_from_host"] != 2 || c["tso_segments"] != 3 || c["frames_from_host"] != 4 {
		t.Errorf("counts %v", c)
	}
}
