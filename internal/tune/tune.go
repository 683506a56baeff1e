// SPDX-License-Identifier: Apache-2.0

// Package tune applies doctor's Actions to the running kernel, reads every
// write back, and puts the old values back on request - from a journal that
// survives a crash at any point.
//
// Each action kind lives in a file of its own (sysfs.go, irq.go, sysctl.go,
// ethtool.go, qdisc.go, governor.go, napi.go) and implements knob: read the
// state to record, apply the action's value, tell from a read-back whether
// the kernel took it, restore a recorded state.
//
// Every write follows the same order: the old value goes into the journal
// (journal.go: temporary file, fsync, rename, fsync of the directory)
// before the kernel is touched; a lock file keeps two tunes apart. A crash
// therefore leaves at worst a "pending" entry whose old value revert writes
// back, which is harmless if the new value never landed.
package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// System is the kernel tune talks to. Root prefixes every /sys and /proc
// path ("" or "/" for the live host; tests use a directory of plain files
// for the file-backed kinds). Run executes ethtool(8) and tc(8).
type System struct {
	Root string
	Run  func(ctx context.Context, argv ...string) ([]byte, error)
}

// Live is the running host.
func Live() *System { return &System{Root: "/"} }

func (s *System) path(p string) string {
	if s.Root == "" || s.Root == "/" {
		return p
	}
	return filepath.Join(s.Root, p)
}

// maxKernelFile bounds what tune reads of a kernel file.
const maxKernelFile = 64 << 10

// kernelPath is p below s.Root, refused unless it resolves into the
// kernel's own trees (/sys, /proc) there: the last line of defence behind
// each kind's check.
func (s *System) kernelPath(p string) (string, error) {
	full := s.path(p)
	if err := containedIn(full, s.path("/sys"), s.path("/proc")); err != nil {
		return "", err
	}
	return full, nil
}

func (s *System) readFile(p string) (string, error) {
	full, err := s.kernelPath(p)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(full, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKernelFile))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// writeFile writes v to an existing kernel file (never creates one).
func (s *System) writeFile(p, v string) error {
	full, err := s.kernelPath(p)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_TRUNC|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(v)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

func (s *System) run(ctx context.Context, argv ...string) ([]byte, error) {
	if s.Run != nil {
		return s.Run(ctx, argv...)
	}
	// ethtool and tc answer at once; one that hangs (a wedged driver)
	// must not hold the journal's lock for ever.
	ctx, cancel := context.WithTimeout(ctx, ToolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// A tool must not outlive a killed tune and write after its revert.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// ToolTimeout bounds one ethtool or tc run.
var ToolTimeout = 30 * time.Second

// knob is one action kind.
type knob interface {
	// check rejects a malformed action before anything is touched.
	check(a doctor.Action) error
	// read returns the state to record, exactly as the kernel shows it.
	read(ctx context.Context, s *System, a doctor.Action) (string, error)
	// apply sets a.Value.
	apply(ctx context.Context, s *System, a doctor.Action) error
	// took says whether state (from read after apply) shows a.Value in
	// force; if not, why.
	took(a doctor.Action, state string) (bool, string)
	// restore puts a recorded state back.
	restore(ctx context.Context, s *System, a doctor.Action, old string) error
}

// owned is a knob whose target must be shown to serve the action's
// device before it is written (the IRQ kind).
type owned interface {
	belongs(s *System, a doctor.Action) error
}

// verifier is a knob with a second look after the read-back (the IRQ
// kind's effective affinity).
type verifier interface {
	verify(s *System, a doctor.Action) (bool, string)
}

var knobs = map[string]knob{}

func registerKnob(kind string, k knob) { knobs[kind] = k }

// Check validates an action without touching anything.
func Check(a doctor.Action) error {
	k, ok := knobs[a.Kind]
	if !ok {
		kinds := make([]string, 0, len(knobs))
		for k := range knobs {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		return fmt.Errorf("action %s: unknown kind %q: want one of %s", a.ID, a.Kind, strings.Join(kinds, ", "))
	}
	if a.ID == "" {
		return fmt.Errorf("action without an id (kind %s, target %s)", a.Kind, a.Target)
	}
	if a.Device != "" {
		if err := checkDevName(a.Device); err != nil {
			return fmt.Errorf("action %s: %w", a.ID, err)
		}
	}
	if err := k.check(a); err != nil {
		return fmt.Errorf("action %s: %w", a.ID, err)
	}
	return nil
}

// Outcome is what one apply or revert did.
type Outcome struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Device string `json:"device,omitempty"`
	Target string `json:"target"`
	Old    string `json:"old"`
	Want   string `json:"want"`
	Got    string `json:"got"`
	// State: an entry state (StateApplied, StateRefused, StateFailed,
	// StateReverted, StateGone) or StateAlready.
	State string `json:"state"`
	Note  string `json:"note,omitempty"`
}

// StateAlready is an Outcome's state when the value was in force before:
// nothing written, no journal entry.
const StateAlready = "already"

// ErrGone is matched when the device an action is about has vanished.
var ErrGone = errors.New("device is gone")

// notHereError is an action for a device this namespace does not have:
// it may never have existed here (a plan of another host), so it is not
// called gone. It matches ErrGone.
type notHereError struct{ id, dev string }

func (e *notHereError) Error() string {
	return fmt.Sprintf("action %s: there is no network device %s here (see 'ip link'): was the plan made on another host, or is the device unplugged?", e.id, e.dev)
}

func (e *notHereError) Unwrap() error { return ErrGone }

// goneError is a kernel object an action names (an IRQ, a NAPI instance)
// that is not here: it says so in words, and matches ErrGone.
type goneError struct{ msg string }

func (e *goneError) Error() string { return e.msg }

func (e *goneError) Unwrap() error { return ErrGone }

// Tuner applies and reverts actions through a Store.
type Tuner struct {
	Sys   *System
	Store *Store
	// Netns is this process's network namespace ("net:[N]").
	Netns string
	// Host identifies this machine (HostID).
	Host string
	// BeforeWrite, if set, is called after the journal has recorded an
	// entry and before the kernel is written (tests use it to stop there).
	BeforeWrite func(a doctor.Action)
	nsLock      *os.File
}

// New opens the journal in dir (taking the lock) for sys. On the live
// host it first takes the lock of this network namespace too: two tunes
// with different state directories would otherwise undo each other.
func New(dir string, sys *System) (*Tuner, error) {
	ns, _ := os.Readlink("/proc/self/ns/net")
	var nsLock *os.File
	if sys.Root == "" || sys.Root == "/" {
		var err error
		if nsLock, err = lockNetns(HostLockDir, ns); err != nil {
			return nil, err
		}
	}
	st, err := Open(dir)
	if err != nil {
		if nsLock != nil {
			nsLock.Close()
		}
		return nil, err
	}
	if nsLock != nil {
		if err := otherJournalLeftovers(nsLock, st.Dir, ns); err != nil {
			st.Close()
			nsLock.Close()
			return nil, err
		}
		recordHolder(nsLock, st.Dir)
	}
	return &Tuner{Sys: sys, Store: st, Netns: ns, Host: HostID(), nsLock: nsLock}, nil
}

// Close releases the journal's lock and the namespace's.
func (t *Tuner) Close() error {
	err := t.Store.Close()
	if t.nsLock != nil {
		t.nsLock.Close()
		t.nsLock = nil
	}
	return err
}

func trim(s string) string { return strings.TrimRight(s, "\n") }

// sameState says whether a state read now is the recorded one; the line
// ends a kernel file has (or a journal written by hand lacks) do not count.
func sameState(now, old string) bool { return strings.TrimSpace(now) == strings.TrimSpace(old) }

// identify returns the device's ifindex and MAC, or ErrGone.
func (s *System) identify(dev string) (int, string, error) {
	if dev == "" {
		return 0, "", nil
	}
	if strings.ContainsAny(dev, "/") || dev == "." || dev == ".." {
		return 0, "", fmt.Errorf("device name %q is not a network device name", dev)
	}
	b, err := s.readFile("/sys/class/net/" + dev + "/ifindex")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, "", fmt.Errorf("%s: %w", dev, ErrGone)
		}
		return 0, "", err
	}
	idx, err := strconv.Atoi(strings.TrimSpace(b))
	if err != nil {
		return 0, "", fmt.Errorf("%s: ifindex %q: %w", dev, b, err)
	}
	mac, _ := s.readFile("/sys/class/net/" + dev + "/address")
	return idx, strings.TrimSpace(mac), nil
}

// Apply makes one change: journal the old value, write, read back. A value
// the kernel refused or rejected is put back at once, and the error says so.
func (t *Tuner) Apply(ctx context.Context, a doctor.Action) (Outcome, error) {
	out := Outcome{ID: a.ID, Kind: a.Kind, Device: a.Device, Target: a.Target, Want: a.Value}
	k, idx, mac, err := t.applicable(a)
	if err != nil {
		return out, err
	}
	cur, err := k.read(ctx, t.Sys, a)
	if err != nil {
		return out, fmt.Errorf("action %s: read %s: %w", a.ID, a.Target, err)
	}
	out.Old, out.Got = cur, cur
	e := Entry{Action: a, Old: cur, State: StatePending, Netns: t.Netns, Host: t.Host, Ifindex: idx, MAC: mac}
	prev := t.Store.active(e.key())
	if ok, _ := k.took(a, cur); ok {
		out.State = StateAlready
		if prev >= 0 {
			out.Old = t.Store.J.Entries[prev].Old
		}
		return out, nil
	}
	if prev >= 0 {
		// Keep the value from before wirespeed's first change.
		e.Old = t.Store.J.Entries[prev].Old
		out.Old = e.Old
		t.Store.J.Entries[prev].State = StateSuperseded
	}
	i := t.Store.add(e)
	if err := t.Store.Save(); err != nil {
		return out, err // nothing written to the kernel
	}
	if t.BeforeWrite != nil {
		t.BeforeWrite(a)
	}
	ent := &t.Store.J.Entries[i]
	werr := k.apply(ctx, t.Sys, a)
	got, rerr := k.read(ctx, t.Sys, a)
	out.Got = got
	ent.Got = got
	switch {
	case werr == nil && rerr == nil:
		ok, why := k.took(a, got)
		if v, has := k.(verifier); ok && has {
			ok, why = v.verify(t.Sys, a)
		}
		if ok {
			ent.State, out.State = StateApplied, StateApplied
			return out, t.Store.Save()
		}
		ent.Note = "refused: " + why
	case werr != nil:
		ent.Note = "rejected: " + werr.Error()
	default:
		ent.Note = "read-back failed: " + rerr.Error()
	}
	return t.putBack(ctx, k, a, ent, prev, werr, rerr, out)
}

// applicable checks that a can be applied here and returns its knob and
// the identity (ifindex, MAC) of its device.
func (t *Tuner) applicable(a doctor.Action) (knob, int, string, error) {
	if err := Check(a); err != nil {
		return nil, 0, "", err
	}
	k := knobs[a.Kind]
	if err := t.Sys.checkCPUs(a); err != nil {
		return nil, 0, "", err
	}
	if o, ok := k.(owned); ok {
		if err := o.belongs(t.Sys, a); err != nil {
			return nil, 0, "", err
		}
	}
	idx, mac, err := t.Sys.identify(a.Device)
	if errors.Is(err, ErrGone) {
		return nil, 0, "", &notHereError{id: a.ID, dev: a.Device}
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("action %s: %w", a.ID, err)
	}
	return k, idx, mac, nil
}

// putBack ends a write that did not apply as asked (ent.Note says how):
// the old value goes back, and the entry ends failed (the kernel rejected
// the write, werr) or refused; if the old value cannot be put back the
// entry stays pending, for revert to try again.
func (t *Tuner) putBack(ctx context.Context, k knob, a doctor.Action, ent *Entry, prev int, werr, rerr error, out Outcome) (Outcome, error) {
	var err error
	if ent.Got != ent.Old || rerr != nil {
		err = k.restore(context.WithoutCancel(ctx), t.Sys, a, ent.Old)
	}
	if err != nil {
		ent.Note += "; restoring the old value failed: " + err.Error()
		_ = t.Store.Save() // stays pending: revert tries again
		return out, fmt.Errorf("action %s: %s (journal keeps the old value %q for 'tune revert')", a.ID, ent.Note, trim(ent.Old))
	}
	if werr != nil {
		ent.State, out.State = StateFailed, StateFailed
	} else {
		ent.State, out.State = StateRefused, StateRefused
	}
	out.Note = ent.Note
	if prev >= 0 {
		// The earlier change is undone too: old is the original value.
		t.Store.J.Entries[prev].Note = "undone when " + a.ID + " was " + ent.State
	}
	if err := t.Store.Save(); err != nil {
		return out, err
	}
	if werr != nil {
		return out, fmt.Errorf("action %s: the kernel rejected %q for %s: %v; the old value is in place: give a value this %s takes", a.ID, a.Value, a.Target, werr, a.Kind)
	}
	return out, nil
}

// Revert puts back the old value of every active entry whose action ID is
// in ids (all active entries when all is set), newest first. Unknown ids
// are an error before anything is touched.
func (t *Tuner) Revert(ctx context.Context, ids []string, all bool) ([]Outcome, error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = false
	}
	var idx []int
	for i := len(t.Store.J.Entries) - 1; i >= 0; i-- {
		e := &t.Store.J.Entries[i]
		if _, ok := want[e.Action.ID]; ok || all {
			want[e.Action.ID] = true
			if e.Active() {
				idx = append(idx, i)
			}
		}
	}
	var unknown []string
	for _, id := range ids {
		if !want[id] {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		return nil, &UnknownIDError{IDs: unknown}
	}
	var outs []Outcome
	var errs []error
	for _, i := range idx {
		o, err := t.revertEntry(ctx, i)
		outs = append(outs, o)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return outs, errors.Join(errs...)
}

// UnknownIDError names action ids the journal does not have.
type UnknownIDError struct{ IDs []string }

func (e *UnknownIDError) Error() string {
	return fmt.Sprintf("no change with id %s in the journal (see 'wirespeed tune status')", strings.Join(e.IDs, ", "))
}

func (t *Tuner) revertEntry(ctx context.Context, i int) (Outcome, error) {
	e := &t.Store.J.Entries[i]
	a := e.Action
	out := Outcome{ID: a.ID, Kind: a.Kind, Device: a.Device, Target: a.Target, Old: e.Old, Want: e.Old}
	if e.Netns != "" && t.Netns != "" && e.Netns != t.Netns {
		return out, fmt.Errorf("%s was changed in network namespace %s, this is %s: run the revert there (ip netns exec NAME wirespeed tune revert)", a.ID, e.Netns, t.Netns)
	}
	if why := foreignHost(e, t.Host); why != "" {
		return out, errors.New(why)
	}
	k := knobs[a.Kind]
	idx, mac, err := t.Sys.identify(a.Device)
	if errors.Is(err, ErrGone) {
		e.State, out.State = StateGone, StateGone
		e.Note = fmt.Sprintf("%s (ifindex %d, MAC %s) is gone; its %s was %q before wirespeed changed it, and a device that comes back starts from its driver's defaults", a.Device, e.Ifindex, e.MAC, a.Target, trim(e.Old))
		out.Note = e.Note
		return out, t.Store.Save()
	}
	if err != nil {
		return out, err
	}
	if o, ok := k.(owned); ok {
		if err := o.belongs(t.Sys, a); err != nil {
			return out, fmt.Errorf("revert %s: %w; nothing was written", a.ID, err)
		}
	}
	if why := otherDevice(e, idx, mac); why != "" {
		// Not the device wirespeed changed: that one is gone, and this one
		// was never touched. Nothing is written to it.
		e.State, out.State = StateGone, StateGone
		e.Note = why + "; the device wirespeed changed is gone and this one is left as it is"
		out.Note = e.Note
		return out, t.Store.Save()
	}
	if a.Device != "" && idx != e.Ifindex {
		out.Note = fmt.Sprintf("%s was re-plugged (ifindex %d -> %d, same MAC %s); writing the recorded value to it", a.Device, e.Ifindex, idx, mac)
	}
	if now, err := k.read(ctx, t.Sys, a); err == nil && sameState(now, e.Old) {
		// Never changed (a crash before the write) or already back.
		e.State, out.State, out.Got = StateReverted, StateReverted, now
		return out, t.Store.Save()
	}
	if err := k.restore(ctx, t.Sys, a, e.Old); err != nil {
		if _, _, gerr := t.Sys.identify(a.Device); errors.Is(gerr, ErrGone) {
			e.State, out.State = StateGone, StateGone
			e.Note = a.Device + " vanished while it was being restored"
			out.Note = e.Note
			return out, t.Store.Save()
		}
		out.State = StateFailed
		return out, fmt.Errorf("revert %s: %w (still in the journal; try again)", a.ID, err)
	}
	got, err := k.read(ctx, t.Sys, a)
	out.Got = got
	if err != nil {
		out.State = StateFailed
		return out, fmt.Errorf("revert %s: read-back: %w", a.ID, err)
	}
	if !sameState(got, e.Old) {
		out.State = StateFailed
		return out, fmt.Errorf("revert %s: wrote %q back but the kernel shows %q (still in the journal)", a.ID, trim(e.Old), trim(got))
	}
	e.State, out.State = StateReverted, StateReverted
	return out, t.Store.Save()
}

// Status is one active change with what the kernel shows now.
type Status struct {
	Entry
	Now string `json:"now"`
	// InForce: the kernel still shows the applied value.
	InForce bool   `json:"in_force"`
	Problem string `json:"problem,omitempty"`
}

// StatusOf reads the current value of every active entry of j.
func StatusOf(ctx context.Context, s *System, j *Journal) []Status {
	var out []Status
	host := HostID()
	for _, e := range j.Entries {
		if !e.Active() {
			continue
		}
		st := Status{Entry: e}
		k := knobs[e.Action.Kind]
		if why := foreignHost(&e, host); why != "" {
			st.Problem = why
		} else if err := Check(e.Action); err != nil {
			st.Problem = err.Error()
		} else if idx, mac, err := s.identify(e.Action.Device); err != nil {
			st.Problem = err.Error()
		} else if why := otherDevice(&e, idx, mac); why != "" {
			st.Problem = why
		} else if e.Action.Device != "" && idx != e.Ifindex {
			st.Problem = fmt.Sprintf("%s has a new ifindex (%d, was %d): re-plugged", e.Action.Device, idx, e.Ifindex)
		} else if now, err := k.read(ctx, s, e.Action); err != nil {
			st.Problem = err.Error()
		} else {
			st.Now = now
			st.InForce, _ = k.took(e.Action, now)
		}
		out = append(out, st)
	}
	return out
}

// Read returns an action's target's current state (for plan), without the journal.
func Read(ctx context.Context, s *System, a doctor.Action) (string, error) {
	if err := Check(a); err != nil {
		return "", err
	}
	return knobs[a.Kind].read(ctx, s, a)
}
