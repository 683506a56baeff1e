// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// The lab only writes archives; the tests read back the ones it built
// (alone and joined) to check their entries.

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
