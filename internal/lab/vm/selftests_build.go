// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The kernel's driver selftests (tools/testing/selftests/drivers/net, with
// net/lib: the YNL library, the netlink specs, the gro, csum and XDP
// helpers) are built on this host from Debian's linux-source-X.Y of the
// guest kernel's version and installed (kselftest's 'make install') into
// the cache; each selftests run copies that tree into the guest.

var familyRe = regexp.MustCompile(`^(\d+\.\d+)\.`)

// selftestsSource returns the Debian source package that carries k's
// selftests and whether it comes from Debian 13 (trixie, trixie-backports).
func selftestsSource(k *Kernel) (pkg, version string, trixie bool, err error) {
	m := familyRe.FindStringSubmatch(k.Release)
	if m == nil || k.Package == "" || k.PackageVersion == "" {
		return "", "", false, fmt.Errorf("the selftests are built from Debian's linux-source of the guest kernel's version; kernel %s (%s) is not one of Debian's packages", k.Release, k.Image)
	}
	trixie = strings.Contains(k.Release, "deb13") || strings.Contains(k.PackageVersion, "bpo13") || strings.Contains(k.PackageVersion, "deb13")
	return "linux-source-" + m[1], k.PackageVersion, trixie, nil
}

// Kselftests returns the installed drivers/net selftests for k (a
// directory holding run_kselftest.sh, drivers/net and net/lib), building
// them when the cache has none: linux-source fetched with apt-get download
// (Debian 13's through aptTrixie's lists), unpacked whole, 'make headers',
// then kselftest's install of TARGETS=drivers/net. This host's gcc builds
// the helpers and its clang the XDP objects; for another architecture its
// cross gcc, both with a sysroot of that architecture's Debian 13 libc
// (ksftSysroot).
func Kselftests(ctx context.Context, cache string, k *Kernel, logf func(string, ...any)) (string, error) {
	pkg, ver, trixie, err := selftestsSource(k)
	if err != nil {
		return "", err
	}
	arch := k.Arch
	if arch == "" {
		arch = hostArch()
	}
	base := filepath.Join(cache, "selftests")
	dst := filepath.Join(base, "ksft-"+ver+"-"+arch)
	key := "v1 " + pkg + " " + ver + " drivers/net\n"
	if b, err := os.ReadFile(dst + ".ready"); err == nil && string(b) == key && fileExists(filepath.Join(dst, "kselftest-list.txt")) {
		return dst, nil
	}
	tools := []string{"make", "gcc", "clang", "rsync", "bpftool"}
	if arch != hostArch() {
		tools = append(tools, crossPrefix(arch)+"gcc")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("building the kernel's selftests needs %s: apt-get install make gcc clang rsync bpftool libelf-dev zlib1g-dev python3-yaml (and gcc-%s for %s)", tool, strings.TrimSuffix(crossPrefix(arch), "-"), arch)
		}
	}
	src, err := kernelSourceTree(ctx, base, pkg, ver, trixie, cache, logf)
	if err != nil {
		return "", err
	}
	sysroot := ""
	if arch != hostArch() {
		if sysroot, err = ksftSysroot(ctx, cache, arch, logf); err != nil {
			return "", err
		}
	}
	logf("building %s's selftests (drivers/net) for %s into %s", pkg+" "+ver, arch, dst)
	// The tree's uapi headers and its YNL library are built in place: both
	// are made again for the architecture of this build.
	if b, err := exec.CommandContext(ctx, "make", "-s", "-C", src, "ARCH="+kernelArch(arch), "headers").CombinedOutput(); err != nil {
		return "", fmt.Errorf("make headers in %s: %w: %s", src, err, lastLines(string(b), 5))
	}
	if b, err := exec.CommandContext(ctx, "make", "-s", "-C", filepath.Join(src, "tools/net/ynl"), "clean").CombinedOutput(); err != nil {
		return "", fmt.Errorf("make clean in %s/tools/net/ynl: %w: %s", src, err, lastLines(string(b), 5))
	}
	_ = os.RemoveAll(dst)
	_ = os.Remove(dst + ".ready")
	obj := dst + ".build"
	_ = os.RemoveAll(obj)
	defer os.RemoveAll(obj)
	args := ksftMakeArgs(src, arch, sysroot, obj, dst)
	if b, err := exec.CommandContext(ctx, "make", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the selftests (make %s): %w: %s", strings.Join(args, " "), err, lastLines(string(b), 8))
	}
	return dst, os.WriteFile(dst+".ready", []byte(key), 0o644)
}

// crossPrefix is the GNU toolchain prefix of arch's compilers.
func crossPrefix(arch string) string {
	return map[string]string{"arm64": "aarch64-linux-gnu-", "amd64": "x86_64-linux-gnu-"}[arch]
}

// kernelArch is the kernel's ARCH of a Debian architecture.
func kernelArch(arch string) string {
	return map[string]string{"arm64": "arm64", "amd64": "x86"}[arch]
}

// ksftMakeArgs is make's command line installing drivers/net's selftests
// of the tree src for arch into dst, built in obj (O=). Another
// architecture than this host's is cross-built: its gcc and clang (the
// XDP objects' system headers) use sysroot, arch's libc and libelf.
func ksftMakeArgs(src, arch, sysroot, obj, dst string) []string {
	args := []string{"-C", filepath.Join(src, "tools/testing/selftests"), "O=" + obj, "TARGETS=drivers/net"}
	if arch != hostArch() {
		cross := crossPrefix(arch)
		args = append(args, "ARCH="+kernelArch(arch), "CROSS_COMPILE="+cross,
			"CC="+cross+"gcc --sysroot="+sysroot, "CLANG=clang --sysroot="+sysroot)
	}
	return append(args, "install", "INSTALL_PATH="+dst)
}

// ksftSysrootPackages are what cross-building the selftests links against
// and includes: libc, the uapi headers, libelf and zlib (libbpf's, built for
// the XDP objects' headers).
var ksftSysrootPackages = []string{"libc6-dev", "linux-libc-dev", "libelf-dev", "zlib1g-dev"}

// ksftSysroot returns CACHE/selftests/sysroot-ARCH, Debian 13's
// ksftSysrootPackages of arch and their dependencies unpacked, made when
// missing.
func ksftSysroot(ctx context.Context, cache, arch string, logf func(string, ...any)) (string, error) {
	dir := filepath.Join(cache, "selftests", "sysroot-"+arch)
	key := "v1 " + strings.Join(ksftSysrootPackages, " ") + "\n"
	if b, err := os.ReadFile(dir + ".ready"); err == nil && string(b) == key {
		return dir, nil
	}
	apt, err := aptTrixie(ctx, cache, arch, logf)
	if err != nil {
		return "", err
	}
	logf("unpacking Debian 13's %s libc and libelf (%s) into %s to cross-build the selftests", arch, strings.Join(ksftSysrootPackages, " "), dir)
	files, err := downloadClosure(ctx, apt, ksftSysrootPackages, filepath.Join(cache, "selftests", "debs-"+arch))
	if err != nil {
		return "", err
	}
	_ = os.Remove(dir + ".ready")
	_ = os.RemoveAll(dir)
	if err := unpackDebs(ctx, files, dir); err != nil {
		return "", err
	}
	return dir, os.WriteFile(dir+".ready", []byte(key), 0o644)
}

// kernelSourceTree returns base/src-VERSION, the whole kernel tree of
// Debian's pkg at version, fetching and unpacking it when missing.
func kernelSourceTree(ctx context.Context, base, pkg, ver string, trixie bool, cache string, logf func(string, ...any)) (string, error) {
	src := filepath.Join(base, "src-"+ver)
	if fileExists(src+".ready") && fileExists(filepath.Join(src, "Makefile")) {
		return src, nil
	}
	apt, err := aptFor(ctx, cache, hostArch(), logf)
	if trixie {
		apt, err = aptTrixie(ctx, cache, hostArch(), logf)
	}
	if err != nil {
		return "", err
	}
	tmp := src + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	logf("fetching %s %s (the kernel tree, ~150 MB) for its selftests", pkg, ver)
	dl := apt.command(ctx, "apt-get", "download", "-q", pkg+"="+ver)
	dl.Dir = tmp
	if b, err := dl.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: apt-get download %s=%s: %v: %s", ErrNoKernelPackage, pkg, ver, err, lastLines(string(b), 3))
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, pkg+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s=%s left %d packages in %s", pkg, ver, len(debs), tmp)
	}
	if b, err := exec.CommandContext(ctx, "dpkg-deb", "-x", debs[0], filepath.Join(tmp, "deb")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %w: %s", debs[0], err, strings.TrimSpace(string(b)))
	}
	tarball := filepath.Join(tmp, "deb", "usr", "src", pkg+".tar.xz")
	if b, err := exec.CommandContext(ctx, "tar", "-C", tmp, "-xJf", tarball).CombinedOutput(); err != nil {
		return "", fmt.Errorf("unpacking %s: %w: %s", tarball, err, lastLines(string(b), 3))
	}
	_ = os.RemoveAll(src)
	if err := os.Rename(filepath.Join(tmp, pkg), src); err != nil {
		return "", err
	}
	return src, os.WriteFile(src+".ready", []byte(pkg+" "+ver+"\n"), 0o644)
}
