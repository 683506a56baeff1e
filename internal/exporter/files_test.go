// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

// TestOpenFilesReread: a kept file is read anew from offset 0 each time
// (content longer than the buffer included), and one that fails is
// forgotten.
func TestOpenFilesReread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "knob")
	o := &openFiles{fs: hostfs.Live()}
	for _, want := range []string{"0", "1", strings.Repeat("x", 10000), "2"} {
		if err := os.WriteFile(p, []byte(want+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := o.readString(p)
		if err != nil || got != want {
			t.Fatalf("read %q, %v; want %q", got, err, want[:min(len(want), 20)])
		}
		if len(o.files) != 1 {
			t.Fatalf("%d files kept open, want 1", len(o.files))
		}
	}
	if _, e := o.asRecorded(p + ".none"); e != "ENOENT" {
		t.Errorf("a missing file reads as error %q, want ENOENT", e)
	}
	o.closeAll()
	if len(o.files) != 0 {
		t.Errorf("closeAll left %d files", len(o.files))
	}
}

// TestOpenFilesProcSys: a kept procfs file shows a value written through
// another descriptor (the kernel generates it anew at offset 0). The sysctl
// is the test namespace's own.
func TestOpenFilesProcSys(t *testing.T) {
	testnet.NeedRoot(t)
	ns := testnet.New(t)
	const p = "/proc/sys/net/core/somaxconn"
	o := &openFiles{fs: hostfs.Live()}
	defer o.closeAll()
	for _, v := range []string{"301", "302"} {
		var got string
		var err error
		ns.Do(t, func() {
			if err = os.WriteFile(p, []byte(v), 0o644); err == nil {
				got, err = o.readString(p) // the first read opens it in ns
			}
		})
		if err != nil || got != v {
			t.Fatalf("kept %s reads %q, %v after writing %s", p, got, err, v)
		}
	}
}
