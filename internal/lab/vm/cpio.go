package vm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// The initramfs is a cpio archive in the "newc" format (the kernel's
// Documentation/driver-api/early-userspace/buffer-format.rst): every entry is
// a 110-byte ASCII header of 13 eight-digit hex fields after the magic
// "070701", then the NUL-terminated name, padded to a multiple of 4, then the
// data, padded to a multiple of 4. The archive ends with an entry named
// "TRAILER!!!". The kernel unpacks concatenated archives one after another,
// so a cached base image plus a small per-run archive is one initramfs.

// File modes used in the archive.
const (
	modeDir     = 0o040000
	modeRegular = 0o100000
	modeSymlink = 0o120000
	modeCharDev = 0o020000
	cpioTrailer = "TRAILER!!!"
	cpioMagic   = "070701"
)

// CPIOEntry is one file, directory, symlink or device node of an archive.
type CPIOEntry struct {
	Name     string // path without a leading "/"
	Mode     uint32 // type and permission bits (modeDir|0755, ...)
	Data     []byte // file contents, or the target of a symlink
	DevMajor uint32 // for device nodes (rdev)
	DevMinor uint32
}

// IsDir, IsRegular and IsSymlink tell the entry's type.
func (e CPIOEntry) IsDir() bool     { return e.Mode&0o170000 == modeDir }
func (e CPIOEntry) IsRegular() bool { return e.Mode&0o170000 == modeRegular }
func (e CPIOEntry) IsSymlink() bool { return e.Mode&0o170000 == modeSymlink }

// CPIOWriter writes a newc archive. Parent directories are created
// implicitly (once) before the first entry below them.
type CPIOWriter struct {
	w    *bufio.Writer
	n    int64
	ino  uint32
	dirs map[string]bool
	err  error
}

// NewCPIOWriter returns a writer on w. Call Close to write the trailer.
func NewCPIOWriter(w io.Writer) *CPIOWriter {
	return &CPIOWriter{w: bufio.NewWriterSize(w, 1<<16), ino: 1, dirs: map[string]bool{"": true, ".": true}}
}

func cleanName(name string) (string, error) {
	n := strings.TrimPrefix(path.Clean("/"+name), "/")
	if n == "" || n == "." {
		return "", fmt.Errorf("cpio: empty entry name %q", name)
	}
	if n == cpioTrailer {
		return "", fmt.Errorf("cpio: entry name %q is reserved", name)
	}
	return n, nil
}

// Add writes one entry (and its missing parent directories).
func (c *CPIOWriter) Add(e CPIOEntry) error {
	if c.err != nil {
		return c.err
	}
	name, err := cleanName(e.Name)
	if err != nil {
		return err
	}
	if err := c.mkdirAll(path.Dir(name)); err != nil {
		return err
	}
	if e.IsDir() {
		if c.dirs[name] {
			return nil
		}
		c.dirs[name] = true
	}
	return c.write(name, e.Mode, e.Data, e.DevMajor, e.DevMinor)
}

func (c *CPIOWriter) mkdirAll(dir string) error {
	if c.dirs[dir] {
		return nil
	}
	if err := c.mkdirAll(path.Dir(dir)); err != nil {
		return err
	}
	c.dirs[dir] = true
	return c.write(dir, modeDir|0o755, nil, 0, 0)
}

// Dir, File and Symlink are shorthands for Add.
func (c *CPIOWriter) Dir(name string) error {
	return c.Add(CPIOEntry{Name: name, Mode: modeDir | 0o755})
}
func (c *CPIOWriter) File(name string, perm uint32, data []byte) error {
	return c.Add(CPIOEntry{Name: name, Mode: modeRegular | perm&0o7777, Data: data})
}
func (c *CPIOWriter) Symlink(name, target string) error {
	return c.Add(CPIOEntry{Name: name, Mode: modeSymlink | 0o777, Data: []byte(target)})
}

func (c *CPIOWriter) write(name string, mode uint32, data []byte, major, minor uint32) error {
	nlink := uint32(1)
	if mode&0o170000 == modeDir {
		nlink = 2
	}
	c.ino++
	// magic ino mode uid gid nlink mtime filesize devmajor devminor rdevmajor rdevminor namesize check
	hdr := fmt.Sprintf("%s%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		cpioMagic, c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, major, minor, len(name)+1, 0)
	c.put([]byte(hdr))
	c.put([]byte(name))
	c.put([]byte{0})
	c.pad()
	c.put(data)
	c.pad()
	return c.err
}

func (c *CPIOWriter) put(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

func (c *CPIOWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.put(make([]byte, 4-r))
	}
}

// Close writes the trailer and flushes. It does not close the underlying writer.
func (c *CPIOWriter) Close() error {
	if c.err != nil {
		return c.err
	}
	c.ino = 0
	if err := c.write(cpioTrailer, 0, nil, 0, 0); err != nil {
		return err
	}
	// The kernel reads the archive in 512-byte blocks; pad like cpio(1) does.
	if r := c.n % 512; r != 0 {
		c.put(make([]byte, 512-r))
	}
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

// ReadCPIO parses one or more concatenated newc archives (zero padding
// between them is skipped) and returns their entries in order.
func ReadCPIO(r io.Reader) ([]CPIOEntry, error) {
	br := bufio.NewReader(r)
	var out []CPIOEntry
	var off int64
	read := func(n int) ([]byte, error) {
		b := make([]byte, n)
		_, err := io.ReadFull(br, b)
		off += int64(n)
		return b, err
	}
	skipPad := func() error {
		if rr := off % 4; rr != 0 {
			_, err := read(int(4 - rr))
			return err
		}
		return nil
	}
	for {
		// Skip zero padding between archives.
		for {
			b, err := br.Peek(1)
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			if b[0] != 0 {
				break
			}
			_, _ = br.ReadByte()
			off++
		}
		hdr, err := read(110)
		if err != nil {
			return out, fmt.Errorf("cpio: short header at offset %d: %w", off, err)
		}
		if string(hdr[:6]) != cpioMagic {
			return out, fmt.Errorf("cpio: bad magic %q at offset %d (want newc %s)", hdr[:6], off-110, cpioMagic)
		}
		var f [13]uint32
		for i := range f {
			var v uint32
			if _, err := fmt.Sscanf(string(hdr[6+8*i:14+8*i]), "%08x", &v); err != nil {
				return out, fmt.Errorf("cpio: bad header field %d at offset %d: %w", i, off-110, err)
			}
			f[i] = v
		}
		mode, size, rmaj, rmin, namesize := f[1], f[6], f[9], f[10], f[11]
		if namesize == 0 || namesize > 4096 {
			return out, fmt.Errorf("cpio: bad name size %d at offset %d", namesize, off-110)
		}
		nb, err := read(int(namesize))
		if err != nil {
			return out, fmt.Errorf("cpio: short name: %w", err)
		}
		name := strings.TrimRight(string(nb), "\x00")
		if err := skipPad(); err != nil {
			return out, err
		}
		data, err := read(int(size))
		if err != nil {
			return out, fmt.Errorf("cpio: short data of %s: %w", name, err)
		}
		if err := skipPad(); err != nil {
			return out, err
		}
		if name == cpioTrailer {
			continue
		}
		out = append(out, CPIOEntry{Name: name, Mode: mode, Data: data, DevMajor: rmaj, DevMinor: rmin})
	}
}

// cpioNames lists the entry names of an archive, sorted (for tests and errors).
func cpioNames(es []CPIOEntry) []string {
	var n []string
	for _, e := range es {
		n = append(n, e.Name)
	}
	sort.Strings(n)
	return n
}
