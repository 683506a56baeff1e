// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// testLimit is a limitListener of max connections on a loopback port, and
// accept: one client dialled and its server side accepted (both closed at
// the test's end).
func testLimit(t *testing.T, max int) (*limitListener, func() (net.Conn, *limitConn)) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	l := newLimitListener(inner, max, log.New(io.Discard, "", 0))
	return l, func() (net.Conn, *limitConn) {
		t.Helper()
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return c, s.(*limitConn)
	}
}

// TestLimitListener: at the bound the oldest connection not being served is
// closed for the new one; one being served is kept; when every one is
// served the new one is closed instead.
func TestLimitListener(t *testing.T) {
	l, accept := testLimit(t, 3)
	open := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		return errors.Is(err, os.ErrDeadlineExceeded)
	}
	var clients []net.Conn
	var servers []*limitConn
	for i := 0; i < 3; i++ {
		c, s := accept()
		clients, servers = append(clients, c), append(servers, s)
	}
	servers[0].serving.Add(1) // the oldest is being served
	c, _ := accept()
	clients = append(clients, c)
	if want := []bool{true, false, true, true}; !slices.Equal(openAll(clients, open), want) {
		t.Errorf("after a 4th connection with the 1st served: open %v, want %v", openAll(clients, open), want)
	}
	if n := l.conns.Len(); n != 3 {
		t.Errorf("%d connections counted, want 3", n)
	}
	for _, s := range servers[2:] {
		s.serving.Add(1)
	}
	clients[3].Close()
	// clients[3]'s server side is still counted until the server closes
	// it; mark it served too, so that every slot is.
	l.mu.Lock()
	l.conns.Back().Value.(*limitConn).serving.Add(1)
	l.mu.Unlock()
	late, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	go func() { // Accept closes late and waits for the next one
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	late.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := late.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("a connection with every slot served: %v, want closed (EOF)", err)
	}
	if !open(clients[0]) || !open(clients[2]) {
		t.Errorf("a connection being served was closed")
	}
}

func openAll(cs []net.Conn, open func(net.Conn) bool) []bool {
	var r []bool
	for _, c := range cs {
		r = append(r, open(c))
	}
	return r
}

// TestLimitListenerOrder: at the bound an idle connection goes before a
// new (silent) one, and a new one before one reading its request, whatever
// their ages.
func TestLimitListenerOrder(t *testing.T) {
	_, accept := testLimit(t, 3)
	var conns []*limitConn
	for i := 0; i < 5; i++ {
		_, s := accept()
		conns = append(conns, s)
		if i == 2 { // the oldest is reading a request, the youngest idle
			trackState(conns[0], http.StateActive)
			trackState(conns[2], http.StateIdle)
		}
	}
	// the 4th evicted the idle 3rd, the 5th the silent 2nd
	for i, want := range []bool{true, false, false, true, true} {
		if got := conns[i].elem != nil; got != want {
			t.Errorf("connection %d (of states active, new, idle, new, new) still counted: %v, want %v", i+1, got, want)
		}
	}
}

// TestLimitListenerKeepsServed: a connection the handler has served before
// (a request past the auth check: a scraper's keep-alive connection), idle
// and the oldest, is closed only after every idle, new or active one that
// was never served - a flood that never authenticates cannot close it
// between two scrapes.
func TestLimitListenerKeepsServed(t *testing.T) {
	_, acceptOne := testLimit(t, 3)
	var conns []*limitConn
	served := markServing(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	accept := func() {
		_, s := acceptOne()
		conns = append(conns, s)
	}
	for i := 0; i < 6; i++ {
		accept()
		if i == 2 { // the oldest served once, now idle; the others idle and active, never served
			r, _ := http.NewRequestWithContext(withLimitConn(t.Context(), conns[0]), "GET", "/metrics", nil)
			served.ServeHTTP(nil, r)
			trackState(conns[0], http.StateIdle)
			trackState(conns[1], http.StateIdle)
			trackState(conns[2], http.StateActive)
		}
	}
	// the 4th evicted the idle 2nd, the 5th the silent 4th, the 6th the
	// silent 5th; the served 1st stays
	states := "served-idle, idle, active, new, new, new"
	for i, want := range []bool{true, false, true, false, false, true} {
		if got := conns[i].elem != nil; got != want {
			t.Errorf("connection %d (%s) still counted: %v, want %v", i+1, states, got, want)
		}
	}
	// with the others serving a request, the served 1st goes last
	conns[2].serving.Add(1)
	conns[5].serving.Add(1)
	accept()
	if conns[0].elem != nil || conns[6].elem == nil {
		t.Errorf("with every other slot serving, a 7th connection did not replace the served-before idle one")
	}
	if conns[0].serving.Load() != 0 {
		t.Errorf("markServing left the connection counted as serving")
	}
}

// TestThrottledWriter: the server's error log passes one line per interval
// and says how many it left out.
func TestThrottledWriter(t *testing.T) {
	var b strings.Builder
	w := &throttledWriter{w: &b, prefix: "p: ", every: 50 * time.Millisecond}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(w, "http: TLS handshake error %d\n", i)
	}
	time.Sleep(60 * time.Millisecond)
	fmt.Fprintf(w, "http: TLS handshake error 3\n")
	want := "p: http: TLS handshake error 0\np: http: TLS handshake error 3 (2 server messages left out since the previous one)\n"
	if b.String() != want {
		t.Errorf("throttled log:\n%s\nwant:\n%s", b.String(), want)
	}
}
