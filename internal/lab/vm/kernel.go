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
var ErrNoKernelPackage = errors.New("no Debian 6.12 kernel package available")

var imagePkgRe = regexp.MustCompile(`^linux-image-(6\.12\.(\d+)\+deb12-amd64)-unsigned$`)

// newestKernelPackage asks apt-cache for the newest
// linux-image-6.12.N+deb12-amd64-unsigned and returns its release.
func newestKernelPackage(ctx context.Context) (release string, err error) {
	if _, err := exec.LookPath("apt-cache"); err != nil {
		return "", fmt.Errorf("%w: apt-cache is not installed (this needs a Debian-based host with apt, or give --kernel and --modules)", ErrNoKernelPackage)
	}
	out, err := exec.CommandContext(ctx, "apt-cache", "search", "--names-only", `^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$`).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache search: %w", err)
	}
	best := -1
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(line, " ")
		m := imagePkgRe.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		if n, _ := strconv.Atoi(m[2]); n > best {
			best, release = n, m[1]
		}
	}
	if best < 0 {
		return "", fmt.Errorf("%w: apt-cache lists no linux-image-6.12.*+deb12-amd64-unsigned; run 'apt-get update' with bookworm-security or bookworm-updates in /etc/apt/sources.list, or give --kernel and --modules", ErrNoKernelPackage)
	}
	return release, nil
}

// cachedReleases lists kernels already extracted in the cache, newest first.
func cachedReleases(cache string) []string {
	ents, _ := os.ReadDir(filepath.Join(cache, "kernel"))
	var rel []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(cache, "kernel", e.Name(), "ready")); err == nil {
			rel = append(rel, e.Name())
		}
	}
	sort.Slice(rel, func(i, j int) bool { return kernelPatch(rel[i]) > kernelPatch(rel[j]) })
	return rel
}

func kernelPatch(rel string) int {
	if m := regexp.MustCompile(`^6\.12\.(\d+)`).FindStringSubmatch(rel); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return -1
}

// FetchKernel returns a Debian kernel from the cache, downloading and
// extracting it first when needed: release "" means the newest 6.12 that
// apt knows (falling back to the newest cached one when apt cannot answer).
// Packages are fetched with apt-get download and unpacked with dpkg-deb -x;
// nothing is installed on the host. depmod writes modules.dep and
// modules.alias into the extracted tree. logf reports progress.
func FetchKernel(ctx context.Context, cache, release string, logf func(string, ...any)) (*Kernel, error) {
	if release == "" {
		r, err := newestKernelPackage(ctx)
		if err != nil {
			if c := cachedReleases(cache); len(c) > 0 {
				logf("apt cannot name the newest kernel (%v); using cached %s", err, c[0])
				release = c[0]
			} else {
				return nil, err
			}
		} else {
			release = r
		}
	}
	release = strings.TrimSuffix(strings.TrimPrefix(release, "linux-image-"), "-unsigned")
	if !strings.Contains(release, "+") { // "6.12.117" -> "6.12.117+deb12-amd64"
		release += "+deb12-amd64"
	}
	dir := filepath.Join(cache, "kernel", release)
	k := &Kernel{
		Release:    release,
		Package:    "linux-image-" + release + "-unsigned",
		Image:      filepath.Join(dir, "root", "boot", "vmlinuz-"+release),
		ModulesDir: filepath.Join(dir, "root", "lib", "modules", release),
		HeadersDir: filepath.Join(dir, "root", "usr", "src", "linux-headers-"+release),
		Config:     filepath.Join(dir, "root", "boot", "config-"+release),
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
	// linux-headers-R depends on linux-headers-6.12.N+deb12-common and
	// linux-kbuild-6.12.N+deb12 (the build tools): all three build modules.
	base := strings.TrimSuffix(release, "-amd64")
	pkgs := []string{k.Package, "linux-headers-" + release, "linux-headers-" + base + "-common", "linux-kbuild-" + base}
	logf("downloading %s with apt-get download into %s", strings.Join(pkgs, " "), debs)
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"download", "-q"}, pkgs...)...)
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
		m, _ := filepath.Glob(filepath.Join(debs, p+"_*.deb"))
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
