// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// DefaultRefresh is how old inspect's full snapshot may grow before a scrape
// takes a new one when nothing asked for one sooner: it catches what moves
// with no notification and no knob re-read (irqbalance starting, cpufreq
// governors, a NAPI's kthread pinned anew).
const DefaultRefresh = 5 * time.Minute

// snapCache keeps inspect's full snapshot between scrapes. Most of what it
// holds does not move while a device exists (driver, bus, USB topology, IRQ
// numbers and chips, NAPI instances, offloads); a scrape re-reads only what
// moves - interrupt counts, BQL - and takes a new full snapshot when the old
// one is older than refresh, when a link or qdisc notification arrived (a
// device added or removed, up or down, its features, MTU or qdisc changed),
// or when a knob reads differently (sameKnobs).
type snapCache struct {
	refresh time.Duration // <= 0: a full snapshot every scrape
	dirty   atomic.Bool   // set by the link watcher

	snap *inspect.Snapshot
	err  error
	at   time.Time
	gen  uint64 // counts full snapshots; doctor's cache keys on it
}

// snapshot returns the snapshot for this scrape: the cached one with its
// moving parts re-read, or a new full one.
func (ic *inspectCollector) snapshot() (*inspect.Snapshot, error) {
	c := &ic.cache
	now := time.Now()
	// a notification arriving while the new snapshot is taken stays set for
	// the next scrape; a snapshot that was partly read is not kept
	notified := c.dirty.Swap(false)
	full := c.snap == nil || c.err != nil || c.refresh <= 0 || now.Sub(c.at) >= c.refresh || notified
	if !full && !ic.refreshMoving(c.snap) {
		full = true
	}
	if full {
		ic.files.closeAll()
		c.snap, c.err = ic.inspect()
		c.at = now
		c.gen++
	}
	return c.snap, c.err
}

// refreshMoving re-reads the parts of a cached snapshot that move between
// scrapes. It returns false when the snapshot no longer describes the host
// (a device gone, its threaded switch moved): then the caller takes a new
// one.
func (ic *inspectCollector) refreshMoving(s *inspect.Snapshot) bool {
	var in *procfs.Interrupts
	if b, err := ic.files.read("/proc/interrupts"); err == nil {
		in, _ = procfs.ParseInterrupts(b)
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		base := "/sys/class/net/" + d.Name
		if !ic.sameKnobs(d) {
			return false
		}
		for j := range d.TXQueues {
			q := &d.TXQueues[j]
			if q.BQL == nil {
				continue
			}
			dir := base + "/queues/" + q.Name + "/byte_queue_limits/"
			for _, f := range []struct {
				name string
				v    **int64
			}{{"limit", &q.BQL.Limit}, {"inflight", &q.BQL.Inflight}, {"limit_min", &q.BQL.LimitMin},
				{"limit_max", &q.BQL.LimitMax}, {"stall_cnt", &q.BQL.StallCnt}} {
				if *f.v == nil {
					continue
				}
				t, err := ic.files.readString(dir + f.name)
				if err != nil {
					return false // the queue is gone
				}
				n, err := strconv.ParseInt(t, 10, 64)
				if err != nil {
					return false
				}
				**f.v = n
			}
		}
		if in == nil {
			continue
		}
		for j := range d.IRQs {
			q := &d.IRQs[j]
			l := in.Find(q.Number)
			if l == nil {
				if len(q.Counts) > 0 {
					return false // the IRQ was freed
				}
				continue // listed nowhere (inspect found it in sysfs only)
			}
			q.Counts = append(q.Counts[:0], l.Counts...)
			q.CountCPUs = append(q.CountCPUs[:0], in.CPUs[:len(l.Counts)]...)
			q.Total = 0
			for _, v := range q.Counts {
				q.Total += v
			}
		}
	}
	return true
}

// sameKnobs says whether the device's knobs still read as the snapshot
// recorded them: the NAPI switches (a NAPI appearing turns EOPNOTSUPP into 0,
// and threads come and go with threaded), RPS and XPS masks and the IRQs'
// affinity - what tune and irqbalance change without a link notification,
// and what doctor's findings rest on.
func (ic *inspectCollector) sameKnobs(d *inspect.Device) bool {
	base := "/sys/class/net/" + d.Name
	for _, k := range []struct{ file, was string }{{"threaded", d.NAPISysfs.Threaded},
		{"gro_flush_timeout", d.NAPISysfs.GROFlushTimeout}, {"napi_defer_hard_irqs", d.NAPISysfs.NAPIDeferHardIRQs}} {
		if k.was != "" && ic.files.rawOrErr(base+"/"+k.file) != k.was {
			return false
		}
	}
	for _, q := range d.RXQueues {
		if v, _ := ic.files.asRecorded(base + "/queues/" + q.Name + "/rps_cpus"); v != q.RPSCPUs {
			return false
		}
	}
	for _, q := range d.TXQueues {
		if v, _ := ic.files.asRecorded(base + "/queues/" + q.Name + "/xps_cpus"); v != q.XPSCPUs {
			return false
		}
	}
	for _, q := range d.IRQs {
		if v, _ := ic.files.asRecorded(fmt.Sprintf("/proc/irq/%d/smp_affinity", q.Number)); v != q.SMPAffinity {
			return false
		}
	}
	return true
}

// watchLinks marks the cache dirty on every rtnetlink link notification
// (RTM_NEWLINK, RTM_DELLINK: devices added, removed, renamed, up or down,
// features or MTU changed) and qdisc notification until ctx ends. Without the socket the cache
// still refreshes every refresh interval.
func (ic *inspectCollector) watchLinks(ctx context.Context) error {
	conn, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{Groups: unix.RTMGRP_LINK | unix.RTMGRP_TC})
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	go func() {
		for {
			_, err := conn.Receive()
			// ENOBUFS: notifications were lost - refresh as for one
			ic.cache.dirty.Store(true)
			if err != nil && (ctx.Err() != nil || !errors.Is(err, unix.ENOBUFS)) {
				if ctx.Err() == nil {
					ic.log.Printf("link notifications: %v; the snapshot now refreshes every %s only", err, ic.cache.refresh)
				}
				return
			}
		}
	}()
	return nil
}
