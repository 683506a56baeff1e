package observe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

	events     []event                    // tests: replaces the event table
	mutateSpec func(*ebpf.CollectionSpec) // tests: break a program
}

// Session holds loaded and attached programs. Close detaches everything.
type Session struct {
	opts    Options
	fs      *hostfs.FS
	ncpu    int
	status  []EventStatus
	maps    *ebpf.Collection
	progs   []*ebpf.Collection
	links   []link.Link
	start   time.Time
	last    *Raw
	lastAt  time.Time
	comms   map[uint32]string
	mu      sync.Mutex
	closed  bool
	Mounted string // tracefs mount point observe created, if any
}

func (s *Session) fail(e event, status string, err error) {
	s.status = append(s.status, EventStatus{Event: e.Key(), Status: status, Detail: err.Error()})
}

// Start reads each tracepoint's format file, picks the compiled layout
// (64- or 32-bit) that matches it, loads and attaches the programs - the
// softirq ones first - and starts counting. Tracepoints that are missing,
// laid out differently or refused by the verifier are reported in Events,
// not fatal; Start fails only when nothing could be attached or privileges
// are missing, and then leaves nothing loaded. When tracefs is not mounted
// and we are root, Start mounts it at /sys/kernel/tracing (and leaves it).
func Start(ctx context.Context, opts Options) (s *Session, err error) {
	f := opts.FS
	if f == nil {
		f = hostfs.Live()
	}
	evs := opts.events
	if evs == nil {
		evs = events
	}
	sess := &Session{opts: opts, fs: f, comms: map[uint32]string{}}
	defer func() {
		// Every error return leaves nothing loaded or attached behind.
		if err != nil {
			sess.Close()
		}
	}()
	s = sess
	tracefs, err := FindTracefs(f)
	if err != nil && f.IsLive() && !opts.NoMount && os.Geteuid() == 0 {
		if merr := unix.Mount("nodev", TracefsDirs[0], "tracefs", 0, ""); merr == nil {
			s.Mounted = TracefsDirs[0]
			tracefs, err = FindTracefs(f)
		}
	}
	if err != nil {
		if uid := os.Geteuid(); uid != 0 && f.IsLive() {
			return nil, fmt.Errorf("%w (running as uid %d, tracefs is not readable)", ErrNeedRoot, uid)
		}
		return nil, err
	}
	if err := rlimit.RemoveMemlock(); err != nil && !errors.Is(err, syscall.EPERM) {
		return nil, fmt.Errorf("raising RLIMIT_MEMLOCK: %w", err)
	}
	var specs [2]*ebpf.CollectionSpec
	for l, load := range []func() (*ebpf.CollectionSpec, error){loadObserve, loadObserve32} {
		if specs[l], err = load(); err != nil {
			return nil, fmt.Errorf("reading the embedded BPF object: %w", err)
		}
		if opts.mutateSpec != nil {
			opts.mutateSpec(specs[l])
		}
	}
	spec := specs[layout64]

	// Which events can be counted with the compiled-in layouts?
	usable := map[string]bool{}
	type job struct {
		event
		layout int
	}
	var todo []job
	for _, e := range evs {
		if opts.Light && e.perSegment {
			s.status = append(s.status, EventStatus{Event: e.Key(), Status: "skipped", Detail: "light mode"})
			continue
		}
		l, _, cerr := checkEvent(f, tracefs, e)
		switch {
		case cerr == nil:
			todo = append(todo, job{e, l})
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

	// Maps first, then each program on its own, so one program the
	// verifier rejects is reported instead of failing the whole set.
	mapSpec := spec.Copy()
	mapSpec.Programs = map[string]*ebpf.ProgramSpec{}
	s.maps, err = ebpf.NewCollection(mapSpec)
	if err != nil {
		if errors.Is(err, syscall.EPERM) {
			return nil, fmt.Errorf("%w (%v)", ErrNeedRoot, err)
		}
		return nil, fmt.Errorf("creating BPF maps: %w", err)
	}
	repl := map[string]*ebpf.Map{}
	for name, m := range s.maps.Maps {
		if !strings.HasPrefix(name, ".") {
			repl[name] = m
		}
	}
	s.ncpu, err = ebpf.PossibleCPU()
	if err != nil {
		return nil, err
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
				return nil, fmt.Errorf("%w (%v)", ErrNeedRoot, err)
			}
			s.fail(e, "failed", fmt.Errorf("loading %s: %s", e.prog, firstLine(err)))
			continue
		}
		s.progs = append(s.progs, c)
		l, err := link.Tracepoint(e.group, e.name, c.Programs[e.prog], nil)
		if err != nil {
			status := "failed"
			if errors.Is(err, os.ErrNotExist) {
				status = "missing"
			}
			s.fail(e, status, fmt.Errorf("attaching: %w", err))
			continue
		}
		s.links = append(s.links, l)
		st := EventStatus{Event: e.Key(), Status: "attached"}
		if j.layout != layout64 {
			st.Detail = layoutNames[j.layout] + " record layout"
		}
		s.status = append(s.status, st)
	}
	if len(s.links) == 0 {
		return nil, fmt.Errorf("no tracepoint could be attached: %s", s.describeFailures())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.start = time.Now()
	s.lastAt = s.start
	return s, nil
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

// Close detaches and unloads everything. It is safe to call twice.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for i := len(s.links) - 1; i >= 0; i-- {
		errs = append(errs, s.links[i].Close())
	}
	for _, c := range s.progs {
		c.Close()
	}
	if s.maps != nil {
		s.maps.Close()
	}
	s.links, s.progs, s.maps = nil, nil, nil
	return errors.Join(errs...)
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

func (s *Session) meta(start time.Time, d time.Duration) Meta {
	m := Meta{Start: start, Duration: d, Filter: s.opts.Ifaces, Events: s.Events(),
		DevIRQs: s.opts.DevIRQs, IRQNames: map[int]string{}, Light: s.opts.Light}
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
	o := Build(r, s.meta(s.start, r.At.Sub(s.start)))
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
	o := Build(d, s.meta(s.lastAt, r.At.Sub(s.lastAt)))
	s.annotate(o)
	s.last, s.lastAt = r, r.At
	return o, nil
}

func (s *Session) annotate(o *Observation) {
	if s.Mounted != "" {
		o.Notes = append(o.Notes, "tracefs was not mounted; observe mounted it at "+s.Mounted)
	}
	for _, e := range o.Events {
		if e.Status != "attached" && e.Status != "skipped" {
			o.Notes = append(o.Notes, fmt.Sprintf("%s not counted: %s: %s", e.Event, e.Status, e.Detail))
		}
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
