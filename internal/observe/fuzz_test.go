// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// FuzzParseFormat: a tracefs format file the parser accepts has a name and
// fields whose offsets and sizes can index a record (none negative); the
// layout check reads them to decide how the BPF programs read events.
func FuzzParseFormat(f *testing.F) {
	testfiles.Seeds(f, "testdata/*/sys/kernel/*tracing/events/*/*/format", 0)
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, err := ParseFormat(b)
		if err != nil {
			return
		}
		if fm.Name == "" || len(fm.Fields) == 0 {
			t.Fatalf("accepted a format with no name or fields: %+v", fm)
		}
		for _, fld := range fm.Fields {
			if fld.Offset < 0 || fld.Size < 0 {
				t.Fatalf("field %q at offset %d size %d", fld.Name, fld.Offset, fld.Size)
			}
			if fm.Field(fld.Name) == nil {
				t.Fatalf("field %q parsed but not found", fld.Name)
			}
		}
	})
}
