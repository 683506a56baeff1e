// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// One run's measurement: the probes, the iperf3 load with the samplers, and
// what is collected and derived afterwards.

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
	// A device that vanished under the load (a lab removed by 'lab down
	// --all', a veth deleted, a NIC unplugged) leaves figures that are not
	// a measurement of it.
	if ctx.Err() == nil {
		for _, d := range t.devices {
			if _, err := d.Read(); err != nil {
				perr = append(perr, fmt.Errorf("device %s is gone or unreadable after the load (%v): the run measured a datapath that broke under it", d.Key, err))
			}
		}
	}
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
