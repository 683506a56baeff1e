// SPDX-License-Identifier: Apache-2.0

package kit

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeRun writes data/RUN.tar.gz under dir as archive-run.sh would: the
// run's directory first, its files under it.
func writeRun(t *testing.T, data, run string, files map[string]string) {
	t.Helper()
	f, err := os.Create(filepath.Join(data, run+ArchiveExt))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: run + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		h := &tar.Header{Name: run + "/" + n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n]))}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []io.Closer{tw, zw, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestArchiveReadsAsDirectory: a run's archive reads as the directory it
// was, through every reader the experiments use; a real directory next to
// it reads from disk.
func TestArchiveReadsAsDirectory(t *testing.T) {
	data := filepath.Join(t.TempDir(), "exp", "data")
	if err := os.MkdirAll(filepath.Join(data, "loose"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "loose", "vm.json"), []byte(`{"ok":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "sweep.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRun(t, data, "run-1", map[string]string{
		"PLAN.md": "# plan\n", "ours-1/vm.json": `{"ok":true}`, "ours-2/vm.json": `{"ok":false}`, "stock-1/host-top.txt": "load\n",
	})

	b, err := ReadRaw(filepath.Join(data, "run-1", "ours-1", "vm.json"))
	if err != nil || string(b) != `{"ok":true}` {
		t.Fatalf("ReadRaw = %q, %v", b, err)
	}
	if ok, err := VMOK(filepath.Join(data, "run-1", "ours-1")); err != nil || !ok {
		t.Errorf("VMOK in the archive = %v, %v", ok, err)
	}
	if _, err := ReadRaw(filepath.Join(data, "run-1", "ours-3", "vm.json")); !os.IsNotExist(err) {
		t.Errorf("a file the archive lacks: %v, want one os.IsNotExist knows", err)
	}
	names := func(dir string) string {
		ents, err := ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			out = append(out, n)
		}
		return strings.Join(out, " ")
	}
	if got := names(data); got != "loose/ run-1/ sweep.json" {
		t.Errorf("data/ lists %q, want the archive as the directory run-1/", got)
	}
	if got := names(filepath.Join(data, "run-1")); got != "PLAN.md ours-1/ ours-2/ stock-1/" {
		t.Errorf("run-1/ lists %q", got)
	}
	if reps, err := Reps(filepath.Join(data, "run-1"), "ours"); err != nil || !slices.Equal(reps, []int{1, 2}) {
		t.Errorf("Reps in the archive = %v, %v", reps, err)
	}
	if st, err := Stat(filepath.Join(data, "run-1", "stock-1")); err != nil || !st.IsDir() {
		t.Errorf("Stat(stock-1) = %v, %v, want a directory", st, err)
	}
	if st, err := Stat(filepath.Join(data, "run-1", "PLAN.md")); err != nil || st.IsDir() || st.Size() != 7 {
		t.Errorf("Stat(PLAN.md) = %v, %v, want a file of 7 bytes", st, err)
	}
	m, err := Glob(filepath.Join(data, "*", "*", "vm.json"))
	want := []string{filepath.Join(data, "run-1", "ours-1", "vm.json"), filepath.Join(data, "run-1", "ours-2", "vm.json")}
	if err != nil || !slices.Equal(m, want) {
		t.Errorf("Glob = %q, %v, want %q", m, err, want)
	}
	f, err := Open(filepath.Join(data, "run-1", "stock-1", "host-top.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(f)
	if f.Close() != nil || string(b) != "load\n" {
		t.Errorf("Open read %q", b)
	}
	// a directory of the same name wins: a run not archived yet
	if err := os.MkdirAll(filepath.Join(data, "run-1", "ours-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRaw(filepath.Join(data, "run-1", "ours-1", "vm.json")); !os.IsNotExist(err) {
		t.Errorf("with data/run-1 on disk the archive was read: %v", err)
	}
	if got := names(data); got != "loose/ run-1/ sweep.json" {
		t.Errorf("data/ with both lists %q", got)
	}
}

// TestArchiveOutsideData: only an archive right under a data directory is
// a run; a run's own inspect.tar.gz is a file.
func TestArchiveOutsideData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "run", "boot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeRun(t, dir, "inspect", map[string]string{"x": "y"})
	if got, err := ReadDir(dir); err != nil || len(got) != 1 || got[0].Name() != "inspect.tar.gz" {
		t.Errorf("ReadDir = %v, %v, want inspect.tar.gz as a file", got, err)
	}
	if _, err := ReadRaw(filepath.Join(dir, "inspect", "x")); !os.IsNotExist(err) {
		t.Errorf("an archive inside a run was opened as a run: %v", err)
	}
}
