// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/wirespeed/wirespeed/internal/exporter"
	"github.com/wirespeed/wirespeed/internal/observe"
)

func init() {
	register(&Command{
		Name:    "exporter",
		Summary: "serve the datapath as Prometheus metrics (/metrics) for Prometheus and Grafana",
		Usage: `wirespeed exporter [--listen 127.0.0.1:9977] [--allow-remote] [--observe light|full|off] [--observe-sample PCT] [--interval D] [--refresh D]

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

Listens on loopback only unless --allow-remote is given. Not root: serves
what it can read, and wirespeed_collector_up{collector="observe"} is 0 (the
log says why). SIGTERM or Ctrl-C stops it with nothing left attached.`,
		Run: runExporter,
	})
}

func runExporter(ctx context.Context, env Env, args []string) error {
	c := commands["exporter"]
	fs := newFlagSet(c, env)
	listen := fs.String("listen", "127.0.0.1:9977", "serve /metrics on `HOST:PORT`")
	remote := fs.Bool("allow-remote", false, "allow a --listen address other hosts can reach (not loopback)")
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
	if err := exporter.CheckListen(*listen, *remote); err != nil {
		return &UsageError{Err: err}
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
	l, err := exporter.Listen(*listen)
	if err != nil {
		return err
	}
	logger := log.New(env.Stderr, "wirespeed exporter: ", log.LstdFlags)
	ectx, stop := context.WithCancel(context.Background())
	e := exporter.New(ectx, exporter.Options{Version: Version, Log: logger, Observe: obsOpts,
		Interval: time.Duration(every), Refresh: full})
	logger.Printf("serving http://%s/metrics", l.Addr())
	err = exporter.Serve(ctx, l, exporter.Handler(e))
	stop()
	e.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	logger.Printf("stopped; nothing left attached")
	return nil
}
