// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The selftests scenario's guest runs the kernel's Python selftests, which
// a busybox initramfs cannot: it mounts a small Debian 13 root from a disk
// image and runs them there in a chroot. The image is made once with
// debootstrap and kept in the cache.

// debRootSuite is the Debian release of the selftests guest's root.
const debRootSuite = "trixie"

// debRootPackages are what the kernel's driver selftests need in the guest
// (tools/testing/selftests/drivers/net/README.rst and lib/py): python3 with
// yaml for YNL, iproute2 and ethtool with JSON output, socat, bpftrace for
// netpoll_basic.py, ping, and iperf3 for the tests that make load.
var debRootPackages = []string{"python3", "python3-yaml", "iproute2", "ethtool", "socat", "bpftrace", "iputils-ping", "procps", "iperf3", "kmod"}

// debRootKey is the cache key of the root: what goes in.
func debRootKey(arch string) string {
	if arch != hostArch() {
		return fmt.Sprintf("v1 %s %s extract %s %s\n", debRootSuite, arch, strings.Join(debRootBase, ","), strings.Join(debRootPackages, ","))
	}
	return fmt.Sprintf("v1 %s %s minbase %s\n", debRootSuite, arch, strings.Join(debRootPackages, ","))
}

// DebianRoot returns the path of an ext4 image holding a minimal Debian 13
// root with debRootPackages, made with debootstrap (its package cache kept
// in CACHE/debroot/debs, so a rebuild downloads nothing) and mkfs.ext4 -d.
// QEMU opens it with snapshot=on: the guest's writes never reach it. A
// foreign architecture's root is made by unpacking its packages instead
// (foreignDebianRoot): debootstrap's second stage would run the foreign
// maintainer scripts, which needs binfmt_misc on this host.
func DebianRoot(ctx context.Context, cache, arch string, logf func(string, ...any)) (string, error) {
	if arch == "" {
		arch = hostArch()
	}
	dir := filepath.Join(cache, "debroot", debRootSuite+"-"+arch)
	img := filepath.Join(dir, "root.ext4")
	key := debRootKey(arch)
	if b, err := os.ReadFile(filepath.Join(dir, "ready")); err == nil && string(b) == key && fileExists(img) {
		return img, nil
	}
	if arch != hostArch() {
		return foreignDebianRoot(ctx, cache, arch, dir, key, logf)
	}
	for _, tool := range []string{"debootstrap", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("the selftests guest's Debian root needs %s: apt-get install debootstrap e2fsprogs", tool)
		}
	}
	debs := filepath.Join(cache, "debroot", "debs")
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	logf("building the selftests guest's Debian %s root (debootstrap, about 100 MB of packages, kept in %s)", debRootSuite, debs)
	args := []string{"--variant=minbase", "--arch=" + arch, "--cache-dir=" + debs, "--include=" + strings.Join(debRootPackages, ","),
		debRootSuite, tree, debianMirror()}
	if b, err := exec.CommandContext(ctx, "debootstrap", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("debootstrap %s: %w: %s", strings.Join(args, " "), err, lastLines(string(b), 5))
	}
	return rootImage(ctx, tree, tmp, dir, key)
}

// rootImage makes tree into dir/root.ext4 (mkfs.ext4 -d, built in tmp),
// marked ready with key, and returns the image's path.
func rootImage(ctx context.Context, tree, tmp, dir, key string) (string, error) {
	img := filepath.Join(dir, "root.ext4")
	// Nothing of the archive's caches is needed in the guest.
	_ = os.RemoveAll(filepath.Join(tree, "var", "cache", "apt", "archives"))
	size, err := treeSizeMB(tree)
	if err != nil {
		return "", err
	}
	timg := filepath.Join(tmp, "root.ext4")
	mk := []string{"-q", "-F", "-L", "wsroot", "-d", tree, timg, fmt.Sprintf("%dM", size*3/2+256)}
	if b, err := exec.CommandContext(ctx, "mkfs.ext4", mk...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("mkfs.ext4 %s: %w: %s", strings.Join(mk, " "), err, lastLines(string(b), 3))
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(timg, img); err != nil {
		return "", err
	}
	return img, os.WriteFile(filepath.Join(dir, "ready"), []byte(key), 0o644)
}

// treeSizeMB is the size of the files below dir in MiB, rounded up.
func treeSizeMB(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n>>20 + 1, err
}
