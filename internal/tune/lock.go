// SPDX-License-Identifier: Apache-2.0

// The lock of a network namespace: one live tune at a time in it, and the
// journal it writes, for the next tune to find a killed one's leftovers.

package tune

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// recordHolder writes who holds the namespace's lock and which journal it
// writes, for a busy message and for the next tune to find its leftovers.
func recordHolder(f *os.File, dir string) {
	abs, _ := filepath.Abs(dir)
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d\nstate %s\n", os.Getpid(), abs)), 0)
}

// otherJournalLeftovers refuses to start when the last tune of this
// namespace wrote another journal that still has changes no run decided on
// (a tune killed mid-trial): this tune would take them for the host's own
// state. Reverting them there, or keeping them on purpose, comes first.
func otherJournalLeftovers(f *os.File, dir, ns string) error {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	var prev string
	for _, line := range strings.Split(string(b[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "state "); ok {
			prev = v
		}
	}
	abs, _ := filepath.Abs(dir)
	if prev == "" || prev == abs {
		return nil
	}
	j, err := Load(prev) // a journal that is gone loads as empty
	if err != nil {
		// Unreadable is not empty: it may hold a killed trial's change.
		return fmt.Errorf("the last tune in this network namespace used the journal in %s, which cannot be read (%w): it may hold changes still in force; check it with 'wirespeed tune status --state-dir %s', or move that directory aside if it is not wirespeed's", prev, err, prev)
	}
	var ids []string
	for _, e := range j.Entries {
		if e.Active() && !e.Kept && (e.Netns == "" || e.Netns == ns) {
			ids = append(ids, e.Action.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return fmt.Errorf("the last tune in this network namespace used the journal in %s and left changes no run decided on (%s) - an interrupted tune's, or changes a revert could not put back: inspect them with 'wirespeed tune status --state-dir %s'; put them back with 'wirespeed tune revert --all --state-dir %s', or, for one that cannot be put back (or that you want), keep it: 'wirespeed tune revert --keep ID --state-dir %s'", prev, strings.Join(ids, ", "), prev, prev, prev)
}

// HostLockDir holds the per-network-namespace locks (tmpfs: a reboot,
// which undoes every change, clears them).
var HostLockDir = "/run/wirespeed"

// lockNetns takes the lock of network namespace ns ("net:[N]") in dir.
func lockNetns(dir, ns string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock directory %s: %w", dir, err)
	}
	id := strings.Trim(strings.TrimPrefix(ns, "net:"), "[]")
	if id == "" {
		id = "unknown"
	}
	lp := filepath.Join(dir, "tune-net-"+id+".lock")
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file %s: %w", lp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := lockHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w in this network namespace (%s, lock %s held by %s): two tunes would undo each other's changes even with different --state-dir; wait for it to finish, or stop it first", ErrBusy, ns, lp, holder)
		}
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	return f, nil
}

// lockHolder is what a held lock file says of its holder (a pid), read
// from the open file and bounded: a lock file another program filled (a
// 2 GiB one hung the busy message) yields its first bytes, with control
// characters shown escaped.
func lockHolder(f *os.File) string {
	b := make([]byte, 64)
	n, _ := f.ReadAt(b, 0)
	s := strings.TrimSpace(string(b[:n]))
	if n == len(b) {
		s += "..."
	}
	if s == "" {
		return "an unknown process"
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
