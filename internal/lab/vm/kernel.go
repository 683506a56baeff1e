package vm

import (
	"context"
	"errors"
	"fmt"
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

// The two Debian 12 kernel families the lab boots, for amd64 and arm64:
// bookworm's default 6.1 (linux-image-6.1.0-N-ARCH-unsigned, release
// 6.1.0-N-ARCH) and 6.12 from bookworm-security / backports
// (linux-image-6.12.N+deb12-ARCH-unsigned).
var (
	release61Re  = regexp.MustCompile(`^6\.1\.0-(\d+)-(amd64|arm64)$`)
	release612Re = regexp.MustCompile(`^6\.12\.(\d+)\+deb12-(amd64|arm64)$`)
	// what --kernel-version may shorten a release to: 6.1.0-56, 6.12.117
	short61Re  = regexp.MustCompile(`^6\.1\.0-\d+$`)
	short612Re = regexp.MustCompile(`^6\.12\.\d+$`)
)

// DefaultFamily is the family the lab boots when --kernel-version is not given.
const DefaultFamily = "6.12"

// releaseFamily returns "6.1" or "6.12" for a release the lab can fetch, and
// the number that orders releases within it (the ABI number 6.1.0-N, the
// patch level 6.12.N); "" when it is neither.
func releaseFamily(rel string) (string, int) {
	if m := release61Re.FindStringSubmatch(rel); m != nil {
		n, _ := strconv.Atoi(m[1])
		return "6.1", n
	}
	if m := release612Re.FindStringSubmatch(rel); m != nil {
		n, _ := strconv.Atoi(m[1])
		return "6.12", n
	}
	return "", -1
}

// releaseArch is the architecture a fetchable release is built for
// ("amd64", "arm64"), "" for other names.
func releaseArch(rel string) string {
	for _, re := range []*regexp.Regexp{release61Re, release612Re} {
		if m := re.FindStringSubmatch(rel); m != nil {
			return m[2]
		}
	}
	return ""
}

// normalizeRelease turns what --kernel-version takes into a family to pick
// the newest of ("6.1", "6.12", "") or one release of arch: "6.12.117" ->
// "6.12.117+deb12-ARCH", "6.1.0-56" -> "6.1.0-56-ARCH"; package names
// (linux-image-...-unsigned) are accepted too, and a full release must be
// of arch.
func normalizeRelease(v, arch string) (family, release string, err error) {
	v = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "linux-image-"), "-unsigned")
	switch v {
	case "":
		return DefaultFamily, "", nil
	case "6.1", "6.12":
		return v, "", nil
	}
	if short612Re.MatchString(v) {
		v += "+deb12-" + arch
	} else if short61Re.MatchString(v) {
		v += "-" + arch
	}
	if f, _ := releaseFamily(v); f != "" {
		if a := releaseArch(v); a != arch {
			return "", "", fmt.Errorf("--kernel-version %q is an %s kernel and this guest is %s: give --arch %s, or the release without its suffix", v, a, arch, a)
		}
		return f, v, nil
	}
	return "", "", fmt.Errorf("--kernel-version %q: the lab boots Debian 12's kernels: a family (6.1 = bookworm's default 6.1.0-N-%[2]s, 6.12 = 6.12.N+deb12-%[2]s) or a release (6.1.0-56, 6.12.117, 6.12.117+deb12-%[2]s); use --kernel and --modules for any other kernel", v, arch)
}

// newestKernelPackage asks apt-cache for the newest kernel of a family
// (linux-image-6.1.0-N-ARCH-unsigned or -6.12.N+deb12-ARCH-unsigned) and
// returns its release.
func newestKernelPackage(ctx context.Context, apt *aptConfig, family string) (release string, err error) {
	pattern := `^linux-image-6\.12\.[0-9]+\+deb12-` + apt.arch + `-unsigned$`
	if family == "6.1" {
		pattern = `^linux-image-6\.1\.0-[0-9]+-` + apt.arch + `-unsigned$`
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
		return "", fmt.Errorf("%w: apt-cache lists no linux-image of the %s family for %s (%s); run 'apt-get update' with bookworm, bookworm-security and bookworm-updates in /etc/apt/sources.list, or give --kernel and --modules", ErrNoKernelPackage, family, apt.arch, pattern)
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

// kernelPackages names the packages of a release: the image, then what
// builds modules for it (headers, the common headers, kbuild).
func kernelPackages(release string) []string {
	f, _ := releaseFamily(release)
	base := strings.TrimSuffix(release, "-"+releaseArch(release)) // 6.12.117+deb12, 6.1.0-56
	kbuild := "linux-kbuild-" + base
	if f == "6.1" {
		kbuild = "linux-kbuild-6.1" // one package for every 6.1.0-N ABI
	}
	return []string{"linux-image-" + release + "-unsigned", "linux-headers-" + release, "linux-headers-" + base + "-common", kbuild}
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
	family, release, err := normalizeRelease(release, arch)
	if err != nil {
		return nil, err
	}
	apt, err := aptFor(ctx, cache, arch, logf)
	if err != nil {
		return nil, err
	}
	if release == "" {
		r, err := newestKernelPackage(ctx, apt, family)
		if err != nil {
			if c := cachedReleases(cache, family, arch); len(c) > 0 {
				logf("apt cannot name the newest %s kernel (%v); using cached %s", family, err, c[0])
				release = c[0]
			} else {
				return nil, err
			}
		} else {
			release = r
		}
	}
	dir := filepath.Join(cache, "kernel", release)
	k := &Kernel{
		Release:    release,
		Package:    "linux-image-" + release + "-unsigned",
		Image:      filepath.Join(dir, "root", "boot", "vmlinuz-"+release),
		ModulesDir: filepath.Join(dir, "root", "lib", "modules", release),
		HeadersDir: filepath.Join(dir, "root", "usr", "src", "linux-headers-"+release),
		Config:     filepath.Join(dir, "root", "boot", "config-"+release),
		Arch:       arch,
	}
	if arch == "arm64" {
		k.DTBDir = filepath.Join(dir, "root", "usr", "lib", "linux-image-"+release)
	}
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
	pkgs := kernelPackages(release)
	if apt.foreign() {
		// linux-kbuild holds programs of the kernel's architecture, which
		// cannot build modules here (kernel/usbnet/build.sh cross-builds
		// with the host's kbuild).
		pkgs = pkgs[:3]
	}
	ver, err := candidateVersion(ctx, apt, pkgs[0])
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("%w: apt-get download %s: %s (check network access and run apt-get update)", ErrNoKernelPackage, strings.Join(pkgs, " "), msg)
		}
		return nil, fmt.Errorf("apt-get download %s: %w: %s", strings.Join(pkgs, " "), err, msg)
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		m, _ := filepath.Glob(filepath.Join(debs, p+"_"+strings.ReplaceAll(ver, ":", "%3a")+"_*.deb"))
		if len(m) == 0 {
			return nil, fmt.Errorf("apt-get download left no %s_*.deb in %s", p, debs)
		}
		sort.Strings(m)
		deb := m[len(m)-1]
		logf("extracting %s", filepath.Base(deb))
		if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, filepath.Join(tmp, "root")).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, strings.TrimSpace(string(out)))
		}
		if p == k.Package {
			if v, err := exec.CommandContext(ctx, "dpkg-deb", "-f", deb, "Version").Output(); err == nil {
				k.PackageVersion = strings.TrimSpace(string(v))
			}
		}
	}
	// The package ships no modules.dep (postinst runs depmod); make it here.
	if out, err := exec.CommandContext(ctx, "depmod", "-b", filepath.Join(tmp, "root"), release).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("depmod -b %s %s: %w: %s", tmp, release, err, strings.TrimSpace(string(out)))
	}
	// The headers' build link points at /usr/src/...; leave a note where they are.
	if err := os.WriteFile(filepath.Join(tmp, "ready"), []byte(k.PackageVersion+"\n"), 0o644); err != nil {
		return nil, err
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	return k, nil
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
