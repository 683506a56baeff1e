// SPDX-License-Identifier: Apache-2.0

package hostfs

import (
	"archive/tar"
	"syscall"
	"testing"
)

// TestErrnos: errors.json's names become errnos by cleaned path; an
// unknown name refuses the file.
func TestErrnos(t *testing.T) {
	got, err := errnos(map[string]string{"sys/class/net/lo/queues/tx-0/xps_cpus": "ENOENT", "/proc/x/../y": "EACCES"})
	if err != nil || got["/sys/class/net/lo/queues/tx-0/xps_cpus"] != syscall.ENOENT || got["/proc/y"] != syscall.EACCES || len(got) != 2 {
		t.Errorf("errnos: %v, %v", got, err)
	}
	if _, err := errnos(map[string]string{"/sys/a": "EBOGUS"}); err == nil {
		t.Error("an unknown errno name accepted")
	}
}

// TestRecorderEntries: directories first, parents before children, then
// links and files by path; a path recorded as both directory and file is
// a directory.
func TestRecorderEntries(t *testing.T) {
	rec := NewRecorder()
	rec.dirs = map[string]bool{"/sys/b": true, "/sys": true}
	rec.links = map[string]string{"/sys/b/l": "x"}
	rec.files = map[string][]byte{"/sys/a": nil, "/sys/b": nil}
	got := rec.entries()
	want := []recEntry{{"/sys", tar.TypeDir}, {"/sys/b", tar.TypeDir}, {"/sys/a", tar.TypeReg}, {"/sys/b/l", tar.TypeSymlink}}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %v, want %v", i, got[i], want[i])
		}
	}
}
