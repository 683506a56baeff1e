// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/procfs"
)

// Reading the maps into a Raw, and the Observation built from it.

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
	if err := s.readNAPIStats(r); err != nil {
		return nil, err
	}
	if err := s.readRXStats(r); err != nil {
		return nil, err
	}
	rx := newRXIndex(r, s.ncpu)
	if err := s.readGROFast(rx); err != nil {
		return nil, err
	}
	if err := s.readDevSlots(rx); err != nil {
		return nil, err
	}
	if err := s.readNAPISlots(r); err != nil {
		return nil, err
	}
	if err := s.nameRX(r); err != nil {
		return nil, err
	}
	if err := s.readSoftirqs(r); err != nil {
		return nil, err
	}
	if err := s.readIRQs(r); err != nil {
		return nil, err
	}
	s.readDQLAndLost(r)
	s.rememberComms(r)
	return r, nil
}

// readNAPIStats reads the napi_stats hash map into r.NAPI.
func (s *Session) readNAPIStats(r *Raw) error {
	var nk observeNapiKey
	var nv []observeNapiVal
	it := s.maps.Maps["napi_stats"].Iterate()
	for it.Next(&nk, &nv) {
		n := RawNAPI{Napi: nk.Napi, Dev: cstr(nk.Dev), Ctx: int(nk.Ctx), PID: nk.Pid}
		for _, v := range nv {
			n.PerCPU = append(n.PerCPU, NAPIVal{Polls: v.Polls, Work: v.Work, Full: v.Full,
				Hist: v.Hist, Budget: v.Budget, MaxWork: v.MaxWork})
		}
		r.NAPI = append(r.NAPI, n)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("reading napi_stats: %w", err)
	}
	return nil
}

// readRXStats reads the rx_stats hash map into r.RX.
func (s *Session) readRXStats(r *Raw) error {
	var rk observeRxKey
	var rv []observeCountVal
	it := s.maps.Maps["rx_stats"].Iterate()
	for it.Next(&rk, &rv) {
		x := RawRX{Dev: cstr(rk.Dev), NapiID: rk.NapiId, Kind: int(rk.Kind)}
		for _, v := range rv {
			x.PerCPU = append(x.PerCPU, CountVal{v.Count, v.Bytes})
		}
		r.RX = append(r.RX, x)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("reading rx_stats: %w", err)
	}
	return nil
}

// readGROFast adds the per-segment GRO counts kept in the direct-mapped
// array.
func (s *Session) readGROFast(rx *rxIndex) error {
	for slot := uint32(0); slot < groSlots; slot++ {
		var gv []observeGroSlot
		if err := s.maps.Maps["gro_fast"].Lookup(slot, &gv); err != nil {
			return fmt.Errorf("reading gro_fast: %w", err)
		}
		for c, v := range gv {
			if v.NapiId != 0 && c < s.ncpu {
				rx.add(RawRX{NapiID: v.NapiId, Kind: RXGro}, c, v.Count, v.Bytes)
			}
		}
	}
	return nil
}

// nameRX names the RX entries known only by NAPI id, from napi_names (or
// "napi-id-N").
func (s *Session) nameRX(r *Raw) error {
	var id uint32
	var nn observeNapiName
	names := map[uint32]string{}
	it := s.maps.Maps["napi_names"].Iterate()
	for it.Next(&id, &nn) {
		names[id] = cstr(nn.Dev)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("reading napi_names: %w", err)
	}
	for i := range r.RX {
		if x := &r.RX[i]; x.Dev == "" && x.NapiID != 0 {
			if x.Dev = names[x.NapiID]; x.Dev == "" {
				x.Dev = fmt.Sprintf("napi-id-%d", x.NapiID)
			}
		}
	}
	return nil
}

// readSoftirqs reads each softirq vector's per-CPU count and time.
func (s *Session) readSoftirqs(r *Raw) error {
	r.Softirq = make([][NrVecs]TimeVal, s.ncpu)
	for vec := uint32(0); vec < NrVecs; vec++ {
		var tv []observeTimeVal
		if err := s.maps.Maps["softirq_stats"].Lookup(vec, &tv); err != nil {
			return fmt.Errorf("reading softirq_stats: %w", err)
		}
		for c, v := range tv {
			if c < s.ncpu {
				r.Softirq[c][vec] = TimeVal{v.Count, v.Ns}
			}
		}
	}
	return nil
}

// readIRQs reads the irq_stats hash map into r.IRQ.
func (s *Session) readIRQs(r *Raw) error {
	var ik int32
	var iv []observeIrqVal
	it := s.maps.Maps["irq_stats"].Iterate()
	for it.Next(&ik, &iv) {
		q := RawIRQ{IRQ: int(ik)}
		for _, v := range iv {
			q.PerCPU = append(q.PerCPU, TimeVal{v.Count, v.Ns})
		}
		r.IRQ = append(r.IRQ, q)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("reading irq_stats: %w", err)
	}
	return nil
}

// readDQLAndLost reads the DQL stall counts and the lost-event counters;
// either may be missing (not an error).
func (s *Session) readDQLAndLost(r *Raw) {
	var dv []observeDqlVal
	if err := s.maps.Maps["dql_stats"].Lookup(uint32(0), &dv); err == nil {
		for _, v := range dv {
			r.DQL.Count += v.Count
			r.DQL.MaxLen = max(r.DQL.MaxLen, uint64(v.MaxLen))
			r.DQL.MaxThrs = max(r.DQL.MaxThrs, uint64(v.MaxThrs))
		}
	}
	for i := range uint32(len(r.Lost)) {
		var lv []uint64
		if err := s.maps.Maps["lost"].Lookup(i, &lv); err == nil {
			for _, v := range lv {
				r.Lost[i] += v
			}
		}
	}
}

// rememberComms reads the comm of every task that polled a NAPI once, while
// it is still there to read.
func (s *Session) rememberComms(r *Raw) {
	for _, n := range r.NAPI {
		if n.Ctx != CtxSoftirq && n.PID != 0 {
			if _, ok := s.comms[n.PID]; !ok {
				c, _ := s.fs.ReadString("/proc/" + strconv.Itoa(int(n.PID)) + "/comm")
				s.comms[n.PID] = c
			}
		}
	}
}

// rxIndex adds the per-CPU counts of the slot arrays to r.RX: to the entry
// with the same rxKey the hash maps gave, or to a new one.
type rxIndex struct {
	r    *Raw
	at   map[string]int // rxKey -> index in r.RX
	ncpu int
}

func newRXIndex(r *Raw, ncpu int) *rxIndex {
	x := &rxIndex{r: r, at: map[string]int{}, ncpu: ncpu}
	for i, e := range r.RX {
		x.at[rxKey(e)] = i
	}
	return x
}

func (x *rxIndex) add(e RawRX, cpu int, count, bytes uint64) {
	i, ok := x.at[rxKey(e)]
	if !ok {
		x.r.RX = append(x.r.RX, e)
		i = len(x.r.RX) - 1
		x.at[rxKey(e)] = i
	}
	pc := perCPU(x.r.RX[i].PerCPU, x.ncpu)
	pc[cpu].Count += count
	pc[cpu].Bytes += bytes
	x.r.RX[i].PerCPU = pc
}

// perCPU is pc with room for n CPUs.
func perCPU[T any](pc []T, n int) []T {
	if len(pc) >= n {
		return pc
	}
	out := make([]T, n)
	copy(out, pc)
	return out
}

// readDevSlots adds the raw BTF programs' per-device counts in dev_fast
// (bpf/observe.h) to r.RX, by device name and kind.
func (s *Session) readDevSlots(rx *rxIndex) error {
	for slot := uint32(0); slot < devSlots*devKinds; slot++ {
		var dv []observebtfDevSlot
		if err := s.maps.Maps["dev_fast"].Lookup(slot, &dv); err != nil {
			return fmt.Errorf("reading dev_fast: %w", err)
		}
		for c, v := range dv {
			if v.DevPtr != 0 && c < s.ncpu {
				rx.add(RawRX{Dev: cstr(v.Dev), Kind: int(v.Kind)}, c, v.Count, v.Bytes)
			}
		}
	}
	return nil
}

// readNAPISlots adds the raw napi_poll program's counts in napi_fast
// (bpf/observe.h) to r.NAPI, by napi, device, context and pid.
func (s *Session) readNAPISlots(r *Raw) error {
	at := map[string]int{} // napiKey -> index in r.NAPI
	for i, n := range r.NAPI {
		at[napiKey(n)] = i
	}
	for slot := uint32(0); slot < napiSlots; slot++ {
		var sv []observebtfNapiSlot
		if err := s.maps.Maps["napi_fast"].Lookup(slot, &sv); err != nil {
			return fmt.Errorf("reading napi_fast: %w", err)
		}
		for c, v := range sv {
			if v.Key.Napi == 0 || c >= s.ncpu {
				continue
			}
			n := RawNAPI{Napi: v.Key.Napi, Dev: cstr(v.Key.Dev), Ctx: int(v.Key.Ctx), PID: v.Key.Pid}
			i, ok := at[napiKey(n)]
			if !ok {
				r.NAPI = append(r.NAPI, n)
				i = len(r.NAPI) - 1
				at[napiKey(n)] = i
			}
			r.NAPI[i].PerCPU = perCPU(r.NAPI[i].PerCPU, s.ncpu)
			addNAPIVal(&r.NAPI[i].PerCPU[c], v.Val)
		}
	}
	return nil
}

// addNAPIVal adds a slot's counts to a CPU's: sums, the larger maximum, the
// slot's budget when it saw a poll.
func addNAPIVal(d *NAPIVal, v observebtfNapiVal) {
	d.Polls += v.Polls
	d.Work += v.Work
	d.Full += v.Full
	for b := range d.Hist {
		d.Hist[b] += v.Hist[b]
	}
	d.MaxWork = max(d.MaxWork, v.MaxWork)
	if v.Polls > 0 {
		d.Budget = v.Budget
	}
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
