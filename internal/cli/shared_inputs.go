// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
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

// checkLocalIfaces refuses interface names that are not in this network
// namespace. Tracepoints name devices without their namespace, so observe
// would otherwise count nothing for a typo and exit 0.
func checkLocalIfaces(ifaces []string) error {
	var missing []string
	for _, n := range ifaces {
		if strings.ContainsRune(n, '/') || n == "." || n == ".." {
			missing = append(missing, n)
			continue
		}
		if _, err := os.Stat(filepath.Join("/sys/class/net", n)); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var have []string
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			have = append(have, e.Name())
		}
	}
	return usageErrorf("unknown interface %s (this network namespace has: %s); for a device in another namespace run it there: ip netns exec NS wirespeed ...",
		strings.Join(quoteAll(missing), ", "), strings.Join(have, ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// snapshotError says what a snapshot that cannot be opened is and what to
// give instead.
func snapshotError(file string, err error) error {
	var te *hostfs.TempDirError
	if errors.As(err, &te) {
		return fmt.Errorf("cannot open the snapshot %s here: %v", file, te)
	}
	// hostfs's errors begin with the file already: say it once.
	msg := strings.TrimPrefix(unwrapPathErr(err).Error(), file+": ")
	return fmt.Errorf("cannot read the snapshot %s: %s; give a file that 'wirespeed inspect --save' wrote", file, msg)
}

// unknownIface makes an unknown interface a usage error that says what to do.
func unknownIface(err error) error {
	if errors.Is(err, inspect.ErrUnknownInterface) {
		return usageErrorf("%v; name one of those, or leave the names out for every device", err)
	}
	return err
}

// unwrapPathErr drops the path an *os.PathError names.
func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
