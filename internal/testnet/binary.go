// SPDX-License-Identifier: Apache-2.0

package testnet

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// RefuseRerun is the first call of a package's TestMain. Go test binaries
// are started with flags only; one started with positional arguments
// ("inspect --json lo") was run as if it were wirespeed, by code that
// re-executes its own binary, and would run all of its tests again -
// reaching the same re-execution, a chain of test processes. It says so
// and exits with status 2 instead.
func RefuseRerun() {
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: a Go test binary run as 'wirespeed %s': not running its tests again (re-execute a built wirespeed, testnet.Binary, not the test binary)\n",
			os.Args[0], strings.Join(flag.Args(), " "))
		os.Exit(2)
	}
}
