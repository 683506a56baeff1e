// SPDX-License-Identifier: Apache-2.0

package hostfs

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// FuzzOpenSnapshot feeds the snapshot reader crafted tar streams (gzipped
// here, so the fuzzer works on the archive, not on gzip's checksums).
// Whatever the input: a refusal wraps ErrNotSnapshot and leaves no
// temporary tree behind; an accepted snapshot unpacks only below its own
// directory, and Close removes it.
func FuzzOpenSnapshot(f *testing.F) {
	testfiles.Seeds(f, "../../testdata/snapshots/*.tar.gz", 2) // .tar.gz: seeded as the tar inside
	tmp := f.TempDir()
	f.Setenv("TMPDIR", tmp)
	f.Fuzz(func(t *testing.T, tarBytes []byte) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(tarBytes)
		zw.Close()
		in := filepath.Join(t.TempDir(), "in.tar.gz")
		if err := os.WriteFile(in, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenSnapshot(in)
		if err != nil {
			if !errors.Is(err, ErrNotSnapshot) {
				t.Fatalf("error not wrapping ErrNotSnapshot: %v", err)
			}
		} else {
			if !strings.HasPrefix(s.dir, tmp+string(filepath.Separator)) {
				t.Fatalf("unpacked into %s, outside %s", s.dir, tmp)
			}
			if s.Meta.Version < 1 || s.Meta.Version > SnapshotVersion {
				t.Fatalf("accepted version %d", s.Meta.Version)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "wirespeed-snapshot-") {
				t.Fatalf("left behind %s (err %v)", e.Name(), err)
			}
		}
	})
}
