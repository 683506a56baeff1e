// SPDX-License-Identifier: Apache-2.0

package usbdev

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/wirespeed/wirespeed/internal/usbredir"
)

func le32(b []byte, o int) uint32 { return binary.LittleEndian.Uint32(b[o:]) }

func words(w ...uint32) []byte {
	var b []byte
	for _, x := range w {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

// rndisCommand sends an encapsulated message and fetches the answer, as
// rndis_host's rndis_command does for a device it does not poll first.
func (h *testHost) rndisCommand(msg []byte) []byte {
	h.t.Helper()
	if st, _ := h.control(0x21, 0x00, 0, 0, uint16(len(msg)), msg); st != usbredir.StatusSuccess {
		h.t.Fatalf("SEND_ENCAPSULATED_COMMAND %#x: status %d", le32(msg, 0), st)
	}
	st, resp := h.control(0xa1, 0x01, 0, 0, 1025, nil)
	if st != usbredir.StatusSuccess {
		h.t.Fatalf("GET_ENCAPSULATED_RESPONSE: status %d", st)
	}
	return resp
}

// rndisInitialize is rndis_host's bind up to the data path: INITIALIZE
// offering 2048-byte transfers (its rx_urb_size at SuperSpeed), the
// physical medium and the permanent address, then the packet filter - the
// QUERYs with its InformationBufferOffset of 20, 4 bytes past the buffer.
func (h *testHost) rndisInitialize() (init, mac []byte) {
	h.t.Helper()
	init = h.rndisCommand(words(2, 24, 1, 1, 0, 2048))
	phym := h.rndisCommand(append(words(4, 28, 2, 0x00010202, 4, 20), 0, 0, 0, 0))
	if le32(phym, 0) != 0x80000004 || le32(phym, 8) != 2 || le32(phym, 12) != 0 || le32(phym, 16) != 4 ||
		le32(phym, 8+int(le32(phym, 20))) == 1 {
		h.t.Fatalf("QUERY PHYSICAL_MEDIUM: % x", phym)
	}
	q := h.rndisCommand(append(words(4, 24+48, 3, 0x01010101, 48, 20), make([]byte, 48)...))
	if le32(q, 0) != 0x80000004 || le32(q, 8) != 3 || le32(q, 12) != 0 || le32(q, 16) != 6 {
		h.t.Fatalf("QUERY 802_3_PERMANENT_ADDRESS: % x", q)
	}
	mac = q[8+le32(q, 20):][:6]
	set := h.rndisCommand(words(5, 28, 4, 0x0001010e, 4, 16, 0x2d))
	if !bytes.Equal(set, words(0x80000005, 16, 4, 0)) {
		h.t.Fatalf("SET CURRENT_PACKET_FILTER: % x", set)
	}
	return init, mac
}

// TestRNDISEnumerates: the descriptors rndis_host's probe reads - a
// 0xe0/1/3 control interface with the CDC header, call management, ACM
// (no capabilities) and union, an interrupt endpoint of at least 8 bytes,
// a CDC data interface with the bulk pair at setting 0.
func TestRNDISEnumerates(t *testing.T) {
	h := startHost(t, NewRNDIS(newMemLink(), 1000, testMAC, nil), nil)
	dc := h.plugged()
	if dc.Hdr[0] != usbredir.SpeedSuper || dc.Hdr[1] != 0 {
		t.Fatalf("device_connect % x", dc.Hdr)
	}
	_, head := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, 9, nil)
	_, cfg := h.control(0x80, reqGetDescriptor, dtConfig<<8, 0, binary.LittleEndian.Uint16(head[2:]), nil)
	var seen []string
	for p := 0; p < len(cfg); p += int(cfg[p]) {
		switch d := cfg[p : p+int(cfg[p])]; d[1] {
		case dtInterface:
			seen = append(seen, fmt.Sprintf("if %d.%d %02x/%d/%d eps %d", d[2], d[3], d[5], d[6], d[7], d[4]))
		case dtCSInterface:
			seen = append(seen, fmt.Sprintf("cs % x", d[2:]))
		case dtEndpoint:
			seen = append(seen, fmt.Sprintf("ep %#x type %d max %d", d[2], d[3], binary.LittleEndian.Uint16(d[4:])))
		}
	}
	want := []string{"if 0.0 e0/1/3 eps 1", "cs 00 10 01", "cs 01 00 01", "cs 02 00", "cs 06 00 01",
		"ep 0x81 type 3 max 8", "if 1.0 0a/0/0 eps 2", "ep 0x82 type 2 max 1024", "ep 0x1 type 2 max 1024"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("configuration:\n got %q\nwant %q", seen, want)
	}
	if s := h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1); s[0] != 0 {
		t.Errorf("set_configuration: % x", s)
	}
}

// TestRNDISControl: the exchange rndis_host's bind makes, and what else
// the device answers - an empty response queue, unknown OIDs, KEEPALIVE,
// RESET, HALT - and the RESPONSE_AVAILABLE notifications, held until the
// host receives on the interrupt endpoint (a polling host's first read).
func TestRNDISControl(t *testing.T) {
	h := startHost(t, NewRNDIS(newMemLink(), 2500, testMAC, nil), nil)
	h.plugged()
	h.request(usbredir.TypeSetConfiguration, usbredir.TypeConfigurationStatus, 1)
	if st, b := h.control(0xa1, 0x01, 0, 0, 1025, nil); st != 0 || !bytes.Equal(b, []byte{0}) {
		t.Fatalf("nothing to say: status %d % x, want the one zero byte", st, b)
	}
	init, mac := h.rndisInitialize()
	if le32(init, 0) != 0x80000002 || le32(init, 4) != 52 || le32(init, 8) != 1 || le32(init, 12) != 0 ||
		le32(init, 16) != 1 || le32(init, 28) != 0 || le32(init, 32) < 2 || le32(init, 36) < 1558 {
		t.Fatalf("INITIALIZE_CMPLT % x: want 1.0, 802.3, several packets, 1558+ bytes", init)
	}
	if !bytes.Equal(mac, testMAC[:]) {
		t.Errorf("permanent address % x", mac)
	}
	if _, ind := h.control(0xa1, 0x01, 0, 0, 1025, nil); !bytes.Equal(ind, words(7, 20, 0x4001000b, 0, 0)) {
		t.Errorf("behind the filter's completion: % x, want INDICATE media connect", ind)
	}
	if ka := h.rndisCommand(words(8, 12, 5)); !bytes.Equal(ka, words(0x80000008, 16, 5, 0)) {
		t.Errorf("KEEPALIVE: % x", ka)
	}
	if q := h.rndisCommand(words(4, 24, 6, 0xdead0001, 0, 0)); le32(q, 12) != 0xc00000bb || le32(q, 4) != 24 {
		t.Errorf("unknown OID: % x, want NOT_SUPPORTED", q)
	}
	if q := h.rndisCommand(words(4, 24, 7, 0x00010107, 0, 0)); le32(q, 24) != 25000000 {
		t.Errorf("LINK_SPEED % x: want 2500 Mbit/s in 100 bit/s", q)
	}
	if q := h.rndisCommand(append(words(5, 40, 8, 0x0001010e, 100, 16), make([]byte, 16)...)); le32(q, 12) != 0xc0010015 {
		t.Errorf("a SET whose buffer runs past it: % x, want INVALID_DATA", q)
	}
	if st, _ := h.control(0x21, 0x00, 0, 0, 8, words(4, 400)); st != usbredir.StatusStall {
		t.Errorf("a message longer than its transfer accepted (status %d)", st)
	}
	if r := h.rndisCommand(words(6, 12, 0)); !bytes.Equal(r, words(0x80000006, 16, 0, 0)) {
		t.Errorf("RESET: % x", r)
	}
	h.request(usbredir.TypeStartInterruptReceiving, usbredir.TypeInterruptReceivingStatus, epNotify)
	for i := 0; i < 8; i++ { // the latest 8 of 10 notifications, held until now
		if n := h.next(usbredir.TypeInterruptPacket); !bytes.Equal(n.Data, []byte{1, 0, 0, 0, 0, 0, 0, 0}) {
			t.Fatalf("notification % x, want RESPONSE_AVAILABLE", n.Data)
		}
	}
	h.control(0x21, 0x00, 0, 0, 16, words(8, 16, 9, 0))
	if n := h.next(usbredir.TypeInterruptPacket); len(n.Data) != 8 || n.Data[0] != 1 {
		t.Errorf("notification % x once receiving", n.Data)
	}
	h.control(0x21, 0x00, 0, 0, 12, words(3, 12, 0)) // HALT: no answer, and the queue forgotten
	if _, b := h.control(0xa1, 0x01, 0, 0, 1025, nil); !bytes.Equal(b, []byte{0}) {
		t.Errorf("after HALT: % x", b)
	}
}
