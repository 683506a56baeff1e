// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"fmt"
	"log"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// scrapeTimeout bounds one snapshot's reading (netlink dumps included).
const scrapeTimeout = 10 * time.Second

// inspectCollector exports what inspect reads from sysfs and netlink:
// devices, RX path, NAPI threading, offloads, BQL, the devices' interrupts.
// It keeps inspect's snapshot between readings (cache.go) and hands it to
// the collectors after it through the reading.
type inspectCollector struct {
	fs      *hostfs.FS
	answers *inspect.Answers // replayed from a snapshot; nil: ask the kernel
	files   *openFiles
	log     *log.Logger
	probes  map[string]string // IRQ affinity probes: asked once, kept
	cache   snapCache
}

var (
	mDevInfo  = gaugeMetric("device_info", "A network device in the exporter's network namespace; 1.", "device", "driver", "bus")
	mRXPath   = gaugeMetric("device_rx_path_info", "How received packets reach the stack, from sysfs and netlink (inspect's rx_path); 1.", "device", "path")
	mThreaded = gaugeMetric("device_napi_threaded", "1 if the device's NAPI polls in kernel threads (sysfs threaded), 0 if in softirq.", "device")
	mOffload  = gaugeMetric("device_offload_enabled", "1 if the offload is active, 0 if not (ethtool features).", "device", "feature")
	mNAPIs    = gaugeMetric("device_napis", "NAPI instances netdev netlink lists for the device.", "device")

	mBQLLimit    = gaugeMetric("bql_limit_bytes", "Byte queue limit of a TX queue (byte_queue_limits/limit).", "device", "queue")
	mBQLInflight = gaugeMetric("bql_inflight_bytes", "Bytes queued to the driver and not yet completed (byte_queue_limits/inflight).", "device", "queue")
	mBQLMin      = gaugeMetric("bql_limit_min_bytes", "Lower bound of the byte queue limit.", "device", "queue")
	mBQLMax      = gaugeMetric("bql_limit_max_bytes", "Upper bound of the byte queue limit.", "device", "queue")
	mBQLStalls   = counterMetric("bql_stalls_total", "TX completion stalls BQL detected (byte_queue_limits/stall_cnt, Linux 6.9+).", "device", "queue")

	mIRQ = counterMetric("device_interrupts_total", "Interrupts of an IRQ line serving the device (for a USB NIC its host controller's), per CPU.", "device", "irq", "cpu")
)

func (*inspectCollector) metrics() []*metric {
	return []*metric{mDevInfo, mRXPath, mThreaded, mOffload, mNAPIs,
		mBQLLimit, mBQLInflight, mBQLMin, mBQLMax, mBQLStalls, mIRQ}
}

// update takes this reading's snapshot and exports its devices. A snapshot
// read only in part is exported, and the collector reports down.
func (c *inspectCollector) update(ch chan<- prometheus.Metric, r *reading) error {
	snap, err := c.snapshot()
	r.snap, r.gen = snap, c.cache.gen
	if snap != nil {
		sendDevices(ch, snap)
	}
	return err
}

// inspect reads the devices with inspect.Collect. The IRQ affinity probe
// (root only) is asked once per IRQ and kept: it cannot change while the
// IRQ exists, and each probe is a write to /proc/irq/N/smp_affinity.
func (c *inspectCollector) inspect() (*inspect.Snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	a := c.answers
	if a == nil {
		a = inspect.LiveAnswers(c.fs)
	}
	for k, v := range c.probes {
		a.AffinityProbes[k] = v
	}
	snap, err := inspect.Collect(ctx, inspect.Options{FS: c.fs, Answers: a})
	for k, v := range a.AffinityProbes {
		c.probes[k] = v
	}
	if err != nil {
		return nil, err
	}
	var missing []string
	if a.NAPIsError != "" && !a.NAPIsNoSup { // before 6.8 there is no napi-get: not a failure
		missing = append(missing, "netdev napi-get: "+a.NAPIsError)
	}
	if len(missing) > 0 {
		return snap, fmt.Errorf("partly read: %s", strings.Join(missing, "; "))
	}
	return snap, nil
}

func sendDevices(ch chan<- prometheus.Metric, snap *inspect.Snapshot) {
	for _, d := range snap.Devices {
		mDevInfo.send(ch, 1, d.Name, d.Driver, d.Bus)
		if !d.Datapath.RXPath.IsZero() {
			mRXPath.send(ch, 1, d.Name, d.Datapath.RXPath.String())
		}
		switch d.NAPISysfs.Threaded {
		case "0", "disabled":
			mThreaded.send(ch, 0, d.Name)
		case "1", "enabled", "2", "busy-poll":
			mThreaded.send(ch, 1, d.Name)
		}
		if d.NAPIsKnown {
			mNAPIs.send(ch, float64(len(d.NAPIs)), d.Name)
		}
		for _, o := range d.Offloads {
			if o.Active != nil {
				mOffload.send(ch, b2f(*o.Active), d.Name, o.Name)
			}
		}
		for _, q := range d.TXQueues {
			if q.BQL == nil {
				continue
			}
			for _, b := range []struct {
				m *metric
				v *int64
			}{{mBQLLimit, q.BQL.Limit}, {mBQLInflight, q.BQL.Inflight}, {mBQLMin, q.BQL.LimitMin},
				{mBQLMax, q.BQL.LimitMax}, {mBQLStalls, q.BQL.StallCnt}} {
				if b.v != nil {
					b.m.send(ch, float64(*b.v), d.Name, q.Name)
				}
			}
		}
		for _, q := range d.IRQs {
			irq := strconv.Itoa(q.Number)
			for i, n := range q.Counts {
				if i < len(q.CountCPUs) {
					mIRQ.send(ch, float64(n), d.Name, irq, strconv.Itoa(q.CountCPUs[i]))
				}
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
