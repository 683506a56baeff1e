// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/observe"
)

// observeCollector copies the background observation's totals
// (observer.go); it never touches BPF. It hands the latest interval to
// doctor through the reading.
type observeCollector struct {
	obs    *observer // nil: not running, err says why
	err    error
	sample float64 // the share of every period the observation is attached
}

var (
	mObsAttached = counterMetric("observe_attached_seconds_total", "Time the sampled eBPF observation was attached; the *_observed_* counters count during it only.")
	mObsInterval = gaugeMetric("observe_interval_seconds", "Wall time of the observation interval the *_ratio gauges cover.")
	mObsSample   = gaugeMetric("observe_sample_ratio", "Share of every period the observation is attached for.")
	mSoftirqSecs = counterMetric("softirq_observed_seconds_total", "Time in NET_RX/NET_TX softirqs while the observation was attached; divide its rate by observe_attached_seconds_total's for the CPU's share.", "cpu", "type")
	mGROSegs     = counterMetric("gro_segments_observed_total", "Segments entering GRO while attached (light mode: packets NAPI polls handed up).", "device")
	mDelivered   = counterMetric("rx_delivered_skbs_observed_total", "skbs delivered to the stack (netif_receive_skb) while attached.", "device")
	mNetifRx     = counterMetric("rx_netif_rx_observed_total", "Packets queued with netif_rx (no NAPI, no GRO) while attached.", "device")
	mGRORatio    = gaugeMetric("gro_coalescing_ratio", "Segments entering GRO per skb delivered, over the last observation interval (1: no coalescing).", "device")
	mObsPath     = gaugeMetric("observed_rx_path_info", "The RX path the observation saw in the last interval; 1.", "device", "path")
	mPolls       = counterMetric("napi_polls_observed_total", "NAPI polls per CPU while attached; context is where most of the NAPI's polls ran (softirq, thread, task).", "device", "context", "cpu")
	mWork        = counterMetric("napi_work_observed_total", "Packets NAPI polls handed up, per CPU, while attached.", "device", "context", "cpu")
)

func (*observeCollector) metrics() []*metric {
	return []*metric{mObsAttached, mObsInterval, mObsSample, mSoftirqSecs, mGROSegs, mDelivered, mNetifRx,
		mGRORatio, mObsPath, mPolls, mWork}
}

func (c *observeCollector) update(ch chan<- prometheus.Metric, r *reading) error {
	if c.obs == nil {
		return c.err
	}
	s := c.obs.snapshot()
	c.send(ch, s)
	r.obs = s.last
	return s.err
}

// send exports one copy of the observer's state.
func (c *observeCollector) send(ch chan<- prometheus.Metric, s obsSnapshot) {
	mObsAttached.send(ch, s.attached)
	mObsSample.send(ch, c.sample)
	for k, v := range s.softirq {
		mSoftirqSecs.send(ch, v, strconv.Itoa(k.cpu), k.vec)
	}
	for name, t := range s.devs {
		mGROSegs.send(ch, float64(t.groSegments), name)
		mDelivered.send(ch, float64(t.delivered), name)
		mNetifRx.send(ch, float64(t.netifRx), name)
	}
	for k, t := range s.napis {
		cpu := strconv.Itoa(k.cpu)
		mPolls.send(ch, float64(t.polls), k.dev, k.ctx, cpu)
		mWork.send(ch, float64(t.work), k.dev, k.ctx, cpu)
	}
	if s.last == nil {
		return
	}
	mObsInterval.send(ch, s.last.DurationSec)
	for _, d := range s.last.Devices {
		if d.Name == observe.BacklogDev {
			continue
		}
		if !d.RXPath.IsZero() && d.RXPath != observe.PathIdle {
			mObsPath.send(ch, 1, d.Name, d.RXPath.String())
		}
		if d.GRORatio != nil {
			mGRORatio.send(ch, *d.GRORatio, d.Name)
		}
	}
}
