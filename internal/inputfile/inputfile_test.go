// SPDX-License-Identifier: Apache-2.0

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte(`{}`), 0o644)
	if b, err := Read(ok, "result", 10); err != nil || string(b) != "{}" {
		t.Fatalf("a small regular file: %q %v", b, err)
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, make([]byte, 11), 0o644)
	if _, err := Read(big, "result", 10); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "result "+big) {
		t.Errorf("a file over the limit: %v", err)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	if _, err := Read(zero, "result", 10); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "character device") {
		t.Errorf("a link to /dev/zero: %v", err)
	}
	if _, err := Read(dir, "result", 10); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo, "result", 10); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked on a FIFO with no writer")
	}
}
