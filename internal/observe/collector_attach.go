// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Attaching and detaching the programs, the counting window, and sampled
// mode's duty cycle.

// attachFirst attaches everything loaded in one go (the first window when
// sampling, from first); what cannot be attached now is reported and
// never tried again. Without sampling the window is open from the start;
// without perf event links sampling falls back to attached throughout.
func (s *Session) attachFirst() (first time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sampling {
		s.openWindow()
	}
	first, errs := s.attachAll()
	if s.sampling && len(s.links) == 0 && len(errs) > 0 && perfLinkUnsupported(errs[0]) {
		s.closePerfEvents()
		s.sampling = false
		s.fallback = fmt.Sprintf("sampling needs BPF perf event links (Linux 5.15+; %v): attached throughout instead", errs[0])
		s.openWindow()
		first, errs = s.attachAll()
	}
	var ok []target
	for i, tg := range s.targets {
		if err := errs[i]; err != nil {
			status := "failed"
			if errors.Is(err, os.ErrNotExist) {
				status = "missing"
			}
			s.status[tg.status] = EventStatus{Event: tg.Key(), Status: status, Detail: fmt.Sprintf("attaching: %v", err)}
			if tg.pe >= 0 {
				unix.Close(tg.pe)
			}
			continue
		}
		ok = append(ok, tg)
	}
	s.targets = ok
	if s.sampling && len(s.links) > 0 {
		s.openWindow()
	}
	return first
}

// settle is how long a sampling window waits, after attaching the softirq
// programs, before attaching the others and opening: a softirq that was
// already running when softirq_entry was attached has no recorded entry,
// and napi_poll would take its polls for polls by whatever task it
// interrupted. NET_RX runs stop after netdev_budget_usecs (2 ms by
// default) and the jiffy after it.
const settle = 5 * time.Millisecond

// sample runs the sampling windows after the first, which Start began
// attaching at first: one begins every period and closes a window's
// length after it opened. It returns, leaving the links as they are, when
// Close asks.
func (s *Session) sample(first time.Time) {
	defer close(s.done)
	next := first
	for {
		s.mu.Lock()
		end := s.openedAt.Add(s.window)
		s.mu.Unlock()
		if !s.sleepUntil(end) {
			return
		}
		s.detach()
		if h := s.opts.afterDetach; h != nil {
			h()
		}
		// The next window on the period's grid; after a stall (a suspended
		// machine) skip the windows that were missed.
		next = next.Add(s.period)
		if now := time.Now(); !next.After(now) {
			next = next.Add((now.Sub(next)/s.period + 1) * s.period)
		}
		if !s.sleepUntil(next) {
			return
		}
		s.attach()
		if h := s.opts.afterAttach; h != nil {
			h()
		}
	}
}

// sleepUntil waits until t; false when Close asked the sampler to stop.
func (s *Session) sleepUntil(t time.Time) bool {
	tm := time.NewTimer(time.Until(t))
	defer tm.Stop()
	select {
	case <-s.stop:
		return false
	case <-tm.C:
		return true
	}
}

// attachAll attaches the targets in order - the softirq programs first, so
// that napi_poll never runs without them, and when sampling settle after
// them - and returns when it began and each target's error.
func (s *Session) attachAll() (time.Time, []error) {
	errs := make([]error, len(s.targets))
	t0 := time.Now()
	softirqs := 0
	for i := range s.targets {
		tg := &s.targets[i]
		if s.sampling && softirqs > 0 && !tg.softirq() {
			time.Sleep(settle)
			softirqs = 0
		}
		var l link.Link
		var err error
		switch {
		case tg.raw:
			// Raw tracepoints have no perf event to keep between
			// windows: each window links and unlinks the program.
			l, err = link.AttachTracing(link.TracingOptions{Program: tg.prog, AttachType: ebpf.AttachTraceRawTp})
		case s.sampling:
			l, err = s.attachSampled(tg)
		default:
			l, err = link.Tracepoint(tg.group, tg.name, tg.prog, nil)
		}
		if err != nil {
			errs[i] = err
			continue
		}
		if tg.softirq() {
			softirqs++
		}
		s.links = append(s.links, l)
	}
	return t0, errs
}

func (e event) softirq() bool { return e.group == "irq" && strings.HasPrefix(e.name, "softirq_") }

// When sampling, each target's tracepoint gets a perf event for the whole
// session, opened disabled, and each window attaches the program to it
// with a BPF link (BPF_LINK_CREATE, BPF_PERF_EVENT) and detaches it by
// closing that link. The program then runs from the tracepoint's program
// array (perf_trace_run_bpf_submit), which a disabled event does not
// affect, while the event itself never records anything. Between windows
// the tracepoint calls the perf probe, which finds no program and no
// enabled event and returns at once. Opening and closing the perf events
// each window instead (link.Tracepoint and Close) costs what this avoids:
// releasing the last perf event of a tracepoint unregisters its probe and
// waits for RCU grace periods under the global event_mutex - ~70 ms per
// tracepoint here, so detaching took ~0.8 s - and registering it again
// patches kernel text (see internal/lab/vm's ws_pin_tracepoints).
func (s *Session) attachSampled(tg *target) (link.Link, error) {
	if tg.pe < 0 {
		attr := unix.PerfEventAttr{
			Type:        unix.PERF_TYPE_TRACEPOINT,
			Config:      tg.id,
			Sample_type: unix.PERF_SAMPLE_RAW,
			Sample:      1,
			Wakeup:      1,
			Bits:        unix.PerfBitDisabled,
		}
		fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return nil, fmt.Errorf("opening the tracepoint's perf event: %w", err)
		}
		tg.pe = fd
	}
	return link.AttachRawLink(link.RawLinkOptions{Target: tg.pe, Program: tg.prog, Attach: ebpf.AttachPerfEvent})
}

// perfLinkUnsupported tells whether err from attachSampled means the kernel
// has no BPF perf event links (before 5.15), so windows are impossible.
func perfLinkUnsupported(err error) bool {
	return errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, unix.EINVAL)
}

func (s *Session) closePerfEvents() {
	for i := range s.targets {
		if s.targets[i].pe >= 0 {
			unix.Close(s.targets[i].pe)
			s.targets[i].pe = -1
		}
	}
}

// monoNow reads CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns().
func monoNow() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// openWindow lets the attached programs count from now on (the window map
// in bpf/observe.c); closeWindow stops them and adds the window to the
// attached time. The programs count over exactly [open, close] whenever
// they were attached and detached around it.
func (s *Session) openWindow() {
	now := monoNow()
	if err := s.maps.Maps["window"].Update(uint32(0), observeCountWindow{Open: now}, ebpf.UpdateAny); err != nil {
		s.missed["window"]++
		s.lastErr["window"] = err
		return
	}
	s.openNs, s.openedAt = now, time.Now()
}

func (s *Session) closeWindow() {
	if s.openNs == 0 {
		return
	}
	now := monoNow()
	if err := s.maps.Maps["window"].Update(uint32(0), observeCountWindow{Open: s.openNs, Close: now}, ebpf.UpdateAny); err != nil {
		// Still counting: keep the window open and try again next time.
		s.missed["window"]++
		s.lastErr["window"] = err
		return
	}
	s.attached += time.Duration(now - s.openNs)
	s.openNs = 0
}

// attach begins a sampling window: the targets are attached (see
// attachAll), then the window opens.
func (s *Session) attach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.links) > 0 {
		return
	}
	if err := s.resetPerCPU(); err != nil {
		s.missed["reset"]++
		s.lastErr["reset"] = err
	}
	_, errs := s.attachAll()
	for i, err := range errs {
		if err != nil {
			s.missed[s.targets[i].Key()]++
			s.lastErr[s.targets[i].Key()] = err
		}
	}
	if len(s.links) > 0 {
		s.openWindow()
	}
}

// detach closes the sampling window and detaches the programs.
func (s *Session) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.detachLocked()
}

func (s *Session) detachLocked() error {
	s.closeWindow()
	n := len(s.links)
	if n == 0 {
		return nil
	}
	errs := make([]error, n)
	if !s.sampling {
		// In reverse order: the softirq programs last, so that napi_poll
		// never runs without them.
		for i := n - 1; i >= 0; i-- {
			errs[i] = s.links[i].Close()
		}
		s.links = nil
		return errors.Join(errs...)
	}
	// Closing a perf link takes the program out of the tracepoint's array
	// at once, then (on this 6.18 kernel) waits for an RCU tasks-trace
	// grace period, ~25-40 ms, before it returns. The window is closed
	// already, so the order does not matter, but each program costs until
	// it is out: all at once they are out within a millisecond or so and
	// share one grace period, one after the other the last would be out
	// only ~0.3 s later.
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.links[i].Close()
		}()
	}
	wg.Wait()
	s.links = nil
	return errors.Join(errs...)
}

// attachedAt is the time the programs counted, up to t.
func (s *Session) attachedAt(t time.Time) time.Duration {
	if !s.sampling {
		return t.Sub(s.start)
	}
	a := s.attached
	if s.openNs != 0 {
		a += time.Duration(monoNow() - s.openNs)
	}
	return a
}

// irqCur mirrors struct irq_cur in bpf/observe.c (bpf2go does not
// generate it: nothing else reads it).
type irqCur struct {
	Start uint64
	IRQ   int32
	Pad   uint32
}

// resetPerCPU clears what the programs carry from one event to the next on
// a CPU - the NET_RX/NET_TX softirq entry timestamps (which also tell
// napi_poll it runs in softirq) and the hardirq in progress - before the
// programs are attached for a window, so that a window never pairs an exit
// with an entry seen in an earlier one: a softirq left "running" when the
// last window detached would otherwise make napi_poll take a napi thread's
// polls for softirq ones until that CPU's next softirq. (An exit with
// nothing recorded is not timed: softirq_exit ignores it, irq_handler_exit
// counts the interrupt with no time.) It runs with nothing attached, a
// whole gap after the last detach, so no program still in flight races it.
func (s *Session) resetPerCPU() error {
	m := s.maps.Maps
	for _, vec := range []uint32{VecNetTX, VecNetRX} {
		var tv []observeTimeVal
		if err := m["softirq_stats"].Lookup(vec, &tv); err != nil {
			return fmt.Errorf("reading softirq_stats: %w", err)
		}
		for c := range tv {
			tv[c].Start = 0
		}
		if err := m["softirq_stats"].Update(vec, tv, ebpf.UpdateExist); err != nil {
			return fmt.Errorf("resetting softirq_stats: %w", err)
		}
	}
	if err := m["irq_now"].Update(uint32(0), make([]irqCur, s.ncpu), ebpf.UpdateExist); err != nil {
		return fmt.Errorf("resetting irq_now: %w", err)
	}
	return nil
}
