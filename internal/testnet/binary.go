// SPDX-License-Identifier: Apache-2.0

package testnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  string
)

// Binary builds the wirespeed command once per test process (static, in a
// directory any user may enter: not-root tests run it as nobody) and
// returns its path. Tests that need a process of its own use it: `ip
// netns exec`, signals, another user. A package's TestMain calls
// RemoveBinary after m.Run.
func Binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ws-test-bin-")
		if err != nil {
			binErr = err.Error()
			return
		}
		os.Chmod(dir, 0o755)
		bin := filepath.Join(dir, "wirespeed")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/wirespeed/wirespeed/cmd/wirespeed")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			binErr = "go build: " + err.Error() + "\n" + string(out)
			return
		}
		binPath = bin
	})
	if binPath == "" {
		t.Fatal(binErr)
	}
	return binPath
}

// RemoveBinary removes what Binary built, if anything.
func RemoveBinary() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}
