// SPDX-License-Identifier: Apache-2.0

package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

// JournalVersion is the layout of the journal this build writes. A journal
// with a higher version is refused, never rewritten. Version 2 added the
// host an entry was made on; version 1 journals are still read.
const JournalVersion = 2

// maxJournalSize bounds the journal read into memory: thousands of
// entries fit in far less.
const maxJournalSize = 8 << 20

// maxOld bounds a recorded old value (a sysfs line, a qdisc's state).
const maxOld = 64 << 10

// DefaultDir is where the journal and its lock live on a real host.
const DefaultDir = "/var/lib/wirespeed"

const (
	journalName = "tune-journal.json"
	lockName    = "tune.lock"
)

// Entry states. Active entries (pending, applied) hold an old value that
// revert must put back; the others are history.
const (
	// StatePending: the old value is recorded and the write may or may not
	// have happened (a crash leaves this). Revert writes the old value.
	StatePending = "pending"
	// StateApplied: written and read back as asked.
	StateApplied = "applied"
	// StateRefused: the kernel took the write but the read-back showed
	// another value; the old value was put back at once.
	StateRefused = "refused"
	// StateFailed: the kernel rejected the write with an error; the old
	// value was put back (or never left).
	StateFailed = "failed"
	// StateReverted: the old value was put back by revert.
	StateReverted = "reverted"
	// StateGone: the device vanished; there was nothing to put back.
	StateGone = "gone"
	// StateSuperseded: a later entry for the same target took over its old value.
	StateSuperseded = "superseded"
)

// Entry is one change wirespeed made, with what was there before.
type Entry struct {
	Seq    int           `json:"seq"`
	Action doctor.Action `json:"action"`
	// Old is the value exactly as read before the first write (for the
	// qdisc and governor kinds, their own encoding of the state).
	Old   string `json:"old"`
	State string `json:"state"`
	// Got is the value read back after the write.
	Got  string `json:"got,omitempty"`
	Note string `json:"note,omitempty"`
	// Netns is the network namespace the change was made in
	// ("net:[4026531840]"); revert refuses to run from another one.
	Netns string `json:"netns"`
	// Host is the machine the change was made on (/etc/machine-id, else
	// the host name); revert and status refuse an entry of another host.
	Host string `json:"host,omitempty"`
	// Ifindex and MAC identify Device when it was touched, so revert can
	// tell a re-plugged device (same name, new ifindex) from the same one.
	Ifindex int    `json:"ifindex,omitempty"`
	MAC     string `json:"mac,omitempty"`
	Time    string `json:"time"`
	// Kept is set by the closed loop when it decided to keep the change.
	Kept bool `json:"kept,omitempty"`
}

// Active says whether revert still has to put Old back.
func (e *Entry) Active() bool { return e.State == StatePending || e.State == StateApplied }

// key identifies the thing an entry changed.
func (e *Entry) key() string {
	return e.Netns + "|" + e.Action.Kind + "|" + e.Action.Device + "|" + e.Action.Target
}

// Journal is the whole record.
type Journal struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// JournalError is a journal wirespeed will not touch; Recover says what to do.
type JournalError struct {
	Path    string
	Problem string
	Recover string
}

func (e *JournalError) Error() string {
	return fmt.Sprintf("journal %s: %s; %s", e.Path, e.Problem, e.Recover)
}

// ParseJournal decodes a journal. Any problem is a *JournalError: the
// journal is the only record of the old values, so nothing guesses.
func ParseJournal(b []byte, path string) (*Journal, error) {
	recoverHint := fmt.Sprintf("it holds the values to restore, so wirespeed will not overwrite it: read the \"old\" values in it and put them back by hand (or from a backup), then move it aside (mv %s %s.bad) to start a new journal", path, path)
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, &JournalError{path, "cannot be read (" + err.Error() + ")", recoverHint}
	}
	if probe.Version == nil {
		return nil, &JournalError{path, "has no version", recoverHint}
	}
	if *probe.Version > JournalVersion {
		return nil, &JournalError{path, fmt.Sprintf("was written by a newer wirespeed (journal version %d, this build reads up to %d)", *probe.Version, JournalVersion),
			"run that newer wirespeed's 'tune revert --all' or 'tune status', or upgrade this one; the file is left as it is"}
	}
	if *probe.Version < 1 {
		return nil, &JournalError{path, fmt.Sprintf("has version %d", *probe.Version), recoverHint}
	}
	var j Journal
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, &JournalError{path, "cannot be read (" + err.Error() + ")", recoverHint}
	}
	if dec.More() {
		return nil, &JournalError{path, "has data after the journal", recoverHint}
	}
	for i, e := range j.Entries {
		switch e.State {
		case StatePending, StateApplied, StateRefused, StateFailed, StateReverted, StateGone, StateSuperseded:
		default:
			return nil, &JournalError{path, fmt.Sprintf("entry %d has an unknown state %q", i, e.State), recoverHint}
		}
		if _, ok := knobs[e.Action.Kind]; !ok {
			return nil, &JournalError{path, fmt.Sprintf("entry %d has an unknown kind %q", i, e.Action.Kind), recoverHint}
		}
		// A journal decides what revert writes: it is held to the same
		// targets as apply, so no edit of it can point a write elsewhere.
		if err := Check(e.Action); err != nil {
			return nil, &JournalError{path, fmt.Sprintf("entry %d is not a change wirespeed makes (%v)", i, err), recoverHint}
		}
		// An entry is bound to where it was made: revert, status and
		// persist compare these with this host, namespace and device, so
		// an entry stripped of them would pass for one made here.
		if e.Netns == "" {
			return nil, &JournalError{path, fmt.Sprintf("entry %d (%s) names no network namespace, which wirespeed always records", i, e.Action.ID), recoverHint}
		}
		if j.Version >= 2 && e.Host == "" {
			return nil, &JournalError{path, fmt.Sprintf("entry %d (%s) names no host, which wirespeed has recorded since journal version 2", i, e.Action.ID), recoverHint}
		}
		if e.Action.Device != "" && e.Ifindex <= 0 {
			return nil, &JournalError{path, fmt.Sprintf("entry %d (%s) names device %s without its ifindex, which wirespeed always records", i, e.Action.ID, e.Action.Device), recoverHint}
		}
		if len(e.Old) > maxOld || strings.ContainsRune(e.Old, 0) {
			return nil, &JournalError{path, fmt.Sprintf("entry %d has an old value wirespeed cannot have read (%d bytes or a NUL)", i, len(e.Old)), recoverHint}
		}
	}
	return &j, nil
}

// Store is the journal on disk, held under an exclusive lock.
type Store struct {
	Dir  string
	J    *Journal
	lock *os.File
}

// ErrBusy is matched by Open's error when another tune holds the lock.
var ErrBusy = errors.New("another wirespeed tune is running")

// Open takes the lock in dir (created if missing) and loads the journal.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	lp := filepath.Join(dir, lockName)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := lockHolder(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (lock %s held by pid %s): wait for it to finish, or stop it first", ErrBusy, lp, holder)
		}
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	j, err := Load(dir)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Store{Dir: dir, J: j, lock: f}, nil
}

// Load reads the journal in dir without locking (for status and plan); a
// missing journal is an empty one.
func Load(dir string) (*Journal, error) {
	p := filepath.Join(dir, journalName)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return &Journal{Version: JournalVersion, Entries: []Entry{}}, nil
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	b, err := readJournal(p)
	if errors.Is(err, os.ErrNotExist) {
		return &Journal{Version: JournalVersion, Entries: []Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseJournal(b, p)
}

// checkDir refuses a state directory that is not a directory of this user
// that only it can write.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory", dir)
	}
	return checkStateFile("state directory "+dir, fi)
}

// readJournal reads the journal only if it is a regular file of this user,
// not a link, writable by it alone and of a sane size; it never blocks on
// a FIFO or a device.
func readJournal(p string) ([]byte, error) {
	b, pr, err := readStateFile(p, "journal", maxJournalSize)
	if pr != nil {
		return nil, &JournalError{p, pr.problem, pr.recover}
	}
	return b, err
}

// stateProblem is a state file wirespeed will not read, and what to do.
type stateProblem struct{ problem, recover string }

// readStateFile reads a file of the state directory (the journal, the
// persist manifest) as the record it must be: a regular file, not a link,
// of this user and writable by it alone, at most limit bytes; the open
// never blocks on a FIFO or a device. what names the file in the advice.
func readStateFile(p, what string, limit int64) ([]byte, *stateProblem, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &stateProblem{"is a symbolic link", "the " + what + " must be a regular file wirespeed wrote; move the link aside"}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &stateProblem{"is not a regular file (" + fi.Mode().Type().String() + ")", "the " + what + " must be a regular file wirespeed wrote; move it aside"}, nil
	}
	if err := checkStateFile(what+" "+p, fi); err != nil {
		return nil, nil, err
	}
	if fi.Size() > limit {
		return nil, &stateProblem{fmt.Sprintf("is %d bytes, more than any %s wirespeed writes (%d)", fi.Size(), what, limit), "check what it is; move it aside"}, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if int64(len(b)) > limit {
		return nil, &stateProblem{"grew past the size limit while being read", "move it aside"}, nil
	}
	return b, nil, nil
}

// Path is the journal file.
func (s *Store) Path() string { return filepath.Join(s.Dir, journalName) }

// Save writes the journal atomically and durably: a temporary file,
// fsynced, renamed over the journal, then the directory fsynced.
func (s *Store) Save() error {
	if s.lock == nil {
		return errors.New("journal: store is closed")
	}
	s.J.Version = JournalVersion
	b, err := json.MarshalIndent(s.J, "", " ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	tmp := s.Path() + ".tmp"
	_ = os.Remove(tmp) // never write through a link left in its place
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("journal: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("journal: fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp, s.Path()); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	d, err := os.Open(s.Dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: fsync %s: %w", s.Dir, err)
	}
	return nil
}

// Close releases the lock.
func (s *Store) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// add appends an entry and returns its index.
func (s *Store) add(e Entry) int {
	e.Seq = 1
	if n := len(s.J.Entries); n > 0 {
		e.Seq = s.J.Entries[n-1].Seq + 1
	}
	e.Time = time.Now().UTC().Format(time.RFC3339)
	s.J.Entries = append(s.J.Entries, e)
	return len(s.J.Entries) - 1
}

// active returns the index of the active entry for key, or -1.
func (s *Store) active(key string) int {
	for i := len(s.J.Entries) - 1; i >= 0; i-- {
		if s.J.Entries[i].Active() && s.J.Entries[i].key() == key {
			return i
		}
	}
	return -1
}
