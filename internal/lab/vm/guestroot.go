// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// guestPackages are the Debian packages a foreign architecture's guest
// programs come from: the same programs the x86 guest takes from the host
// (busybox, iperf3, iproute2, ethtool, wg, udevadm for the tune step).
var guestPackages = []string{"busybox-static", "iperf3", "iproute2", "ethtool", "wireguard-tools", "udev"}

// guestLibPackage says whether a package of the guest packages' dependency
// closure is fetched: the libraries, not what only installing needs
// (debconf, perl, PAM, adduser).
func guestLibPackage(name string) bool {
	if name == "zlib1g" {
		return true
	}
	if !strings.HasPrefix(name, "lib") {
		return false
	}
	for _, skip := range []string{"perl", "libpam", "libsemanage", "libnewt", "libslang", "libdebian-installer", "libtextwrap", "libgdbm", "libreadline", "libtinfo"} {
		if strings.Contains(name, skip) {
			return false
		}
	}
	return true
}

// debPackageRe is a Debian package name (Policy 5.6.1), with apt's
// ":arch" qualifier.
var debPackageRe = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+(:[a-z0-9]+)?$`)

// parseDepends reads 'apt-cache depends --recurse' output: the package
// names it lists at the left margin (dependencies are indented; virtual
// packages are in angle brackets).
func parseDepends(out string) []string {
	seen := map[string]bool{}
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if !debPackageRe.MatchString(l) {
			continue // a dependency line, a virtual <package>, anything else
		}
		if !seen[l] {
			seen[l] = true
			names = append(names, l)
		}
	}
	sort.Strings(names)
	return names
}

// GuestRoot returns a directory holding a foreign architecture's guest
// programs and their libraries, unpacked from Debian's packages (fetched
// with apt-get download through aptFor's lists, unpacked with dpkg-deb -x;
// nothing is installed). It is kept in the cache and made again when the
// package list changes.
func GuestRoot(ctx context.Context, cache, arch string, logf func(string, ...any)) (string, error) {
	return guestRoot(ctx, cache, arch, nil, logf)
}

// perfPackages are what --profile adds to a foreign guest's programs:
// perf and the libraries it links (libperl and libslang among them, which
// guestLibPackage leaves out otherwise). They make a root of their own,
// guest-ARCH-perf, so the plain root stays as it is.
var perfPackages = []string{"linux-perf"}

func perfLibPackage(name string) bool {
	return strings.HasPrefix(name, "libperl5") || strings.HasPrefix(name, "libslang2")
}

// guestRoot is GuestRoot with extra packages (perfPackages, or none).
func guestRoot(ctx context.Context, cache, arch string, extra []string, logf func(string, ...any)) (string, error) {
	apt, err := aptFor(ctx, cache, arch, logf)
	if err != nil {
		return "", err
	}
	pkgs := append(append([]string(nil), guestPackages...), extra...)
	name := "guest-" + arch
	if len(extra) > 0 {
		name += "-perf"
	}
	dir := filepath.Join(cache, name)
	root := filepath.Join(dir, "root")
	// the key changes with what goes in: the packages and guestLibPackage's rule
	key := "v2 " + strings.Join(pkgs, " ") + "\n"
	if b, err := os.ReadFile(filepath.Join(dir, "ready")); err == nil && strings.HasPrefix(string(b), key) {
		return root, nil
	}
	args := []string{"depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"}
	out, err := apt.command(ctx, "apt-cache", append(args, pkgs...)...).Output()
	if err != nil {
		return "", fmt.Errorf("%w: apt-cache depends %s for %s: %v", ErrNoKernelPackage, strings.Join(pkgs, " "), arch, err)
	}
	want := append([]string(nil), pkgs...)
	for _, n := range parseDepends(string(out)) {
		if guestLibPackage(n) || (len(extra) > 0 && perfLibPackage(n)) {
			want = append(want, n)
		}
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	debs := filepath.Join(tmp, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	logf("downloading the %s guest's programs: %d packages (%s and their libraries)", arch, len(want), strings.Join(pkgs, ", "))
	cmd := apt.command(ctx, "apt-get", append([]string{"download", "-q"}, want...)...)
	cmd.Dir = debs
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: apt-get download for the %s guest: %v: %s", ErrNoKernelPackage, arch, err, lastLines(string(b), 3))
	}
	files, _ := filepath.Glob(filepath.Join(debs, "*.deb"))
	if len(files) < len(pkgs) {
		return "", fmt.Errorf("apt-get download left %d packages in %s, want at least %d", len(files), debs, len(pkgs))
	}
	sort.Strings(files)
	var have []string
	for _, f := range files {
		if b, err := exec.CommandContext(ctx, "dpkg-deb", "-x", f, filepath.Join(tmp, "root")).CombinedOutput(); err != nil {
			return "", fmt.Errorf("dpkg-deb -x %s: %w: %s", f, err, strings.TrimSpace(string(b)))
		}
		have = append(have, filepath.Base(f))
	}
	if err := os.WriteFile(filepath.Join(tmp, "ready"), []byte(key+strings.Join(have, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	_ = os.RemoveAll(filepath.Join(tmp, "debs"))
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return root, nil
}

// userEmulator is QEMU's user-mode emulator of arch on this host
// (qemu-user-static), which runs the foreign busybox to list its applets.
func userEmulator(arch string) (string, error) {
	q := map[string]string{"arm64": "aarch64", "amd64": "x86_64"}[arch]
	for _, n := range []string{"qemu-" + q + "-static", "qemu-" + q} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no qemu-%s-static to run the %s guest's busybox on this host (it lists the applets the image links): apt-get install qemu-user-static", q, arch)
}

// guestWirespeed finds the wirespeed binary of a foreign architecture:
// --wirespeed, else dist/wirespeed-linux-ARCH (make cross) next to this
// binary or in the working directory.
func guestWirespeed(given, arch string) (string, error) {
	if given != "" {
		return given, checkELFArch(given, arch, "--wirespeed")
	}
	name := "wirespeed-linux-" + arch
	var cands []string
	if exe, err := os.Executable(); err == nil {
		d := filepath.Dir(exe)
		cands = append(cands, filepath.Join(d, "dist", name), filepath.Join(d, name))
	}
	cands = append(cands, filepath.Join("dist", name))
	for _, c := range cands {
		if fileExists(c) {
			return c, checkELFArch(c, arch, "the guest's wirespeed")
		}
	}
	return "", fmt.Errorf("no %s wirespeed binary for the guest (looked for %s): build it with 'make cross' and pass --wirespeed dist/%s", arch, strings.Join(cands, ", "), name)
}
