// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// memLink is a Link in memory: what the test puts in toDev reaches the
// device's bulk IN side, what the device writes arrives in fromDev.
type memLink struct{ toDev, fromDev chan []byte }

func newMemLink() *memLink {
	return &memLink{toDev: make(chan []byte, 256), fromDev: make(chan []byte, 256)}
}

func (l *memLink) ReadFrame() ([]byte, error) {
	f, ok := <-l.toDev
	if !ok {
		return nil, errors.New("closed")
	}
	return f, nil
}

func (l *memLink) WriteFrame(b []byte) error {
	l.fromDev <- append([]byte(nil), b...)
	return nil
}

func (l *memLink) Close() error { return nil }

// testHost plays QEMU's usb-redir: it reads what the device sends and
// sends the guest's requests.
type testHost struct {
	t    *testing.T
	c    *usbredir.Conn
	msgs chan *usbredir.Msg
	s    *Session
	id   uint64
}

// startHost runs model m in a session against a test host that has
// shaken hands.
func startHost(t *testing.T, m Model, f *Faults) *testHost {
	t.Helper()
	return startHostWith(t, m, f, nil)
}

// startHostWith is startHost with the session set up by setup first.
func startHostWith(t *testing.T, m Model, f *Faults, setup func(*Session)) *testHost {
	t.Helper()
	a, b, err := usbredir.SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := NewSession(usbredir.NewConn(a, usbredir.OurCaps), m, f, t.Logf)
	if setup != nil {
		setup(s)
	}
	done := make(chan struct{})
	go func() { _ = s.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); b.Close(); <-done })
	h := &testHost{t: t, c: usbredir.NewConn(b, qemuCaps), msgs: make(chan *usbredir.Msg, 1024), s: s, id: 100}
	if err := h.c.Handshake(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			m, err := h.c.ReadMsg()
			if err != nil {
				close(h.msgs)
				return
			}
			h.msgs <- m
		}
	}()
	return h
}

const qemuCaps uint32 = 1<<usbredir.CapConnectDeviceVersion | 1<<usbredir.CapFilter | 1<<usbredir.CapDeviceDisconnectAck |
	1<<usbredir.CapEPInfoMaxPacketSize | 1<<usbredir.Cap64BitIDs | 1<<usbredir.Cap32BitBulkLength | 1<<usbredir.CapBulkReceiving

// next returns the next message of type typ, failing on any other
// (interrupt packets, which come when they like, are skipped unless
// asked for).
func (h *testHost) next(typ uint32) *usbredir.Msg {
	h.t.Helper()
	for {
		select {
		case m, ok := <-h.msgs:
			if !ok {
				h.t.Fatalf("connection closed waiting for %s", usbredir.TypeName(typ))
			}
			if m.Type == usbredir.TypeInterruptPacket && typ != m.Type {
				continue
			}
			if m.Type != typ {
				h.t.Fatalf("got %s, want %s", usbredir.TypeName(m.Type), usbredir.TypeName(typ))
			}
			return m
		case <-time.After(5 * time.Second):
			h.t.Fatalf("no %s within 5 s", usbredir.TypeName(typ))
		}
	}
}

// plugged reads the plug-in announcement and returns device_connect.
func (h *testHost) plugged() *usbredir.Msg {
	h.t.Helper()
	h.next(usbredir.TypeInterfaceInfo)
	h.next(usbredir.TypeEPInfo)
	return h.next(usbredir.TypeDeviceConnect)
}

// control sends a control request and returns the answer's status and
// data.
func (h *testHost) control(reqType, req uint8, value, index, length uint16, data []byte) (uint8, []byte) {
	h.t.Helper()
	h.id++
	s := usbredir.Control{RequestType: reqType, Request: req, Value: value, Index: index, Length: length}
	if err := h.c.SendControlRequest(h.id, s, data); err != nil {
		h.t.Fatal(err)
	}
	m := h.next(usbredir.TypeControlPacket)
	if m.ID != h.id {
		h.t.Fatalf("control answer id %d, want %d", m.ID, h.id)
	}
	return usbredir.ParseControl(m.Hdr).Status, m.Data
}

// request sends a short request and returns its status answer.
func (h *testHost) request(typ, answer uint32, hdr ...uint8) []byte {
	h.t.Helper()
	h.id++
	if err := h.c.SendRequest(typ, h.id, hdr...); err != nil {
		h.t.Fatal(err)
	}
	m := h.next(answer)
	if m.ID != h.id {
		h.t.Fatalf("%s id %d, want %d", usbredir.TypeName(answer), m.ID, h.id)
	}
	return m.Hdr
}

// bulkIn asks for an IN transfer and returns the answer.
func (h *testHost) bulkIn(ep uint8, length uint32) (usbredir.Bulk, []byte) {
	h.t.Helper()
	h.id++
	if err := h.c.SendBulkRequest(h.id, ep, length); err != nil {
		h.t.Fatal(err)
	}
	m := h.next(usbredir.TypeBulkPacket)
	if m.ID != h.id {
		h.t.Fatalf("bulk answer id %d, want %d", m.ID, h.id)
	}
	return usbredir.ParseBulk(m.Hdr), m.Data
}

// collectAggregates asks for transfers of up to ask bytes on ep until n
// frames came, each taken apart by parse (a test's own parser of the
// format) and at most limit bytes long; there may be no more than maxAggs
// of them. It returns the frames and their descriptor words.
func collectAggregates[W any](h *testHost, m Model, ep uint8, ask uint32, limit, n, maxAggs int,
	parse func([]byte) ([][]byte, []W, error)) ([][]byte, []W) {
	h.t.Helper()
	var got [][]byte
	var words []W
	for len(got) < n {
		b, agg := h.bulkIn(ep, ask)
		fr, ws, err := parse(agg)
		if b.Status != 0 || err != nil || len(agg) > limit {
			h.t.Fatalf("aggregate of %d bytes: status %d, %v", len(agg), b.Status, err)
		}
		got, words = append(got, fr...), append(words, ws...)
	}
	if c := m.Counters()["aggregates_to_host"]; len(got) != n || c > uint64(maxAggs) {
		h.t.Fatalf("%d frames in %d aggregates, want %d in at most %d", len(got), c, n, maxAggs)
	}
	return got, words
}
