// SPDX-License-Identifier: Apache-2.0

// Package exporter serves what inspect reads and what observe sees as
// Prometheus metrics, named after node_exporter's conventions (a wirespeed_
// prefix, _total counters, base units: seconds, bytes).
//
// The exporter is a registry of collectors (collector.go), one per file
// (collector_*.go): inspect (sysfs and netlink, through the snapshot cache
// in cache.go), softnet (/proc/net/softnet_stat), softirqs (/proc/softirqs),
// napi_threads (the NAPI threads' /proc/PID/stat), observe (the totals of
// the eBPF observation, which runs sampled in the background, observer.go:
// nothing is attached or read from BPF maps per scrape) and doctor. A
// reading of the host runs each in turn and reports each one's time and
// success.
package exporter

import (
	"context"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Collectors, as named in wirespeed_collector_up.
const (
	CollInspect  = "inspect"  // sysfs, netlink: devices, NAPI threads, BQL, IRQs
	CollSoftnet  = "softnet"  // /proc/net/softnet_stat
	CollSoftirqs = "softirqs" // /proc/softirqs
	CollThreads  = "napi_threads"
	CollObserve  = "observe" // the background eBPF observation
	CollDoctor   = "doctor"
)

// Collectors lists every collector name, in the order a reading runs them.
var Collectors = []string{CollInspect, CollSoftnet, CollSoftirqs, CollThreads, CollObserve, CollDoctor}

// collectorSet is one exporter's collectors.
type collectorSet struct {
	inspect  *inspectCollector
	softnet  *softnetCollector
	softirqs *softirqsCollector
	threads  *threadsCollector
	observe  *observeCollector
	doctor   *doctorCollector
}

// newCollectorSet builds the collectors reading fs; it starts nothing. The
// collectors that re-read files between scrapes share one set of open
// files, which a full snapshot closes.
func newCollectorSet(fs *hostfs.FS, answers *inspect.Answers, l *log.Logger) *collectorSet {
	files := &openFiles{fs: fs}
	return &collectorSet{
		inspect:  &inspectCollector{fs: fs, answers: answers, files: files, log: l, probes: map[string]string{}},
		softnet:  &softnetCollector{files: files},
		softirqs: &softirqsCollector{files: files},
		threads:  &threadsCollector{files: files},
		observe:  &observeCollector{},
		doctor:   &doctorCollector{},
	}
}

// ordered lists the collectors in the order a reading runs them: inspect
// first (napi_threads and doctor read its snapshot), observe before doctor
// (doctor reads the latest observation).
func (s *collectorSet) ordered() []named {
	return []named{{CollInspect, s.inspect}, {CollSoftnet, s.softnet}, {CollSoftirqs, s.softirqs},
		{CollThreads, s.threads}, {CollObserve, s.observe}, {CollDoctor, s.doctor}}
}

// MetricNames lists every metric the exporter can expose (the Grafana
// dashboard test checks its queries against it).
func MetricNames() []string {
	var out []string
	for _, m := range allMetrics() {
		out = append(out, m.name)
	}
	return out
}

// allMetrics lists every metric the exporter can expose.
func allMetrics() []*metric {
	return newRegistry(newCollectorSet(hostfs.Live(), nil, nil).ordered(), nil).metrics()
}

// Options configure an Exporter.
type Options struct {
	FS *hostfs.FS // nil: the live host
	// Answers replaces what inspect asks the running kernel (netlink,
	// ethtool, the IRQ affinity probe) with a snapshot's
	// (inspect.ReplayAnswers): with FS a snapshot's tree, the exporter
	// serves that snapshot's metrics. nil: ask the kernel each snapshot.
	Answers *inspect.Answers
	Version string
	Log     *log.Logger
	// Observe, when set, starts the background observation with these
	// options; nil: no observation (the observe collector reports down).
	Observe  *observe.Options
	Interval time.Duration // observation interval; 0: 10 s
	// Refresh is the longest a scrape reuses inspect's full snapshot
	// (cache.go); 0: DefaultRefresh; negative: a full snapshot every scrape.
	Refresh time.Duration
}

// Exporter is a prometheus.Collector: the registry of collectors, read
// once per reading.
type Exporter struct {
	version string
	colls   *collectorSet

	mu  sync.Mutex // one reading at a time; guards the collectors and reg
	reg *registry

	flight  sync.Mutex  // guards next and reading
	next    *collection // the reading the scrapes waiting now will share
	reading bool        // readLoop runs
}

// New returns an exporter; with opts.Observe set it attaches the sampled
// observation, which runs until ctx ends (Wait returns after it detached).
// An observation that cannot start (not root, no tracefs) is not fatal: the
// other collectors still serve, and collector_up{collector="observe"} is 0.
func New(ctx context.Context, opts Options) *Exporter {
	fs, l := opts.FS, opts.Log
	if fs == nil {
		fs = hostfs.Live()
	}
	if l == nil {
		l = log.New(discard{}, "", 0)
	}
	cs := newCollectorSet(fs, opts.Answers, l)
	e := &Exporter{version: opts.Version, colls: cs, reg: newRegistry(cs.ordered(), l)}
	ic := cs.inspect
	ic.cache.refresh = opts.Refresh
	if ic.cache.refresh == 0 {
		ic.cache.refresh = DefaultRefresh
	}
	if fs.IsLive() && ic.cache.refresh > 0 {
		if err := ic.watchLinks(ctx); err != nil {
			l.Printf("link notifications: %v; the snapshot refreshes every %s only", err, ic.cache.refresh)
		}
	}
	oc := cs.observe
	if opts.Observe == nil {
		oc.err = fmt.Errorf("observation off (--observe off)")
		return e
	}
	iv := opts.Interval
	if iv <= 0 {
		iv = 10 * time.Second
	}
	oc.sample = opts.Observe.Sample
	if oc.sample == 0 {
		oc.sample = 1
	}
	o, err := startObserver(ctx, *opts.Observe, iv)
	if err != nil {
		oc.err = fmt.Errorf("eBPF observation not running: %w", err)
		l.Printf("collector observe: %v; GRO ratio, observed RX path, NAPI polls and softirq time are not exported", oc.err)
		e.reg.failed[CollObserve] = oc.err.Error()
		return e
	}
	oc.obs = o
	return e
}

// Wait returns when the background observation has detached (after the
// context given to New ended); at once when none runs.
func (e *Exporter) Wait() {
	if o := e.colls.observe.obs; o != nil {
		o.wait()
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Describe sends every metric's description.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range e.reg.metrics() {
		ch <- m.desc
	}
}

// A collection is one reading of the host, shared by every scrape that
// arrived before it started.
type collection struct {
	done    chan struct{}
	metrics []prometheus.Metric
}

// Collect sends the metrics of a reading of the host that started after
// this scrape arrived. Scrapes that arrive while a reading runs wait for
// the next one and share it: twenty scrapers at once cost two readings, not
// twenty in a queue, and no scrape gets numbers older than its request.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.flight.Lock()
	c := e.next
	if c == nil {
		c = &collection{done: make(chan struct{})}
		e.next = c
	}
	if !e.reading {
		e.reading = true
		go e.readLoop()
	}
	e.flight.Unlock()
	<-c.done
	for _, m := range c.metrics {
		ch <- m
	}
}

// readLoop takes the waiting scrapes' collection, reads the host for it,
// and goes on while more scrapes wait.
func (e *Exporter) readLoop() {
	for {
		e.flight.Lock()
		c := e.next
		e.next = nil
		if c == nil {
			e.reading = false
			e.flight.Unlock()
			return
		}
		e.flight.Unlock()
		buf := make(chan prometheus.Metric, 256)
		go func() {
			e.collect(buf)
			close(buf)
		}()
		for m := range buf {
			c.metrics = append(c.metrics, m)
		}
		close(c.done)
	}
}

// collect reads the host once and sends the metrics.
func (e *Exporter) collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	mBuild.send(ch, 1, e.version)
	e.reg.run(ch)
}
