// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/observe"
)

// forget is how long a device or NAPI context the observation no longer
// sees keeps its observed series: devices come and go (a lab's veths), and
// a series per device ever seen would grow without end.
const forget = 5 * time.Minute

// observer keeps one sampled observe.Session attached in the background and
// folds each interval's observation into running totals, so that a scrape
// only copies numbers and never touches BPF.
type observer struct {
	sess     *observe.Session
	interval time.Duration

	mu       sync.Mutex
	err      error // the session failed (Start or an Interval read)
	attached float64
	last     *observe.Observation // the latest complete interval
	devs     map[string]*devTotals
	napis    map[napiKey]*napiTotals
	softirq  map[softirqKey]float64 // seconds in the attached windows
	done     chan struct{}
}

type devTotals struct {
	groSegments, delivered, netifRx uint64
	seen                            time.Time
}

type napiKey struct {
	dev, ctx string
	cpu      int
}

type napiTotals struct {
	polls, work uint64
	seen        time.Time
}

type softirqKey struct {
	cpu int
	vec string // NET_RX, NET_TX
}

// startObserver attaches the observation (sampled unless sample is 1) and
// folds an interval into the totals every interval until ctx ends; then it
// detaches everything and closes done.
func startObserver(ctx context.Context, opts observe.Options, interval time.Duration) (*observer, error) {
	s, err := observe.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	o := &observer{sess: s, interval: interval, devs: map[string]*devTotals{},
		napis: map[napiKey]*napiTotals{}, softirq: map[softirqKey]float64{}, done: make(chan struct{})}
	go o.run(ctx)
	return o, nil
}

func (o *observer) run(ctx context.Context) {
	defer close(o.done)
	defer o.sess.Close()
	t := time.NewTicker(o.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		obs, err := o.sess.Interval()
		o.fold(obs, err, time.Now())
	}
}

// wait returns once the session is closed (after ctx ended).
func (o *observer) wait() { <-o.done }

// fold adds one interval's observation to the totals.
func (o *observer) fold(obs *observe.Observation, err error, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.err = fmt.Errorf("reading the observation: %w", err)
		return
	}
	o.err = nil
	o.last = obs
	if obs.Sample != nil {
		o.attached += obs.Sample.AttachedSec
	} else {
		o.attached += obs.DurationSec
	}
	for _, d := range obs.Devices {
		if d.Name == observe.BacklogDev {
			continue
		}
		t := o.devs[d.Name]
		if t == nil {
			t = &devTotals{}
			o.devs[d.Name] = t
		}
		t.groSegments += d.GROSegments
		t.delivered += d.Delivered
		t.netifRx += d.NetifRx
		t.seen = now
		for _, n := range d.NAPIs {
			ctxKind := "unknown"
			if len(n.Contexts) > 0 {
				ctxKind = string(n.Contexts[0].Kind) // the context with most polls
			}
			for _, c := range n.CPUs {
				k := napiKey{d.Name, ctxKind, c.CPU}
				nt := o.napis[k]
				if nt == nil {
					nt = &napiTotals{}
					o.napis[k] = nt
				}
				nt.polls += c.Polls
				nt.work += c.Work
				nt.seen = now
			}
		}
	}
	for _, c := range obs.CPUs {
		o.softirq[softirqKey{c.CPU, "NET_RX"}] += float64(c.NetRXNs) / 1e9
		o.softirq[softirqKey{c.CPU, "NET_TX"}] += float64(c.NetTXNs) / 1e9
	}
	for k, t := range o.devs {
		if now.Sub(t.seen) > forget {
			delete(o.devs, k)
		}
	}
	for k, t := range o.napis {
		if now.Sub(t.seen) > forget {
			delete(o.napis, k)
		}
	}
}

// snapshot is a copy of the observer's state for one scrape.
type obsSnapshot struct {
	err      error
	attached float64
	last     *observe.Observation
	devs     map[string]devTotals
	napis    map[napiKey]napiTotals
	softirq  map[softirqKey]float64
}

func (o *observer) snapshot() obsSnapshot {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := obsSnapshot{err: o.err, attached: o.attached, last: o.last,
		devs: map[string]devTotals{}, napis: map[napiKey]napiTotals{}, softirq: map[softirqKey]float64{}}
	for k, v := range o.devs {
		s.devs[k] = *v
	}
	for k, v := range o.napis {
		s.napis[k] = *v
	}
	for k, v := range o.softirq {
		s.softirq[k] = v
	}
	return s
}
