// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

// discardLink takes every frame and never has one to give.
type discardLink struct{ block chan struct{} }

func (l discardLink) ReadFrame() ([]byte, error) { <-l.block; return nil, nil }
func (l discardLink) WriteFrame([]byte) error    { return nil }
func (l discardLink) Close() error               { return nil }

// FuzzBulkOut: what the host sends on bulk OUT is outside input for the
// device; no transfer may make a model panic, whatever its bytes (NTBs for
// ncm and mbim, packet messages for rndis, a header and a frame - TSO
// segmented - for ax88179, descriptors and frames for aqc111 and rtl8153,
// EEM packets and commands for eem).
func FuzzBulkOut(f *testing.F) {
	l := discardLink{block: make(chan struct{})}
	models := []Model{NewNCM(l, 0, testMAC, nil), NewMBIM(l, 0, testMAC, nil),
		NewRNDIS(l, 0, testMAC, nil), NewAX88179(l, 0, testMAC, nil), NewAQC111(l, 0, testMAC, nil),
		NewEEM(l, 0, testMAC, nil), NewRTL8153(l, 0, testMAC, nil)}
	f.Add(uint8(0), ourNTB16(frame(1, 100), frame(2, 60)))
	f.Add(uint8(1), []byte("NCMH\x0c\x00\x00\x00\x10\x00\x0c\x00"))
	f.Add(uint8(2), []byte{1, 0, 0, 0, 60, 0, 0, 0, 36, 0, 0, 0, 20, 0, 0, 0})
	f.Add(uint8(3), []byte{60, 0, 0, 0, 0x40, 0x02, 0, 0})
	f.Add(uint8(4), []byte{60, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(5), eemOut([]byte{0, 0, 4, 0x80, 1, 2, 3, 4, 0, 0x28}, frame(1, 60)))
	f.Add(uint8(6), append([]byte{60, 0, 0, 0xc0, 0, 0, 0x22, 0x18}, frame(1, 60)...))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		models[int(which)%len(models)].BulkOut(epBulkOut, b)
	})
}

// FuzzParseNTB16: every datagram parseNTB16 returns lies inside the block.
func FuzzParseNTB16(f *testing.F) {
	f.Add(ourNTB16(frame(1, 300), frame(2, 40)))
	b, lay := buildNTB16(1, ndpSigNCM, [][]byte{frame(1, 200), frame(2, 90)}, 4)
	f.Add(b)
	for _, m := range ntbMutations {
		c := append([]byte(nil), b...)
		f.Add(m.apply(c, lay))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dgs, sigs, err := parseNTB16(b)
		if err != nil {
			return
		}
		if len(dgs) != len(sigs) {
			t.Fatalf("%d datagrams, %d signatures", len(dgs), len(sigs))
		}
		for _, d := range dgs {
			if len(d) == 0 || len(d) > len(b) {
				t.Fatalf("a datagram of %d bytes from a block of %d", len(d), len(b))
			}
		}
	})
}

// FuzzRNDISCommand: an encapsulated command is outside input too.
func FuzzRNDISCommand(f *testing.F) {
	r := NewRNDIS(discardLink{block: make(chan struct{})}, 0, testMAC, nil)
	f.Add([]byte{2, 0, 0, 0, 24, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0})
	f.Add([]byte{4, 0, 0, 0, 28, 0, 0, 0, 2, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s := usbredir.Control{RequestType: 0x21, Request: 0x00, Length: uint16(len(b))}
		r.Control(s, b)
		r.Control(usbredir.Control{RequestType: 0xa1, Request: 0x01, Length: 4096}, nil)
	})
}
