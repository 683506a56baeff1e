// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
)

// findPerf returns the perf program --profile puts into the guest: this
// host's perf, the ELF binary itself. Debian from 13 (and Ubuntu) install
// /usr/bin/perf as a shell script that runs perf_VERSION for the running
// kernel; the guest has no such shell logic, so the newest perf_* ELF next
// to it is taken then.
func findPerf(arch string) (string, error) {
	if arch != hostArch() {
		return "", fmt.Errorf("--profile: no perf for %s guests (this host's perf is %s)", arch, hostArch())
	}
	p, err := exec.LookPath("perf")
	if err != nil {
		return "", fmt.Errorf("--profile needs perf on this host: apt-get install linux-perf")
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
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
	return "", fmt.Errorf("--profile: %s is not a perf binary and no perf_VERSION program is next to it: apt-get install linux-perf", p)
}
