// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// A run is one file: experiments/NAME/data/RUN.tar.gz holds the directory
// RUN the run wrote (experiments/archive-run.sh makes it). The functions
// below read the file system as if every such archive were that directory
// again, so an experiment names data/RUN/vm.json whether the run is still
// a directory (one being written) or already its archive: Open, ReadRaw,
// Stat, ReadDir and Glob stand for os.Open, os.ReadFile, os.Stat,
// os.ReadDir and filepath.Glob. A real directory wins over an archive of
// the same name. Only an archive directly under a directory named data is
// a run; an archive inside a run (a run's own inspect.tar.gz) is a file.

// ArchiveExt is the ending of a run's archive.
const ArchiveExt = ".tar.gz"

// archive is one run read into memory: files by their path inside the
// run ("a/b.json"), and each directory's entries ("" is the run's own).
type archive struct {
	files map[string][]byte
	dirs  map[string]map[string]bool
}

var (
	archivesMu sync.Mutex
	archives   = map[string]*archive{} // by the archive's path
)

// loadArchive reads the archive at file, run being its directory's name.
func loadArchive(file, run string) (*archive, error) {
	archivesMu.Lock()
	defer archivesMu.Unlock()
	if a, ok := archives[file]; ok {
		return a, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	a := &archive{files: map[string][]byte{}, dirs: map[string]map[string]bool{"": {}}}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		top, inner, _ := strings.Cut(name, "/")
		if top != run || strings.HasPrefix(inner, "../") {
			return nil, fmt.Errorf("%s: %s is not under %s/", file, h.Name, run)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			a.addDir(inner)
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", file, h.Name, err)
			}
			a.files[inner] = b
			a.addDir(path.Dir(inner))
			a.dirs[dirKey(path.Dir(inner))][path.Base(inner)] = true
		default:
			return nil, fmt.Errorf("%s: %s: only directories and regular files belong in a run", file, h.Name)
		}
	}
	archives[file] = a
	return a, nil
}

func dirKey(d string) string {
	if d == "." {
		return ""
	}
	return d
}

// addDir records d and its parents as directories.
func (a *archive) addDir(d string) {
	for d = dirKey(d); ; {
		if a.dirs[d] == nil {
			a.dirs[d] = map[string]bool{}
		}
		if d == "" {
			return
		}
		parent := dirKey(path.Dir(d))
		if a.dirs[parent] == nil {
			a.dirs[parent] = map[string]bool{}
		}
		a.dirs[parent][path.Base(d)] = true
		d = parent
	}
}

// inArchive finds the run archive that name lies in when name is not on
// disk itself: the archive, and name's path inside the run ("" for the
// run's own directory). a is nil when no archive holds name's place.
func inArchive(name string) (a *archive, inner string, err error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, "", err
	}
	for p := abs; p != filepath.Dir(p); p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			return nil, "", nil // on disk, or missing from a directory on disk
		}
		if filepath.Base(filepath.Dir(p)) != "data" {
			continue
		}
		file := p + ArchiveExt
		if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
			continue
		}
		a, err := loadArchive(file, filepath.Base(p))
		if err != nil {
			return nil, "", err
		}
		rel, _ := filepath.Rel(p, abs)
		return a, dirKey(filepath.ToSlash(rel)), nil
	}
	return nil, "", nil
}

func notExist(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

// ReadRaw is os.ReadFile through run archives: name's bytes as they are.
func ReadRaw(name string) ([]byte, error) {
	a, inner, err := inArchive(name)
	switch {
	case err != nil:
		return nil, err
	case a == nil:
		return os.ReadFile(name)
	}
	if b, ok := a.files[inner]; ok {
		return b, nil
	}
	return nil, notExist("open", name)
}

// info describes a file or directory inside a run archive: its mode and
// time are the archive's fixed ones, not the original's.
type info struct {
	name string
	size int64
	dir  bool
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) ModTime() time.Time { return time.Unix(0, 0) }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// Stat is os.Stat through run archives.
func Stat(name string) (fs.FileInfo, error) {
	a, inner, err := inArchive(name)
	switch {
	case err != nil:
		return nil, err
	case a == nil:
		return os.Stat(name)
	}
	if _, ok := a.dirs[inner]; ok {
		return info{name: filepath.Base(name), dir: true}, nil
	}
	if b, ok := a.files[inner]; ok {
		return info{name: filepath.Base(name), size: int64(len(b))}, nil
	}
	return nil, notExist("stat", name)
}

// ReadDir is os.ReadDir through run archives: in a data directory, each
// run archive RUN.tar.gz is listed as the directory RUN.
func ReadDir(name string) ([]fs.DirEntry, error) {
	a, inner, err := inArchive(name)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return readDiskDir(name)
	}
	kids, ok := a.dirs[inner]
	if !ok {
		return nil, notExist("open", name)
	}
	var out []fs.DirEntry
	for k := range kids {
		p := path.Join(inner, k)
		_, dir := a.dirs[p]
		out = append(out, fs.FileInfoToDirEntry(info{name: k, size: int64(len(a.files[p])), dir: dir}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func readDiskDir(name string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(name)
	if err != nil || filepath.Base(name) != "data" {
		return ents, err
	}
	onDisk := map[string]bool{}
	for _, e := range ents {
		onDisk[e.Name()] = true
	}
	out := ents[:0]
	for _, e := range ents {
		run, ok := strings.CutSuffix(e.Name(), ArchiveExt)
		switch {
		case !ok || !e.Type().IsRegular():
			out = append(out, e)
		case !onDisk[run]:
			out = append(out, fs.FileInfoToDirEntry(info{name: run, dir: true}))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// file is an open file inside a run archive.
type file struct {
	*bytes.Reader
	info info
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// Open is os.Open through run archives, for reading a file.
func Open(name string) (fs.File, error) {
	a, inner, err := inArchive(name)
	switch {
	case err != nil:
		return nil, err
	case a == nil:
		return os.Open(name)
	}
	b, ok := a.files[inner]
	if !ok {
		return nil, notExist("open", name)
	}
	return &file{Reader: bytes.NewReader(b), info: info{name: filepath.Base(name), size: int64(len(b))}}, nil
}

// rootFS is the whole file system, seen through run archives, for fs.Glob.
type rootFS struct{}

func (rootFS) Open(name string) (fs.File, error)          { return Open("/" + name) }
func (rootFS) Stat(name string) (fs.FileInfo, error)      { return Stat("/" + name) }
func (rootFS) ReadDir(name string) ([]fs.DirEntry, error) { return ReadDir("/" + name) }

// Glob is filepath.Glob through run archives.
func Glob(pattern string) ([]string, error) {
	abs, err := filepath.Abs(pattern)
	if err != nil {
		return nil, err
	}
	m, err := fs.Glob(rootFS{}, strings.TrimPrefix(filepath.ToSlash(abs), "/"))
	if err != nil {
		return nil, err
	}
	for i := range m {
		m[i] = "/" + m[i]
		if !filepath.IsAbs(pattern) {
			wd, _ := os.Getwd()
			if r, err := filepath.Rel(wd, m[i]); err == nil {
				m[i] = r
			}
		}
	}
	return m, nil
}
