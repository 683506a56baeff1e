// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// strictRNDIS takes a transfer of packet messages apart as a careful
// host must, from the RNDIS 1.0 text, independently of the device's
// builder and parser: messages back to back to the transfer's end, each
// of type 1 and a MessageLength covering its header and inside the
// transfer, the frame after the header and inside the message and at
// least an Ethernet header long, out-of-band data and per-packet
// information either absent or inside the message, VcHandle and the
// reserved word zero.
func strictRNDIS(b []byte) ([][]byte, error) {
	var out [][]byte
	for p := 0; p < len(b); {
		m := b[p:]
		if len(m) < 44 || le32(m, 0) != 1 {
			return nil, fmt.Errorf("message %d: %d bytes, not a packet message", len(out), len(m))
		}
		n := uint64(le32(m, 4))
		w := func(o int) uint64 { return uint64(le32(m, o)) }
		inside := func(off, l uint64) bool { return 8+off >= 44 && 8+off+l <= n }
		switch {
		case n < 44 || n > uint64(len(m)):
			return nil, fmt.Errorf("message %d: length %d of %d", len(out), n, len(m))
		case w(12) < 14 || !inside(w(8), w(12)):
			return nil, fmt.Errorf("message %d: data %d+%d", len(out), w(8), w(12))
		case (w(16)|w(20)|w(24)) != 0 && (w(20) == 0 || w(24) == 0 || !inside(w(16), w(20))):
			return nil, fmt.Errorf("message %d: OOB", len(out))
		case (w(28)|w(32)) != 0 && (w(32) == 0 || !inside(w(28), w(32))):
			return nil, fmt.Errorf("message %d: per-packet info", len(out))
		case w(36) != 0 || w(40) != 0:
			return nil, fmt.Errorf("message %d: VcHandle or reserved", len(out))
		}
		out = append(out, m[8+w(8):8+w(8)+w(12)])
		p += int(n)
	}
	return out, nil
}

// hostRx is what rndis_host's rndis_rx_fixup makes of a transfer (from
// reading it): each message but the last is cloned off the transfer,
// the last is what remains trimmed to its DataLength - and is taken for
// the last only when at most a header's worth of bytes lies past its
// data. Bytes left after that come back as an empty frame, an error.
func hostRx(b []byte) (frames [][]byte, clones int, err error) {
	for len(b) > 0 {
		if len(b) < 16 {
			return frames, clones, errors.New("tail shorter than the header read")
		}
		typ, n, off, dl := le32(b, 0), uint64(le32(b, 4)), uint64(le32(b, 8)), uint64(le32(b, 12))
		if typ != 1 || uint64(len(b)) < n || off+dl+8 > n {
			return frames, clones, fmt.Errorf("bad rndis message %d/%d/%d/%d, len %d", typ, n, off, dl, len(b))
		}
		b = b[8+off:]
		if uint32(dl)-uint32(len(b)) <= 44 {
			return append(frames, b[:min(int(dl), len(b))]), clones, nil
		}
		frames, clones = append(frames, b[:dl]), clones+1
		b = b[min(len(b), int(n)-44):]
	}
	return frames, clones, errors.New("empty frame after the last message")
}

// TestRNDISDataPath: nothing flows before the packet filter; frames
// waiting go out several per transfer within the host's MaxTransferSize,
// cut where rndis_host cuts them; the host's transfers (one message as
// Linux sends, with its pad byte; several as others do) reach the link,
// and a malformed one is refused and counted.
func TestRNDISDataPath(t *testing.T) {
	l := newMemLink()
	r := NewRNDIS(l, 0, testMAC, nil)
	h := startHost(t, r, nil)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	l.toDev <- frame(99, 100)
	time.Sleep(50 * time.Millisecond)
	h.rndisInitialize()
	var want [][]byte
	for i := 0; i < 5; i++ {
		want = append(want, frame(i, 60+i*41))
		l.toDev <- want[i]
	}
	time.Sleep(100 * time.Millisecond)
	_, b := h.bulkIn(epBulkIn, 2048)
	got, err := strictRNDIS(b)
	hgot, clones, herr := hostRx(b)
	if err != nil || herr != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(hgot, want) || clones != 4 {
		t.Fatalf("5 frames: strict %d (%v), rndis_host %d with %d clones (%v)", len(got), err, len(hgot), clones, herr)
	}
	for _, n := range []int{1514, 1514, 200} {
		l.toDev <- frame(n&0xff, n)
	}
	time.Sleep(100 * time.Millisecond)
	for n := 0; n < 3; {
		_, b := h.bulkIn(epBulkIn, 16384)
		got, err := strictRNDIS(b)
		if _, _, herr := hostRx(b); err != nil || herr != nil || len(b) > 2048 {
			t.Fatalf("a transfer of %d bytes (the host takes 2048), %d frames; strict: %v, rndis_host: %v",
				len(b), len(got), err, herr)
		}
		n += len(got)
	}
	h.rndisOut(r, packetMsgs(frame(20, 980)), 1) // 1024 bytes: usbnet pads a byte
	h.rndisOut(r, packetMsgs(frame(21, 1514), frame(22, 60)), 2)
	bad := packetMsgs(frame(23, 100))
	bad[12] = 0xff // DataLength past the message
	h.rndisOut(r, bad, 0)
	for i, n := range []int{980, 1514, 60} {
		if f := <-l.fromDev; !bytes.Equal(f, frame(20+i, n)) {
			t.Errorf("frame %d to the link: %d bytes", i, len(f))
		}
	}
	if c := r.Counters(); c["frames_dropped_no_filter"] != 1 || c["bad_aggregates_from_host"] != 1 ||
		c["frames_from_host"] != 3 || c["transfers_to_host_multi"] < 2 {
		t.Errorf("counts %v: want the frame before the filter dropped, the bad transfer counted", c)
	}
}

// packetMsgs is what a host sends: a packet message per frame, with a
// pad byte when the transfer is a multiple of 1024 bytes.
func packetMsgs(frames ...[]byte) []byte {
	var b []byte
	for _, f := range frames {
		b = append(append(b, words(1, uint32(44+len(f)), 36, uint32(len(f)), 0, 0, 0, 0, 0, 0, 0)...), f...)
	}
	if len(b)%1024 == 0 {
		b = append(b, 0)
	}
	return b
}

// rndisOut sends a bulk OUT transfer and waits until the device took n
// more frames from it.
func (h *testHost) rndisOut(r *RNDIS, b []byte, n uint64) {
	h.t.Helper()
	before := r.cnt.framesOut.Load()
	h.id++
	if err := h.c.SendBulkOut(h.id, epBulkOut, b); err != nil {
		h.t.Fatal(err)
	}
	if a := usbredir.ParseBulk(h.next(usbredir.TypeBulkPacket).Hdr); a.Status != 0 || a.Length != uint32(len(b)) {
		h.t.Fatalf("bulk OUT answer: status %d length %d", a.Status, a.Length)
	}
	if got := r.cnt.framesOut.Load() - before; got != n {
		h.t.Errorf("a transfer of %d bytes gave %d frames, want %d", len(b), got, n)
	}
}

// TestRNDISMutationsAreMalformed: every hostile transfer is one the
// strict parser refuses, and so does the device's own parser (which
// reads the host's transfers).
func TestRNDISMutationsAreMalformed(t *testing.T) {
	frames := [][]byte{frame(1, 300), frame(2, 701), frame(3, 90)}
	for _, m := range rndisMutations {
		b, lay := buildRNDISPackets(frames)
		if got, err := strictRNDIS(b); err != nil || !reflect.DeepEqual(got, frames) {
			t.Fatalf("the well-formed transfer does not parse: %v", err)
		}
		bad := m.apply(b, lay)
		if got, err := strictRNDIS(bad); err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: still well-formed for the strict parser", m.name)
		}
		if got, err := parseRNDISPackets(bad); err == nil && reflect.DeepEqual(got, frames) {
			t.Errorf("%s: the device's parser takes it", m.name)
		}
	}
}

// TestRNDISHostileRepeatable: the same seed malforms the same transfers
// the same way, each kind counted; another seed differs.
func TestRNDISHostileRepeatable(t *testing.T) {
	checkHostileRepeatable(t, func(seed int64) map[string]uint64 {
		l := newMemLink()
		r := NewRNDIS(l, 0, testMAC, &Faults{Seed: seed, BadPerMille: 500})
		r.dataOn.Store(true)
		return hostileRun(t, r, l, epBulkIn, 2048, func(i int) []byte { return frame(i, 200) })
	}, len(rndisMutations)*3/4)
}
