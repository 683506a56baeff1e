// Package exporter serves what inspect reads and what observe sees as
// Prometheus metrics, named after node_exporter's conventions (a wirespeed_
// prefix, _total counters, base units: seconds, bytes).
//
// A scrape reads sysfs and procfs (inspect.Collect, /proc/net/softnet_stat,
// /proc/softirqs, the NAPI threads' /proc/PID/stat) and copies the totals of
// the eBPF observation, which runs sampled in the background (observer.go):
// nothing is attached or read from BPF maps per scrape.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// userHZ is the unit of utime and stime in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture wirespeed builds for).
const userHZ = 100

// scrapeTimeout bounds one scrape's reading (netlink dumps included).
const scrapeTimeout = 10 * time.Second

// Collectors, as named in wirespeed_collector_up.
const (
	CollInspect  = "inspect"  // sysfs, netlink: devices, NAPI threads, BQL, IRQs
	CollSoftnet  = "softnet"  // /proc/net/softnet_stat
	CollSoftirqs = "softirqs" // /proc/softirqs
	CollThreads  = "napi_threads"
	CollObserve  = "observe" // the background eBPF observation
	CollDoctor   = "doctor"
)

// Collectors lists every collector name.
var Collectors = []string{CollInspect, CollSoftnet, CollSoftirqs, CollThreads, CollObserve, CollDoctor}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("wirespeed_"+name, help, labels, nil)
}

// The metrics. Names end in their unit; counters in _total.
var (
	descUp    = desc("collector_up", "1 if the collector read everything it reads, 0 if not (the exporter's log says why).", "collector")
	descDur   = desc("collector_duration_seconds", "How long the collector took in this scrape.", "collector")
	descBuild = desc("exporter_build_info", "wirespeed's version; 1.", "version")

	descDevInfo  = desc("device_info", "A network device in the exporter's network namespace; 1.", "device", "driver", "bus")
	descRXPath   = desc("device_rx_path_info", "How received packets reach the stack, from sysfs and netlink (inspect's rx_path); 1.", "device", "path")
	descThreaded = desc("device_napi_threaded", "1 if the device's NAPI polls in kernel threads (sysfs threaded), 0 if in softirq.", "device")
	descOffload  = desc("device_offload_enabled", "1 if the offload is active, 0 if not (ethtool features).", "device", "feature")
	descNAPIs    = desc("device_napis", "NAPI instances netdev netlink lists for the device.", "device")

	// pid too: thread names are cut at 15 characters, so a long device
	// name gives all its NAPI threads the same one.
	descThreadCPU  = desc("napi_thread_cpu", "The CPU a NAPI kernel thread last ran on.", "device", "thread", "pid")
	descThreadSecs = desc("napi_thread_cpu_seconds_total", "CPU time of a NAPI kernel thread.", "device", "thread", "pid", "mode")

	descBQLLimit    = desc("bql_limit_bytes", "Byte queue limit of a TX queue (byte_queue_limits/limit).", "device", "queue")
	descBQLInflight = desc("bql_inflight_bytes", "Bytes queued to the driver and not yet completed (byte_queue_limits/inflight).", "device", "queue")
	descBQLMin      = desc("bql_limit_min_bytes", "Lower bound of the byte queue limit.", "device", "queue")
	descBQLMax      = desc("bql_limit_max_bytes", "Upper bound of the byte queue limit.", "device", "queue")
	descBQLStalls   = desc("bql_stalls_total", "TX completion stalls BQL detected (byte_queue_limits/stall_cnt, Linux 6.9+).", "device", "queue")

	descIRQ = desc("device_interrupts_total", "Interrupts of an IRQ line serving the device (for a USB NIC its host controller's), per CPU.", "device", "irq", "cpu")

	descSNProcessed = desc("softnet_processed_total", "Packets processed by the CPU's NET_RX (softnet_stat).", "cpu")
	descSNDropped   = desc("softnet_dropped_total", "Packets dropped because the CPU's backlog was full (softnet_stat).", "cpu")
	descSNSqueezed  = desc("softnet_times_squeezed_total", "NET_RX runs that stopped with work left: budget or time used up (softnet_stat).", "cpu")
	descSNRPS       = desc("softnet_received_rps_total", "RPS IPIs the CPU received (softnet_stat).", "cpu")
	descSNFlowLimit = desc("softnet_flow_limit_count_total", "Packets dropped by the flow limit (softnet_stat).", "cpu")
	descSNBacklog   = desc("softnet_backlog_packets", "Packets in the CPU's backlog queues now (softnet_stat, Linux 5.10+).", "cpu")

	descSoftirqs = desc("softirqs_total", "NET_RX and NET_TX softirqs run on the CPU (/proc/softirqs).", "cpu", "type")

	descObsAttached = desc("observe_attached_seconds_total", "Time the sampled eBPF observation was attached; the *_observed_* counters count during it only.")
	descObsInterval = desc("observe_interval_seconds", "Wall time of the observation interval the *_ratio gauges cover.")
	descObsSample   = desc("observe_sample_ratio", "Share of every period the observation is attached for.")
	descSoftirqSecs = desc("softirq_observed_seconds_total", "Time in NET_RX/NET_TX softirqs while the observation was attached; divide its rate by observe_attached_seconds_total's for the CPU's share.", "cpu", "type")
	descGROSegs     = desc("gro_segments_observed_total", "Segments entering GRO while attached (light mode: packets NAPI polls handed up).", "device")
	descDelivered   = desc("rx_delivered_skbs_observed_total", "skbs delivered to the stack (netif_receive_skb) while attached.", "device")
	descNetifRx     = desc("rx_netif_rx_observed_total", "Packets queued with netif_rx (no NAPI, no GRO) while attached.", "device")
	descGRORatio    = desc("gro_coalescing_ratio", "Segments entering GRO per skb delivered, over the last observation interval (1: no coalescing).", "device")
	descObsPath     = desc("observed_rx_path_info", "The RX path the observation saw in the last interval; 1.", "device", "path")
	descPolls       = desc("napi_polls_observed_total", "NAPI polls per CPU while attached; context is where most of the NAPI's polls ran (softirq, thread, task).", "device", "context", "cpu")
	descWork        = desc("napi_work_observed_total", "Packets NAPI polls handed up, per CPU, while attached.", "device", "context", "cpu")

	descFinding = desc("doctor_finding", "A finding of wirespeed doctor; 1 while it holds.", "id", "device", "severity")
	descRules   = desc("doctor_rules", "Doctor rules that ran.")
)

var allDescs = []*prometheus.Desc{descUp, descDur, descBuild, descDevInfo, descRXPath, descThreaded, descOffload, descNAPIs,
	descThreadCPU, descThreadSecs, descBQLLimit, descBQLInflight, descBQLMin, descBQLMax, descBQLStalls, descIRQ,
	descSNProcessed, descSNDropped, descSNSqueezed, descSNRPS, descSNFlowLimit, descSNBacklog, descSoftirqs,
	descObsAttached, descObsInterval, descObsSample, descSoftirqSecs, descGROSegs, descDelivered, descNetifRx,
	descGRORatio, descObsPath, descPolls, descWork, descFinding, descRules}

// MetricNames lists every metric the exporter can expose (the Grafana
// dashboard test checks its queries against it).
func MetricNames() []string {
	var out []string
	for _, d := range allDescs {
		s := d.String() // Desc{fqName: "wirespeed_x", ...}
		_, rest, _ := strings.Cut(s, `fqName: "`)
		name, _, _ := strings.Cut(rest, `"`)
		out = append(out, name)
	}
	return out
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

// Exporter is a prometheus.Collector.
type Exporter struct {
	fs      *hostfs.FS
	answers *inspect.Answers // replayed; nil: live
	version string
	log     *log.Logger

	mu     sync.Mutex        // one collection at a time; guards what follows
	probes map[string]string // IRQ affinity probes: asked once, kept
	failed map[string]string // collector -> last error logged
	cache  snapCache
	files  openFiles
	docRep *doctor.Report

	flight  sync.Mutex  // guards next and reading
	next    *collection // the reading the scrapes waiting now will share
	reading bool        // readLoop runs

	obs       *observer
	obsErr    error
	obsSample float64
}

// New returns an exporter; with opts.Observe set it attaches the sampled
// observation, which runs until ctx ends (Wait returns after it detached).
// An observation that cannot start (not root, no tracefs) is not fatal: the
// other collectors still serve, and collector_up{collector="observe"} is 0.
func New(ctx context.Context, opts Options) *Exporter {
	e := &Exporter{fs: opts.FS, answers: opts.Answers, version: opts.Version, log: opts.Log,
		probes: map[string]string{}, failed: map[string]string{}}
	if e.fs == nil {
		e.fs = hostfs.Live()
	}
	if e.log == nil {
		e.log = log.New(discard{}, "", 0)
	}
	e.files.fs = e.fs
	e.cache.refresh = opts.Refresh
	if e.cache.refresh == 0 {
		e.cache.refresh = DefaultRefresh
	}
	if e.fs.IsLive() && e.cache.refresh > 0 {
		if err := e.watchLinks(ctx); err != nil {
			e.log.Printf("link notifications: %v; the snapshot refreshes every %s only", err, e.cache.refresh)
		}
	}
	if opts.Observe == nil {
		e.obsErr = fmt.Errorf("observation off (--observe off)")
		return e
	}
	iv := opts.Interval
	if iv <= 0 {
		iv = 10 * time.Second
	}
	e.obsSample = opts.Observe.Sample
	if e.obsSample == 0 {
		e.obsSample = 1
	}
	o, err := startObserver(ctx, *opts.Observe, iv)
	if err != nil {
		e.obsErr = fmt.Errorf("eBPF observation not running: %w", err)
		e.log.Printf("collector observe: %v; GRO ratio, observed RX path, NAPI polls and softirq time are not exported", e.obsErr)
		e.failed[CollObserve] = e.obsErr.Error()
		return e
	}
	e.obs = o
	return e
}

// Wait returns when the background observation has detached (after the
// context given to New ended); at once when none runs.
func (e *Exporter) Wait() {
	if e.obs != nil {
		e.obs.wait()
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Describe sends every metric's description.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// up records whether a collector worked, logging when that changes.
func (e *Exporter) up(ch chan<- prometheus.Metric, coll string, t0 time.Time, err error) {
	v := 1.0
	if err != nil {
		v = 0
		if e.failed[coll] != err.Error() {
			e.log.Printf("collector %s: %v", coll, err)
			e.failed[coll] = err.Error()
		}
	} else if _, was := e.failed[coll]; was {
		e.log.Printf("collector %s: works again", coll)
		delete(e.failed, coll)
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, v, coll)
	ch <- prometheus.MustNewConstMetric(descDur, prometheus.GaugeValue, time.Since(t0).Seconds(), coll)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
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

// collect reads the host and sends the metrics.
func (e *Exporter) collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	gauge(ch, descBuild, 1, e.version)

	t0 := time.Now()
	snap, err := e.snapshot()
	e.up(ch, CollInspect, t0, err)
	if snap != nil {
		e.devices(ch, snap)
	}

	t0 = time.Now()
	e.up(ch, CollSoftnet, t0, e.softnet(ch))
	t0 = time.Now()
	e.up(ch, CollSoftirqs, t0, e.softirqs(ch))
	t0 = time.Now()
	if snap != nil {
		e.up(ch, CollThreads, t0, e.threads(ch, snap))
	} else {
		e.up(ch, CollThreads, t0, errNoSnapshot)
	}

	t0 = time.Now()
	var last *observe.Observation
	if e.obs == nil {
		e.up(ch, CollObserve, t0, e.obsErr)
	} else {
		s := e.obs.snapshot()
		e.observed(ch, s)
		last = s.last
		e.up(ch, CollObserve, t0, s.err)
	}

	t0 = time.Now()
	if snap != nil {
		e.up(ch, CollDoctor, t0, e.doctor(ch, snap, last))
	} else {
		e.up(ch, CollDoctor, t0, errNoSnapshot)
	}
}

// errNoSnapshot marks the collectors that work on inspect's snapshot when
// there is none.
var errNoSnapshot = errors.New("no inspect snapshot this scrape (see collector inspect)")

// inspect reads the devices with inspect.Collect. The IRQ affinity probe
// (root only) is asked once per IRQ and kept: it cannot change while the
// IRQ exists, and each probe is a write to /proc/irq/N/smp_affinity.
func (e *Exporter) inspect() (*inspect.Snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	a := e.answers
	if a == nil {
		a = inspect.LiveAnswers(e.fs)
	}
	for k, v := range e.probes {
		a.AffinityProbes[k] = v
	}
	snap, err := inspect.Collect(ctx, inspect.Options{FS: e.fs, Answers: a})
	for k, v := range a.AffinityProbes {
		e.probes[k] = v
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

func (e *Exporter) devices(ch chan<- prometheus.Metric, snap *inspect.Snapshot) {
	for _, d := range snap.Devices {
		gauge(ch, descDevInfo, 1, d.Name, d.Driver, d.Bus)
		if !d.Datapath.RXPath.IsZero() {
			gauge(ch, descRXPath, 1, d.Name, d.Datapath.RXPath.String())
		}
		switch d.NAPISysfs.Threaded {
		case "0", "disabled":
			gauge(ch, descThreaded, 0, d.Name)
		case "1", "enabled", "2", "busy-poll":
			gauge(ch, descThreaded, 1, d.Name)
		}
		if d.NAPIsKnown {
			gauge(ch, descNAPIs, float64(len(d.NAPIs)), d.Name)
		}
		for _, o := range d.Offloads {
			if o.Active != nil {
				gauge(ch, descOffload, b2f(*o.Active), d.Name, o.Name)
			}
		}
		for _, q := range d.TXQueues {
			if q.BQL == nil {
				continue
			}
			for _, m := range []struct {
				d    *prometheus.Desc
				v    *int64
				kind prometheus.ValueType
			}{{descBQLLimit, q.BQL.Limit, prometheus.GaugeValue}, {descBQLInflight, q.BQL.Inflight, prometheus.GaugeValue},
				{descBQLMin, q.BQL.LimitMin, prometheus.GaugeValue}, {descBQLMax, q.BQL.LimitMax, prometheus.GaugeValue},
				{descBQLStalls, q.BQL.StallCnt, prometheus.CounterValue}} {
				if m.v != nil {
					ch <- prometheus.MustNewConstMetric(m.d, m.kind, float64(*m.v), d.Name, q.Name)
				}
			}
		}
		for _, q := range d.IRQs {
			irq := strconv.Itoa(q.Number)
			for i, n := range q.Counts {
				if i < len(q.CountCPUs) {
					counter(ch, descIRQ, float64(n), d.Name, irq, strconv.Itoa(q.CountCPUs[i]))
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

func (e *Exporter) softnet(ch chan<- prometheus.Metric) error {
	b, err := e.files.read("/proc/net/softnet_stat")
	if err != nil {
		return err
	}
	rows, err := procfs.ParseSoftnetStat(b)
	if err != nil {
		return err
	}
	for _, r := range rows {
		cpu := strconv.Itoa(r.CPU)
		counter(ch, descSNProcessed, float64(r.Processed), cpu)
		counter(ch, descSNDropped, float64(r.Dropped), cpu)
		counter(ch, descSNSqueezed, float64(r.TimeSqueeze), cpu)
		counter(ch, descSNRPS, float64(r.ReceivedRPS), cpu)
		counter(ch, descSNFlowLimit, float64(r.FlowLimitCount), cpu)
		gauge(ch, descSNBacklog, float64(r.InputQlen+r.ProcessQlen), cpu)
	}
	return nil
}

func (e *Exporter) softirqs(ch chan<- prometheus.Metric) error {
	b, err := e.files.read("/proc/softirqs")
	if err != nil {
		return err
	}
	s, err := procfs.ParseSoftirqs(b)
	if err != nil {
		return err
	}
	for _, typ := range []string{"NET_RX", "NET_TX"} {
		counts, ok := s.Counts[typ]
		if !ok {
			return fmt.Errorf("/proc/softirqs has no %s line", typ)
		}
		for i, n := range counts {
			if i < len(s.CPUs) {
				counter(ch, descSoftirqs, float64(n), strconv.Itoa(s.CPUs[i]), typ)
			}
		}
	}
	return nil
}

// threads exports each NAPI kthread's CPU and CPU time. A thread that
// exits between inspect's scan and this read is left out, not an error.
func (e *Exporter) threads(ch chan<- prometheus.Metric, snap *inspect.Snapshot) error {
	var errs []string
	for _, d := range snap.Devices {
		for _, t := range d.Threads {
			b, err := e.files.read(fmt.Sprintf("/proc/%d/stat", t.PID))
			if err != nil {
				continue
			}
			st, err := procfs.ParsePidStat(b)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			pid := strconv.Itoa(t.PID)
			gauge(ch, descThreadCPU, float64(st.Processor), d.Name, st.Comm, pid)
			counter(ch, descThreadSecs, float64(st.UTime)/userHZ, d.Name, st.Comm, pid, "user")
			counter(ch, descThreadSecs, float64(st.STime)/userHZ, d.Name, st.Comm, pid, "system")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func (e *Exporter) observed(ch chan<- prometheus.Metric, s obsSnapshot) {
	counter(ch, descObsAttached, s.attached)
	gauge(ch, descObsSample, e.obsSample)
	for k, v := range s.softirq {
		counter(ch, descSoftirqSecs, v, strconv.Itoa(k.cpu), k.vec)
	}
	for name, t := range s.devs {
		counter(ch, descGROSegs, float64(t.groSegments), name)
		counter(ch, descDelivered, float64(t.delivered), name)
		counter(ch, descNetifRx, float64(t.netifRx), name)
	}
	for k, t := range s.napis {
		cpu := strconv.Itoa(k.cpu)
		counter(ch, descPolls, float64(t.polls), k.dev, k.ctx, cpu)
		counter(ch, descWork, float64(t.work), k.dev, k.ctx, cpu)
	}
	if s.last == nil {
		return
	}
	gauge(ch, descObsInterval, s.last.DurationSec)
	for _, d := range s.last.Devices {
		if d.Name == observe.BacklogDev {
			continue
		}
		if !d.RXPath.IsZero() && d.RXPath != observe.PathIdle {
			gauge(ch, descObsPath, 1, d.Name, d.RXPath.String())
		}
		if d.GRORatio != nil {
			gauge(ch, descGRORatio, *d.GRORatio, d.Name)
		}
	}
}

// diagnose is doctor.Diagnose; tests stand in rules of their own (doctor's
// registry is private to it).
var diagnose = doctor.Diagnose

// doctor exports one gauge per finding and device (a finding on no device
// has device=""). The report is kept until the snapshot is taken anew or a
// new observation interval ends: between those its input has not changed
// but for counters, and doctor's rules read rates from observations.
func (e *Exporter) doctor(ch chan<- prometheus.Metric, snap *inspect.Snapshot, obs *observe.Observation) error {
	c := &e.cache
	if !c.docOK || c.docGen != c.gen || c.docObs != any(obs) || e.docRep == nil {
		rep, err := diagnose(&doctor.Input{Snap: snap, Obs: obs})
		if err != nil {
			c.docOK = false
			return err
		}
		e.docRep, c.docGen, c.docObs, c.docOK = rep, c.gen, any(obs), true
	}
	rep := e.docRep
	gauge(ch, descRules, float64(len(rep.Rules)))
	seen := map[[3]string]bool{}
	for _, f := range rep.Findings {
		devs := f.Devices
		if len(devs) == 0 {
			devs = []string{""}
		}
		for _, d := range devs {
			k := [3]string{f.ID, d, string(f.Severity)}
			if seen[k] {
				continue
			}
			seen[k] = true
			gauge(ch, descFinding, 1, k[:]...)
		}
	}
	return nil
}
