// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// Checks of the files and names users hand the commands, shared by them:
// every one refuses before anything is read, built or written.

// checkIfaceExists refuses a device name this network namespace lacks.
func checkIfaceExists(dev string) error {
	if dev == "." || dev == ".." || strings.ContainsAny(dev, "/\x00") {
		return usageErrorf("--iface %q is not a network device name", dev)
	}
	if _, err := os.Stat("/sys/class/net/" + dev); err != nil {
		return usageErrorf("--iface %q: no such network device here (see 'ip link'); nothing was measured", dev)
	}
	return nil
}

// existingDir refuses an output file whose directory does not exist:
// wirespeed writes the file the user names, not directories they did not.
func existingDir(flagName, file string) error {
	dir := filepath.Dir(file)
	fi, err := os.Stat(dir)
	if err != nil {
		return usageErrorf("%s %s: the directory %s does not exist: create it first (mkdir -p %s)", flagName, file, dir, dir)
	}
	if !fi.IsDir() {
		return usageErrorf("%s %s: %s is not a directory", flagName, file, dir)
	}
	return nil
}

// sameFile says whether a and b name the same file (or the same path when
// a does not exist yet).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	bb, _ := filepath.Abs(b)
	return aa == bb
}
