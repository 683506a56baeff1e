// SPDX-License-Identifier: Apache-2.0

package selfexe

import (
	"flag"
	"strings"
	"testing"
)

// This binary is a test binary: Path must refuse it, naming why.
func TestPathRefusesTestBinary(t *testing.T) {
	p, err := Path()
	if err == nil {
		t.Fatalf("Path() = %q in a Go test binary, want an error", p)
	}
	if !strings.Contains(err.Error(), "Go test binary") {
		t.Errorf("error %q does not say why", err)
	}
}

// A flag set without go test's flags is not a test binary's, even with
// flags of its own.
func TestIsTestBinary(t *testing.T) {
	plain := flag.NewFlagSet("wirespeed", flag.ContinueOnError)
	plain.Bool("v", false, "")
	plain.String("run", "", "")
	if isTestBinary(plain) {
		t.Error("a flag set without test.run/test.v taken for a test binary's")
	}
	if !isTestBinary(flag.CommandLine) {
		t.Error("this test binary's flag set not recognised")
	}
}
