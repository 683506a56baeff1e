// SPDX-License-Identifier: Apache-2.0

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

// debianMirror is where Debian 13's packages are fetched from:
// WIRESPEED_DEBIAN_MIRROR, else deb.debian.org (the host's sources name
// only Debian 12's suites).
func debianMirror() string {
	if m := strings.TrimSpace(os.Getenv("WIRESPEED_DEBIAN_MIRROR")); m != "" {
		return strings.TrimSuffix(m, "/")
	}
	return "http://deb.debian.org/debian"
}

// aptTrixie returns an apt of arch that knows Debian 13 (trixie) and
// trixie-backports, where Debian's 7.x kernels are: package lists, cache
// and sources.list of its own under the cache (apt-trixie-ARCH), nothing of
// the host's apt or dpkg state. The archive's keys are Debian 12's
// debian-archive-keyring (it carries trixie's). Lists are fetched when
// missing or older than aptListsMaxAge, as aptFor does.
func aptTrixie(ctx context.Context, cache, arch string, logf func(string, ...any)) (*aptConfig, error) {
	switch arch {
	case "amd64", "arm64":
	default:
		return nil, fmt.Errorf("architecture %q: the lab knows amd64 and arm64", arch)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return nil, fmt.Errorf("%w: apt-get is not installed (Debian 13's kernels come from Debian's archive through apt)", ErrNoKernelPackage)
	}
	dir := filepath.Join(cache, "apt-trixie-"+arch)
	lists := filepath.Join(dir, "lists")
	sources := filepath.Join(dir, "sources.list")
	status := filepath.Join(dir, "status")
	a := &aptConfig{arch: arch, opts: []string{
		"-o", "APT::Architecture=" + arch, "-o", "APT::Architectures=" + arch,
		"-o", "Dir::State::Lists=" + lists, "-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
		"-o", "Dir::Etc::SourceList=" + sources, "-o", "Dir::Etc::SourceParts=/dev/null",
		"-o", "Dir::State::status=" + status, "-o", "Acquire::Languages=none",
	}}
	for _, d := range []string{filepath.Join(lists, "partial"), filepath.Join(dir, "cache", "archives", "partial")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	m := debianMirror()
	want := fmt.Sprintf("deb [arch=%s] %s trixie main\ndeb [arch=%s] %s trixie-backports main\n", arch, m, arch, m)
	if b, err := os.ReadFile(sources); err != nil || string(b) != want {
		if err := os.WriteFile(sources, []byte(want), 0o644); err != nil {
			return nil, err
		}
		_ = os.RemoveAll(lists) // another mirror's lists
		if err := os.MkdirAll(filepath.Join(lists, "partial"), 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(status); err != nil {
		if err := os.WriteFile(status, nil, 0o644); err != nil {
			return nil, err
		}
	}
	if l, _ := filepath.Glob(filepath.Join(lists, "*_Packages*")); len(l) > 0 {
		if st, err := os.Stat(l[0]); err == nil && time.Since(st.ModTime()) < aptListsMaxAge {
			return a, nil
		}
	}
	logf("fetching Debian 13's %s package lists (trixie, trixie-backports) from %s into %s (the host's apt and dpkg untouched)", arch, m, lists)
	out, err := a.command(ctx, "apt-get", "update", "-q").CombinedOutput()
	if err != nil {
		if l, _ := filepath.Glob(filepath.Join(lists, "*_Packages*")); len(l) > 0 {
			logf("apt-get update of Debian 13's lists failed (%v); using the lists fetched before", err)
			return a, nil
		}
		return nil, fmt.Errorf("%w: apt-get update of Debian 13 (trixie, trixie-backports) for %s: %v: %s", ErrNoKernelPackage, arch, err, lastLines(string(out), 3))
	}
	return a, nil
}
