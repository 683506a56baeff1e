// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// maxOpenFiles bounds the files openFiles keeps open; past it, files are
// opened for each read as usual.
const maxOpenFiles = 512

// openFiles keeps the files a scrape re-reads (BQL, knobs, /proc counters)
// open between scrapes on the live host and reads them again from offset 0:
// sysfs and procfs generate a file's content anew on every read at offset
// 0, so one pread replaces open, read and close. A file whose read fails
// (its device or thread is gone) is closed and forgotten; a full snapshot
// closes them all, since its devices may be others.
type openFiles struct {
	fs    *hostfs.FS
	files map[string]*os.File
	buf   []byte
}

func (o *openFiles) read(p string) ([]byte, error) {
	if !o.fs.IsLive() {
		return o.fs.ReadFile(p)
	}
	f, ok := o.files[p]
	if !ok {
		if len(o.files) >= maxOpenFiles {
			return o.fs.ReadFile(p)
		}
		var err error
		if f, err = os.Open(p); err != nil {
			return nil, err
		}
		if o.files == nil {
			o.files = map[string]*os.File{}
		}
		o.files[p] = f
	}
	if o.buf == nil {
		o.buf = make([]byte, 4096)
	}
	n := 0
	for {
		m, err := f.ReadAt(o.buf[n:], int64(n))
		n += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			delete(o.files, p)
			return nil, err
		}
		if n == len(o.buf) {
			o.buf = append(o.buf, make([]byte, len(o.buf))...)
		}
	}
	return append([]byte(nil), o.buf[:n]...), nil
}

// readString is read, trimmed.
func (o *openFiles) readString(p string) (string, error) {
	b, err := o.read(p)
	return strings.TrimSpace(string(b)), err
}

// asRecorded reads p in the form inspect records a value: the trimmed text,
// or "" and the error's name.
func (o *openFiles) asRecorded(p string) (string, string) {
	s, err := o.readString(p)
	if err != nil {
		return "", inspect.ErrName(err)
	}
	return s, ""
}

// rawOrErr reads p as inspect records a NAPI knob: the text or "error: NAME".
func (o *openFiles) rawOrErr(p string) string {
	s, e := o.asRecorded(p)
	if e != "" {
		return "error: " + e
	}
	return s
}

func (o *openFiles) closeAll() {
	for p, f := range o.files {
		f.Close()
		delete(o.files, p)
	}
}
