// SPDX-License-Identifier: Apache-2.0

// Package snaptext is the text form of the snapshot fixtures: a snapshot
// tar (wirespeed inspect --save's, unzipped) written as lines a reviewer
// can read and a diff can show, and the tar built back from it byte for
// byte the same every time. testdata/snapshots/NAME.txt is the source,
// NAME.tar.gz what Build makes of it (go run ./testdata/snapshots/fixtures);
// internal/cli's TestFixturesBuiltFromText holds the two together.
//
// The form, line by line (README.md in testdata/snapshots says it too):
//
//	# a comment (outside a file's content)
//	wirespeed-snapshot-text 1
//	mtime 1700000000                 every entry's modification time, Unix seconds
//	dir root/sys/                    a directory (mode 0755)
//	link root/sys/class/net/eth0 -> ../../devices/...   a symlink (mode 0777)
//	file root/sys/.../speed          a regular file (mode 0644); its lines follow:
//	| 1000                           a line as it is
//	q "CPU0       CPU1       "       a line as a Go string literal: one that ends
//	                                 in a space or tab, or holds a control
//	                                 character or bytes that are not UTF-8
//
// Entries keep the tar's order. A header may end in attributes: noeol (the
// file's last line has no newline), mode=0600 (other than its type's
// usual mode), mtime=N (other than the snapshot's). A path or target with
// a space or a quote is a Go string literal. Owners are always root
// (uid/gid 0, no names): Encode refuses a tar with anything it cannot
// write back the same.
package snaptext

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Magic is the first line of the text form (after comments).
const Magic = "wirespeed-snapshot-text 1"

// Entry is one tar entry.
type Entry struct {
	Type     byte // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	Name     string
	Mode     int64
	ModTime  int64 // Unix seconds
	Linkname string
	Data     []byte
}

var usualMode = map[byte]int64{tar.TypeReg: 0o644, tar.TypeDir: 0o755, tar.TypeSymlink: 0o777}

var kindWord = map[byte]string{tar.TypeReg: "file", tar.TypeDir: "dir", tar.TypeSymlink: "link"}

// ReadTar reads the entries of an uncompressed tar stream, refusing what
// the text form cannot carry.
func ReadTar(r io.Reader) ([]Entry, error) {
	var out []Entry
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		t := h.Typeflag
		if t == tar.TypeRegA {
			t = tar.TypeReg
		}
		if _, ok := kindWord[t]; !ok {
			return nil, fmt.Errorf("%s: tar type %q: the text form has files, directories and symlinks", h.Name, h.Typeflag)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.Devmajor != 0 || h.Devminor != 0 {
			return nil, fmt.Errorf("%s: owner %d:%d (%q:%q): the text form's entries belong to root, unnamed", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if h.ModTime.Nanosecond() != 0 {
			return nil, fmt.Errorf("%s: modification time %s is not whole seconds", h.Name, h.ModTime)
		}
		for k := range h.PAXRecords {
			if k != "path" && k != "linkpath" {
				return nil, fmt.Errorf("%s: PAX record %q the text form does not carry", h.Name, k)
			}
		}
		e := Entry{Type: t, Name: h.Name, Mode: h.Mode, ModTime: h.ModTime.Unix(), Linkname: h.Linkname}
		if t == tar.TypeReg {
			if e.Data, err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
}

// Gunzip returns the tar stream inside a .tar.gz.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Encode writes entries in the text form.
func Encode(entries []Entry) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# A wirespeed snapshot fixture as text (testdata/snapshots/README.md: the form);\n")
	b.WriteString("# go run ./testdata/snapshots/fixtures builds its .tar.gz from it.\n")
	b.WriteString(Magic + "\n")
	var mtime int64
	if len(entries) > 0 {
		mtime = entries[0].ModTime
	}
	fmt.Fprintf(&b, "mtime %d\n", mtime)
	for _, e := range entries {
		word, ok := kindWord[e.Type]
		if !ok {
			return nil, fmt.Errorf("%s: tar type %q", e.Name, e.Type)
		}
		if e.Type == tar.TypeReg {
			b.WriteString("\n")
		}
		b.WriteString(word + " " + quotePath(e.Name))
		if e.Type == tar.TypeSymlink {
			b.WriteString(" -> " + quotePath(e.Linkname))
		}
		if e.Type == tar.TypeReg && len(e.Data) > 0 && e.Data[len(e.Data)-1] != '\n' {
			b.WriteString(" noeol")
		}
		if e.Mode != usualMode[e.Type] {
			fmt.Fprintf(&b, " mode=%04o", e.Mode)
		}
		if e.ModTime != mtime {
			fmt.Fprintf(&b, " mtime=%d", e.ModTime)
		}
		b.WriteString("\n")
		if e.Type != tar.TypeReg || len(e.Data) == 0 {
			continue
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(e.Data), "\n"), "\n") {
			if plain(line) {
				b.WriteString(strings.TrimRight("| "+line, " ") + "\n")
			} else {
				b.WriteString("q " + strconv.Quote(line) + "\n")
			}
		}
	}
	return b.Bytes(), nil
}

// plain: a line written as it is - UTF-8 without control characters but
// tab, not ending in a space or tab (which editors and diffs lose).
func plain(s string) bool {
	if !utf8.ValidString(s) || strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t") {
		return false
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t') || r == 0x7f || r == utf8.RuneError {
			return false
		}
	}
	return true
}

func quotePath(p string) string {
	if p == "" || strings.ContainsAny(p, " \"\t\n\\") || !plain(p) {
		return strconv.Quote(p)
	}
	return p
}

// Decode reads the text form.
func Decode(text []byte) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 16<<20)
	n, magic, mtime := 0, false, int64(-1)
	var cur *Entry
	var lines []string
	var noeol bool
	flush := func() {
		if cur != nil && cur.Type == tar.TypeReg && len(lines) > 0 {
			s := strings.Join(lines, "\n")
			if !noeol {
				s += "\n"
			}
			cur.Data = []byte(s)
		}
		lines, noeol = nil, false
	}
	fail := func(format string, a ...any) ([]Entry, error) {
		return nil, fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, a...))
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case line == "|" || strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "q "):
			if cur == nil || cur.Type != tar.TypeReg {
				return fail("a content line outside a file")
			}
			if line[0] == 'q' {
				s, err := strconv.Unquote(line[2:])
				if err != nil {
					return fail("not a Go string literal: %v", err)
				}
				lines = append(lines, s)
			} else {
				lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(line, "|"), " "))
			}
			continue
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case !magic:
			if line != Magic {
				return fail("want %q first, not %q", Magic, line)
			}
			magic = true
			continue
		case strings.HasPrefix(line, "mtime "):
			if mtime >= 0 || len(out) > 0 {
				return fail("mtime comes once, before the entries")
			}
			v, err := strconv.ParseInt(line[len("mtime "):], 10, 64)
			if err != nil || v < 0 {
				return fail("bad mtime %q", line)
			}
			mtime = v
			continue
		}
		if mtime < 0 {
			return fail("mtime N must come before the entries")
		}
		flush()
		e, attrs, err := header(line)
		if err != nil {
			return fail("%v", err)
		}
		e.Mode, e.ModTime = usualMode[e.Type], mtime
		for _, a := range attrs {
			k, v, _ := strings.Cut(a, "=")
			switch {
			case a == "noeol" && e.Type == tar.TypeReg:
				noeol = true
			case k == "mode" && v != "":
				m, err := strconv.ParseInt(v, 8, 64)
				if err != nil || m < 0 || m > 0o7777 {
					return fail("bad mode %q", v)
				}
				e.Mode = m
			case k == "mtime" && v != "":
				t, err := strconv.ParseInt(v, 10, 64)
				if err != nil || t < 0 {
					return fail("bad mtime %q", v)
				}
				e.ModTime = t
			default:
				return fail("unknown attribute %q", a)
			}
		}
		out = append(out, e)
		cur = &out[len(out)-1]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	if !magic {
		return nil, errors.New("no " + Magic + " line: not the text form")
	}
	return out, nil
}

// header parses "file P attrs", "dir P attrs" or "link P -> T attrs".
func header(line string) (Entry, []string, error) {
	word, rest, _ := strings.Cut(line, " ")
	var e Entry
	switch word {
	case "file":
		e.Type = tar.TypeReg
	case "dir":
		e.Type = tar.TypeDir
	case "link":
		e.Type = tar.TypeSymlink
	default:
		return e, nil, fmt.Errorf("want file, dir or link, not %q", line)
	}
	var err error
	if e.Name, rest, err = field(rest); err != nil {
		return e, nil, err
	}
	if e.Type == tar.TypeSymlink {
		arrow, after, _ := strings.Cut(rest, " ")
		if arrow != "->" {
			return e, nil, fmt.Errorf("link %s: want -> TARGET", e.Name)
		}
		if e.Linkname, rest, err = field(after); err != nil {
			return e, nil, err
		}
	}
	return e, strings.Fields(rest), nil
}

// field takes a path, bare or a Go string literal, off the front of s.
func field(s string) (string, string, error) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", fmt.Errorf("bad quoted path in %q", s)
		}
		v, _ := strconv.Unquote(q)
		return v, strings.TrimPrefix(s[len(q):], " "), nil
	}
	v, rest, _ := strings.Cut(s, " ")
	if v == "" {
		return "", "", errors.New("no path")
	}
	return v, rest, nil
}

// Tar writes entries as an uncompressed tar stream: the same bytes for
// the same entries every time (archive/tar picks USTAR where the names
// fit, PAX where they do not).
func Tar(entries []Entry) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Typeflag: e.Type, Name: e.Name, Linkname: e.Linkname, Mode: e.Mode,
			ModTime: time.Unix(e.ModTime, 0), Size: int64(len(e.Data))}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Build makes the .tar.gz of a text form: its Tar, gzip'd with a header
// that names no file and no time.
func Build(text []byte) ([]byte, error) {
	entries, err := Decode(text)
	if err != nil {
		return nil, err
	}
	raw, err := Tar(entries)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
