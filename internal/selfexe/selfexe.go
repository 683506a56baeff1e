// SPDX-License-Identifier: Apache-2.0

// Package selfexe finds this wirespeed binary for the commands that run it
// again as a process of its own (bench's inspect in a namespace, tune's
// measurements and its process-group supervisor, the VM lab's guest
// binary). It refuses a Go test binary: run with a wirespeed command line,
// a test binary ignores the arguments and runs all of its tests again,
// which reach the same re-run, and so on - a chain of test processes, not
// a wirespeed command. Tests that need a wirespeed process build one
// (testnet.Binary) and run it themselves.
package selfexe

import (
	"flag"
	"fmt"
	"os"
)

// Path returns the path of the running binary, or an error when it cannot
// be found or is a Go test binary.
func Path() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find wirespeed's own binary: %w", err)
	}
	if isTestBinary(flag.CommandLine) {
		return "", fmt.Errorf("%s is a Go test binary: run again, it would run its tests instead of a wirespeed command (build wirespeed and run that instead)", exe)
	}
	return exe, nil
}

// isTestBinary reports whether fs holds the flags a Go test binary's main
// registers (testing.Init, called before any test or TestMain runs). The
// wirespeed command registers no flags on the process-wide set.
func isTestBinary(fs *flag.FlagSet) bool {
	return fs.Lookup("test.run") != nil && fs.Lookup("test.v") != nil
}
