// SPDX-License-Identifier: Apache-2.0

package usbredir

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// qemuCaps are the capabilities QEMU's usb-redir announces (7.2, 10.0):
// everything but bulk streams, which it announces only when asked to.
const qemuCaps uint32 = 1<<CapConnectDeviceVersion | 1<<CapFilter | 1<<CapDeviceDisconnectAck |
	1<<CapEPInfoMaxPacketSize | 1<<Cap64BitIDs | 1<<Cap32BitBulkLength | 1<<CapBulkReceiving

func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	a, b, err := SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func pair(t *testing.T, devCaps, hostCaps uint32) (dev, host *Conn) {
	t.Helper()
	a, b := socketPair(t)
	dev, host = NewConn(a, devCaps), NewConn(b, hostCaps)
	errc := make(chan error, 1)
	go func() { errc <- host.Handshake() }()
	if err := dev.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return dev, host
}

// TestHelloWire: a hello is 12 bytes of header (32-bit id: nothing is
// negotiated yet), 64 bytes of version and the capability word.
func TestHelloWire(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go NewConn(a, OurCaps).Handshake()
	buf := make([]byte, 12+68)
	if _, err := io.ReadFull(b, buf); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if typ, n := le.Uint32(buf), le.Uint32(buf[4:]); typ != TypeHello || n != 68 {
		t.Fatalf("hello header: type %d length %d, want 0 and 68", typ, n)
	}
	if v := string(bytes.TrimRight(buf[12:76], "\x00")); v != Version {
		t.Errorf("version %q", v)
	}
	if caps := le.Uint32(buf[76:]); caps != OurCaps {
		t.Errorf("caps %#x, want %#x", caps, OurCaps)
	}
}

// TestNegotiated: what both announce sets the layout; 64-bit ids and
// 32-bit bulk lengths carry values that need them.
func TestNegotiated(t *testing.T) {
	dev, host := pair(t, OurCaps, qemuCaps)
	if dev.Both() != OurCaps || host.PeerCaps() != OurCaps || dev.PeerVersion != Version {
		t.Fatalf("both %#x peer %#x version %q", dev.Both(), host.PeerCaps(), dev.PeerVersion)
	}
	go func() { _ = host.SendBulkRequest(1<<40+7, 0x82, 100000) }()
	m, err := dev.ReadMsg()
	if err != nil {
		t.Fatal(err)
	}
	b := ParseBulk(m.Hdr)
	if m.ID != 1<<40+7 || b.Endpoint != 0x82 || b.Length != 100000 || len(m.Hdr) != 10 {
		t.Fatalf("bulk request: id %d ep %#x length %d hdr %d", m.ID, b.Endpoint, b.Length, len(m.Hdr))
	}
	data := bytes.Repeat([]byte{0xab}, 70000)
	go func() { _ = dev.SendBulk(m.ID, 0x82, StatusSuccess, uint32(len(data)), data) }()
	r, err := host.ReadMsg()
	if err != nil {
		t.Fatal(err)
	}
	if rb := ParseBulk(r.Hdr); r.ID != m.ID || rb.Length != 70000 || !bytes.Equal(r.Data, data) {
		t.Fatalf("bulk answer: id %d length %d data %d bytes", r.ID, rb.Length, len(r.Data))
	}
}

// TestOldPeer: a peer without 64-bit ids and 32-bit bulk lengths gets
// the short layouts, and a transfer that needs more is refused, not cut.
func TestOldPeer(t *testing.T) {
	dev, host := pair(t, OurCaps, 0)
	if dev.Both() != 0 {
		t.Fatalf("both %#x", dev.Both())
	}
	if err := dev.SendBulk(1, 0x82, StatusSuccess, 70000, make([]byte, 70000)); err == nil {
		t.Fatal("a 70000-byte transfer went to a peer with 16-bit bulk lengths")
	}
	go func() {
		_ = dev.SendDeviceConnect(DeviceConnect{Speed: SpeedSuper, VendorID: 0x1209, ProductID: 1, BcdDevice: 0x100})
	}()
	m, err := host.ReadMsg()
	if err != nil {
		t.Fatal(err)
	}
	if m.Type != TypeDeviceConnect || len(m.Hdr) != 8 {
		t.Fatalf("device_connect: type %d header %d bytes, want 8 (no bcdDevice)", m.Type, len(m.Hdr))
	}
}

// TestRefusesMalformed: lengths the type cannot have end the connection
// with an error naming it.
func TestRefusesMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  uint32
		body []byte
	}{
		{"short control header", TypeControlPacket, make([]byte, 4)},
		{"data on a status", TypeConfigurationStatus, make([]byte, 5)},
	} {
		a, b := net.Pipe()
		c := NewConn(a, OurCaps)
		go func() {
			h := make([]byte, 12)
			binary.LittleEndian.PutUint32(h, tc.typ)
			binary.LittleEndian.PutUint32(h[4:], uint32(len(tc.body)))
			b.Write(append(h, tc.body...))
		}()
		if _, err := c.ReadMsg(); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
		a.Close()
		b.Close()
	}
}

// TestEPInfo: each endpoint lands at its protocol index (IN at 16+n),
// endpoint 0 is control, the rest invalid.
func TestEPInfo(t *testing.T) {
	dev, host := pair(t, OurCaps, qemuCaps)
	go func() {
		_ = dev.SendEPInfo([]Endpoint{{Address: 0x82, Type: XferBulk, Interface: 1, MaxPacketSize: 1024},
			{Address: 0x81, Type: XferInterrupt, Interval: 9, MaxPacketSize: 16}})
	}()
	m, err := host.ReadMsg()
	if err != nil {
		t.Fatal(err)
	}
	h := m.Hdr
	if len(h) != 160 {
		t.Fatalf("ep_info of %d bytes, want 160 (types, intervals, interfaces, max packet sizes)", len(h))
	}
	if h[0] != XferControl || h[16] != XferControl || h[18] != XferBulk || h[17] != XferInterrupt || h[1] != XferInvalid {
		t.Errorf("types % x", h[:32])
	}
	if h[64+18] != 1 || h[32+17] != 9 || binary.LittleEndian.Uint16(h[96+2*18:]) != 1024 {
		t.Errorf("interface %d interval %d max packet %d", h[64+18], h[32+17], binary.LittleEndian.Uint16(h[96+2*18:]))
	}
}
