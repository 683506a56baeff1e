// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// findPerf returns the perf program --profile puts into the guest: this
// host's perf for a guest of its architecture (root ""), else the one of
// a foreign guest's root (guestRoot with perfPackages), the ELF binary
// itself either way. Debian from 13 (and Ubuntu) install /usr/bin/perf
// as a shell script that runs perf_VERSION for the running kernel; the
// guest has no such shell logic, so the newest perf_* ELF next to it is
// taken then.
func findPerf(root string) (string, error) {
	var p string
	if root == "" {
		lp, err := exec.LookPath("perf")
		if err != nil {
			return "", fmt.Errorf("--profile needs perf on this host: apt-get install linux-perf")
		}
		if r, err := filepath.EvalSymlinks(lp); err == nil {
			lp = r
		}
		p = lp
	} else {
		p = inRoot(root, "/usr/bin/perf")
	}
	if isELF(p) {
		return p, nil
	}
	cands, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "perf_*"))
	sort.Sort(sort.Reverse(sort.StringSlice(cands)))
	for _, c := range cands {
		if isELF(c) {
			return c, nil
		}
	}
	where := "this host"
	if root != "" {
		where = "the guest's packages in " + root
	}
	return "", fmt.Errorf("--profile: %s is not a perf binary and no perf_VERSION program is next to it in %s: %s", strings.TrimPrefix(p, root), where, "apt-get install linux-perf")
}
