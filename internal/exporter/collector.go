// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"errors"
	"log"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// A collector reads one part of the host (one file each: collector_*.go)
// and sends its metrics. The registry runs the collectors in turn, times
// each and reports whether it worked; a collector only reads and sends.
type collector interface {
	// metrics lists every metric update can send; it depends on nothing
	// the collector holds, so a zero collector answers too.
	metrics() []*metric
	// update sends this reading's metrics. An error says the collector
	// did not read everything it reads (what it did read is still sent).
	update(ch chan<- prometheus.Metric, r *reading) error
}

// reading is what one reading of the host hands from a collector to those
// after it: inspect's snapshot to napi_threads and doctor, the latest
// observation interval to doctor.
type reading struct {
	snap *inspect.Snapshot // nil: inspect read none this time
	gen  uint64            // counts inspect's full snapshots (cache.go)
	obs  *observe.Observation
}

// errNoSnapshot marks the collectors that work on inspect's snapshot when
// there is none.
var errNoSnapshot = errors.New("no inspect snapshot this scrape (see collector inspect)")

// metric describes one metric: the name after the wirespeed_ prefix, its
// help, variable labels and type. The descriptor is built from them, so
// what the exporter exposes is read from these fields, never parsed back
// out of a prometheus.Desc.
type metric struct {
	name   string // with the wirespeed_ prefix
	help   string
	labels []string
	typ    prometheus.ValueType
	desc   *prometheus.Desc
}

func newMetric(typ prometheus.ValueType, name, help string, labels ...string) *metric {
	name = "wirespeed_" + name
	return &metric{name: name, help: help, labels: labels, typ: typ,
		desc: prometheus.NewDesc(name, help, labels, nil)}
}

func gaugeMetric(name, help string, labels ...string) *metric {
	return newMetric(prometheus.GaugeValue, name, help, labels...)
}

func counterMetric(name, help string, labels ...string) *metric {
	return newMetric(prometheus.CounterValue, name, help, labels...)
}

// send sends one sample of m.
func (m *metric) send(ch chan<- prometheus.Metric, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(m.desc, m.typ, v, labels...)
}

// The registry's own metrics: one sample of each per collector and reading.
var (
	mUp       = gaugeMetric("collector_up", "1 if the collector read everything it reads, 0 if not (the exporter's log says why).", "collector")
	mDuration = gaugeMetric("collector_duration_seconds", "How long the collector took in this scrape.", "collector")
	mBuild    = gaugeMetric("exporter_build_info", "wirespeed's version; 1.", "version")
)

// named is a collector and the name wirespeed_collector_up gives it.
type named struct {
	name string
	c    collector
}

// registry runs the collectors of one exporter in order and reports on
// each: its time and whether it worked, once per reading, and a log line
// when it fails (once per distinct error) and when it recovers.
type registry struct {
	collectors []named
	log        *log.Logger
	failed     map[string]string // collector -> last error logged
}

func newRegistry(cs []named, l *log.Logger) *registry {
	return &registry{collectors: cs, log: l, failed: map[string]string{}}
}

// metrics lists the registry's own metrics and every collector's.
func (r *registry) metrics() []*metric {
	out := []*metric{mUp, mDuration, mBuild}
	for _, n := range r.collectors {
		out = append(out, n.c.metrics()...)
	}
	return out
}

// run runs every collector once, in order, for one reading.
func (r *registry) run(ch chan<- prometheus.Metric) {
	rd := &reading{}
	for _, n := range r.collectors {
		t0 := time.Now()
		err := n.c.update(ch, rd)
		r.report(ch, n.name, time.Since(t0), err)
	}
}

// report sends a collector's up and duration, logging when its state
// changes.
func (r *registry) report(ch chan<- prometheus.Metric, name string, took time.Duration, err error) {
	up := 1.0
	if err != nil {
		up = 0
		if r.failed[name] != err.Error() {
			r.log.Printf("collector %s: %v", name, err)
			r.failed[name] = err.Error()
		}
	} else if _, was := r.failed[name]; was {
		r.log.Printf("collector %s: works again", name)
		delete(r.failed, name)
	}
	mUp.send(ch, up, name)
	mDuration.send(ch, took.Seconds(), name)
}
