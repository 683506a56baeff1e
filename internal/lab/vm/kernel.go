// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Kernel is a guest kernel with its modules.
type Kernel struct {
	// Release is the kernel's uname -r ("6.12.117+deb12-amd64").
	Release string `json:"release"`
	// Package is the Debian package it came from ("" for --kernel).
	Package string `json:"package,omitempty"`
	// PackageVersion is that package's version ("6.12.117-1~deb12u1").
	PackageVersion string `json:"package_version,omitempty"`
	// Image is the bzImage/vmlinuz file.
	Image string `json:"image"`
	// ModulesDir is the lib/modules/RELEASE tree (with modules.dep).
	ModulesDir string `json:"modules_dir"`
	// HeadersDir holds the matching headers (for building modules), if fetched.
	HeadersDir string `json:"headers_dir,omitempty"`
	// Config is the kernel's config file, if known.
	Config string `json:"config,omitempty"`
	// Arch is the Debian architecture of the kernel ("amd64", "arm64").
	Arch string `json:"arch,omitempty"`
	// DTBDir holds the kernel package's device trees (arm64).
	DTBDir string `json:"dtb_dir,omitempty"`
}

// DefaultCacheDir is where kernels and initramfs images are kept:
// /var/cache/wirespeed as root, else $XDG_CACHE_HOME/wirespeed (~/.cache/wirespeed).
func DefaultCacheDir() string {
	if os.Geteuid() == 0 {
		return "/var/cache/wirespeed"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "wirespeed")
	}
	return filepath.Join(os.TempDir(), "wirespeed-cache")
}

// ErrNoKernelPackage says apt knows no matching kernel package (no network,
// or sources without bookworm-security / bookworm-updates). Tests skip on it.
var ErrNoKernelPackage = errors.New("no Debian kernel package available")

// The kernel families the lab boots, for amd64 and arm64: Debian 12's
// default 6.1 (linux-image-6.1.0-N-ARCH-unsigned, release 6.1.0-N-ARCH),
// 6.12 from bookworm-security / backports (6.12.N+deb12-ARCH), and 7.x
// from Debian 13's trixie-backports (7.Y.N+deb13-ARCH, Y = 0-3, the
// releases kernel/usbnet's 7.x series is for), fetched through apt lists
// of its own in the cache (aptTrixie).
var (
	release61Re  = regexp.MustCompile(`^6\.1\.0-(\d+)-(amd64|arm64)$`)
	release612Re = regexp.MustCompile(`^6\.12\.(\d+)\+deb12-(amd64|arm64)$`)
	release7Re   = regexp.MustCompile(`^7\.([0-3])\.(\d+)\+deb13-(amd64|arm64)$`)
	// what --kernel-version may shorten a release to: 6.1.0-56, 6.12.117, 7.3.4
	short61Re  = regexp.MustCompile(`^6\.1\.0-\d+$`)
	short612Re = regexp.MustCompile(`^6\.12\.\d+$`)
	short7Re   = regexp.MustCompile(`^7\.[0-3]\.\d+$`)
)

// DefaultFamily is the family the lab boots when --kernel-version is not given.
const DefaultFamily = "6.12"

// Family7x is the family name of Debian 13's 7.0-7.3 kernels.
const Family7x = "7.x"

// releaseFamily returns "6.1", "6.12" or "7.x" for a release the lab can
// fetch, and the number that orders releases within it (the ABI number
// 6.1.0-N, the patch level 6.12.N, 7.Y.N as Y*10000+N); "" when it is
// none of them.
func releaseFamily(rel string) (string, int) {
	if m := release61Re.FindStringSubmatch(rel); m != nil {
		n, _ := strconv.Atoi(m[1])
		return "6.1", n
	}
	if m := release612Re.FindStringSubmatch(rel); m != nil {
		n, _ := strconv.Atoi(m[1])
		return "6.12", n
	}
	if m := release7Re.FindStringSubmatch(rel); m != nil {
		y, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		return Family7x, y*10000 + n
	}
	return "", -1
}

// releaseArch is the architecture a fetchable release is built for
// ("amd64", "arm64"), "" for other names.
func releaseArch(rel string) string {
	for _, re := range []*regexp.Regexp{release61Re, release612Re, release7Re} {
		if m := re.FindStringSubmatch(rel); m != nil {
			return m[len(m)-1]
		}
	}
	return ""
}

// normalizeRelease turns what --kernel-version takes into a family to pick
// the newest of ("6.1", "6.12", "7.x", "") or one release of arch:
// "6.12.117" -> "6.12.117+deb12-ARCH", "6.1.0-56" -> "6.1.0-56-ARCH",
// "7.3.4" -> "7.3.4+deb13-ARCH"; package names (linux-image-...-unsigned)
// are accepted too, and a full release must be of arch.
func normalizeRelease(v, arch string) (family, release string, err error) {
	v = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "linux-image-"), "-unsigned")
	switch v {
	case "":
		return DefaultFamily, "", nil
	case "6.1", "6.12", Family7x:
		return v, "", nil
	}
	switch {
	case short612Re.MatchString(v):
		v += "+deb12-" + arch
	case short61Re.MatchString(v):
		v += "-" + arch
	case short7Re.MatchString(v):
		v += "+deb13-" + arch
	}
	if f, _ := releaseFamily(v); f != "" {
		if a := releaseArch(v); a != arch {
			return "", "", fmt.Errorf("--kernel-version %q is an %s kernel and this guest is %s: give --arch %s, or the release without its suffix", v, a, arch, a)
		}
		return f, v, nil
	}
	return "", "", fmt.Errorf("--kernel-version %q: the lab boots Debian's kernels: a family (6.1 = bookworm's default 6.1.0-N-%[2]s, 6.12 = 6.12.N+deb12-%[2]s, 7.x = trixie-backports' 7.Y.N+deb13-%[2]s, Y = 0-3) or a release (6.1.0-56, 6.12.117, 7.3.4, 6.12.117+deb12-%[2]s); use --kernel and --modules for any other kernel", v, arch)
}

// kernelApt is the apt that knows a family's kernel packages: the host's
// (or, for arm64 on amd64, aptFor's) for Debian 12's families, Debian 13's
// lists of its own for 7.x.
func kernelApt(ctx context.Context, cache, family, arch string, logf func(string, ...any)) (*aptConfig, error) {
	if family == Family7x {
		return aptTrixie(ctx, cache, arch, logf)
	}
	return aptFor(ctx, cache, arch, logf)
}

// newestKernelPackage asks apt-cache for the newest kernel of a family
// (linux-image-6.1.0-N-ARCH-unsigned, -6.12.N+deb12-ARCH-unsigned or
// -7.Y.N+deb13-ARCH) and
// returns its release.
func newestKernelPackage(ctx context.Context, apt *aptConfig, family string) (release string, err error) {
	pattern := `^linux-image-6\.12\.[0-9]+\+deb12-` + apt.arch + `-unsigned$`
	switch family {
	case "6.1":
		pattern = `^linux-image-6\.1\.0-[0-9]+-` + apt.arch + `-unsigned$`
	case Family7x:
		pattern = `^linux-image-7\.[0-3]\.[0-9]+\+deb13-` + apt.arch + `$`
	}
	if _, err := exec.LookPath("apt-cache"); err != nil {
		return "", fmt.Errorf("%w: apt-cache is not installed (this needs a Debian-based host with apt, or give --kernel and --modules)", ErrNoKernelPackage)
	}
	out, err := apt.command(ctx, "apt-cache", "search", "--names-only", pattern).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache search: %w", err)
	}
	best := -1
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(line, " ")
		rel := strings.TrimSuffix(strings.TrimPrefix(name, "linux-image-"), "-unsigned")
		if f, n := releaseFamily(rel); f == family && releaseArch(rel) == apt.arch && n > best {
			best, release = n, rel
		}
	}
	if best < 0 {
		where := "run 'apt-get update' with bookworm, bookworm-security and bookworm-updates in /etc/apt/sources.list"
		if family == Family7x {
			where = "the lab's own Debian 13 lists (trixie-backports) name none: check network access to " + debianMirror() + " (WIRESPEED_DEBIAN_MIRROR)"
		}
		return "", fmt.Errorf("%w: apt-cache lists no linux-image of the %s family for %s (%s); %s, or give --kernel and --modules", ErrNoKernelPackage, family, apt.arch, pattern, where)
	}
	return release, nil
}

// cachedReleases lists kernels of a family and architecture already
// extracted in the cache, newest first.
func cachedReleases(cache, family, arch string) []string {
	ents, _ := os.ReadDir(filepath.Join(cache, "kernel"))
	var rel []string
	for _, e := range ents {
		if f, _ := releaseFamily(e.Name()); f != family || releaseArch(e.Name()) != arch {
			continue
		}
		if _, err := os.Stat(filepath.Join(cache, "kernel", e.Name(), "ready")); err == nil {
			rel = append(rel, e.Name())
		}
	}
	sort.Slice(rel, func(i, j int) bool {
		_, a := releaseFamily(rel[i])
		_, b := releaseFamily(rel[j])
		return a > b
	})
	return rel
}

// kernelPackages names the packages of a release: the kernel image first,
// then the rest of what boots (7.x: its base files and modules), then what
// builds modules for it (headers, the common headers, kbuild - always
// last). Debian 12 ships image and modules as linux-image-R-unsigned;
// Debian 13's 7.x splits them into linux-binary-unsigned-R (the image),
// linux-base-R (config, System.map, device trees) and linux-modules-R.
func kernelPackages(release string) []string {
	f, _ := releaseFamily(release)
	base := strings.TrimSuffix(release, "-"+releaseArch(release)) // 6.12.117+deb12, 6.1.0-56, 7.3.4+deb13
	headers := []string{"linux-headers-" + release, "linux-headers-" + base + "-common"}
	switch f {
	case "6.1":
		// one linux-kbuild-6.1 for every 6.1.0-N ABI
		return append([]string{"linux-image-" + release + "-unsigned"}, append(headers, "linux-kbuild-6.1")...)
	case Family7x:
		return append([]string{"linux-binary-unsigned-" + release, "linux-base-" + release, "linux-modules-" + release},
			append(headers, "linux-kbuild-"+base)...)
	}
	return append([]string{"linux-image-" + release + "-unsigned"}, append(headers, "linux-kbuild-"+base)...)
}

// kernelLayout is where a release's files are once its packages are
// unpacked into root: Debian 12's in /boot, /lib/modules and
// /usr/lib/linux-image-R (device trees); Debian 13's 7.x all in
// /usr/lib/modules/R (vmlinuz.unsigned, config, dtb/).
func kernelLayout(k *Kernel, root string) {
	if f, _ := releaseFamily(k.Release); f == Family7x {
		m := filepath.Join(root, "usr", "lib", "modules", k.Release)
		k.Image = filepath.Join(m, "vmlinuz.unsigned")
		k.ModulesDir = m
		k.Config = filepath.Join(m, "config")
		if k.Arch == "arm64" {
			k.DTBDir = filepath.Join(m, "dtb")
		}
	} else {
		k.Image = filepath.Join(root, "boot", "vmlinuz-"+k.Release)
		k.ModulesDir = filepath.Join(root, "lib", "modules", k.Release)
		k.Config = filepath.Join(root, "boot", "config-"+k.Release)
		if k.Arch == "arm64" {
			k.DTBDir = filepath.Join(root, "usr", "lib", "linux-image-"+k.Release)
		}
	}
	k.HeadersDir = filepath.Join(root, "usr", "src", "linux-headers-"+k.Release)
}

// FetchKernel returns a Debian kernel of arch ("amd64", "arm64"; "" is
// amd64) from the cache, downloading and extracting it first when needed:
// release "" or "6.12" means the newest 6.12.N+deb12-ARCH that apt knows,
// "6.1" the newest 6.1.0-N-ARCH (bookworm's default), falling back to the
// newest cached one of the family when apt cannot answer; "6.12.117" or
// "6.1.0-56" names one. Packages are fetched with apt-get download (a
// foreign architecture's through apt lists of its own in the cache, see
// aptFor) and unpacked with dpkg-deb -x; nothing is installed on the host.
// depmod writes modules.dep and modules.alias into the extracted tree; the
// host's kmod handles any architecture's modules. logf reports progress.
func FetchKernel(ctx context.Context, cache, release, arch string, logf func(string, ...any)) (*Kernel, error) {
	if arch == "" {
		arch = "amd64"
	}
	family, release, apt, err := resolveRelease(ctx, cache, release, arch, logf)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cache, "kernel", release)
	pkgs := kernelPackages(release)
	k := &Kernel{Release: release, Package: pkgs[0], Arch: arch}
	kernelLayout(k, filepath.Join(dir, "root"))
	if b, err := os.ReadFile(filepath.Join(dir, "ready")); err == nil {
		k.PackageVersion = strings.TrimSpace(string(b))
		return k, nil
	}
	for _, tool := range []string{"apt-get", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: %s is not installed (fetching the guest kernel needs apt; or give --kernel and --modules)", ErrNoKernelPackage, tool)
		}
	}
	if _, err := exec.LookPath("depmod"); err != nil {
		return nil, fmt.Errorf("depmod is not installed: apt-get install kmod")
	}
	debs := filepath.Join(cache, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return nil, err
	}
	// linux-headers-R depends on its -common headers and linux-kbuild (the
	// build tools): all three build modules. All four have one version:
	// linux-kbuild-6.1 serves every 6.1.0-N, so the version is pinned.
	if apt.foreign() || family == Family7x {
		// linux-kbuild holds programs of the kernel's architecture, which
		// cannot build modules here (kernel/usbnet/build.sh cross-builds
		// with the host's kbuild); Debian 13's are linked against a newer
		// glibc than Debian 12's (kernel/usbnet/net-next builds 7.x
		// modules in a Debian 13 root).
		pkgs = pkgs[:len(pkgs)-1]
	}
	ver, err := downloadKernel(ctx, apt, pkgs, debs, logf)
	if err != nil {
		return nil, err
	}
	if err := unpackKernel(ctx, k, pkgs, ver, debs, dir, logf); err != nil {
		return nil, err
	}
	return k, nil
}

// resolveRelease returns release's family, the release to fetch and the
// family's apt: release normalized for arch, or when none is named the
// newest that apt knows, or the newest cached one when apt cannot answer.
func resolveRelease(ctx context.Context, cache, release, arch string, logf func(string, ...any)) (string, string, *aptConfig, error) {
	family, release, err := normalizeRelease(release, arch)
	if err != nil {
		return "", "", nil, err
	}
	apt, err := kernelApt(ctx, cache, family, arch, logf)
	if err != nil {
		return "", "", nil, err
	}
	if release == "" {
		r, err := newestKernelPackage(ctx, apt, family)
		if err != nil {
			if c := cachedReleases(cache, family, arch); len(c) > 0 {
				logf("apt cannot name the newest %s kernel (%v); using cached %s", family, err, c[0])
				release = c[0]
			} else {
				return "", "", nil, err
			}
		} else {
			release = r
		}
	}
	return family, release, apt, nil
}

// downloadKernel downloads pkgs, all at the version apt would fetch of the
// first, into debs with apt-get download, and returns that version.
func downloadKernel(ctx context.Context, apt *aptConfig, pkgs []string, debs string, logf func(string, ...any)) (string, error) {
	ver, err := candidateVersion(ctx, apt, pkgs[0])
	if err != nil {
		return "", err
	}
	want := make([]string, len(pkgs))
	for i, p := range pkgs {
		want[i] = p + "=" + ver
	}
	logf("downloading %s with apt-get download into %s", strings.Join(want, " "), debs)
	cmd := apt.command(ctx, "apt-get", append([]string{"download", "-q"}, want...)...)
	cmd.Dir = debs
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "Unable to locate") || strings.Contains(msg, "Failed to fetch") || strings.Contains(msg, "Temporary failure") || strings.Contains(msg, "Could not resolve") {
			return "", fmt.Errorf("%w: apt-get download %s: %s (check network access and run apt-get update)", ErrNoKernelPackage, strings.Join(pkgs, " "), msg)
		}
		return "", fmt.Errorf("apt-get download %s: %w: %s", strings.Join(pkgs, " "), err, msg)
	}
	return ver, nil
}

// unpackKernel unpacks the downloaded pkgs of version ver from debs into
// dir/root with dpkg-deb -x (k's package sets k.PackageVersion), runs
// depmod there and marks dir ready. It works in dir.tmp, renamed to dir
// once complete.
func unpackKernel(ctx context.Context, k *Kernel, pkgs []string, ver, debs, dir string, logf func(string, ...any)) error {
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	for _, p := range pkgs {
		m, _ := filepath.Glob(filepath.Join(debs, p+"_"+strings.ReplaceAll(ver, ":", "%3a")+"_*.deb"))
		if len(m) == 0 {
			return fmt.Errorf("apt-get download left no %s_*.deb in %s", p, debs)
		}
		sort.Strings(m)
		deb := m[len(m)-1]
		logf("extracting %s", filepath.Base(deb))
		if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, filepath.Join(tmp, "root")).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, strings.TrimSpace(string(out)))
		}
		if p == k.Package {
			if v, err := exec.CommandContext(ctx, "dpkg-deb", "-f", deb, "Version").Output(); err == nil {
				k.PackageVersion = strings.TrimSpace(string(v))
			}
		}
	}
	// Debian 13 is merged-/usr: its modules are in usr/lib/modules, where
	// depmod -b looks in lib/modules.
	if _, err := os.Lstat(filepath.Join(tmp, "root", "lib")); errors.Is(err, fs.ErrNotExist) {
		if err := os.Symlink("usr/lib", filepath.Join(tmp, "root", "lib")); err != nil {
			return err
		}
	}
	// The package ships no modules.dep (postinst runs depmod); make it here.
	if out, err := exec.CommandContext(ctx, "depmod", "-b", filepath.Join(tmp, "root"), k.Release).CombinedOutput(); err != nil {
		return fmt.Errorf("depmod -b %s %s: %w: %s", tmp, k.Release, err, strings.TrimSpace(string(out)))
	}
	// The headers' build link points at /usr/src/...; leave a note where they are.
	if err := os.WriteFile(filepath.Join(tmp, "ready"), []byte(k.PackageVersion+"\n"), 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// candidateVersion is the version apt would fetch of a package.
func candidateVersion(ctx context.Context, apt *aptConfig, pkg string) (string, error) {
	out, err := apt.command(ctx, "apt-cache", "policy", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache policy %s: %w", pkg, err)
	}
	if v := parseCandidate(string(out)); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%w: apt knows no %s (run apt-get update; or give --kernel and --modules)", ErrNoKernelPackage, pkg)
}

// parseCandidate reads the "Candidate:" line of apt-cache policy's output:
// "" when there is none, "(none)", or a value that is not one Debian version
// (no spaces, nothing apt-get download would take as a second argument).
func parseCandidate(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok {
			v = strings.TrimSpace(v)
			if v == "" || v == "(none)" || strings.ContainsAny(v, " \t=") {
				return ""
			}
			return v
		}
	}
	return ""
}

// UserKernel describes a kernel given with --kernel and --modules. The
// modules directory needs modules.dep (depmod); its base name is taken as
// the release unless the image says otherwise.
func UserKernel(image, modules string) (*Kernel, error) {
	if _, err := os.Stat(image); err != nil {
		return nil, fmt.Errorf("--kernel %s: %w", image, err)
	}
	if modules == "" {
		return nil, fmt.Errorf("--kernel needs --modules DIR (the lib/modules/RELEASE tree of that kernel, with modules.dep)")
	}
	if _, err := os.Stat(filepath.Join(modules, "modules.dep")); err != nil {
		return nil, fmt.Errorf("--modules %s has no modules.dep: run 'depmod -b BASE RELEASE' for it (BASE/lib/modules/RELEASE)", modules)
	}
	k := &Kernel{Release: filepath.Base(filepath.Clean(modules)), Image: image, ModulesDir: modules}
	if c := filepath.Join(filepath.Dir(image), "config-"+k.Release); fileExists(c) {
		k.Config = c
	}
	return k, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
