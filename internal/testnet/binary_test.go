// SPDX-License-Identifier: Apache-2.0

package testnet

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	RefuseRerun()
	os.Exit(m.Run())
}

// rerunChild marks the copy TestRefuseRerun starts, so that a RefuseRerun
// that lets the copy through runs this test again without starting
// another copy: the test fails instead of chaining.
const rerunChild = "WIRESPEED_TESTNET_RERUN_CHILD"

// TestRefuseRerun runs this test binary as bench's inspect would run
// wirespeed: with a command line of positional arguments. It must exit at
// once with status 2 and a message, not run its tests.
func TestRefuseRerun(t *testing.T) {
	if os.Getenv(rerunChild) != "" {
		t.Skip("the copy that RefuseRerun should have stopped")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRefuseRerun$", "-test.v", "inspect", "--json", "lo")
	cmd.Env = append(os.Environ(), rerunChild+"=1")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("re-run exited with %v, want status 2:\n%s", err, out)
	}
	if !strings.Contains(string(out), "run as 'wirespeed inspect --json lo'") || strings.Contains(string(out), "=== RUN") {
		t.Errorf("re-run ran tests or did not say why:\n%s", out)
	}
}
