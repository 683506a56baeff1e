// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// A foreign architecture's Debian root (the arm64 selftests guest on an
// amd64 host) cannot be made with debootstrap without running arm64
// maintainer scripts on this host, which takes binfmt_misc and
// qemu-user registered host-wide. It is made by unpacking instead: apt
// (aptTrixie's lists, which start from an empty dpkg status) downloads
// the dependency closure of debRootBase and debRootPackages, dpkg-deb -x
// unpacks each package, and debRootFixups does the little the maintainer
// scripts would have done that the selftests need.

// debRootBase are the programs of debootstrap's minbase the selftests and
// the guest's selftests.sh call in the chroot (sh, env, timeout, the
// shell tools the tests' helpers run); the rest of minbase is what
// installing packages needs, and nothing installs in this root.
var debRootBase = []string{"base-files", "base-passwd", "bash", "coreutils", "dash", "debianutils", "diffutils",
	"findutils", "grep", "gzip", "hostname", "mawk", "sed", "tar", "util-linux"}

// foreignDebianRoot builds arch's root image into dir, marked with key.
func foreignDebianRoot(ctx context.Context, cache, arch, dir, key string, logf func(string, ...any)) (string, error) {
	for _, tool := range []string{"apt-get", "dpkg-deb", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("the selftests guest's %s Debian root needs %s: apt-get install apt dpkg e2fsprogs", arch, tool)
		}
	}
	apt, err := aptTrixie(ctx, cache, arch, logf)
	if err != nil {
		return "", err
	}
	debs := filepath.Join(cache, "debroot", "debs-"+arch)
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	pkgs := append(append([]string(nil), debRootBase...), debRootPackages...)
	logf("building the selftests guest's Debian %s %s root by unpacking its packages (about 90 MB, kept in %s)", debRootSuite, arch, debs)
	files, err := downloadClosure(ctx, apt, pkgs, debs)
	if err != nil {
		return "", err
	}
	tree := filepath.Join(tmp, "tree")
	if err := unpackDebs(ctx, files, tree); err != nil {
		return "", err
	}
	if err := debRootFixups(tree); err != nil {
		return "", err
	}
	return rootImage(ctx, tree, tmp, dir, key)
}

// downloadClosure has apt download pkgs and everything they depend on
// (not what they recommend) into dir and returns the packages' files
// there. apt's status is aptTrixie's empty one, so the closure is whole;
// files already in dir are not fetched again.
func downloadClosure(ctx context.Context, apt *aptConfig, pkgs []string, dir string) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "partial"), 0o755); err != nil {
		return nil, err
	}
	args := []string{"-o", "Dir::Cache::archives=" + dir, "install", "-y", "-q", "--download-only", "--no-install-recommends"}
	if b, err := apt.command(ctx, "apt-get", append(args, pkgs...)...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: apt-get install --download-only for %s (%s): %v: %s", ErrNoKernelPackage, apt.arch, strings.Join(pkgs, " "), err, lastLines(string(b), 4))
	}
	// the closure of this run: apt names it, with the versions it chose
	out, err := apt.command(ctx, "apt-get", append([]string{"install", "-s", "--no-install-recommends"}, pkgs...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("apt-get install -s for %s: %w", apt.arch, err)
	}
	var files []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "Inst" {
			continue
		}
		ver := strings.Trim(f[2], "()")
		m, _ := filepath.Glob(filepath.Join(dir, f[1]+"_"+strings.ReplaceAll(ver, ":", "%3a")+"_*.deb"))
		if len(m) != 1 {
			return nil, fmt.Errorf("apt-get download of %s %s for %s left %d files in %s", f[1], ver, apt.arch, len(m), dir)
		}
		files = append(files, m[0])
	}
	if len(files) < len(pkgs) {
		return nil, fmt.Errorf("apt-get install -s for %s named %d packages, want at least %d", apt.arch, len(files), len(pkgs))
	}
	sort.Strings(files)
	return files, nil
}

// unpackDebs unpacks each package into tree, which starts with Debian
// 13's merged /usr (bin, sbin and lib links into usr).
func unpackDebs(ctx context.Context, files []string, tree string) error {
	for _, d := range []string{"bin", "sbin", "lib"} {
		if err := os.MkdirAll(filepath.Join(tree, "usr", d), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join("usr", d), filepath.Join(tree, d)); err != nil {
			return err
		}
	}
	for _, f := range files {
		if b, err := exec.CommandContext(ctx, "dpkg-deb", "-x", f, tree).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %w: %s", f, err, strings.TrimSpace(string(b)))
		}
	}
	return nil
}

// debRootAlternatives are the links update-alternatives would have made
// (the program, and what it points to in the same directory).
var debRootAlternatives = [][2]string{{"usr/bin/awk", "mawk"}, {"usr/bin/nawk", "mawk"}, {"usr/bin/which", "which.debianutils"}}

// debRootFixups does what the unpacked root's maintainer scripts would
// have done that the tests need: base-passwd's /etc/passwd and /etc/group
// (from its master files), and the alternatives' links.
func debRootFixups(tree string) error {
	for _, f := range []string{"passwd", "group"} {
		b, err := os.ReadFile(filepath.Join(tree, "usr/share/base-passwd", f+".master"))
		if err != nil {
			return fmt.Errorf("the unpacked root has no base-passwd: %w", err)
		}
		if err := os.WriteFile(filepath.Join(tree, "etc", f), b, 0o644); err != nil {
			return err
		}
	}
	for _, a := range debRootAlternatives {
		link := filepath.Join(tree, a[0])
		if !fileExists(filepath.Join(filepath.Dir(link), a[1])) || fileExists(link) {
			continue
		}
		if err := os.Symlink(a[1], link); err != nil {
			return err
		}
	}
	return nil
}
