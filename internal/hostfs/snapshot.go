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
//
// Version 2 adds what doctor's platform rules read: cpuN/cpu_capacity,
// OpenWrt's /etc/openwrt_release and /etc/config/network, and the running
// services that own knobs (answers.json "services"). Version 1 snapshots
// are read as they are: those facts are absent, not empty.
const (
	SnapshotFormat  = "wirespeed-snapshot"
	SnapshotVersion = 2
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
	for _, e := range rec.entries() {
		if err := rec.writeEntry(tw, e, now); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// recEntry is one recorded path and what it is (a tar type flag).
type recEntry struct {
	p    string
	kind byte
}

// entries lists what rec recorded: directories first (sorted, so parents
// precede children), then links and files. The caller holds rec.mu.
func (rec *Recorder) entries() []recEntry {
	var ents []recEntry
	for p := range rec.dirs {
		ents = append(ents, recEntry{p, tar.TypeDir})
	}
	for p := range rec.links {
		ents = append(ents, recEntry{p, tar.TypeSymlink})
	}
	for p := range rec.files {
		if !rec.dirs[p] {
			ents = append(ents, recEntry{p, tar.TypeReg})
		}
	}
	sort.Slice(ents, func(i, j int) bool {
		if (ents[i].kind == tar.TypeDir) != (ents[j].kind == tar.TypeDir) {
			return ents[i].kind == tar.TypeDir
		}
		return ents[i].p < ents[j].p
	})
	return ents
}

// writeEntry writes one recorded path below root/ in the archive.
func (rec *Recorder) writeEntry(tw *tar.Writer, e recEntry, now time.Time) error {
	name := "root" + e.p
	switch e.kind {
	case tar.TypeDir:
		return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, ModTime: now, Typeflag: tar.TypeDir})
	case tar.TypeSymlink:
		return tw.WriteHeader(&tar.Header{Name: name, Linkname: rec.links[e.p], Mode: 0o777, ModTime: now, Typeflag: tar.TypeSymlink})
	}
	b := rec.files[e.p]
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := tw.Write(b)
	return err
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

// TempDirError: the snapshot could not be unpacked because no temporary
// directory could be made - a fault of this host's TMPDIR, not of the file.
type TempDirError struct{ Err error }

func (e *TempDirError) Error() string {
	return fmt.Sprintf("no temporary directory to unpack it in (%v): set TMPDIR to a writable directory", e.Err)
}

func (e *TempDirError) Unwrap() error { return e.Err }

// OpenSnapshot unpacks the snapshot file at p into a temporary directory.
// Entries that would land outside the tree, or write through a symlink, are
// refused, as are files of another format or a newer version.
func OpenSnapshot(p string) (*Snapshot, error) {
	f, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (not gzip: %v)", p, ErrNotSnapshot, err)
	}
	dir, err := os.MkdirTemp("", "wirespeed-snapshot-")
	if err != nil {
		return nil, &TempDirError{Err: err}
	}
	s := &Snapshot{dir: dir}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, &TempDirError{Err: err}
	}
	errNames, err := s.unpack(tar.NewReader(zr), root)
	if err == nil && s.Meta.Format == "" {
		err = errors.New("no meta.json")
	}
	if err == nil {
		s.FS = Dir(root)
		s.FS.errs, err = errnos(errNames)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w: %s", p, ErrNotSnapshot, err.Error())
	}
	return s, nil
}

// openRegular opens p for reading if it is a regular file. A FIFO must not
// hang the open, nor a device feed it for ever.
func openRegular(p string) (*os.File, error) {
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
	return f, nil
}

// unpack reads the archive: meta.json first, then errors.json,
// answers.json and the tree below root/, which it writes below root. It
// returns errors.json's errno names by path; an error says why the file is
// not a snapshot this build reads.
func (s *Snapshot) unpack(tr *tar.Reader, root string) (map[string]string, error) {
	var errNames map[string]string
	var total int64
	entries := 0
	for first := true; ; first = false {
		h, err := tr.Next()
		if err == io.EOF {
			return errNames, nil
		}
		if err != nil {
			return nil, fmt.Errorf("corrupt archive: %v", err)
		}
		if first && h.Name != "meta.json" {
			return nil, fmt.Errorf("first entry is %q, want meta.json", h.Name)
		}
		if h.Size > maxEntryBytes || total+h.Size > maxTotalBytes {
			return nil, fmt.Errorf("entry %q too large", h.Name)
		}
		if entries++; entries > maxEntries {
			return nil, fmt.Errorf("more than %d entries; a host's snapshot has far fewer", maxEntries)
		}
		total += h.Size
		switch h.Name {
		case "meta.json", "errors.json", "answers.json":
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("corrupt archive: %v", err)
			}
			if err := s.readControl(h.Name, b, &errNames); err != nil {
				return nil, err
			}
			continue
		}
		if err := unpackEntry(tr, h, root); err != nil {
			return nil, err
		}
	}
}

// readControl reads one of the files beside the tree: meta.json (refusing
// another format or a newer version), errors.json, answers.json.
func (s *Snapshot) readControl(name string, b []byte, errNames *map[string]string) error {
	switch name {
	case "meta.json":
		if err := json.Unmarshal(b, &s.Meta); err != nil {
			return fmt.Errorf("its meta.json is damaged: %s", JSONProblem(err))
		}
		if s.Meta.Format != SnapshotFormat {
			return fmt.Errorf("format %q, want %q", s.Meta.Format, SnapshotFormat)
		}
		if s.Meta.Version > SnapshotVersion || s.Meta.Version < 1 {
			return fmt.Errorf("format version %d; this wirespeed reads version %d (upgrade wirespeed)", s.Meta.Version, SnapshotVersion)
		}
	case "errors.json":
		if err := json.Unmarshal(b, errNames); err != nil {
			return fmt.Errorf("its errors.json is damaged: %s", JSONProblem(err))
		}
	case "answers.json":
		s.Answers = json.RawMessage(b)
	}
	return nil
}

// unpackEntry writes one root/... entry (a directory, symlink or regular
// file) below root, refusing a path that leaves the tree or goes through
// a symlink, and any other type.
func unpackEntry(tr *tar.Reader, h *tar.Header, root string) error {
	rel, ok := strings.CutPrefix(h.Name, "root/")
	if !ok {
		return fmt.Errorf("unexpected entry %q", h.Name)
	}
	rel = strings.TrimSuffix(rel, "/")
	clean := path.Clean("/" + rel)
	if rel == "" || clean != "/"+rel || strings.Contains(rel, "..") {
		return fmt.Errorf("unsafe path %q", h.Name)
	}
	target := filepath.Join(root, filepath.FromSlash(clean))
	if err := noLinkParents(root, target); err != nil {
		return fmt.Errorf("entry %q: %v", h.Name, err)
	}
	var err error
	switch h.Typeflag {
	case tar.TypeDir:
		err = os.MkdirAll(target, 0o755)
	case tar.TypeSymlink:
		if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
			err = os.Symlink(h.Linkname, target)
		}
	case tar.TypeReg:
		if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
			err = writeNew(target, io.LimitReader(tr, maxEntryBytes))
		}
	default:
		return fmt.Errorf("entry %q has unsupported type %q", h.Name, h.Typeflag)
	}
	if err != nil {
		return fmt.Errorf("unpacking %q: %v", h.Name, err)
	}
	return nil
}

// writeNew creates target, which must not exist, with r's bytes.
func writeNew(target string, r io.Reader) error {
	out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// errnos turns errors.json's names into the errnos reads replay, by
// cleaned path; an unknown name is an error.
func errnos(names map[string]string) (map[string]syscall.Errno, error) {
	out := map[string]syscall.Errno{}
	for p, name := range names {
		e := errnoValue(name)
		if e == 0 {
			return nil, fmt.Errorf("unknown errno %q for %s", name, p)
		}
		out[path.Clean("/"+p)] = e
	}
	return out, nil
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
