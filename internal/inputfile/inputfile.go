// SPDX-License-Identifier: Apache-2.0

// Package inputfile reads the files a user hands wirespeed (results,
// reports, action lists, journals) as untrusted input: regular files only,
// opened without blocking (a FIFO never hangs the open), and never more
// than a limit per kind of input, with an error that says which.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Limits per kind of input. Each is far above what wirespeed writes: a
// bench result of hundreds of repetitions is a few MB.
const (
	ResultLimit  = 256 << 20 // bench results (JSON, possibly with per-interval series)
	ReportLimit  = 64 << 20  // doctor reports
	ActionsLimit = 16 << 20  // --actions lists
)

// Error is an input wirespeed will not read.
type Error struct {
	Path, What, Problem string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s %s", e.What, e.Path, e.Problem)
}

// ErrNotRegular is matched for a FIFO, device, socket or directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched for a file over its kind's limit.
var ErrTooLarge = errors.New("larger than the limit")

// Read returns path's contents if it is a regular file (symbolic links
// are followed, as a user expects of a file they name) of at most limit
// bytes. what names the kind of input in errors ("result", "--actions").
func Read(path, what string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		kind := "a " + describe(fi.Mode())
		return nil, fmt.Errorf("%w: %w", &Error{path, what, "is " + kind + ", not a regular file: give the file itself"}, ErrNotRegular)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w: %w", &Error{path, what, fmt.Sprintf("is %d bytes, more than the %d a %s can be: check that it is the file you meant", fi.Size(), limit, what)}, ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %w", &Error{path, what, fmt.Sprintf("grew past %d bytes while being read", limit)}, ErrTooLarge)
	}
	return b, nil
}

func describe(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
