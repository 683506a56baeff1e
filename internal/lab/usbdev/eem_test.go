// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// strictEEM takes a device's transfer apart as the CDC EEM 1.0 text
// says, independently of the model's builder and parser: 16-bit
// little-endian headers, packets back to back to the transfer's end; a
// data packet (bit 15 clear) of bits 0-13 bytes holding an Ethernet
// frame of at least a header and a 4-byte CRC, the IEEE CRC-32 least
// significant byte first when bit 14 is set, else the bytes de ad be
// ef; a header of 0 a zero-length packet; a command (bit 15 set) with
// bit 14 clear, of those a device sends: echo (its payload the
// parameter's length), suspend hint, response hint, response complete.
func strictEEM(b []byte) (frames, echoes [][]byte, err error) {
	for p := 0; p < len(b); {
		if len(b)-p < 2 {
			return nil, nil, fmt.Errorf("at %d: a header cut short", p)
		}
		h := binary.LittleEndian.Uint16(b[p:])
		p += 2
		switch {
		case h == 0:
		case h&0x8000 != 0 && h&0x4000 != 0:
			return nil, nil, fmt.Errorf("at %d: reserved bit in command %#04x", p, h)
		case h&0x8000 != 0 && h>>11&7 == 0:
			n := int(h & 0x7ff)
			if n > len(b)-p {
				return nil, nil, fmt.Errorf("at %d: echo of %d bytes past the end", p, n)
			}
			echoes, p = append(echoes, b[p:p+n]), p+n
		case h&0x8000 != 0 && (h>>11&7 < 2 || h>>11&7 > 4):
			return nil, nil, fmt.Errorf("at %d: command %d is not a device's", p, h>>11&7)
		case h&0x8000 != 0:
		default:
			n := int(h & 0x3fff)
			if n < 18 || n > len(b)-p {
				return nil, nil, fmt.Errorf("at %d: data of %d bytes, %d left", p, n, len(b)-p)
			}
			f, crc := b[p:p+n-4], b[p+n-4:p+n]
			want := []byte{0xde, 0xad, 0xbe, 0xef}
			if h&0x4000 != 0 {
				want = binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(f))
			}
			if !bytes.Equal(crc, want) {
				return nil, nil, fmt.Errorf("at %d: CRC % x, want % x", p, crc, want)
			}
			frames, p = append(frames, f), p+n
		}
	}
	return frames, echoes, nil
}

// hostEEM is what cdc_eem's eem_rx_fixup makes of a transfer (from
// reading it): every data packet but the one ending the transfer is
// cloned off it; an echo is answered (a clone too, sent back); other
// commands and a reserved bit skip the header only; a length past the
// end or a header cut short ends the transfer with an error; a runt
// skips its bytes; a data packet with a bad CRC is dropped; when nothing
// is left for a last frame, the transfer counts as an error.
func hostEEM(b []byte) (frames [][]byte, clones, echoes int, err error) {
	for {
		if len(b) < 2 {
			return frames, clones, echoes, errors.New("incomplete header")
		}
		h := binary.LittleEndian.Uint16(b)
		b = b[2:]
		switch {
		case h&0x8000 != 0 && h&0x4000 == 0 && h>>11&7 == 0:
			n := int(h & 0x7ff)
			if len(b) < n {
				return frames, clones, echoes, errors.New("bogus echo")
			}
			echoes, b = echoes+1, b[n:]
		case h&0x8000 != 0, h == 0:
		case int(h&0x3fff) > len(b):
			return frames, clones, echoes, errors.New("bogus payload")
		case h&0x3fff < 18:
			b = b[h&0x3fff:]
		default:
			n := int(h & 0x3fff)
			f, crc := b[:n-4], binary.BigEndian.Uint32(b[n-4:])
			want := uint32(0xdeadbeef)
			if h&0x4000 != 0 {
				crc, want = binary.LittleEndian.Uint32(b[n-4:]), crc32.ChecksumIEEE(f)
			}
			if n == len(b) {
				if crc != want {
					return frames, clones, echoes, errors.New("last frame's CRC")
				}
				return append(frames, f), clones, echoes, nil
			}
			if clones++; crc == want {
				frames = append(frames, f)
			}
			b = b[n:]
		}
		if len(b) == 0 {
			return frames, clones, echoes, errors.New("no last frame: all consumed")
		}
	}
}

// TestEEMEnumerates: what cdc_eem binds to - one interface of class
// 2/0x0c/7 with a bulk IN and a bulk OUT endpoint and nothing else - and
// no class requests.
func TestEEMEnumerates(t *testing.T) {
	h := startHost(t, NewEEM(newMemLink(), 0, testMAC, nil), nil)
	h.plugged()
	_, head := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, 9, nil)
	_, cfg := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, binary.LittleEndian.Uint16(head[2:]), nil)
	var seen []string
	for p := 0; p < len(cfg); p += int(cfg[p]) {
		switch d := cfg[p : p+int(cfg[p])]; d[1] {
		case dtInterface:
			seen = append(seen, fmt.Sprintf("if %d.%d %02x/%02x/%02x eps %d", d[2], d[3], d[5], d[6], d[7], d[4]))
		case dtCSInterface:
			seen = append(seen, fmt.Sprintf("cs % x", d[2:]))
		case dtEndpoint:
			seen = append(seen, fmt.Sprintf("ep %#x type %d", d[2], d[3]))
		}
	}
	want := []string{"if 0.0 02/0c/07 eps 2", "ep 0x82 type 2", "ep 0x1 type 2"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("configuration:\n got %q\nwant %q", seen, want)
	}
	if st, _ := h.control(0xa1, 0x01, 0, 0, 64, nil); st != usbredir.StatusStall {
		t.Errorf("a class request answered (status %d): EEM has none", st)
	}
}

// eemOut is a host's transfer: a data packet per frame with its Ethernet
// CRC, as cdc_eem's eem_tx_fixup sends, then what extra holds.
func eemOut(extra []byte, frames ...[]byte) []byte {
	var b []byte
	for _, f := range frames {
		b = binary.LittleEndian.AppendUint16(b, uint16(0x4000|len(f)+4))
		b = binary.LittleEndian.AppendUint32(append(b, f...), crc32.ChecksumIEEE(f))
	}
	return append(b, extra...)
}

// sendOut sends a bulk OUT transfer and waits for its answer.
func (h *testHost) sendOut(b []byte) {
	h.t.Helper()
	h.id++
	if err := h.c.SendBulkOut(h.id, epBulkOut, b); err != nil {
		h.t.Fatal(err)
	}
	if a := usbredir.ParseBulk(h.next(usbredir.TypeBulkPacket).Hdr); a.Status != 0 {
		h.t.Fatalf("bulk OUT answer: status %d", a.Status)
	}
}

// TestEEMDataPath: frames waiting go out several per transfer within the
// host's request, their CRCs real and sentinel in turn, the first
// transfer led by an echo; cdc_eem would clone all but the last off it.
// The host's echo response, its data packets (with the zero-length pad
// it adds) and an echo of its own are taken; a bad CRC is dropped.
func TestEEMDataPath(t *testing.T) {
	l := newMemLink()
	e := NewEEM(l, 0, testMAC, nil)
	h := startHost(t, e, nil)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	var want [][]byte
	for i := 0; i < 4; i++ {
		want = append(want, frame(i, 60+i*97))
		l.toDev <- want[i]
	}
	time.Sleep(100 * time.Millisecond)
	_, b := h.bulkIn(epBulkIn, 1524)
	got, echoes, err := strictEEM(b)
	hgot, clones, hechoes, herr := hostEEM(b)
	if err != nil || herr != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(hgot, want) || clones != 3 ||
		len(echoes) != 1 || hechoes != 1 {
		t.Fatalf("4 frames: strict %d, %d echoes (%v); cdc_eem %d, %d clones, %d echoes (%v)",
			len(got), len(echoes), err, len(hgot), clones, hechoes, herr)
	}
	if b[2+len(echoes[0])+1]&0x40 == 0 || b[2+len(echoes[0])+2+64+1]&0x40 != 0 {
		t.Errorf("the first two data packets' bmCRC: want real, then the sentinel")
	}
	for _, n := range []int{1514, 1514, 300} {
		l.toDev <- frame(n&0xff, n)
	}
	time.Sleep(100 * time.Millisecond)
	for n := 0; n < 3; {
		_, b := h.bulkIn(epBulkIn, 1524)
		got, _, err := strictEEM(b)
		if _, _, _, herr := hostEEM(b); err != nil || herr != nil || len(b) > 1524 {
			t.Fatalf("a transfer of %d bytes (the host takes 1524), %d frames; strict: %v, cdc_eem: %v", len(b), len(got), err, herr)
		}
		n += len(got)
	}
	h.sendOut(eemOut(nil, frame(20, 1000), frame(21, 60)))
	h.sendOut(append(binary.LittleEndian.AppendUint16(nil, uint16(0x8800|len(echoes[0]))), echoes[0]...))
	h.sendOut(eemOut([]byte{0, 0}, frame(22, 1018))) // 1024 bytes: cdc_eem adds a zero-length packet
	bad := eemOut(nil, frame(23, 100))
	bad[50] ^= 1
	h.sendOut(bad)
	h.sendOut([]byte{7, 0x80, 'p', 'i', 'n', 'g', 0, 0, 0}) // an echo of the host's: 7 bytes
	for i, n := range []int{1000, 60, 1018} {
		if f := <-l.fromDev; !bytes.Equal(f, frame(20+i, n)) {
			t.Errorf("frame %d to the link: %d bytes", i, len(f))
		}
	}
	l.toDev <- frame(30, 100)
	time.Sleep(50 * time.Millisecond)
	_, b = h.bulkIn(epBulkIn, 1524)
	if !bytes.HasPrefix(b, []byte{7, 0x88, 'p', 'i', 'n', 'g', 0, 0, 0}) {
		t.Errorf("the answer to the host's echo: % x", b[:min(len(b), 12)])
	}
	c := e.Counters()
	if c["eem_echo_answered"] != 1 || c["eem_echo_wrong"] != 0 || c["eem_bad_crc_from_host"] != 1 ||
		c["eem_zero_length_from_host"] != 1 || c["frames_from_host"] != 3 || c["eem_echo_from_host"] != 1 ||
		c["eem_crc_real"] != 4 || c["eem_crc_sentinel"] != 4 {
		t.Errorf("counts %v", c)
	}
}

// TestEEMMutationsAreMalformed: every hostile transfer is one the strict
// parser refuses, and one whose frames cdc_eem would not all take.
func TestEEMMutationsAreMalformed(t *testing.T) {
	frames := [][]byte{frame(1, 300), frame(2, 701), frame(3, 90)}
	for _, m := range eemMutations {
		pkts := [][]byte{eemCommand(eemEcho, []byte("echo")), eemData(frames[0], true), eemData(frames[1], false), eemData(frames[2], true)}
		b, lay := buildEEM(pkts)
		if got, _, err := strictEEM(b); err != nil || !reflect.DeepEqual(got, frames) {
			t.Fatalf("the well-formed transfer does not parse: %v", err)
		}
		n := len(b)
		bad := m.apply(b, lay)
		if len(bad) > n {
			t.Errorf("%s: %d bytes from %d: it may not fit the host's request", m.name, len(bad), n)
		}
		if got, _, err := strictEEM(bad); err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: still well-formed for the strict parser", m.name)
		}
		if got, _, _, err := hostEEM(bad); err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: cdc_eem takes every frame", m.name)
		}
	}
}

// TestEEMHostileRepeatable: the same seed malforms the same transfers the
// same way, each kind counted; another seed differs.
func TestEEMHostileRepeatable(t *testing.T) {
	checkHostileRepeatable(t, func(seed int64) map[string]uint64 {
		l := newMemLink()
		e := NewEEM(l, 0, testMAC, &Faults{Seed: seed, BadPerMille: 500})
		return hostileRun(t, e, l, epBulkIn, 1524, func(i int) []byte { return frame(i, 200) })
	}, len(eemMutations)*3/4)
}
