package observe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/procfs"
)

// groSlots is GRO_SLOTS in bpf/observe.c.
const groSlots = 256

// ErrNeedRoot is returned when the kernel refuses to load BPF programs for
// lack of privileges.
var ErrNeedRoot = errors.New("observe needs root (CAP_BPF, CAP_PERFMON and read access to tracefs): run it with sudo")

// Options configure a Session.
type Options struct {
	FS      *hostfs.FS       // host files (tracefs, /proc); nil: hostfs.Live()
	Ifaces  []string         // device names to report; empty: all
	DevIRQs map[string][]int // device -> IRQ numbers (from inspect), optional

	// NoMount keeps observe from mounting tracefs when it is missing.
	NoMount bool

	// Light leaves out the tracepoints that fire for every packet before
	// GRO (napi_gro_receive_entry, netif_receive_skb{,_list}_entry), the
	// bulk of the events on a fast link. GRO input is then estimated from
	// the NAPI polls' work (packets a driver handed up), see Build.
	Light bool

	// Sample, a fraction in (0,1), duty-cycles the tracepoints: the
	// programs are loaded once, attached at the start of every Period and
	// detached again after Sample*Period. On a busy link most of what
	// observe costs is the kernel's tracepoint machinery, paid for every
	// event while a program is attached - a program that returns early
	// saves little - so only not being attached makes it cheap. Counts then
	// cover the attached windows only; rates and time shares are per
	// attached second (Observation.Sample). 0 or 1: attached throughout.
	Sample float64
	// Period is the sampling period; 0: DefaultPeriod.
	Period time.Duration

	events     []event                    // tests: replaces the event table
	mutateSpec func(*ebpf.CollectionSpec) // tests: break a program
	// tests: called by the sampling goroutine, without the session's lock,
	// after each window's attach and after each detach.
	afterAttach, afterDetach func()
}

// DefaultPeriod is the sampling period when Options.Period is 0.
const DefaultPeriod = time.Second

// MinWindow is the shortest attached window sampling accepts: attaching
// the programs itself takes a millisecond or so, and a window much shorter
// than a NET_RX softirq's run sees mostly its edges.
const MinWindow = 10 * time.Millisecond

// CheckSample validates a sampling fraction and period (0: DefaultPeriod)
// as Start would, so callers can refuse bad input before loading anything.
func CheckSample(sample float64, period time.Duration) error {
	if period == 0 {
		period = DefaultPeriod
	}
	switch {
	case math.IsNaN(sample) || sample < 0 || sample > 1:
		return fmt.Errorf("sample fraction %v: want a fraction in (0, 1] (1: continuous)", sample)
	case period < 0:
		return fmt.Errorf("sampling period %v: must be positive", period)
	case sample > 0 && sample < 1 && time.Duration(sample*float64(period)) < MinWindow:
		return fmt.Errorf("sampling %.3g%% of %v attaches for %v at a time; the shortest window is %v",
			100*sample, period, time.Duration(sample*float64(period)), MinWindow)
	}
	return nil
}

// target is a loaded program and the tracepoint it attaches to.
type target struct {
	event
	id     uint64 // the tracepoint's id, from its format file
	prog   *ebpf.Program
	status int // index into Session.status
	pe     int // sampling: the tracepoint's perf event, -1 until opened
}

// Session holds loaded and attached programs. Close detaches everything.
type Session struct {
	opts    Options
	fs      *hostfs.FS
	ncpu    int
	status  []EventStatus
	maps    *ebpf.Collection
	progs   []*ebpf.Collection
	targets []target    // programs that attached at Start, in attach order
	links   []link.Link // attached now, in attach order
	start   time.Time
	last    *Raw
	lastAt  time.Time
	comms   map[uint32]string
	mu      sync.Mutex // the maps, links and the sampling clock below
	closed  bool
	Mounted string // tracefs mount point observe created, if any

	// Sampling (Options.Sample in (0,1)): a goroutine attaches the
	// targets, opens the counting window (see openWindow), closes it and
	// detaches them; the attached time is the windows' sum, on the
	// monotonic clock the programs use.
	sampling bool
	period   time.Duration
	window   time.Duration
	attached time.Duration // closed windows
	openNs   uint64        // CLOCK_MONOTONIC when the open window opened; 0: closed
	openedAt time.Time     // the same instant, for scheduling
	missed   map[string]int
	lastErr  map[string]error
	fallback string // why sampling was asked for but not done
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func (s *Session) fail(e event, status string, err error) {
	s.status = append(s.status, EventStatus{Event: e.Key(), Status: status, Detail: err.Error()})
}

// Start reads each tracepoint's format file, picks the compiled layout
// (64- or 32-bit) that matches it, loads and attaches the programs - the
// softirq ones first - and starts counting; when sampling, that is the
// first window, and a goroutine runs the others until Close. Tracepoints
// that are missing, laid out differently or refused by the verifier are
// reported in Events, not fatal; Start fails only when nothing could be
// attached or privileges are missing, and then leaves nothing loaded. When
// tracefs is not mounted and we are root, Start mounts it at
// /sys/kernel/tracing (and leaves it).
func Start(ctx context.Context, opts Options) (s *Session, err error) {
	f := opts.FS
	if f == nil {
		f = hostfs.Live()
	}
	evs := opts.events
	if evs == nil {
		evs = events
	}
	if err := CheckSample(opts.Sample, opts.Period); err != nil {
		return nil, err
	}
	sess := newSession(opts, f)
	defer func() {
		// Every error return leaves nothing loaded or attached behind.
		if err != nil {
			sess.Close()
		}
	}()
	s = sess
	tracefs, err := s.findTracefs()
	if err != nil {
		return nil, err
	}
	if err := rlimit.RemoveMemlock(); err != nil && !errors.Is(err, syscall.EPERM) {
		return nil, fmt.Errorf("raising RLIMIT_MEMLOCK: %w", err)
	}
	specs, err := readSpecs(opts.mutateSpec)
	if err != nil {
		return nil, err
	}
	todo, err := s.selectEvents(tracefs, evs, specs)
	if err != nil {
		return nil, err
	}
	if err := s.load(specs, todo); err != nil {
		return nil, err
	}
	first := s.attachFirst()
	if len(s.links) == 0 {
		return nil, fmt.Errorf("no tracepoint could be attached: %s", s.describeFailures())
	}
	// A ctx cancelled while attaching (Ctrl-C during start-up) is not an
	// error: the session is returned and the caller, who watches ctx too,
	// stops it at once and prints what little it saw - an error here would
	// make 'observe' exit 1 on a Ctrl-C in its first second.
	s.start = time.Now()
	s.lastAt = s.start
	if s.sampling {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.sample(first)
	}
	return s, nil
}

// newSession is a session with nothing loaded yet, its sampling period
// and window set from opts.
func newSession(opts Options, f *hostfs.FS) *Session {
	s := &Session{opts: opts, fs: f, comms: map[uint32]string{},
		missed: map[string]int{}, lastErr: map[string]error{}}
	s.period = opts.Period
	if s.period == 0 {
		s.period = DefaultPeriod
	}
	if opts.Sample > 0 && opts.Sample < 1 {
		s.sampling = true
		s.window = time.Duration(opts.Sample * float64(s.period))
	}
	return s
}

// findTracefs finds tracefs, mounting it at TracefsDirs[0] when it is not
// mounted, this is the live host, NoMount is not set and we are root.
func (s *Session) findTracefs() (string, error) {
	f := s.fs
	tracefs, err := FindTracefs(f)
	if err != nil && f.IsLive() && !s.opts.NoMount && os.Geteuid() == 0 {
		if merr := unix.Mount("nodev", TracefsDirs[0], "tracefs", 0, ""); merr == nil {
			s.Mounted = TracefsDirs[0]
			tracefs, err = FindTracefs(f)
		}
	}
	if err != nil {
		if uid := os.Geteuid(); uid != 0 && f.IsLive() {
			return "", fmt.Errorf("%w (running as uid %d, tracefs is not readable)", ErrNeedRoot, uid)
		}
		return "", err
	}
	return tracefs, nil
}

// readSpecs reads the embedded BPF objects, indexed by record layout.
func readSpecs(mutate func(*ebpf.CollectionSpec)) ([2]*ebpf.CollectionSpec, error) {
	var specs [2]*ebpf.CollectionSpec
	for l, load := range []func() (*ebpf.CollectionSpec, error){loadObserve, loadObserve32} {
		var err error
		if specs[l], err = load(); err != nil {
			return specs, fmt.Errorf("reading the embedded BPF object: %w", err)
		}
		if mutate != nil {
			mutate(specs[l])
		}
	}
	return specs, nil
}

// job is an event to load, with the record layout its format file has and
// its tracepoint id.
type job struct {
	event
	layout int
	id     int
}

// selectEvents decides which events can be counted with the compiled-in
// layouts; the others get their status (skipped, missing, format-mismatch,
// failed). It tells the programs whether softirq time can be counted.
func (s *Session) selectEvents(tracefs string, evs []event, specs [2]*ebpf.CollectionSpec) ([]job, error) {
	usable := map[string]bool{}
	var todo []job
	for _, e := range evs {
		if s.opts.Light && e.perSegment {
			s.status = append(s.status, EventStatus{Event: e.Key(), Status: "skipped", Detail: "light mode"})
			continue
		}
		l, fm, cerr := checkEvent(s.fs, tracefs, e)
		switch {
		case cerr == nil:
			todo = append(todo, job{e, l, fm.ID})
			usable[e.Key()] = true
		case errors.Is(cerr, fs.ErrNotExist):
			s.fail(e, "missing", fmt.Errorf("tracepoint not in this kernel (no %s/events/%s/%s)", tracefs, e.group, e.name))
		case errors.Is(cerr, fs.ErrPermission):
			return nil, fmt.Errorf("%w (%v)", ErrNeedRoot, cerr)
		case errors.Is(cerr, ErrFormatMismatch):
			s.fail(e, "format-mismatch", fmt.Errorf("%v; not loaded", cerr))
		default:
			s.fail(e, "failed", cerr)
		}
	}
	haveSoftirq := usable["irq:softirq_entry"] && usable["irq:softirq_exit"]
	for _, sp := range specs {
		if v, ok := sp.Variables["have_softirq"]; ok && haveSoftirq {
			if err := v.Set(uint32(1)); err != nil {
				return nil, fmt.Errorf("configuring the BPF object: %w", err)
			}
		}
	}
	return todo, nil
}

// load creates the maps first, then each program on its own, so one
// program the verifier rejects is reported instead of failing the whole
// set; the loaded ones become the session's targets.
func (s *Session) load(specs [2]*ebpf.CollectionSpec, todo []job) error {
	mapSpec := specs[layout64].Copy()
	mapSpec.Programs = map[string]*ebpf.ProgramSpec{}
	var err error
	s.maps, err = ebpf.NewCollection(mapSpec)
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("%w (%v)", ErrNeedRoot, err)
		}
		return fmt.Errorf("creating BPF maps: %w", err)
	}
	repl := map[string]*ebpf.Map{}
	for name, m := range s.maps.Maps {
		if !strings.HasPrefix(name, ".") {
			repl[name] = m
		}
	}
	s.ncpu, err = ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	for _, j := range todo {
		e := j.event
		ps := specs[j.layout].Programs[e.prog]
		if ps == nil {
			s.fail(e, "failed", fmt.Errorf("program %s not in the BPF object", e.prog))
			continue
		}
		one := specs[j.layout].Copy()
		one.Programs = map[string]*ebpf.ProgramSpec{e.prog: ps}
		c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: repl})
		if err != nil {
			if errors.Is(err, syscall.EPERM) {
				return fmt.Errorf("%w (%v)", ErrNeedRoot, err)
			}
			s.fail(e, "failed", fmt.Errorf("loading %s: %s", e.prog, firstLine(err)))
			continue
		}
		s.progs = append(s.progs, c)
		st := EventStatus{Event: e.Key(), Status: "attached"}
		if j.layout != layout64 {
			st.Detail = layoutNames[j.layout] + " record layout"
		}
		s.targets = append(s.targets, target{event: e, id: uint64(j.id), prog: c.Programs[e.prog], status: len(s.status), pe: -1})
		s.status = append(s.status, st)
	}
	return nil
}

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
		if s.sampling {
			l, err = s.attachSampled(tg)
		} else {
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

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return msg[:i]
	}
	return msg
}

func (s *Session) describeFailures() string {
	var parts []string
	for _, st := range s.status {
		if st.Status != "attached" {
			parts = append(parts, st.Event+": "+st.Status+" ("+st.Detail+")")
		}
	}
	return strings.Join(parts, "; ")
}

// Events reports what each tracepoint's program is doing.
func (s *Session) Events() []EventStatus {
	return append([]EventStatus(nil), s.status...)
}

// Close detaches and unloads everything. It is safe to call twice, and
// from several goroutines.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	if s.stop != nil {
		// The sampler first, so that it attaches nothing afterwards.
		s.stopOnce.Do(func() { close(s.stop) })
		<-s.done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.detachLocked()
	s.closePerfEvents()
	for _, c := range s.progs {
		c.Close()
	}
	if s.maps != nil {
		s.maps.Close()
	}
	s.links, s.progs, s.maps, s.targets = nil, nil, nil, nil
	return err
}

func cstr(b [16]int8) string {
	var out []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// ReadRaw reads all maps: totals since Start.
func (s *Session) ReadRaw() (*Raw, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("observe session closed")
	}
	r := &Raw{At: time.Now(), NCPU: s.ncpu}
	r.Attached = s.attachedAt(r.At)
	m := s.maps.Maps
	var nk observeNapiKey
	var nv []observeNapiVal
	it := m["napi_stats"].Iterate()
	for it.Next(&nk, &nv) {
		n := RawNAPI{Napi: nk.Napi, Dev: cstr(nk.Dev), Ctx: int(nk.Ctx), PID: nk.Pid}
		for _, v := range nv {
			n.PerCPU = append(n.PerCPU, NAPIVal{Polls: v.Polls, Work: v.Work, Full: v.Full,
				Hist: v.Hist, Budget: v.Budget, MaxWork: v.MaxWork})
		}
		r.NAPI = append(r.NAPI, n)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("reading napi_stats: %w", err)
	}
	var rk observeRxKey
	var rv []observeCountVal
	it = m["rx_stats"].Iterate()
	for it.Next(&rk, &rv) {
		x := RawRX{Dev: cstr(rk.Dev), NapiID: rk.NapiId, Kind: int(rk.Kind)}
		for _, v := range rv {
			x.PerCPU = append(x.PerCPU, CountVal{v.Count, v.Bytes})
		}
		r.RX = append(r.RX, x)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("reading rx_stats: %w", err)
	}
	// The per-segment GRO counts kept in the direct-mapped array.
	fast := map[uint32]int{} // napi id -> index in r.RX
	for i := range r.RX {
		if x := r.RX[i]; x.Kind == RXGro && x.Dev == "" && x.NapiID != 0 {
			fast[x.NapiID] = i
		}
	}
	for slot := uint32(0); slot < groSlots; slot++ {
		var gv []observeGroSlot
		if err := m["gro_fast"].Lookup(slot, &gv); err != nil {
			return nil, fmt.Errorf("reading gro_fast: %w", err)
		}
		for c, v := range gv {
			if v.NapiId == 0 || c >= s.ncpu {
				continue
			}
			i, ok := fast[v.NapiId]
			if !ok {
				r.RX = append(r.RX, RawRX{NapiID: v.NapiId, Kind: RXGro, PerCPU: make([]CountVal, s.ncpu)})
				i = len(r.RX) - 1
				fast[v.NapiId] = i
			}
			if len(r.RX[i].PerCPU) < s.ncpu {
				pc := make([]CountVal, s.ncpu)
				copy(pc, r.RX[i].PerCPU)
				r.RX[i].PerCPU = pc
			}
			r.RX[i].PerCPU[c].Count += v.Count
			r.RX[i].PerCPU[c].Bytes += v.Bytes
		}
	}
	var id uint32
	var nn observeNapiName
	names := map[uint32]string{}
	it = m["napi_names"].Iterate()
	for it.Next(&id, &nn) {
		names[id] = cstr(nn.Dev)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("reading napi_names: %w", err)
	}
	for i := range r.RX {
		if x := &r.RX[i]; x.Dev == "" && x.NapiID != 0 {
			if x.Dev = names[x.NapiID]; x.Dev == "" {
				x.Dev = fmt.Sprintf("napi-id-%d", x.NapiID)
			}
		}
	}
	r.Softirq = make([][NrVecs]TimeVal, s.ncpu)
	for vec := uint32(0); vec < NrVecs; vec++ {
		var tv []observeTimeVal
		if err := m["softirq_stats"].Lookup(vec, &tv); err != nil {
			return nil, fmt.Errorf("reading softirq_stats: %w", err)
		}
		for c, v := range tv {
			if c < s.ncpu {
				r.Softirq[c][vec] = TimeVal{v.Count, v.Ns}
			}
		}
	}
	var ik int32
	var iv []observeIrqVal
	it = m["irq_stats"].Iterate()
	for it.Next(&ik, &iv) {
		q := RawIRQ{IRQ: int(ik)}
		for _, v := range iv {
			q.PerCPU = append(q.PerCPU, TimeVal{v.Count, v.Ns})
		}
		r.IRQ = append(r.IRQ, q)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("reading irq_stats: %w", err)
	}
	var dv []observeDqlVal
	if err := m["dql_stats"].Lookup(uint32(0), &dv); err == nil {
		for _, v := range dv {
			r.DQL.Count += v.Count
			r.DQL.MaxLen = max(r.DQL.MaxLen, uint64(v.MaxLen))
			r.DQL.MaxThrs = max(r.DQL.MaxThrs, uint64(v.MaxThrs))
		}
	}
	for i := uint32(0); i < 3; i++ {
		var lv []uint64
		if err := m["lost"].Lookup(i, &lv); err == nil {
			for _, v := range lv {
				r.Lost[i] += v
			}
		}
	}
	for _, n := range r.NAPI {
		if n.Ctx != CtxSoftirq && n.PID != 0 {
			if _, ok := s.comms[n.PID]; !ok {
				c, _ := s.fs.ReadString("/proc/" + strconv.Itoa(int(n.PID)) + "/comm")
				s.comms[n.PID] = c
			}
		}
	}
	return r, nil
}

// meta describes a window of wall time d from start, during which the
// programs were attached for attached.
func (s *Session) meta(start time.Time, d, attached time.Duration) Meta {
	m := Meta{Start: start, Duration: d, Filter: s.opts.Ifaces, Events: s.Events(),
		DevIRQs: s.opts.DevIRQs, IRQNames: map[int]string{}, Light: s.opts.Light}
	if s.sampling {
		m.Sample, m.Period, m.Attached = s.opts.Sample, s.period, attached
	}
	comms := map[uint32]string{}
	for k, v := range s.comms {
		comms[k] = v
	}
	m.Comm = func(pid uint32) string { return comms[pid] }
	if b, err := s.fs.ReadFile("/proc/interrupts"); err == nil {
		if in, err := procfs.ParseInterrupts(b); err == nil {
			for _, l := range in.Lines {
				if l.Number >= 0 {
					m.IRQNames[l.Number] = strings.Join(l.Actions, ",")
				}
			}
		}
	}
	return m
}

// Total returns the observation of everything since Start.
func (s *Session) Total() (*Observation, error) {
	r, err := s.ReadRaw()
	if err != nil {
		return nil, err
	}
	o := Build(r, s.meta(s.start, r.At.Sub(s.start), r.Attached))
	s.annotate(o)
	return o, nil
}

// Interval returns the observation since the previous Interval (or Start).
func (s *Session) Interval() (*Observation, error) {
	r, err := s.ReadRaw()
	if err != nil {
		return nil, err
	}
	d := Diff(r, s.last)
	o := Build(d, s.meta(s.lastAt, r.At.Sub(s.lastAt), d.Attached))
	s.annotate(o)
	s.last, s.lastAt = r, r.At
	return o, nil
}

func (s *Session) annotate(o *Observation) {
	if s.Mounted != "" {
		o.Notes = append(o.Notes, "tracefs was not mounted; observe mounted it at "+s.Mounted)
	}
	if s.fallback != "" {
		o.Notes = append(o.Notes, s.fallback)
	}
	for _, e := range o.Events {
		if e.Status != "attached" && e.Status != "skipped" {
			o.Notes = append(o.Notes, fmt.Sprintf("%s not counted: %s: %s", e.Event, e.Status, e.Detail))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.missed))
	for k := range s.missed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "reset":
			o.Notes = append(o.Notes, fmt.Sprintf("sampling: resetting the per-CPU softirq/hardirq state failed before %d windows (%v); poll contexts may be off",
				s.missed[k], s.lastErr[k]))
			continue
		case "window":
			o.Notes = append(o.Notes, fmt.Sprintf("sampling: opening or closing the counting window failed %d times (%v)", s.missed[k], s.lastErr[k]))
			continue
		}
		o.Notes = append(o.Notes, fmt.Sprintf("sampling: %s could not be attached in %d windows (%v); its counts cover less time than attached_s",
			k, s.missed[k], s.lastErr[k]))
	}
}

// Run attaches, waits for d (or ctx), and returns the observation.
func Run(ctx context.Context, opts Options, d time.Duration) (*Observation, error) {
	s, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return s.Total()
}
