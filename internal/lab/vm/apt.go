package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// aptConfig runs apt-get and apt-cache for one Debian architecture. The
// host's own architecture uses the host's apt as it is; a foreign one
// (arm64 guests on an amd64 host) uses package lists of its own under the
// cache, fetched from the host's sources.list, so the host's dpkg never
// learns of the architecture (no dpkg --add-architecture).
type aptConfig struct {
	arch string
	// opts are the -o options of a foreign architecture (nil: native).
	opts []string
}

// hostArch is the Debian name of the architecture wirespeed runs on.
// (Go's names for amd64 and arm64 are Debian's.)
func hostArch() string { return runtime.GOARCH }

func (a *aptConfig) foreign() bool { return a.opts != nil }

// command is tool (apt-get, apt-cache) with the architecture's options.
func (a *aptConfig) command(ctx context.Context, tool string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, tool, append(append([]string(nil), a.opts...), args...)...)
}

// aptListsMaxAge: older private lists are fetched again (the security
// archive moves the kernel on every few weeks).
const aptListsMaxAge = 24 * time.Hour

// aptFor returns the apt of arch, updating a foreign architecture's lists
// when they are missing or older than aptListsMaxAge (a failed update with
// lists present only warns: the cached ones still name packages).
func aptFor(ctx context.Context, cache, arch string, logf func(string, ...any)) (*aptConfig, error) {
	if arch == "" || arch == hostArch() {
		return &aptConfig{arch: hostArch()}, nil
	}
	switch arch {
	case "amd64", "arm64":
	default:
		return nil, fmt.Errorf("architecture %q: the lab knows amd64 and arm64", arch)
	}
	dir := filepath.Join(cache, "apt-"+arch)
	lists := filepath.Join(dir, "lists")
	a := &aptConfig{arch: arch, opts: []string{
		"-o", "APT::Architecture=" + arch, "-o", "APT::Architectures=" + arch,
		"-o", "Dir::State::Lists=" + lists, "-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
	}}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return nil, fmt.Errorf("%w: apt-get is not installed (an %s guest's packages come from Debian's archive through apt)", ErrNoKernelPackage, arch)
	}
	fresh := false
	if m, _ := filepath.Glob(filepath.Join(lists, "*_Packages*")); len(m) > 0 {
		if st, err := os.Stat(m[0]); err == nil && time.Since(st.ModTime()) < aptListsMaxAge {
			fresh = true
		}
	}
	if fresh {
		return a, nil
	}
	for _, d := range []string{filepath.Join(lists, "partial"), filepath.Join(dir, "cache", "archives", "partial")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	logf("fetching Debian's %s package lists into %s (apt-get update with the host's sources, the host's dpkg untouched)", arch, lists)
	out, err := a.command(ctx, "apt-get", "update", "-q").CombinedOutput()
	if err != nil {
		if m, _ := filepath.Glob(filepath.Join(lists, "*_Packages*")); len(m) > 0 {
			logf("apt-get update for %s failed (%v); using the lists fetched before", arch, err)
			return a, nil
		}
		return nil, fmt.Errorf("%w: apt-get update for %s: %v: %s", ErrNoKernelPackage, arch, err, lastLines(string(out), 3))
	}
	return a, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "; ")
}
