// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// strictAQ takes an AQC111 aggregate apart by the checks aqc111_rx_fixup
// makes, and more: the last 8 bytes a header (count in bits 0-12, the
// descriptors' offset in bits 13-31) whose descriptors end where it
// starts; each descriptor's length (bits 16-30, the 2-byte pad included)
// rounded up to 8 adding up to that offset exactly; RX OK (bit 11) set,
// drop (bit 31) clear, no frame shorter than pad and Ethernet header.
// It returns the frames without their pad and the descriptors.
func strictAQ(b []byte) ([][]byte, []uint64, error) {
	if len(b) < 8 {
		return nil, nil, errors.New("shorter than the header")
	}
	hdr := binary.LittleEndian.Uint64(b[len(b)-8:])
	count, off := int(hdr&0x1fff), int(hdr&0xffffe000>>13)
	if count == 0 || off != len(b)-8*(count+1) || off < 0 {
		return nil, nil, fmt.Errorf("count %d, offset %d in %d bytes", count, off, len(b))
	}
	var frames [][]byte
	var descs []uint64
	pos := 0
	for i := 0; i < count; i++ {
		d := binary.LittleEndian.Uint64(b[off+8*i:])
		n := int(d >> 16 & 0x7fff)
		if d&(1<<31) != 0 || d&(1<<11) == 0 || n < 16 {
			return nil, nil, fmt.Errorf("descriptor %d: %#x", i, d)
		}
		if pos+(n+7)&^7 > off {
			return nil, nil, fmt.Errorf("frame %d runs past the descriptors", i)
		}
		frames, descs = append(frames, b[pos+2:pos+n]), append(descs, d)
		pos += (n + 7) &^ 7
	}
	if pos != off {
		return nil, nil, fmt.Errorf("frames end at %d, descriptors start at %d", pos, off)
	}
	return frames, descs, nil
}

// TestAQC111Receives: frames the MAC takes are aggregated, within the
// request, in the format rx_fixup parses, with the TCP type claimed only
// where the checksum holds; frames for another address are filtered;
// nothing is received before the driver starts the MAC.
func TestAQC111Receives(t *testing.T) {
	l := newMemLink()
	m := NewAQC111(l, 0, testMAC, nil)
	l.toDev <- tcpFrame(testMAC, 1, 100, true) // before the driver started receiving: dropped
	time.Sleep(50 * time.Millisecond)
	h := startAQ(t, m, nil)
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
	got, descs := collectAggregates(h.testHost, m, 0x82, 16384, 16384, len(want), 5, strictAQ)
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d differs", i)
		}
		claimed := descs[i]&0x1c == 0x10 && descs[i]&3 == 0
		if claimed != tcpOK(want[i]) || descs[i]&0x60 != 0x20 {
			t.Errorf("frame %d: descriptor %#x claims a good TCP checksum %v; it holds %v", i, descs[i], claimed, tcpOK(want[i]))
		}
	}
	c := m.Counters()
	if c["rx_dropped_stopped"] != 1 || c["rx_filtered"] != 1 || c["rx_checksum_bad"] != 1 {
		t.Errorf("counts %v", c)
	}
}

// aqTx is aqc111_tx_fixup's transfer for a frame: the 64-bit descriptor
// (length, MSS at bit 32, VLAN bit 29 and tag at bit 48), the frame, zeros
// to a multiple of 8, and 8 more with bit 28 when the transfer would be a
// multiple of the 1024-byte packet.
func aqTx(f []byte, mss uint64, vlan uint16) []byte {
	d := uint64(len(f)) | mss<<32
	if vlan != 0 {
		d |= 1<<29 | uint64(vlan)<<48
	}
	pad := (8 - (len(f)+8)%8) % 8
	if (len(f)+8+pad)%1024 == 0 {
		pad += 8
		d |= 1 << 28
	}
	return append(append(binary.LittleEndian.AppendUint64(nil, d), f...), make([]byte, pad)...)
}

// TestAQC111Sends: a frame behind its descriptor reaches the link with
// its checksums filled, one padded past a packet multiple too; a VLAN
// descriptor's tag is inserted; a TSO frame leaves as segments of the
// MSS; a descriptor saying more than the transfer holds is refused.
func TestAQC111Sends(t *testing.T) {
	l := newMemLink()
	m := NewAQC111(l, 0, testMAC, nil)
	h := startAQ(t, m, nil)
	send := func(b []byte) {
		t.Helper()
		h.id++
		if err := h.c.SendBulkOut(h.id, 0x03, b); err != nil {
			t.Fatal(err)
		}
		if a := usbredir.ParseBulk(h.next(usbredir.TypeBulkPacket).Hdr); a.Status != 0 {
			t.Fatalf("bulk OUT status %d", a.Status)
		}
	}
	peer := [6]byte{2, 0, 0, 0, 0, 9}
	for _, n := range []int{300, 1024 - 8 - 54} { // the second fills 1024 bytes: the drop-padding case
		send(aqTx(tcpFrame(peer, 7, n, false), 0, 0))
		if f := <-l.fromDev; len(f) != 54+n || !tcpOK(f) {
			t.Fatalf("frame of %d bytes (want %d), checksums hold %v", len(f), 54+n, tcpOK(f))
		}
	}
	send(aqTx(tcpFrame(peer, 9, 100, true), 0, 0x2064))
	if f := <-l.fromDev; len(f) != 58+100 || !bytes.Equal(f[12:16], []byte{0x81, 0, 0x20, 0x64}) {
		t.Fatalf("tagged frame: %d bytes, % x after the addresses", len(f), f[12:16])
	}
	big := tcpFrame(peer, 1000, 4000, false)
	send(aqTx(big, 1448, 0))
	for i, n := range []int{1448, 1448, 1104} {
		f := <-l.fromDev
		if len(f) != 54+n || !tcpOK(f) || !bytes.Equal(f[54:], big[54+1448*i:54+1448*i+n]) {
			t.Fatalf("segment %d: %d bytes, checksums %v", i, len(f), tcpOK(f))
		}
	}
	bad := aqTx(tcpFrame(peer, 1, 100, true), 0, 0)
	binary.LittleEndian.PutUint32(bad, 2000) // more than the transfer holds
	send(bad)
	if c := m.Counters(); c["bad_aggregates_from_host"] != 1 || c["tso_segments"] != 3 || c["frames_from_host"] != 6 ||
		c["tx_vlan_tagged"] != 1 {
		t.Errorf("counts %v", c)
	}
}

// TestAQC111MutationsAreMalformed: every hostile aggregate is one the
// strict parser refuses, or whose frames are not the ones sent.
func TestAQC111MutationsAreMalformed(t *testing.T) {
	frames := [][]byte{frame(1, 300), frame(2, 1514), frame(3, 61)}
	flags := []uint64{aqRxOK, aqRxOK | 0x10, aqRxOK}
	for _, m := range aqMutations {
		b, lay := buildAQ(frames, flags, 2)
		if got, _, err := strictAQ(b); err != nil || !reflect.DeepEqual(got, frames) {
			t.Fatalf("the well-formed aggregate does not parse: %v", err)
		}
		got, _, err := strictAQ(m.apply(b, lay))
		if err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: the aggregate is still well-formed", m.name)
		}
	}
}

// TestAQC111HostileRepeatable: the same seed malforms the same
// aggregates the same way, each kind is counted.
func TestAQC111HostileRepeatable(t *testing.T) {
	checkHostileRepeatable(t, func(seed int64) map[string]uint64 {
		l := newMemLink()
		q := NewAQC111(l, 0, testMAC, &Faults{Seed: seed, BadPerMille: 500})
		q.mu.Lock()
		q.linkAt = aqSpeed1G
		copy(q.regs[axRxCtl:], []byte{0x88, 0x02})
		copy(q.regs[axMediumStatus:], []byte{0x33, 0x01})
		q.mu.Unlock()
		return hostileRun(t, q, l, 0x82, 16384, func(i int) []byte { return tcpFrame(testMAC, uint32(i), 200, true) })
	}, len(aqMutations)/2)
}
