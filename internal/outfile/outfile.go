// SPDX-License-Identifier: Apache-2.0

// Package outfile writes the files wirespeed's commands produce (results,
// reports, exports). A regular file, or a name that does not exist yet, is
// written through a temporary file in its directory and renamed over it, so
// that a crash never leaves half a file. A character device or a FIFO
// (/dev/null, /dev/full, a named pipe) is written through: opened, written,
// closed, its write errors returned - never replaced. Anything else (a
// directory, a socket, a block device) is refused. A symbolic link is
// followed: the file it names is what is written or replaced.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Error says why a path cannot be written, and what to do.
type Error struct {
	Path string
	Why  string
}

func (e *Error) Error() string { return fmt.Sprintf("cannot write %s: %s", e.Path, e.Why) }

// throughDevice: written in place, never replaced.
func throughDevice(m fs.FileMode) bool {
	return m&fs.ModeCharDevice != 0 || m&fs.ModeNamedPipe != 0
}

// kind names a file type that is refused.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// notAFile refuses a path that is neither a regular file nor a device
// written through.
func notAFile(path string, m fs.FileMode) error {
	return &Error{Path: path, Why: "it is " + kind(m) + ", not a file; give a file name (or a character device such as /dev/null, or - for standard output where the command takes it)"}
}

// target resolves path through symbolic links; a name that does not exist
// (or a dangling link's) is returned as given.
func target(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		return t
	}
	return path
}

// Check says whether path can be written, without writing it (the check a
// command makes before a long measurement). It writes nothing to path.
func Check(path string) error {
	if path == "" {
		return &Error{Path: `""`, Why: "an empty name; give a file name"}
	}
	t := target(path)
	st, err := os.Stat(t)
	switch {
	case err == nil && throughDevice(st.Mode()):
		if err := syscall.Access(t, 2 /* W_OK */); err != nil {
			return &Error{Path: path, Why: fmt.Sprintf("%v", err)}
		}
		return nil
	case err == nil && !st.Mode().IsRegular():
		return notAFile(path, st.Mode())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return &Error{Path: path, Why: unwrap(err).Error()}
	}
	dir := filepath.Dir(t)
	dst, err := os.Stat(dir)
	if err != nil {
		return &Error{Path: path, Why: fmt.Sprintf("its directory %s: %v; give a path in a writable directory", dir, unwrap(err))}
	}
	if !dst.IsDir() {
		return &Error{Path: path, Why: fmt.Sprintf("%s is not a directory", dir)}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(t)+".*")
	if err != nil {
		return &Error{Path: path, Why: fmt.Sprintf("%v; give a path in a writable directory", unwrap(err))}
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	if st != nil && st.Mode().Perm()&0o222 == 0 && os.Geteuid() != 0 {
		return &Error{Path: path, Why: "it is read-only"}
	}
	return nil
}

// Write writes b to path: through a character device or FIFO, else by a
// temporary file renamed over the (regular) file path names. (It does not
// make Check's probe: its own temporary file is the probe.)
func Write(path string, b []byte) error {
	if path == "" {
		return &Error{Path: `""`, Why: "an empty name; give a file name"}
	}
	t := target(path)
	if st, err := os.Stat(t); err == nil && !throughDevice(st.Mode()) && !st.Mode().IsRegular() {
		return notAFile(path, st.Mode())
	}
	if st, err := os.Stat(t); err == nil && throughDevice(st.Mode()) {
		f, err := os.OpenFile(t, os.O_WRONLY, 0)
		if err != nil {
			return &Error{Path: path, Why: unwrap(err).Error()}
		}
		_, werr := f.Write(b)
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			return &Error{Path: path, Why: unwrap(err).Error() + "; give another file"}
		}
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(t), "."+filepath.Base(t)+".*")
	if err != nil {
		return &Error{Path: path, Why: fmt.Sprintf("its directory %s: %v; give a path in a writable directory", filepath.Dir(t), unwrap(err))}
	}
	tmp := f.Name()
	fail := func(err error) error {
		os.Remove(tmp)
		return &Error{Path: path, Why: unwrap(err).Error()}
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, t); err != nil {
		return fail(err)
	}
	return nil
}

// unwrap drops the path an *os.PathError names (the caller names it).
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
