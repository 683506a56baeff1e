// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// fakeServer accepts one connection, reads the 37-byte cookie and answers
// with reply (nil: says nothing).
func fakeServer(t *testing.T, reply []byte) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		cookie := make([]byte, 37)
		if _, err := io.ReadFull(c, cookie); err != nil || cookie[36] != 0 {
			return
		}
		if reply != nil {
			c.Write(reply)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.Read(make([]byte, 1))
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func TestCheckServerHandshake(t *testing.T) {
	ctx := context.Background()
	if err := CheckServer(ctx, fakeServer(t, []byte{9}), 3*time.Second); err != nil {
		t.Errorf("iperf3-like server: %v", err)
	}
	ap := fakeServer(t, []byte{0xff})
	if err := CheckServer(ctx, ap, 3*time.Second); err == nil || !strings.Contains(err.Error(), "busy") || !strings.Contains(err.Error(), ap.String()) {
		t.Errorf("busy server: %v", err)
	}
	ap = fakeServer(t, nil)
	if err := CheckServer(ctx, ap, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no iperf3 server answered") || !strings.Contains(err.Error(), ap.String()) {
		t.Errorf("silent TCP service: %v", err)
	}
	if err := CheckServer(ctx, fakeServer(t, []byte("H")), 3*time.Second); err == nil {
		t.Error("an HTTP-ish answer passed as iperf3")
	}
}
