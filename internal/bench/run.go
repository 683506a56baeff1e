package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/netdevnl"
)

// Options configure a bench.
type Options struct {
	// Peer is an address (optionally with :port) running an iperf3 server;
	// empty means: build the host lab once per run for each variant.
	Peer string
	Port int // iperf3 server port (first of Procs ports); 0 = 5201
	// Variants are the lab configurations, measured interleaved:
	// A B C A B C ... (Repeat times). Ignored with Peer.
	Variants []Variant

	Streams   int
	Procs     int // parallel iperf3 clients; 0 = automatic
	Duration  time.Duration
	Omit      time.Duration
	Direction string
	UDP       bool
	RateMbit  float64 // iperf3 -b over all streams (0 = unlimited TCP)
	Repeat    int
	Iface     string // local device to sample in peer mode ("" = the route's)

	ProbeInterval time.Duration
	ProbeTOS      int
	ProbePriority int // -1 = leave
	Idle          time.Duration
	NoUDPProbe    bool

	SampleInterval time.Duration

	Iperf3   Iperf3Version
	Observer Observer
	// Inspect returns the inspect snapshot of ifaces in netns ns ("" = host).
	Inspect func(ctx context.Context, ns string, ifaces []string) (json.RawMessage, error)
	// Progress is called about every 0.5 s while a run's load is on.
	Progress func(Progress)
	// Checkpoint is called after every run with the result so far.
	Checkpoint func(*Result)
}

// Progress reports where the bench is.
type Progress struct {
	Run, Runs int
	Variant   string
	Phase     string // "setup", "idle", "load", "done"
	Elapsed   time.Duration
	Duration  time.Duration
}

// Validate checks everything that can be checked before anything starts.
func (o *Options) Validate() error {
	if o.Streams < 1 || o.Streams > 128 {
		return fmt.Errorf("-P %d: want 1-128 streams", o.Streams)
	}
	if o.Procs < 0 || o.Procs > 128 {
		return fmt.Errorf("--procs %d: want 0 (automatic) to 128 iperf3 processes", o.Procs)
	}
	if o.Duration < time.Second || o.Duration > 24*time.Hour {
		return fmt.Errorf("-t %v: want a duration of 1s to 24h", o.Duration)
	}
	if o.Duration%(500*time.Millisecond) != 0 {
		return fmt.Errorf("-t %v: use a multiple of 0.5s (iperf3 reports every 0.5 s)", o.Duration)
	}
	if o.Omit < 0 || o.Omit > 10*time.Minute {
		return fmt.Errorf("--omit %v: want 0 to 10m", o.Omit)
	}
	switch o.Direction {
	case DirSend, DirReceive, DirBoth:
	default:
		return fmt.Errorf("--direction %q: want send, receive or both", o.Direction)
	}
	if !(o.RateMbit >= 0 && o.RateMbit <= maxRateMbit) { // NaN fails both
		return fmt.Errorf("rate %v: want 0 (unlimited) to %g Mbit/s", o.RateMbit, float64(maxRateMbit))
	}
	if o.Repeat < 1 || o.Repeat > 1000 {
		return fmt.Errorf("--repeat %d: want 1-1000 repetitions", o.Repeat)
	}
	if o.Idle < 0 || o.Idle > time.Minute {
		return fmt.Errorf("--idle %v: want 0 to 1m", o.Idle)
	}
	if o.SampleInterval < 100*time.Millisecond {
		return fmt.Errorf("sample interval %v: want 100ms or more", o.SampleInterval)
	}
	if err := ValidateProbe(o.ProbeInterval, o.ProbeTOS, o.ProbePriority); err != nil {
		return err
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("--port %d: want 1-65535", o.Port)
	}
	if o.Peer == "" {
		if len(o.Variants) == 0 {
			return fmt.Errorf("no lab variant")
		}
		seen := map[string]bool{}
		for _, v := range o.Variants {
			if v.Lab == nil {
				return fmt.Errorf("variant %q has no lab config", v.Name)
			}
			if seen[v.Name] {
				return fmt.Errorf("variant name %q used twice", v.Name)
			}
			seen[v.Name] = true
			if err := v.Lab.Validate(); err != nil {
				return fmt.Errorf("variant %q: %w", v.Name, err)
			}
		}
	} else if _, _, err := o.peerAddr(); err != nil {
		return err
	}
	return nil
}

// maxRateMbit bounds the load's rate cap: 10 Tbit/s is above any link
// wirespeed measures, and keeps iperf3's per-stream -b argument (an int of
// Kbit/s) far from overflow.
const maxRateMbit = 1e7

func (o *Options) peerAddr() (netip.Addr, int, error) {
	host, port := o.Peer, o.Port
	if h, p, err := net.SplitHostPort(o.Peer); err == nil {
		host = h
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return netip.Addr{}, 0, fmt.Errorf("--peer %q: the port is not a number in 1-65535: give ADDR or ADDR:PORT", o.Peer)
		}
		port = n
	}
	if port == 0 {
		port = 5201
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		ips, lerr := net.LookupIP(host)
		if lerr != nil || len(ips) == 0 {
			return netip.Addr{}, 0, fmt.Errorf("peer %q: not an address and not resolvable: %v", o.Peer, lerr)
		}
		a, _ = netip.AddrFromSlice(ips[0])
	}
	if !a.Unmap().Is4() {
		return netip.Addr{}, 0, fmt.Errorf("peer %s: only IPv4 peers are supported for now", a)
	}
	return a.Unmap(), port, nil
}

// procs decides how many iperf3 processes to run and why.
func (o *Options) procs() (int, string) {
	if o.Procs > 0 {
		n := min(o.Procs, o.Streams)
		return n, fmt.Sprintf("%d iperf3 client processes (--procs)", n)
	}
	if o.Iperf3.MultiThreaded() {
		return 1, fmt.Sprintf("iperf3 %s runs -P streams in threads: one process", o.Iperf3)
	}
	if o.Peer != "" {
		return 1, fmt.Sprintf("iperf3 %s runs all -P streams in one thread, so one client CPU can be the bottleneck; start servers on ports %d.. at the peer and use --procs N to spread them", o.Iperf3, max(o.Port, 5201))
	}
	n := min(o.Streams, max(2, runtime.NumCPU()))
	return n, fmt.Sprintf("iperf3 %s runs all -P streams in one thread; running %d iperf3 processes in parallel (one server port each) so one client CPU is not the bottleneck", o.Iperf3, n)
}

// Bench runs all variants x repetitions, interleaved. It returns the result
// even on error or cancellation (then marked incomplete).
func Bench(ctx context.Context, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	nprocs, note := o.procs()
	res := &Result{
		Schema: Schema, Started: time.Now().UTC(),
		Settings: Settings{
			Peer: o.Peer, Port: o.Port, Streams: o.Streams, DurationS: o.Duration.Seconds(), OmitS: o.Omit.Seconds(),
			Direction: o.Direction, Protocol: map[bool]string{true: "udp", false: "tcp"}[o.UDP], RateMbit: o.RateMbit,
			Repeat: o.Repeat, ProbeInterval: float64(o.ProbeInterval) / 1e6, ProbeTOS: o.ProbeTOS, ProbePriority: o.ProbePriority,
			IdleS: o.Idle.Seconds(), SampleInterval: o.SampleInterval.Seconds(), Iface: o.Iface,
		},
		Iperf3:  Iperf3Info{Version: o.Iperf3.String(), MultiThreaded: o.Iperf3.MultiThreaded(), Processes: nprocs, Note: note},
		Inspect: map[string]json.RawMessage{},
		Runs:    []Run{},
	}
	res.Host.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		res.Host.Kernel = strings.TrimSpace(string(b))
	}
	res.Host.CPUs = runtime.NumCPU()
	variants := o.Variants
	if o.Peer != "" {
		variants = []Variant{{Name: "peer"}}
	}
	res.Variants = variants
	total := len(variants) * o.Repeat
	if o.Checkpoint != nil {
		o.Checkpoint(res) // settings on disk even if the process is killed
	}
	var runErr error
	n := 0
loop:
	for rep := 1; rep <= o.Repeat; rep++ {
		for _, v := range variants {
			n++
			if ctx.Err() != nil {
				break loop
			}
			run, err := o.runOne(ctx, res, v, rep, n, total, nprocs)
			if run != nil {
				res.Runs = append(res.Runs, *run)
				res.Summarize()
				if o.Checkpoint != nil {
					o.Checkpoint(res)
				}
			}
			if err != nil {
				runErr = err
				break loop
			}
		}
	}
	res.Finished = time.Now().UTC()
	res.Summarize()
	switch {
	case ctx.Err() != nil:
		res.Incomplete = "interrupted: " + context.Cause(ctx).Error()
		if runErr == nil {
			runErr = ctx.Err()
		}
	case runErr != nil:
		res.Incomplete = runErr.Error()
	default:
		res.Complete = true
	}
	return res, runErr
}

// runOne measures one variant once: prepare the target (the peer, or a
// host lab built for the variant), probe idle latency, run the load while
// sampling, then collect what iperf3 reported.
func (o *Options) runOne(ctx context.Context, res *Result, v Variant, rep, n, total, nprocs int) (*Run, error) {
	run := &Run{Variant: v.Name, Rep: rep, Started: time.Now().UTC(), Metrics: map[string]float64{}}
	progress := func(phase string, el time.Duration) {
		if o.Progress != nil {
			o.Progress(Progress{Run: n, Runs: total, Variant: v.Name, Phase: phase, Elapsed: el, Duration: o.Duration + o.Omit})
		}
	}
	progress("setup", 0)
	fs := hostfs.Live()
	var t *runTarget
	var err error
	if o.Peer != "" {
		t, err = o.preparePeer(ctx, res, run, fs, nprocs)
	} else {
		t, err = o.prepareLab(ctx, res, run, v, rep, nprocs)
	}
	if err != nil {
		return nil, err
	}
	if t.down != nil {
		defer t.down()
	}

	// Idle latency first, then the load. T = 0 is the load start.
	zero := time.Now().Add(o.Idle)
	probes, err := o.startProbes(res, t, zero)
	if err != nil {
		return nil, err
	}
	progress("idle", 0)
	select {
	case <-ctx.Done():
		probes.stop(o, run)
		return run, ctx.Err()
	case <-time.After(time.Until(zero)):
	}

	ld := o.runLoad(ctx, run, t, fs, nprocs, progress)
	probes.stop(o, run)
	progress("done", o.Duration+o.Omit)
	return o.collect(ctx, run, t, ld)
}

// runTarget is where one run sends its load and what it watches meanwhile.
type runTarget struct {
	addr       netip.Addr
	basePort   int
	clientCmd  func(ctx context.Context, argv []string) *exec.Cmd
	inNetns    func(fn func() error) error // nil: the probes run in this namespace
	devices    []DeviceSource
	irqs       []int
	napiPIDs   []int          // nil: every napi kthread on the host
	echo       netip.AddrPort // the lab's UDP echo server, if any
	observeIfs []string
	down       func() // removes what prepare built; nil for a peer
}

// preparePeer checks the peer's iperf3 servers and finds the local device
// that reaches it.
func (o *Options) preparePeer(ctx context.Context, res *Result, run *Run, fs *hostfs.FS, nprocs int) (*runTarget, error) {
	addr, port, err := o.peerAddr()
	if err != nil {
		return nil, err
	}
	t := &runTarget{addr: addr, basePort: port}
	for i := 0; i < nprocs; i++ {
		if err := CheckServer(ctx, netip.AddrPortFrom(addr, uint16(port+i)), 3*time.Second); err != nil {
			return nil, err
		}
	}
	iface := o.Iface
	if iface == "" {
		iface, _ = RouteDevice(ctx, addr)
	}
	if iface != "" {
		run.Devices = []string{iface}
		t.devices = append(t.devices, DeviceSource{Key: iface, Read: SysfsDevice(fs, iface)})
		t.irqs = DeviceIRQs(fs, iface)
		t.observeIfs = []string{iface}
		if _, ok := res.Inspect["local"]; !ok && o.Inspect != nil {
			res.Inspect["local"] = inspectOrError(ctx, o.Inspect, "", []string{iface})
		}
	}
	t.clientCmd = func(ctx context.Context, argv []string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 3 * time.Second
		return cmd
	}
	return t, nil
}

// prepareLab builds the variant's host lab; the caller takes it down with
// the target's down.
func (o *Options) prepareLab(ctx context.Context, res *Result, run *Run, v Variant, rep, nprocs int) (*runTarget, error) {
	cfg := *v.Lab
	cfg.Servers = nprocs
	cfg.BasePort = o.Port
	l, err := lab.Up(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("build the host lab: %w", err)
	}
	t := &runTarget{down: func() { l.Down() }}
	run.Namespaces = map[string]string{"sender": l.SenderNS, "receiver": l.ReceiverNS}
	run.Devices = []string{l.SenderNS + "/" + l.SenderIf, l.ReceiverNS + "/" + l.ReceiverIf}
	t.observeIfs = []string{l.SenderIf, l.ReceiverIf}
	t.addr, t.basePort = l.ReceiverAddr, l.ServerPorts[0]
	if l.EchoPort != 0 && !o.NoUDPProbe {
		t.echo = netip.AddrPortFrom(l.ReceiverAddr, uint16(l.EchoPort))
	}
	t.inNetns = func(fn func() error) error { return lab.InNetns(l.SenderNS, fn) }
	for _, d := range []struct{ ns, dev string }{{l.SenderNS, l.SenderIf}, {l.ReceiverNS, l.ReceiverIf}} {
		d := d
		t.devices = append(t.devices, DeviceSource{Key: d.ns + "/" + d.dev, Read: func() (DevSample, error) {
			var b []byte
			err := lab.InNetns(d.ns, func() error {
				var err error
				b, err = os.ReadFile("/proc/thread-self/net/dev")
				return err
			})
			if err != nil {
				return DevSample{}, err
			}
			return ParseNetDev(b, d.dev)
		}})
	}
	// Follow only the lab devices' napi kthreads, not other ones on the host.
	t.napiPIDs = []int{}
	for _, ns := range []string{l.SenderNS, l.ReceiverNS} {
		_ = lab.InNetns(ns, func() error {
			napis, err := netdevnl.DumpNAPIs()
			for _, n := range napis {
				if n.PID != nil {
					t.napiPIDs = append(t.napiPIDs, *n.PID)
				}
			}
			return err
		})
	}
	if rep == 1 && o.Inspect != nil {
		res.Inspect[v.Name+"/sender"] = inspectOrError(ctx, o.Inspect, l.SenderNS, []string{l.SenderIf})
		res.Inspect[v.Name+"/receiver"] = inspectOrError(ctx, o.Inspect, l.ReceiverNS, []string{l.ReceiverIf})
	}
	pin := cfg.PinSender
	t.clientCmd = func(ctx context.Context, argv []string) *exec.Cmd {
		if pin != nil {
			argv = append(argv, "-A", strconv.Itoa(*pin))
		}
		return l.Command(ctx, l.SenderNS, argv...)
	}
	return t, nil
}

type probeRun struct {
	cfg ProbeConfig
	p   *Prober
}

// probeSet is the latency probes of one run, started before the idle phase.
type probeSet []probeRun

// startProbes starts the ICMP probe (and the UDP one against the lab's
// echo server) with T = 0 at zero, the load start.
func (o *Options) startProbes(res *Result, t *runTarget, zero time.Time) (probeSet, error) {
	var probes probeSet
	addProbe := func(kind string, dst netip.AddrPort) error {
		pc := ProbeConfig{Kind: kind, Target: dst, Interval: o.ProbeInterval, TOS: o.ProbeTOS, Priority: o.ProbePriority, InNetns: t.inNetns}
		p, err := StartProbe(pc, zero)
		if err != nil {
			return err
		}
		probes = append(probes, probeRun{pc, p})
		return nil
	}
	if err := addProbe(ProbeICMP, netip.AddrPortFrom(t.addr, 0)); err != nil {
		if os.Geteuid() == 0 {
			return nil, fmt.Errorf("latency probe: %w", err)
		}
		// Without root an ICMP socket needs net.ipv4.ping_group_range;
		// measure anyway, without the ICMP probe, and say so.
		note := "no ICMP latency probe: " + err.Error()
		if len(res.Notes) == 0 || res.Notes[len(res.Notes)-1] != note {
			res.Notes = append(res.Notes, note)
		}
	}
	if t.echo.IsValid() {
		if err := addProbe(ProbeUDP, t.echo); err != nil {
			return nil, fmt.Errorf("latency probe: %w", err)
		}
	}
	return probes, nil
}

// stop ends the probes and adds their series, split into the idle and the
// loaded phase, to run.
func (ps probeSet) stop(o *Options, run *Run) {
	for _, pr := range ps {
		rtts := pr.p.Stop(context.Background())
		s := ProbeSeries{Kind: pr.cfg.Kind, Target: pr.cfg.Target.String(), TOS: pr.cfg.TOS, Priority: pr.cfg.Priority, RxTime: pr.p.RxTime(), RTTs: rtts}
		if pr.cfg.Kind == ProbeICMP {
			s.Target = pr.cfg.Target.Addr().String()
		}
		s.Idle = Phase(rtts, -o.Idle.Seconds()-1, 0)
		s.Loaded = Phase(rtts, o.Omit.Seconds(), (o.Omit + o.Duration).Seconds())
		run.Probes = append(run.Probes, s)
	}
}

// loadRun is what the iperf3 clients of one run left behind.
type loadRun struct {
	outs, errs []bytes.Buffer
	waitErrs   []error
	limit      time.Duration
	stopped    bool // the watchdog (or ctx) ended the clients
}

// runLoad runs the iperf3 clients while the sampler (and the observer, if
// any) record into run.
func (o *Options) runLoad(ctx context.Context, run *Run, t *runTarget, fs *hostfs.FS, nprocs int, progress func(string, time.Duration)) *loadRun {
	sampler := &Sampler{FS: fs, Interval: o.SampleInterval, IRQs: t.irqs, Devices: t.devices, NAPIPIDs: t.napiPIDs}
	var stopObserve func() (json.RawMessage, error)
	if o.Observer != nil {
		stop, err := o.Observer.Start(ctx, t.observeIfs)
		if err != nil {
			run.ObserveErr = err.Error()
		} else {
			stopObserve = stop
		}
	}
	loadStart := time.Now()
	sampler.Start(loadStart)
	// A watchdog: iperf3 only bounds the connect; a peer that stops
	// answering would leave it waiting forever.
	ld := &loadRun{limit: o.Duration + o.Omit + 20*time.Second}
	cctx, ccancel := context.WithTimeout(ctx, ld.limit)
	defer ccancel()
	split := SplitStreams(o.Streams, nprocs)
	ld.outs = make([]bytes.Buffer, len(split))
	ld.errs = make([]bytes.Buffer, len(split))
	cmds := make([]*exec.Cmd, len(split))
	for i, st := range split {
		ca := ClientArgs{Host: t.addr.String(), Port: t.basePort + i, Streams: st, Duration: o.Duration.Seconds(),
			Omit: o.Omit.Seconds(), Interval: 0.5, Direction: o.Direction, UDP: o.UDP}
		if o.RateMbit > 0 {
			ca.RateMbit = o.RateMbit * float64(st) / float64(o.Streams)
		}
		cmds[i] = t.clientCmd(cctx, ca.Argv())
		cmds[i].Stdout, cmds[i].Stderr = &ld.outs[i], &ld.errs[i]
	}
	var wg sync.WaitGroup
	ld.waitErrs = make([]error, len(cmds))
	for i, c := range cmds {
		if err := c.Start(); err != nil {
			ld.waitErrs[i] = err
			continue
		}
		wg.Add(1)
		go func(i int, c *exec.Cmd) {
			defer wg.Done()
			ld.waitErrs[i] = c.Wait()
		}(i, c)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(500 * time.Millisecond)
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			progress("load", time.Since(loadStart))
		}
	}
	tick.Stop()
	ld.stopped = cctx.Err() != nil
	run.Samples = sampler.Stop(loadStart)
	if stopObserve != nil {
		obs, err := stopObserve()
		run.Observe = obs
		if err != nil {
			run.ObserveErr = err.Error()
		}
	}
	return ld
}

// collect parses the clients' reports into run's intervals, throughput,
// load and metrics, and decides whether the run is complete.
func (o *Options) collect(ctx context.Context, run *Run, t *runTarget, ld *loadRun) (*Run, error) {
	var ivs [][]Interval
	var sums []map[string]DirSummary
	var perr []error
	for i := range ld.outs {
		raw := bytes.TrimSpace(ld.outs[i].Bytes())
		if json.Valid(raw) {
			run.Iperf3Raw = append(run.Iperf3Raw, json.RawMessage(raw))
		}
		rep, err := ParseIperf3(raw)
		if err != nil {
			msg := strings.TrimSpace(ld.errs[i].String())
			if ld.waitErrs[i] != nil && msg != "" {
				err = fmt.Errorf("%w (%s)", err, msg)
			}
			perr = append(perr, fmt.Errorf("iperf3 client %d (%s:%d): %w", i+1, t.addr, t.basePort+i, err))
			continue
		}
		if rep.Error != "" {
			perr = append(perr, fmt.Errorf("iperf3 client %d: %s", i+1, rep.Error))
		}
		ivs = append(ivs, rep.Intervals())
		sums = append(sums, rep.Summaries())
	}
	run.Intervals = MergeIntervals(ivs, 0.5, o.Omit.Seconds())
	AlignIntervals(run.Intervals, run.Samples)
	run.Throughput = MergeSummaries(sums)
	run.Load = SummarizeLoad(run.Samples, o.Omit.Seconds(), (o.Omit + o.Duration).Seconds())
	run.metrics()
	if ctx.Err() == nil && ld.stopped {
		perr = append(perr, fmt.Errorf("iperf3 did not finish within %v of a %v load and was stopped: did the peer stop answering?", ld.limit, o.Duration+o.Omit))
	}
	run.Complete = len(perr) == 0 && ctx.Err() == nil && len(sums) == len(ld.outs)
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	if len(perr) > 0 {
		run.Error = errors.Join(perr...).Error()
		if len(sums) == 0 {
			return run, errors.Join(perr...)
		}
	}
	return run, nil
}

func (run *Run) metrics() {
	m := run.Metrics
	for d, s := range run.Throughput {
		m[d+"_mbit"] = s.Mbit
		if s.Retransmits != nil {
			m[d+"_retransmits"] = float64(*s.Retransmits)
		}
		if s.LostPercent != nil {
			m[d+"_udp_lost_pct"] = *s.LostPercent
		}
	}
	for _, p := range run.Probes {
		for phase, ps := range map[string]PhaseStats{"idle": p.Idle, "load": p.Loaded} {
			k := p.Kind + "_" + phase + "_"
			if ps.Sent == 0 {
				continue
			}
			m[k+"loss_pct"] = ps.LossPct
			if ps.Sent > ps.Lost {
				m[k+"p50_ms"] = ps.P50Ms
				m[k+"p90_ms"] = ps.P90Ms
				m[k+"p99_ms"] = ps.P99Ms
				m[k+"max_ms"] = ps.MaxMs
			}
		}
	}
	run.Load.Metrics(m)
}

func inspectOrError(ctx context.Context, f func(context.Context, string, []string) (json.RawMessage, error), ns string, ifs []string) json.RawMessage {
	b, err := f(ctx, ns, ifs)
	if err != nil {
		e, _ := json.Marshal(map[string]string{"error": err.Error()})
		return e
	}
	return b
}

// CheckServer makes sure an iperf3 server answers at ap, failing within
// timeout with an error naming address and port. It opens a control
// connection and sends a 37-byte cookie as an iperf3 client does: a server
// answers with PARAM_EXCHANGE (9), or ACCESS_DENIED (-1) when another test
// runs. A bare TCP accept is not enough - a proxy or another service would
// leave iperf3 hanging. The server logs a short error and waits for the
// next client when the connection then closes.
func CheckServer(ctx context.Context, ap netip.AddrPort, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := d.DialContext(cctx, "tcp", ap.String())
	if err != nil {
		return fmt.Errorf("no iperf3 server reachable at %s: %w (start one there with 'iperf3 -s -p %d'; check the address and any firewall)", ap, err, ap.Port())
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	cookie := []byte("wirespeedcheckwirespeedcheckwirespee\x00")
	if _, err := c.Write(cookie); err != nil {
		return fmt.Errorf("%s accepts TCP but the iperf3 handshake failed: %w", ap, err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		return fmt.Errorf("%s accepts TCP but no iperf3 server answered the handshake within %v (is it iperf3 3.x? a proxy?): %w", ap, timeout, err)
	}
	switch int8(b[0]) {
	case 9: // PARAM_EXCHANGE
		return nil
	case -1: // ACCESS_DENIED
		return fmt.Errorf("the iperf3 server at %s is busy with another test; try again or use another port", ap)
	}
	return fmt.Errorf("%s answered the iperf3 handshake with state %d, want 9 (PARAM_EXCHANGE): is this an iperf3 3.x server?", ap, int8(b[0]))
}

// RouteDevice returns the device the route to addr leaves through.
func RouteDevice(ctx context.Context, addr netip.Addr) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "-o", "route", "get", addr.String()).Output()
	if err != nil {
		return "", fmt.Errorf("ip route get %s: %w", addr, err)
	}
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			return f[i+1], nil
		}
	}
	return "", fmt.Errorf("ip route get %s: no device in %q", addr, out)
}
