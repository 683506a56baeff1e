// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// ErrNotLoopback is returned (wrapped) by CheckListen for an address other
// hosts could reach.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckListen validates a host:port listen address. Without allowRemote
// the host must be loopback (127.0.0.0/8, ::1 or localhost): an empty host
// or 0.0.0.0 listens on every interface, and the metrics describe the
// host's network in detail. (The CLI passes allowRemote for --allow-remote
// or a web configuration with TLS and authentication, WebConfig.Protected.)
func CheckListen(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want HOST:PORT such as 127.0.0.1:9977 (%v)", addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("--listen %q: port %q is not a number in 0-65535: give HOST:PORT, e.g. 127.0.0.1:9977", addr, port)
	}
	if allowRemote {
		return nil
	}
	switch ip := net.ParseIP(host); {
	case host == "localhost":
		return nil
	case host == "":
		return fmt.Errorf("listen address %q listens on every interface: %w; to serve other hosts give a --web.config.file with TLS and basic auth, or pass --allow-remote", addr, ErrNotLoopback)
	case ip == nil:
		return fmt.Errorf("listen address %q: host %q is not an IP address or localhost; give an IP (beyond loopback: with a --web.config.file with TLS and basic auth, or --allow-remote)", addr, host)
	case !ip.IsLoopback():
		return fmt.Errorf("listen address %q: %s is %w; to serve other hosts give a --web.config.file with TLS and basic auth, or pass --allow-remote", addr, host, ErrNotLoopback)
	}
	return nil
}

// Listen opens the listening socket, saying plainly when the port is taken.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("cannot listen on %s: the port is in use (another exporter?); stop it or choose another port with --listen", addr)
		}
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			return nil, fmt.Errorf("cannot listen on %s: no interface of this host has that address", addr)
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	return l, nil
}

// Handler serves /metrics from e (and the Go runtime's process metrics are
// left out: node_exporter and Prometheus's own scrape cover the process),
// and a short page at /. maxRequests bounds the /metrics requests served
// at once, as node_exporter's --web.max-requests does: past it a request is
// answered 503 at once (0: no bound).
func Handler(e *Exporter, maxRequests int) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, MaxRequestsInFlight: maxRequests}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "wirespeed exporter: metrics at /metrics")
	})
	return mux
}

// The server's timeouts. A client has ReadHeaderTimeout to send its
// request's header (a TLS handshake counts in it), so a connection that
// sends nothing, or a byte now and then, frees its slot within seconds; a
// connection idle between requests is closed after IdleTimeout.
// WriteTimeout bounds a scrape from its header read to its last byte
// written: far above what a reading takes, and above Prometheus's usual
// scrape_timeout (10 s).
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 10 * time.Second
)

// Defaults of the bounds (the CLI's --web.max-connections and
// --web.max-requests).
const (
	DefaultMaxConnections = 512
	DefaultMaxRequests    = 40
)

// Web is how Serve guards the server.
type Web struct {
	// ConfigFile is a web configuration file of prometheus/exporter-toolkit
	// (TLS, basic auth, headers), as node_exporter's --web.config.file;
	// empty: plain HTTP. CheckWebConfig it first: Serve reads it again on
	// every connection and request (so a new certificate or password
	// applies without a restart), as the toolkit does.
	ConfigFile string
	// MaxConnections bounds the connections open at once (0: no bound);
	// see limitListener for what happens at the bound.
	MaxConnections int
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are the
	// http.Server's; zero takes the constants above.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Log receives the toolkit's and the server's messages (nil: none).
	Log *log.Logger
}

func (w *Web) timeouts() (rh, r, wr, idle time.Duration) {
	pick := func(d, def time.Duration) time.Duration {
		if d == 0 {
			return def
		}
		return d
	}
	return pick(w.ReadHeaderTimeout, ReadHeaderTimeout), pick(w.ReadTimeout, ReadTimeout),
		pick(w.WriteTimeout, WriteTimeout), pick(w.IdleTimeout, IdleTimeout)
}

// Serve serves h on l until ctx ends, then shuts the server down (waiting
// up to 5 s for scrapes in flight). TLS and basic auth, when w.ConfigFile
// asks for them, are prometheus/exporter-toolkit's (web.Serve).
func Serve(ctx context.Context, l net.Listener, h http.Handler, w Web) error {
	logger := w.Log
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	if w.MaxConnections > 0 {
		l = newLimitListener(l, w.MaxConnections, logger)
	}
	rh, rd, wr, idle := w.timeouts()
	srv := &http.Server{
		Handler:           markServing(h),
		ReadHeaderTimeout: rh,
		ReadTimeout:       rd,
		WriteTimeout:      wr,
		IdleTimeout:       idle,
		ConnContext:       withLimitConn,
		ConnState:         trackState,
		// A TLS handshake error per connection (a port scan, a plain-HTTP
		// client) must not flood the log: one line a second at most.
		ErrorLog: log.New(&throttledWriter{w: logger.Writer(), prefix: logger.Prefix(), flags: logger.Flags(), every: time.Second}, "", 0),
	}
	slogger := slog.New(slog.NewTextHandler(logWriter{logger}, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // log.Logger prints the time
			}
			return a
		}}))
	noSocket := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{l.Addr().String()}, WebSystemdSocket: &noSocket, WebConfigFile: &w.ConfigFile}
	errc := make(chan error, 1)
	go func() { errc <- web.Serve(l, srv, flags, slogger) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logWriter hands each record the slog text handler writes to a log.Logger.
type logWriter struct{ l *log.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.Print(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// throttledWriter passes at most one line per every to w, with the
// logger's prefix and flags, and says how many it left out.
type throttledWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	flags   int
	every   time.Duration
	last    time.Time
	dropped int
}

func (t *throttledWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if now.Sub(t.last) < t.every {
		t.dropped++
		return len(p), nil
	}
	t.last = now
	line := strings.TrimRight(string(p), "\n")
	if t.dropped > 0 {
		line += fmt.Sprintf(" (%d server messages left out since the previous one)", t.dropped)
		t.dropped = 0
	}
	log.New(t.w, t.prefix, t.flags).Print(line)
	return len(p), nil
}
