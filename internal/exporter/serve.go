// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrNotLoopback is returned (wrapped) by CheckListen for an address other
// hosts could reach.
var ErrNotLoopback = errors.New("not a loopback address")

// CheckListen validates a host:port listen address. Without allowRemote
// the host must be loopback (127.0.0.0/8, ::1 or localhost): an empty host
// or 0.0.0.0 listens on every interface, and the metrics describe the
// host's network in detail.
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
		return fmt.Errorf("listen address %q listens on every interface: %w; to serve other hosts pass --allow-remote", addr, ErrNotLoopback)
	case ip == nil:
		return fmt.Errorf("listen address %q: host %q is not an IP address or localhost; give an IP, or pass --allow-remote to listen beyond loopback", addr, host)
	case !ip.IsLoopback():
		return fmt.Errorf("listen address %q: %s is %w; to serve other hosts pass --allow-remote", addr, host, ErrNotLoopback)
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
// and a short page at /.
func Handler(e *Exporter) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "wirespeed exporter: metrics at /metrics")
	})
	return mux
}

// Serve serves h on l until ctx ends, then shuts the server down (waiting
// up to 5 s for scrapes in flight).
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
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
