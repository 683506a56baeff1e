// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"container/list"
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// limitListener bounds the connections open at once to max. At the bound a
// new connection does not wait for a slot, as it would behind
// golang.org/x/net/netutil.LimitListener: there, idle or slow clients
// holding every slot (keep-alive connections between requests, a slowloris
// sending its header a byte at a time, TLS handshakes never finished) make
// a scrape queue until their timeouts free the slots, a wave at a time.
// Here a connection that is not being served is closed to make room, so a
// scrape gets in at once: the oldest idle between requests first, then the
// oldest that has sent nothing yet (or is in its TLS handshake), then the
// oldest still sending its request or waiting for its basic auth check,
// and last of all a connection the handler has served before (a request
// that passed the auth check: a scraper's keep-alive connection). A
// scrape on its way in (handshake, header, auth: milliseconds) is thus
// young and behind every idle and silent connection; and a flood that
// never authenticates does not close the scraper's connection between
// its scrapes, which would race with the next request sent on it (the
// client finds the connection closed after writing to it: an HTTP/2
// client does not retry that). Only when every slot is serving a request
// is the new connection closed instead. A connection counts as served
// while the handler runs for it (markServing); its state is the
// http.Server's (trackState).
type limitListener struct {
	net.Listener
	max int
	log *log.Logger

	mu      sync.Mutex
	conns   list.List // of *limitConn, oldest first
	evicted int       // since the last log line
	logged  time.Time
}

func newLimitListener(l net.Listener, max int, logger *log.Logger) *limitListener {
	return &limitListener{Listener: l, max: max, log: logger}
}

// limitConn is one connection limitListener counts.
type limitConn struct {
	net.Conn
	l       *limitListener
	elem    *list.Element // nil once it no longer counts
	serving atomic.Int32  // handlers running for it (HTTP/2: several)
	served  atomic.Bool   // a handler has run for it (past the auth check)
	state   atomic.Int32  // its http.ConnState
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitConn{Conn: c, l: l}
		l.mu.Lock()
		var victim *limitConn
		if l.conns.Len() >= l.max {
			victim = l.oldestNotServing()
			if victim == nil {
				l.mu.Unlock()
				c.Close() // every slot serves a request: this one waits for none
				l.note("every one is serving a request; a new connection was closed")
				continue
			}
			l.conns.Remove(victim.elem)
			victim.elem = nil
		}
		lc.elem = l.conns.PushBack(lc)
		l.mu.Unlock()
		if victim != nil {
			victim.Conn.Close()
			l.note("the oldest idle or unfinished connection was closed for a new one")
		}
		return lc, nil
	}
}

// oldestNotServing is the connection to close for a new one, of those no
// handler runs for: the oldest idle one, else the oldest new one, else the
// oldest active one (reading a request, or in the auth check before the
// handler) - each of these among the connections no handler has served
// yet -, else the oldest a handler has served before; l.mu held.
func (l *limitListener) oldestNotServing() *limitConn {
	var pick [4]*limitConn // idle, new, active, served before
	for e := l.conns.Front(); e != nil; e = e.Next() {
		c := e.Value.(*limitConn)
		if c.serving.Load() != 0 {
			continue
		}
		i := 2
		switch {
		case c.served.Load():
			i = 3
		case http.ConnState(c.state.Load()) == http.StateIdle:
			i = 0
		case http.ConnState(c.state.Load()) == http.StateNew:
			i = 1
		}
		if pick[i] == nil {
			pick[i] = c
		}
		if i == 0 {
			break
		}
	}
	for _, c := range pick {
		if c != nil {
			return c
		}
	}
	return nil
}

// note logs that the bound was reached, once a minute at most.
func (l *limitListener) note(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evicted++
	if time.Since(l.logged) < time.Minute {
		return
	}
	l.log.Printf("%d connections open, the --web.max-connections bound: %s (%d times since the last such line)", l.max, what, l.evicted)
	l.logged, l.evicted = time.Now(), 0
}

// Close stops counting the connection and closes it.
func (c *limitConn) Close() error {
	c.l.mu.Lock()
	if c.elem != nil {
		c.l.conns.Remove(c.elem)
		c.elem = nil
	}
	c.l.mu.Unlock()
	return c.Conn.Close()
}

type limitConnKey struct{}

// asLimitConn is c's limitConn, under a TLS connection or not.
func asLimitConn(c net.Conn) *limitConn {
	if n, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = n.NetConn()
	}
	lc, _ := c.(*limitConn)
	return lc
}

// trackState is the http.Server's ConnState hook: it keeps each
// connection's state for oldestNotServing.
func trackState(c net.Conn, s http.ConnState) {
	if lc := asLimitConn(c); lc != nil {
		lc.state.Store(int32(s))
	}
}

// withLimitConn is the http.Server's ConnContext: it keeps the connection's
// limitConn (under a TLS one) for markServing.
func withLimitConn(ctx context.Context, c net.Conn) context.Context {
	if lc := asLimitConn(c); lc != nil {
		return context.WithValue(ctx, limitConnKey{}, lc)
	}
	return ctx
}

// markServing counts h's requests in progress on their connection, which
// limitListener then does not close to make room.
func markServing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := r.Context().Value(limitConnKey{}).(*limitConn); ok {
			lc.serving.Add(1)
			lc.served.Store(true)
			defer lc.serving.Add(-1)
		}
		h.ServeHTTP(w, r)
	})
}
