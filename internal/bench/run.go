// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
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
	if o.Omit < 0 || o.Omit > 60*time.Second {
		// iperf3 refuses -O above 60 s with a usage text, not JSON.
		return fmt.Errorf("--omit %v: want 0 to 60s (iperf3's own limit for -O)", o.Omit)
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
		if why := incompleteRuns(res.Runs); why != "" {
			res.Incomplete = why
			runErr = errors.New(why)
		} else {
			res.Complete = true
		}
	}
	return res, runErr
}

// incompleteRuns says which runs did not measure what they were meant to
// (an iperf3 client failed, a device vanished), or "" when all did: a
// result with such a run is not complete, whatever figures it holds.
func incompleteRuns(runs []Run) string {
	var bad []string
	for _, r := range runs {
		if !r.Complete {
			why := r.Error
			if why == "" {
				why = "not complete"
			}
			bad = append(bad, fmt.Sprintf("%s rep %d: %s", r.Variant, r.Rep, why))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d runs did not complete (%s)", len(bad), len(runs), strings.Join(bad, "; "))
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
