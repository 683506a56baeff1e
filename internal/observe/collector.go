// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/hostfs"
)

// groSlots is GRO_SLOTS in bpf/observe.h; devSlots, devKinds and
// napiSlots are DEV_SLOTS, DEV_KINDS and NAPI_SLOTS. The header is the
// source: TestMapSizesMatchTheObjects fails when these differ from the
// committed objects' maps, and make bpf-check when those differ from what
// the header builds.
const (
	groSlots  = 256
	devSlots  = 64
	devKinds  = 2
	napiSlots = 64
)

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

	// Programs picks the BPF programs: ProgramsAuto ("" too) runs the
	// raw BTF tracepoint programs (bpf/observe_btf.c) when attached
	// throughout and the kernel has BTF, and the classic ones elsewhere,
	// event by event where a BTF one does not load; sampled, it runs the
	// classic ones (see useRaw). ProgramsBTF insists on the raw ones (an
	// event whose BTF program does not load is reported failed);
	// ProgramsClassic runs the classic tracepoint programs only.
	Programs string

	events     []event                    // tests: replaces the event table
	mutateSpec func(*ebpf.CollectionSpec) // tests: break a program
	// tests: called by the sampling goroutine, without the session's lock,
	// after each window's attach and after each detach.
	afterAttach, afterDetach func()
}

// The choices of Options.Programs.
const (
	ProgramsAuto    = "auto"
	ProgramsBTF     = "btf"
	ProgramsClassic = "classic"
)

// CheckPrograms validates Options.Programs ("" is auto); CheckProgramsFlag
// validates a --programs flag's value, where "" is not allowed.
func CheckPrograms(p string) error {
	if p == "" {
		return nil
	}
	return CheckProgramsFlag(p)
}

// CheckProgramsFlag validates a --programs flag: auto, btf or classic. It
// only checks; the value is used as it is.
func CheckProgramsFlag(p string) error {
	switch p {
	case ProgramsAuto, ProgramsBTF, ProgramsClassic:
		return nil
	}
	return fmt.Errorf("programs %q: want auto, btf (raw BTF tracepoints) or classic (tracepoint records)", p)
}

// vmlinuxBTF is where the running kernel publishes its BTF.
const vmlinuxBTF = "/sys/kernel/btf/vmlinux"

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
	status int  // index into Session.status
	pe     int  // sampling: the tracepoint's perf event, -1 until opened
	raw    bool // prog is the raw BTF tracepoint program (tp_btf)
}

// Session holds loaded and attached programs. Close detaches everything.
type Session struct {
	opts    Options
	fs      *hostfs.FS
	ncpu    int
	status  []EventStatus
	maps    *ebpf.Collection
	progs   []*ebpf.Program
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
	if err := CheckPrograms(opts.Programs); err != nil {
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

// readSpecs reads the embedded BPF objects, indexed by record layout, the
// raw BTF tracepoint object last (specBTF).
func readSpecs(mutate func(*ebpf.CollectionSpec)) ([3]*ebpf.CollectionSpec, error) {
	var specs [3]*ebpf.CollectionSpec
	for l, load := range []func() (*ebpf.CollectionSpec, error){loadObserve, loadObserve32, loadObservebtf} {
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

// specBTF indexes the raw BTF tracepoint object in readSpecs' result.
const specBTF = 2

// job is an event to load: with its raw BTF tracepoint program (raw), or
// with the record layout its format file has (layout, -1 if none fits,
// then classic says why) and its tracepoint id.
type job struct {
	event
	raw     bool
	layout  int
	id      int
	classic *EventStatus // why the classic program cannot be loaded; nil: it can
}

// selectEvents decides which events can be counted, with their raw BTF
// tracepoint programs or with the classic ones and the compiled-in record
// layouts; the others get their status (skipped, missing, format-mismatch,
// failed). It tells the programs whether softirq time can be counted.
func (s *Session) selectEvents(tracefs string, evs []event, specs [3]*ebpf.CollectionSpec) ([]job, error) {
	usable := map[string]bool{}
	var todo []job
	raw := s.useRaw()
	for _, e := range evs {
		if s.opts.Light && e.perSegment {
			s.status = append(s.status, EventStatus{Event: e.Key(), Status: "skipped", Detail: "light mode"})
			continue
		}
		j := job{event: e, layout: -1}
		l, fm, cerr := checkEvent(s.fs, tracefs, e)
		switch {
		case cerr == nil:
			j.layout, j.id = l, fm.ID
		case errors.Is(cerr, fs.ErrNotExist):
			j.classic = &EventStatus{Event: e.Key(), Status: "missing",
				Detail: fmt.Sprintf("tracepoint not in this kernel (no %s/events/%s/%s)", tracefs, e.group, e.name)}
		case errors.Is(cerr, fs.ErrPermission):
			return nil, fmt.Errorf("%w (%v)", ErrNeedRoot, cerr)
		case errors.Is(cerr, ErrFormatMismatch):
			j.classic = &EventStatus{Event: e.Key(), Status: "format-mismatch", Detail: fmt.Sprintf("%v; not loaded", cerr)}
		default:
			j.classic = &EventStatus{Event: e.Key(), Status: "failed", Detail: cerr.Error()}
		}
		// A tracepoint that is not there has no raw one either; a record
		// layout that moved does not matter to the raw program.
		j.raw = raw && e.btf != "" && (j.classic == nil || j.classic.Status != "missing")
		if !j.raw && j.classic != nil {
			s.status = append(s.status, *j.classic)
			continue
		}
		todo = append(todo, j)
		usable[e.Key()] = true
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

// useRaw tells whether to try the raw BTF tracepoint programs: asked for,
// or by default when attached throughout and the running kernel has BTF.
// Sampled, the default is the classic programs: a raw program has no perf
// event to keep between windows, so each window registers and unregisters
// its probe, which patches kernel text (the tracepoint's static key and
// static call) twice per tracepoint per period, with IPIs to every CPU -
// and in the QEMU lab under multi-threaded TCG text patching under load is
// what crashes guests (internal/lab/vm's ws_pin_tracepoints). The classic
// programs link to perf events kept for the session and patch nothing; at
// 10% attached their dearer events cost about what raw ones plus the
// patching would.
func (s *Session) useRaw() bool {
	switch s.opts.Programs {
	case ProgramsClassic:
		return false
	case ProgramsBTF:
		return true
	}
	if s.sampling {
		return false
	}
	_, err := os.Stat(vmlinuxBTF)
	return err == nil
}

// load creates the maps first, then each program on its own, so one
// program the verifier rejects is reported instead of failing the whole
// set; the loaded ones become the session's targets. An event's raw BTF
// tracepoint program is tried first; when it does not load, by default its
// classic program is loaded instead and the status says why.
func (s *Session) load(specs [3]*ebpf.CollectionSpec, todo []job) error {
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
		st := EventStatus{Event: e.Key(), Status: "attached"}
		if j.raw {
			prog, err := loadOne(specs[specBTF], e.btf, repl)
			if err == nil {
				st.Detail = RawDetail
				s.addTarget(target{event: e, prog: prog, pe: -1, raw: true}, st)
				continue
			}
			if errors.Is(err, ErrNeedRoot) {
				return err
			}
			if s.opts.Programs == ProgramsBTF || j.classic != nil {
				s.fail(e, "failed", fmt.Errorf("raw tracepoint (tp_btf): %v", err))
				continue
			}
			st.Detail = fmt.Sprintf("classic tracepoint: the raw one (tp_btf) did not load: %v", err)
		}
		if j.classic != nil {
			s.status = append(s.status, *j.classic)
			continue
		}
		prog, err := loadOne(specs[j.layout], e.prog, repl)
		if err != nil {
			if errors.Is(err, ErrNeedRoot) {
				return err
			}
			s.fail(e, "failed", err)
			continue
		}
		if j.layout != layout64 {
			st.Detail = strings.TrimPrefix(st.Detail+"; ", "; ") + layoutNames[j.layout] + " record layout"
		}
		s.addTarget(target{event: e, id: uint64(j.id), prog: prog, pe: -1}, st)
	}
	return nil
}

// RawDetail is the EventStatus detail of an event counted by its raw BTF
// tracepoint program.
const RawDetail = "raw tracepoint (tp_btf)"

// loadOne loads one program of spec, its maps replaced by the session's.
// The collection it makes holds only the program, which the session keeps
// in progs to close.
func loadOne(spec *ebpf.CollectionSpec, name string, repl map[string]*ebpf.Map) (*ebpf.Program, error) {
	ps := spec.Programs[name]
	if ps == nil {
		return nil, fmt.Errorf("program %s not in the BPF object", name)
	}
	one := spec.Copy()
	one.Programs = map[string]*ebpf.ProgramSpec{name: ps}
	c, err := ebpf.NewCollectionWithOptions(one, ebpf.CollectionOptions{MapReplacements: repl})
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			return nil, fmt.Errorf("%w (%v)", ErrNeedRoot, err)
		}
		return nil, fmt.Errorf("loading %s: %s", name, firstLine(err))
	}
	prog := c.Programs[name]
	delete(c.Programs, name)
	c.Close() // the maps are the session's; only the program is kept
	return prog, nil
}

func (s *Session) addTarget(t target, st EventStatus) {
	t.status = len(s.status)
	s.targets = append(s.targets, t)
	s.progs = append(s.progs, t.prog)
	s.status = append(s.status, st)
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
