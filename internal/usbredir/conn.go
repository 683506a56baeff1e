// SPDX-License-Identifier: Apache-2.0

package usbredir

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

var le = binary.LittleEndian

// Msg is one message: its type, id, the type's own header and the data
// after it.
type Msg struct {
	Type uint32
	ID   uint64
	Hdr  []byte
	Data []byte
}

// Conn is one usbredir connection. ReadMsg is for one goroutine; Send may
// be called from many.
type Conn struct {
	r    *bufio.Reader
	c    io.Closer
	wmu  sync.Mutex
	w    *bufio.Writer
	ours uint32
	// peer and both are set by Handshake, before any other message.
	peer, both  uint32
	PeerVersion string
}

// NewConn wraps a connected stream. caps are the capabilities this side
// announces (OurCaps for a device).
func NewConn(rw io.ReadWriteCloser, caps uint32) *Conn {
	return &Conn{r: bufio.NewReaderSize(rw, 256<<10), w: bufio.NewWriterSize(rw, 256<<10), c: rw, ours: caps}
}

// Close closes the stream.
func (c *Conn) Close() error { return c.c.Close() }

// PeerCaps are the capabilities the peer announced.
func (c *Conn) PeerCaps() uint32 { return c.peer }

// Both are the capabilities both sides announced: what the messages'
// layout follows.
func (c *Conn) Both() uint32 { return c.both }

// Handshake sends this side's hello and reads the peer's. Both hellos
// travel with 32-bit ids: neither side knows the other's capabilities
// yet.
func (c *Conn) Handshake() error {
	hello := make([]byte, helloVersionLen+4)
	copy(hello, Version)
	le.PutUint32(hello[helloVersionLen:], c.ours)
	if err := c.Send(TypeHello, 0, hello, nil); err != nil {
		return err
	}
	m, err := c.ReadMsg()
	if err != nil {
		return fmt.Errorf("usbredir: reading the peer's hello: %w", err)
	}
	if m.Type != TypeHello {
		return fmt.Errorf("usbredir: the peer's first message is %s, not hello", TypeName(m.Type))
	}
	if len(m.Hdr) < helloVersionLen {
		return fmt.Errorf("usbredir: hello of %d bytes, shorter than its version string", len(m.Hdr))
	}
	c.PeerVersion = string(bytes.TrimRight(m.Hdr[:helloVersionLen], "\x00"))
	if len(m.Hdr) >= helloVersionLen+4 {
		c.peer = le.Uint32(m.Hdr[helloVersionLen:])
	}
	c.both = c.ours & c.peer
	return nil
}

func (c *Conn) idLen() int {
	if c.both&(1<<Cap64BitIDs) != 0 {
		return 8
	}
	return 4
}

// ReadMsg reads the next message. A type it does not know is returned
// with its whole payload in Data, for the caller to ignore or refuse.
func (c *Conn) ReadMsg() (*Msg, error) {
	idLen := c.idLen()
	head := make([]byte, 8+idLen)
	if _, err := io.ReadFull(c.r, head); err != nil {
		return nil, err
	}
	m := &Msg{Type: le.Uint32(head), ID: uint64(le.Uint32(head[8:]))}
	if idLen == 8 {
		m.ID = le.Uint64(head[8:])
	}
	n := le.Uint32(head[4:])
	if n > MaxPacket {
		return nil, fmt.Errorf("usbredir: %s of %d bytes, more than %d", TypeName(m.Type), n, MaxPacket)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, fmt.Errorf("usbredir: %s cut short: %w", TypeName(m.Type), err)
	}
	hl := typeHeaderLen(m.Type, c.both)
	switch {
	case hl == typeHeaderVariable:
		m.Hdr = body
	case hl == typeHeaderUnknown:
		m.Data = body
	case int(n) < hl:
		return nil, fmt.Errorf("usbredir: %s of %d bytes, its header needs %d", TypeName(m.Type), n, hl)
	default:
		m.Hdr, m.Data = body[:hl], body[hl:]
		if !hasData(m.Type) && len(m.Data) > 0 {
			return nil, fmt.Errorf("usbredir: %s carries %d bytes of data it cannot have", TypeName(m.Type), len(m.Data))
		}
	}
	return m, nil
}

// Send writes one message and flushes it.
func (c *Conn) Send(t uint32, id uint64, hdr, data []byte) error {
	idLen := c.idLen()
	head := make([]byte, 8+idLen, 8+idLen+len(hdr))
	le.PutUint32(head, t)
	le.PutUint32(head[4:], uint32(len(hdr)+len(data)))
	if idLen == 8 {
		le.PutUint64(head[8:], id)
	} else {
		le.PutUint32(head[8:], uint32(id))
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, b := range [][]byte{head, hdr, data} {
		if _, err := c.w.Write(b); err != nil {
			return err
		}
	}
	return c.w.Flush()
}
