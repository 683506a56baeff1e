// SPDX-License-Identifier: Apache-2.0

package hostfs

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Snapshot file layout (a gzip'd tar):
//
//	meta.json     Meta: format name and version, when, where, by what
//	errors.json   {"/sys/.../xps_cpus": "ENOENT"}: reads that failed
//	answers.json  netlink answers and probe results, owned by the caller
//	root/...      the recorded sys/ and proc/ tree: files, dirs, symlinks
const (
	SnapshotFormat  = "wirespeed-snapshot"
	SnapshotVersion = 1
	maxEntryBytes   = 16 << 20
	maxEntries      = 500000
	maxTotalBytes   = 512 << 20
)

// Meta describes a snapshot.
type Meta struct {
	Format    string    `json:"format"`
	Version   int       `json:"version"`
	Created   time.Time `json:"created"`
	Hostname  string    `json:"hostname"`
	Kernel    string    `json:"kernel"`
	Wirespeed string    `json:"wirespeed"`
	Command   string    `json:"command"`
}

// WriteSnapshot writes everything rec recorded, plus answers (any JSON
// value), as a snapshot to w.
func WriteSnapshot(w io.Writer, rec *Recorder, meta Meta, answers any) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	meta.Format, meta.Version = SnapshotFormat, SnapshotVersion
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	now := meta.Created
	addJSON := func(name string, v any) error {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	}
	if err := addJSON("meta.json", meta); err != nil {
		return err
	}
	errs := map[string]string{}
	for p, e := range rec.errs {
		errs[p] = unix.ErrnoName(e)
	}
	if err := addJSON("errors.json", errs); err != nil {
		return err
	}
	if err := addJSON("answers.json", answers); err != nil {
		return err
	}
	// Directories first (sorted, so parents precede children), then links
	// and files.
	type ent struct {
		p    string
		kind byte
	}
	var ents []ent
	for p := range rec.dirs {
		ents = append(ents, ent{p, tar.TypeDir})
	}
	for p := range rec.links {
		ents = append(ents, ent{p, tar.TypeSymlink})
	}
	for p := range rec.files {
		if !rec.dirs[p] {
			ents = append(ents, ent{p, tar.TypeReg})
		}
	}
	sort.Slice(ents, func(i, j int) bool {
		if (ents[i].kind == tar.TypeDir) != (ents[j].kind == tar.TypeDir) {
			return ents[i].kind == tar.TypeDir
		}
		return ents[i].p < ents[j].p
	})
	for _, e := range ents {
		name := "root" + e.p
		switch e.kind {
		case tar.TypeDir:
			err := tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, ModTime: now, Typeflag: tar.TypeDir})
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			err := tw.WriteHeader(&tar.Header{Name: name, Linkname: rec.links[e.p], Mode: 0o777, ModTime: now, Typeflag: tar.TypeSymlink})
			if err != nil {
				return err
			}
		default:
			b := rec.files[e.p]
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
				return err
			}
			if _, err := tw.Write(b); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// Snapshot is a snapshot unpacked into a temporary directory.
type Snapshot struct {
	Meta    Meta
	Answers json.RawMessage
	FS      *FS
	dir     string
}

// Close removes the unpacked tree.
func (s *Snapshot) Close() error { return os.RemoveAll(s.dir) }

// ErrNotSnapshot is returned (wrapped) for files that are not wirespeed
// snapshots of a version this build reads.
var ErrNotSnapshot = errors.New("not a wirespeed snapshot")

// OpenSnapshot unpacks the snapshot file at p into a temporary directory.
// Entries that would land outside the tree, or write through a symlink, are
// refused, as are files of another format or a newer version.
func OpenSnapshot(p string) (*Snapshot, error) {
	// A FIFO must not hang the open, nor a device feed it for ever.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w: it is not a regular file (%s); give the .tar.gz that 'wirespeed inspect --save' wrote", p, ErrNotSnapshot, fi.Mode().Type())
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (not gzip: %v)", p, ErrNotSnapshot, err)
	}
	dir, err := os.MkdirTemp("", "wirespeed-snapshot-")
	if err != nil {
		return nil, err
	}
	s := &Snapshot{dir: dir}
	fail := func(format string, a ...any) (*Snapshot, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w: %s", p, ErrNotSnapshot, fmt.Sprintf(format, a...))
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var errNames map[string]string
	var total int64
	entries := 0
	tr := tar.NewReader(zr)
	first := true
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail("corrupt archive: %v", err)
		}
		if first && h.Name != "meta.json" {
			return fail("first entry is %q, want meta.json", h.Name)
		}
		first = false
		if h.Size > maxEntryBytes || total+h.Size > maxTotalBytes {
			return fail("entry %q too large", h.Name)
		}
		if entries++; entries > maxEntries {
			return fail("more than %d entries; a host's snapshot has far fewer", maxEntries)
		}
		total += h.Size
		switch h.Name {
		case "meta.json", "errors.json", "answers.json":
			b, err := io.ReadAll(tr)
			if err != nil {
				return fail("corrupt archive: %v", err)
			}
			switch h.Name {
			case "meta.json":
				if err := json.Unmarshal(b, &s.Meta); err != nil {
					return fail("its meta.json is damaged: %s", JSONProblem(err))
				}
				if s.Meta.Format != SnapshotFormat {
					return fail("format %q, want %q", s.Meta.Format, SnapshotFormat)
				}
				if s.Meta.Version > SnapshotVersion || s.Meta.Version < 1 {
					return fail("format version %d; this wirespeed reads version %d (upgrade wirespeed)", s.Meta.Version, SnapshotVersion)
				}
			case "errors.json":
				if err := json.Unmarshal(b, &errNames); err != nil {
					return fail("its errors.json is damaged: %s", JSONProblem(err))
				}
			case "answers.json":
				s.Answers = json.RawMessage(b)
			}
			continue
		}
		rel, ok := strings.CutPrefix(h.Name, "root/")
		if !ok {
			return fail("unexpected entry %q", h.Name)
		}
		rel = strings.TrimSuffix(rel, "/")
		clean := path.Clean("/" + rel)
		if rel == "" || clean != "/"+rel || strings.Contains(rel, "..") {
			return fail("unsafe path %q", h.Name)
		}
		target := filepath.Join(root, filepath.FromSlash(clean))
		if err := noLinkParents(root, target); err != nil {
			return fail("entry %q: %v", h.Name, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				err = os.Symlink(h.Linkname, target)
			}
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				var out *os.File
				if out, err = os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
					_, err = io.Copy(out, io.LimitReader(tr, maxEntryBytes))
					if cerr := out.Close(); err == nil {
						err = cerr
					}
				}
			}
		default:
			return fail("entry %q has unsupported type %q", h.Name, h.Typeflag)
		}
		if err != nil {
			return fail("unpacking %q: %v", h.Name, err)
		}
	}
	if s.Meta.Format == "" {
		return fail("no meta.json")
	}
	s.FS = Dir(root)
	s.FS.errs = map[string]syscall.Errno{}
	for p, name := range errNames {
		e := errnoValue(name)
		if e == 0 {
			return fail("unknown errno %q for %s", name, p)
		}
		s.FS.errs[path.Clean("/"+p)] = e
	}
	return s, nil
}

// noLinkParents refuses a target whose parent directories (below root)
// include a symlink: writing there would leave the tree.
func noLinkParents(root, target string) error {
	rel, err := filepath.Rel(root, filepath.Dir(target))
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("outside the tree")
	}
	if rel == "." {
		return nil
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("would write through symlink %s", strings.TrimPrefix(cur, root))
		}
	}
	return nil
}

// errnoValue is the inverse of unix.ErrnoName ("ENOENT" -> syscall.ENOENT).
func errnoValue(name string) syscall.Errno {
	for e := syscall.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == name {
			return e
		}
	}
	return 0
}

// JSONProblem says in words what is wrong with a JSON document that did
// not decode: where the syntax breaks, or which field holds what kind of
// value where another was expected - not Go's type names.
func JSONProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (broken at byte %d)", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input"):
		return "cut short (the JSON ends early)"
	case errors.As(err, &te):
		where := "the document"
		if te.Field != "" {
			where = "field " + strconv.Quote(te.Field)
		}
		return fmt.Sprintf("%s holds a JSON %s where %s is expected", where, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return err.Error()
}

func jsonKind(k string) string {
	switch k {
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "ptr", "interface":
		return "another value"
	}
	return "a number"
}
