// SPDX-License-Identifier: Apache-2.0

package outfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// charDev makes a character device node of its own (1,minor: 3 is null, 7
// is full) in a temporary directory, so that a broken Write replaces that
// node, never the host's /dev/null. It needs root and a filesystem that
// allows device nodes; otherwise the test is skipped.
func charDev(t *testing.T, minor int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dev")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
		t.Skipf("mknod: %v (needs root)", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("open a device node here: %v (a nodev filesystem?)", err)
	}
	f.Close()
	return p
}

func mode(t *testing.T, p string) fs.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

func TestWriteThroughCharacterDevice(t *testing.T) {
	null := charDev(t, 3)
	if err := Write(null, []byte("report")); err != nil {
		t.Fatalf("Write to a null device: %v", err)
	}
	if mode(t, null)&fs.ModeCharDevice == 0 {
		t.Fatalf("the device node was replaced: now %v", mode(t, null))
	}
	full := charDev(t, 7)
	err := Write(full, []byte("report"))
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("Write to a full device: %v, want its ENOSPC", err)
	}
	if mode(t, full)&fs.ModeCharDevice == 0 {
		t.Fatalf("the full device node was replaced: now %v", mode(t, full))
	}
	if err := Check(null); err != nil {
		t.Fatalf("Check of a null device: %v", err)
	}
}

func TestWriteThroughFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := Write(p, []byte("through")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through" {
		t.Fatalf("the reader got %q", s)
	}
	if mode(t, p)&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v", mode(t, p))
	}
}

func TestWriteRegularAndLink(t *testing.T) {
	d := t.TempDir()
	p := filepath.Join(d, "r.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(d, "link.json")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("the link's target holds %q", b)
	}
	if mode(t, link)&fs.ModeSymlink == 0 {
		t.Fatal("the symbolic link was replaced by a file")
	}
	fresh := filepath.Join(d, "fresh.json")
	if err := Write(fresh, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(d); len(ents) != 3 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestRefused(t *testing.T) {
	d := t.TempDir()
	sock := filepath.Join(d, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct{ path, want string }{
		{d, "a directory"},
		{sock, "a socket"},
		{filepath.Join(d, "no", "such.json"), "its directory"},
		{"", "empty"},
	} {
		before, _ := os.Lstat(c.path)
		err := Write(c.path, []byte("x"))
		var oe *Error
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write(%q) = %v, want an error saying %q", c.path, err, c.want)
		}
		if err := Check(c.path); err == nil {
			t.Errorf("Check(%q) passed", c.path)
		}
		if after, _ := os.Lstat(c.path); before != nil && (after == nil || after.Mode() != before.Mode()) {
			t.Errorf("%s changed: %v -> %v", c.path, before.Mode(), after)
		}
	}
}
