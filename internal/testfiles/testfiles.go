// SPDX-License-Identifier: Apache-2.0

// Package testfiles loads the files tests read: fixtures, compressed or
// not, and the seeds of fuzz targets. It serves tests only.
package testfiles

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Decode returns the bytes of a file's content b: gunzipped when name ends
// in .gz, as they are otherwise.
func Decode(name string, b []byte) ([]byte, error) {
	if !strings.HasSuffix(name, ".gz") {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// Read returns the content of the file at path, gunzipped when its name
// ends in .gz; an error fails the test, naming the file.
func Read(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		b, err = Decode(path, b)
	}
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return b
}

// Seeds adds, as seeds of f, the content of every file the glob pattern
// matches (at most limit of them, in name order; 0 is every one), each
// read as Read does. A pattern that matches nothing fails: a fuzz target
// without its real inputs would start from nothing unnoticed.
func Seeds(f *testing.F, pattern string, limit int) {
	f.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files match %s (%v)", pattern, err)
	}
	if limit > 0 && len(paths) > limit {
		paths = paths[:limit]
	}
	for _, p := range paths {
		f.Add(Read(f, p))
	}
}
