// SPDX-License-Identifier: Apache-2.0

package usbredir

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

type readOnly struct{ io.Reader }

func (readOnly) Write(b []byte) (int, error) { return len(b), nil }
func (readOnly) Close() error                { return nil }

// FuzzReadMsg: whatever QEMU (or anything on the socket) sends, ReadMsg
// returns a message whose header is the type's length, or an error; it
// never panics or allocates past MaxPacket. Run with 32-bit ids (before
// the hello) and with every capability (after it).
func FuzzReadMsg(f *testing.F) {
	var seed bytes.Buffer
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, TypeBulkPacket)
	binary.LittleEndian.PutUint32(h[4:], 14)
	seed.Write(h)
	seed.Write([]byte{0x82, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4})
	f.Add(false, seed.Bytes())
	f.Add(true, seed.Bytes())
	f.Fuzz(func(t *testing.T, negotiated bool, b []byte) {
		c := NewConn(readOnly{bytes.NewReader(b)}, OurCaps)
		if negotiated {
			c.peer, c.both = OurCaps, OurCaps
		}
		for i := 0; i < 64; i++ {
			m, err := c.ReadMsg()
			if err != nil {
				return
			}
			if hl := typeHeaderLen(m.Type, c.both); hl >= 0 && len(m.Hdr) != hl {
				t.Fatalf("%s: header of %d bytes, the type has %d", TypeName(m.Type), len(m.Hdr), hl)
			}
		}
	})
}
