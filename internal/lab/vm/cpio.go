// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"fmt"
	"io"
	"path"
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
