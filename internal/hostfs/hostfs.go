// SPDX-License-Identifier: Apache-2.0

// Package hostfs reads a host's /sys and /proc through a root directory, so
// the same readers work on the live host ("/"), on an unpacked snapshot and on
// a hand-built test fixture. A Recorder attached to a live FS remembers every
// file, directory listing, symlink and read error, which is what a snapshot
// (see snapshot.go) stores: exactly the files a command read, nothing more.
package hostfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// FS reads files below Root. Paths given to its methods are absolute host
// paths ("/sys/class/net"); they are resolved inside Root, never outside it.
type FS struct {
	Root string
	rec  *Recorder
	// errs replays read errors recorded in a snapshot (path -> errno), for
	// files that exist but whose read fails (xps_cpus on a one-queue device
	// answers ENOENT, threaded on a device without NAPI EOPNOTSUPP).
	errs map[string]syscall.Errno
	live bool
}

// Live returns an FS over the running host's root directory.
func Live() *FS { return &FS{Root: "/", live: true} }

// Dir returns an FS over a directory holding a sys/ and proc/ tree.
func Dir(root string) *FS { return &FS{Root: root} }

// IsLive reports whether the FS reads the running host (and so may be
// written to by probes that need it).
func (f *FS) IsLive() bool { return f.live }

// Quiet returns a view of the same root that records nothing: for scans
// (every process's comm) whose misses should not end up in a snapshot.
func (f *FS) Quiet() *FS {
	q := *f
	q.rec = nil
	return &q
}

// Record attaches a recorder; every later read is recorded in it.
func (f *FS) Record(r *Recorder) { f.rec = r }

// norm makes p absolute without cleaning it lexically: "device/.." must
// follow the device symlink first and then go up, as the kernel does.
func norm(p string) string {
	return "/" + strings.TrimLeft(p, "/")
}

func (f *FS) host(p string) string {
	p = norm(p)
	if f.Root == "/" {
		return p
	}
	return strings.TrimRight(f.Root, "/") + filepath.FromSlash(p)
}

// ReadFile returns the content of the host file p.
func (f *FS) ReadFile(p string) ([]byte, error) {
	p = norm(p)
	if f.errs != nil {
		if real, err := f.resolve(p); err == nil {
			if e, ok := f.errs[real]; ok {
				return nil, &fs.PathError{Op: "read", Path: p, Err: e}
			}
		}
	}
	op, err := f.osPath(p)
	var b []byte
	if err == nil {
		b, err = os.ReadFile(op)
	}
	if err != nil {
		err = f.hostPathError(err, p)
	}
	if f.rec != nil {
		f.rec.file(f, p, b, err)
	}
	return b, err
}

// ReadString returns the trimmed content of p.
func (f *FS) ReadString(p string) (string, error) {
	b, err := f.ReadFile(p)
	return strings.TrimSpace(string(b)), err
}

// ReadDir returns the sorted entry names of directory p.
func (f *FS) ReadDir(p string) ([]string, error) {
	p = norm(p)
	op, err := f.osPath(p)
	var ents []os.DirEntry
	if err == nil {
		ents, err = os.ReadDir(op)
	}
	if err != nil {
		err = f.hostPathError(err, p)
		if f.rec != nil {
			f.rec.touch(f, p)
		}
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if f.rec != nil {
		f.rec.dir(f, p, ents)
	}
	return names, nil
}

// Readlink returns the target of symlink p.
func (f *FS) Readlink(p string) (string, error) {
	p = norm(p)
	var t string
	dir, err := f.osPath(path.Dir(p))
	if err == nil {
		t, err = os.Readlink(filepath.Join(dir, path.Base(p)))
	}
	if err != nil {
		err = f.hostPathError(err, p)
	}
	if f.rec != nil {
		f.rec.touch(f, p)
	}
	return t, err
}

// Exists reports whether p exists (following symlinks).
func (f *FS) Exists(p string) bool {
	p = norm(p)
	op, err := f.osPath(p)
	if err == nil {
		_, err = os.Stat(op)
	}
	if f.rec != nil {
		f.rec.touch(f, p)
	}
	return err == nil
}

// IsDir reports whether p is a directory (following symlinks).
func (f *FS) IsDir(p string) bool {
	p = norm(p)
	op, err := f.osPath(p)
	var st os.FileInfo
	if err == nil {
		st, err = os.Stat(op)
	}
	if f.rec != nil {
		f.rec.touch(f, p)
	}
	return err == nil && st.IsDir()
}

// RealPath resolves all symlinks in p inside the root and returns the
// resulting host path ("/sys/devices/...").
func (f *FS) RealPath(p string) (string, error) {
	p = norm(p)
	if f.rec != nil {
		f.rec.touch(f, p)
	}
	return f.resolve(p)
}

// WriteFile writes data to the live host file p. It refuses to write below
// anything but the live root, so a snapshot is never "written to".
func (f *FS) WriteFile(p string, data []byte) error {
	if !f.live {
		return errors.New("hostfs: refusing to write to a snapshot")
	}
	fh, err := os.OpenFile(f.host(p), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := fh.Write(data)
	cerr := fh.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// osPath maps host path p to a path for the OS. On the live host the OS
// resolves symlinks itself; below any other root wirespeed resolves them
// (inside the root) first, so a crafted snapshot cannot point outside it.
func (f *FS) osPath(p string) (string, error) {
	if f.live {
		return f.host(p), nil
	}
	real, err := f.walk(p, nil)
	if err != nil {
		return "", err
	}
	return f.host(real), nil
}

func (f *FS) hostPathError(err error, p string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: p, Err: pe.Err}
	}
	return err
}

// resolve walks p component by component inside the root, following
// symlinks (relative ones from their directory, absolute ones from the
// root), and returns the resolved host path. visit, if non-nil, is called for
// every symlink and directory met on the way.
func (f *FS) resolve(p string) (string, error) {
	return f.walk(p, nil)
}

type visitor func(hostPath string, info os.FileInfo, target string)

func (f *FS) walk(p string, visit visitor) (string, error) {
	parts := strings.Split(strings.TrimPrefix(norm(p), "/"), "/")
	cur := "/"
	hops := 0
	for i := 0; i < len(parts); i++ {
		if parts[i] == "" || parts[i] == "." {
			continue
		}
		if parts[i] == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, parts[i])
		info, err := os.Lstat(f.host(next))
		if err != nil {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: underlying(err)}
		}
		if info.Mode()&os.ModeSymlink != 0 {
			hops++
			if hops > 40 {
				return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
			}
			target, err := os.Readlink(f.host(next))
			if err != nil {
				return "", err
			}
			if visit != nil {
				visit(next, info, target)
			}
			var base string
			if path.IsAbs(target) {
				base = path.Clean(target)
			} else {
				base = path.Join(cur, target)
			}
			rest := append(strings.Split(strings.TrimPrefix(base, "/"), "/"), parts[i+1:]...)
			parts = rest
			cur = "/"
			i = -1
			continue
		}
		if visit != nil {
			visit(next, info, "")
		}
		cur = next
	}
	return cur, nil
}

func underlying(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Recorder remembers what was read from a live FS, keyed by resolved host
// path, so the snapshot can rebuild the same tree elsewhere.
type Recorder struct {
	mu    sync.Mutex
	files map[string][]byte
	errs  map[string]syscall.Errno
	dirs  map[string]bool
	links map[string]string
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		files: map[string][]byte{},
		errs:  map[string]syscall.Errno{},
		dirs:  map[string]bool{},
		links: map[string]string{},
	}
}

// path records the symlinks and directories on the way to p and returns
// p's resolved path ("" if p does not exist).
func (r *Recorder) path(f *FS, p string) string {
	real, err := f.walk(p, func(hp string, info os.FileInfo, target string) {
		if target != "" {
			r.links[hp] = target
		} else if info.IsDir() {
			r.dirs[hp] = true
		}
	})
	if err != nil {
		return ""
	}
	return real
}

func (r *Recorder) touch(f *FS, p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.path(f, p)
}

func (r *Recorder) file(f *FS, p string, b []byte, readErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	real := r.path(f, p)
	if real == "" {
		return // did not exist: absent in the snapshot too
	}
	delete(r.dirs, real)
	if readErr != nil {
		var errno syscall.Errno
		if errors.As(readErr, &errno) {
			r.errs[real] = errno
			if _, ok := r.files[real]; !ok {
				r.files[real] = nil
			}
		}
		return
	}
	r.files[real] = append([]byte(nil), b...)
}

func (r *Recorder) dir(f *FS, p string, ents []os.DirEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	real := r.path(f, p)
	if real == "" {
		return
	}
	r.dirs[real] = true
	for _, e := range ents {
		child := path.Join(real, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			if t, err := os.Readlink(f.host(child)); err == nil {
				r.links[child] = t
			}
		case e.IsDir():
			r.dirs[child] = true
		default:
			if _, ok := r.files[child]; !ok {
				if _, bad := r.errs[child]; !bad {
					r.files[child] = nil // listed, never read: exists, empty
				}
			}
		}
	}
}
