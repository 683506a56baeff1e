// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/wirespeed/wirespeed/internal/exporter"
	"github.com/wirespeed/wirespeed/internal/observe"
)

func init() {
	register(&Command{
		Name:    "exporter",
		Summary: "serve the datapath as Prometheus metrics (/metrics) for Prometheus and Grafana",
		Usage: `wirespeed exporter [--listen 127.0.0.1:9977] [--web.config.file FILE] [--allow-remote] [--observe light|full|off] [--observe-sample PCT] [--interval D] [--refresh D]

Serves /metrics in Prometheus's format, named as node_exporter names
things (wirespeed_ prefix, _total counters, seconds and bytes): per device
its RX path class, NAPI threading, offloads, BQL limit and inflight bytes,
the interrupts that serve it per CPU; per NAPI thread its CPU and CPU time;
per CPU softnet drops and time squeezes, NET_RX/NET_TX softirqs; doctor's
findings (wirespeed_doctor_finding); and from an eBPF observation kept
running in the background, sampled (see 'wirespeed help observe'): the GRO
coalescing ratio, the RX path seen at work, NAPI polls per CPU and context,
NET_RX/NET_TX softirq time per CPU. The metric list and their meaning:
docs/architecture.md; a Grafana dashboard: contrib/grafana/.

A scrape re-reads what moves (interrupt counts, BQL, softnet, softirqs,
NAPI threads' CPU time) and checks the knobs tune and irqbalance change
(threaded, RPS/XPS masks, IRQ affinity); the rest of the device facts come
from a full inspect snapshot, taken anew when a knob moved, on a link or
qdisc notification, and at least every --refresh. Scrapes that arrive
together share one reading. The observation is never attached per scrape;
it folds into the exported totals every --interval.

Listens on loopback only unless it is protected or told otherwise.
--web.config.file takes the web configuration file node_exporter takes
(prometheus/exporter-toolkit's: tls_server_config, basic_auth_users with
bcrypt hashes, http_server_config; read again on every connection, so a
new certificate or password needs no restart; docs/fleet.md has an
example). With one that sets TLS and authentication (basic auth, or
client_auth_type RequireAndVerifyClientCert), --listen may be any address.
--allow-remote is for serving other hosts without that, plain HTTP that
anyone who reaches the port can read: only behind a firewall. A bad file
stops the exporter before it listens.

Every connection has 5 s to send its request header (a TLS handshake
included) and 10 s for the whole request; a response must be written
within 30 s; a connection idle between requests is closed after 10 s.
--web.max-connections bounds the connections open at once: at the bound
one that is not being served is closed for the new one (the oldest idle
one, else the oldest silent one, else the oldest still sending its
request), so idle or slow clients cannot hold the slots against a scrape. --web.max-requests bounds the
scrapes served at once, as node_exporter's does (past it: 503 at once).

Not root: serves what it can read, and
wirespeed_collector_up{collector="observe"} is 0 (the log says why).
SIGTERM or Ctrl-C stops it with nothing left attached.`,
		Run: runExporter,
	})
}

func runExporter(ctx context.Context, env Env, args []string) error {
	c := commands["exporter"]
	fs := newFlagSet(c, env)
	wf := addWebFlags(fs)
	obsMode := fs.String("observe", "light", "background eBPF observation: light (GRO ratio estimated from NAPI work), full (counts every segment entering GRO) or off")
	sample := sampleFlag(0.1)
	fs.Var(&sample, "observe-sample", "attach the observation for `PCT` of every second, 10% or 0.1 (100%: continuous)")
	every := secondsOrDuration(10 * time.Second)
	fs.Var(&every, "interval", "fold the observation into the metrics every `D` (10s or 10)")
	refresh := secondsOrDuration(exporter.DefaultRefresh)
	fs.Var(&refresh, "refresh", "take a full inspect snapshot at least every `D` (0: every scrape)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("exporter takes no arguments (got %q); it exports every device", pos)
	}
	var obsOpts *observe.Options
	switch *obsMode {
	case "light", "full":
		if err := observe.CheckSample(float64(sample), 0); err != nil {
			return usageErrorf("--observe-sample: %v", err)
		}
		obsOpts = &observe.Options{Light: *obsMode == "light", Sample: float64(sample)}
	case "off":
	default:
		return usageErrorf("--observe %q: want light, full or off", *obsMode)
	}
	if time.Duration(every) < time.Second {
		return usageErrorf("--interval %v: want 1s or more", time.Duration(every))
	}
	if time.Duration(refresh) < 0 {
		return usageErrorf("--refresh %v: want 0 (every scrape) or more", time.Duration(refresh))
	}
	full := time.Duration(refresh)
	if full == 0 {
		full = -1 // exporter.Options: negative is every scrape
	}
	web, err := wf.check()
	if err != nil {
		return err
	}
	l, err := exporter.Listen(*wf.listen)
	if err != nil {
		return err
	}
	logger := log.New(env.Stderr, "wirespeed exporter: ", log.LstdFlags)
	ectx, stop := context.WithCancel(context.Background())
	e := exporter.New(ectx, exporter.Options{Version: Version, Log: logger, Observe: obsOpts,
		Interval: time.Duration(every), Refresh: full})
	scheme := "http"
	if web.TLS {
		scheme = "https"
	}
	logger.Printf("serving %s://%s/metrics (%s)", scheme, l.Addr(), web)
	if exporter.CheckListen(*wf.listen, false) != nil && !web.Protected() {
		logger.Printf("warning: serving other hosts with %s (--allow-remote): anyone who reaches the port reads the host's network map; a --web.config.file with TLS and basic auth protects it", web)
	}
	err = exporter.Serve(ctx, l, exporter.Handler(e, *wf.maxReqs), exporter.Web{
		ConfigFile: *wf.config, MaxConnections: *wf.maxConns, Log: logger})
	stop()
	e.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	logger.Printf("stopped; nothing left attached")
	return nil
}

// webFlags are the exporter's flags of where and how it serves.
type webFlags struct {
	listen, config    *string
	remote            *bool
	maxConns, maxReqs *int
}

func addWebFlags(fs *flag.FlagSet) *webFlags {
	return &webFlags{
		listen: fs.String("listen", "127.0.0.1:9977", "serve /metrics on `HOST:PORT`"),
		remote: fs.Bool("allow-remote", false, "allow a --listen address other hosts can reach (not loopback) without TLS and authentication"),
		config: fs.String("web.config.file", "", "TLS and basic auth from the web configuration `FILE` (exporter-toolkit's, as node_exporter's)"),
		maxConns: fs.Int("web.max-connections", exporter.DefaultMaxConnections,
			"connections open at once, at most `N`; at the bound the oldest not being served is closed (0: no bound)"),
		maxReqs: fs.Int("web.max-requests", exporter.DefaultMaxRequests, "scrapes served at once, at most `N`; past it 503 (0: no bound)"),
	}
}

// check validates the flags and reads the web configuration file: what it
// protects the exporter with. A listen address beyond loopback needs TLS
// and authentication from the file, or --allow-remote.
func (w *webFlags) check() (exporter.WebConfig, error) {
	var web exporter.WebConfig
	if *w.maxConns < 0 {
		return web, usageErrorf("--web.max-connections %d: want 0 (no bound) or more", *w.maxConns)
	}
	if *w.maxReqs < 0 {
		return web, usageErrorf("--web.max-requests %d: want 0 (no bound) or more", *w.maxReqs)
	}
	// The address's form first: a bad one is a usage error whatever the
	// file says.
	if err := exporter.CheckListen(*w.listen, true); err != nil {
		return web, &UsageError{Err: err}
	}
	if *w.config != "" {
		var err error
		if web, err = exporter.CheckWebConfig(*w.config); err != nil {
			return web, err
		}
	}
	if err := exporter.CheckListen(*w.listen, *w.remote || web.Protected()); err != nil {
		if *w.config != "" {
			err = fmt.Errorf("%w (--web.config.file %s sets %s)", err, *w.config, web)
		}
		return web, &UsageError{Err: err}
	}
	return web, nil
}
