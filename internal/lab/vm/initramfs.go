// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Tools are the host programs copied into the initramfs.
type Tools struct {
	Busybox   string // a static busybox (busybox-static)
	Iperf3    string
	IP        string // iproute2's ip (bench and the scenarios need ip netns)
	TC        string // iproute2's tc (optional)
	Ethtool   string // optional
	WG        string // wireguard-tools' wg (optional; the wireguard scenario needs it)
	Wirespeed string // a static wirespeed binary
	Perf      string // perf, for --profile only (optional)
}

// guestPath is where each tool lives in the guest. iproute2's ip must keep
// the name "ip" (it takes its sub-command from a name like "ipr"), and the
// busybox shell prefers its own applets for bare names: scripts call
// /sbin/ip and /sbin/tc by path. PATH puts /sbin first so programs that
// exec "ip" (wirespeed bench) get iproute2's.
var guestPath = map[string]string{
	"busybox":   "bin/busybox",
	"iperf3":    "usr/bin/iperf3",
	"ip":        "sbin/ip",
	"tc":        "sbin/tc",
	"ethtool":   "sbin/ethtool",
	"wirespeed": "usr/bin/wirespeed",
	"wg":        "usr/bin/wg",
	"perf":      "usr/bin/perf",
}

// FindTools looks the tools up on this host; wirespeed is the given binary.
func FindTools(wirespeed string) (Tools, error) { return findTools("", wirespeed) }

// findTools looks the tools up under root (a foreign architecture's
// programs unpacked from Debian's packages, see GuestRoot), or on this
// host when root is "".
func findTools(root, wirespeed string) (Tools, error) {
	t := Tools{Wirespeed: wirespeed}
	var missing []string
	find := func(dst *string, name, pkg string, cands ...string) {
		for _, c := range cands {
			c = inRoot(root, c)
			if fileExists(c) {
				*dst = c
				return
			}
		}
		if root == "" {
			if p, err := exec.LookPath(name); err == nil {
				*dst = p
				return
			}
		}
		if pkg != "" {
			missing = append(missing, fmt.Sprintf("%s (apt-get install %s)", name, pkg))
		}
	}
	find(&t.Busybox, "busybox", "busybox-static", "/bin/busybox", "/usr/bin/busybox")
	find(&t.Iperf3, "iperf3", "iperf3", "/usr/bin/iperf3")
	find(&t.IP, "ip", "iproute2", "/sbin/ip", "/usr/sbin/ip", "/bin/ip")
	find(&t.TC, "tc", "", "/sbin/tc", "/usr/sbin/tc")
	find(&t.Ethtool, "ethtool", "", "/sbin/ethtool", "/usr/sbin/ethtool")
	find(&t.WG, "wg", "", "/usr/bin/wg")
	if len(missing) > 0 {
		if root != "" {
			return t, fmt.Errorf("the guest's packages in %s lack %s", root, strings.Join(missing, ", "))
		}
		return t, fmt.Errorf("the guest image needs %s", strings.Join(missing, ", "))
	}
	if !isStatic(t.Busybox) {
		return t, fmt.Errorf("%s is dynamically linked; the guest needs a static busybox: apt-get install busybox-static", t.Busybox)
	}
	if t.Wirespeed == "" || !fileExists(t.Wirespeed) {
		return t, fmt.Errorf("no wirespeed binary to put into the guest (%q): build one with 'make build' and pass --wirespeed ./wirespeed", t.Wirespeed)
	}
	if !isStatic(t.Wirespeed) {
		return t, fmt.Errorf("%s is dynamically linked; build wirespeed with CGO_ENABLED=0 (make build) for the guest", t.Wirespeed)
	}
	return t, nil
}

func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && string(m[:]) == elf.ELFMAG
}

func isStatic(p string) bool {
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// libDirs are where the dynamic loader looks, per architecture.
var libDirs = map[elf.Machine][]string{
	elf.EM_X86_64:  {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"},
	elf.EM_AARCH64: {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"},
}

// SharedLibs returns the dynamic loader and every shared library bin needs,
// transitively, as absolute host paths (the guest gets them at the same
// paths). It reads DT_NEEDED like ldd does, without running the program.
func SharedLibs(bin string) ([]string, error) { return sharedLibsIn("", bin) }

// inRoot is the host file behind the guest path p of a root ("" is the
// host's own file system): symbolic links are followed inside the root,
// absolute ones too, so /sbin/ip -> /bin/ip of an unpacked package stays
// in it.
func inRoot(root, p string) string {
	if root == "" {
		return p
	}
	for i := 0; i < 40; i++ {
		full := filepath.Join(root, p)
		fi, err := os.Lstat(full)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return full
		}
		t, err := os.Readlink(full)
		if err != nil {
			return full
		}
		if filepath.IsAbs(t) {
			p = t
		} else {
			p = filepath.Join(filepath.Dir(p), t)
		}
	}
	return filepath.Join(root, p)
}

// sharedLibsIn is SharedLibs for a program of a root: bin is a host path
// under root, and the paths returned are the guest's (inRoot finds the
// host file of each).
func sharedLibsIn(root, bin string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	var walk func(p string) error
	walk = func(p string) error {
		if !isELF(p) {
			return nil // a script: nothing to resolve
		}
		f, err := elf.Open(p)
		if err != nil {
			return fmt.Errorf("read ELF %s: %w", p, err)
		}
		defer f.Close()
		for _, pr := range f.Progs {
			if pr.Type == elf.PT_INTERP {
				b, err := io.ReadAll(pr.Open())
				if err != nil {
					return err
				}
				interp := strings.TrimRight(string(b), "\x00")
				if !seen[interp] {
					seen[interp] = true
					out = append(out, interp)
				}
			}
		}
		needed, err := f.ImportedLibraries()
		if err != nil {
			return nil // static
		}
		dirs := libDirs[f.Machine]
		for _, n := range needed {
			found := ""
			for _, d := range dirs {
				if c := filepath.Join(d, n); fileExists(inRoot(root, c)) {
					found = c
					break
				}
			}
			if found == "" {
				return fmt.Errorf("%s needs %s, which is in none of %s%s", p, n, root, strings.Join(dirs, " "+root))
			}
			if seen[found] {
				continue
			}
			seen[found] = true
			out = append(out, found)
			if err := walk(inRoot(root, found)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(bin); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// ModuleFile is a module going into the image.
type ModuleFile struct {
	Name   string `json:"name"`
	Source string `json:"source"` // host file
	Stock  bool   `json:"stock"`  // from the kernel's tree (false: --modules-dir)
}

// Overrides reads a --modules-dir: every *.ko, *.ko.xz, *.ko.zst in it
// (not recursively) replaces the kernel's module of the same name. It
// returns name -> file and each override's dependencies (from .modinfo),
// and refuses a module built for another kernel release than release
// (checkRelease).
func Overrides(dir, release string) (map[string]string, map[string][]string, error) {
	if dir == "" {
		return nil, nil, nil
	}
	// Paths are joined to the kernel's module tree unless absolute.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("--modules-dir: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("--modules-dir: %w", err)
	}
	files, deps := map[string]string{}, map[string][]string{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".ko") && !strings.HasSuffix(n, ".ko.xz") && !strings.HasSuffix(n, ".ko.zst") && !strings.HasSuffix(n, ".ko.gz") {
			continue
		}
		p := filepath.Join(dir, n)
		data, err := readModule(context.Background(), p)
		if err != nil {
			return nil, nil, err
		}
		info, err := Modinfo(data)
		if err != nil {
			return nil, nil, fmt.Errorf("--modules-dir %s: %w", p, err)
		}
		if err := checkRelease(p, info, release); err != nil {
			return nil, nil, err
		}
		name := ModuleName(n)
		if nm := info["name"]; len(nm) > 0 {
			name = nm[0]
		}
		files[name] = p
		for _, d := range info["depends"] {
			for _, x := range strings.Split(d, ",") {
				if x != "" {
					deps[name] = append(deps[name], ModuleName(x))
				}
			}
		}
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("--modules-dir %s holds no .ko files", dir)
	}
	return files, deps, nil
}

// checkRelease refuses --modules-dir module p built for another kernel
// release than the guest's: its vermagic's first word is the release of the
// headers it was built against. A kernel with modversions would load it all
// the same (it compares the symbols' CRCs, not the release), so a module of
// Debian's 6.1.0-56 would run silently on 6.1.0-57 - not the kernel it was
// built for, and nothing a result should rest on.
func checkRelease(p string, info map[string][]string, release string) error {
	vm := info["vermagic"]
	if len(vm) == 0 || len(strings.Fields(vm[0])) == 0 {
		return fmt.Errorf("--modules-dir %s has no vermagic: not a module built by kbuild", p)
	}
	if built := strings.Fields(vm[0])[0]; built != release {
		return fmt.Errorf("--modules-dir %s was built for kernel %s, but the guest runs %s: build it for %s (kernel/usbnet/build.sh --kver %s) or boot the kernel it was built for (--kernel-version %s)",
			p, built, release, release, release, built)
	}
	return nil
}

// Modinfo parses a module's .modinfo section (key=value strings).
func Modinfo(ko []byte) (map[string][]string, error) {
	f, err := elf.NewFile(bytes.NewReader(ko))
	if err != nil {
		return nil, fmt.Errorf("not an ELF kernel module: %w", err)
	}
	s := f.Section(".modinfo")
	if s == nil {
		return nil, errors.New("no .modinfo section: not a kernel module")
	}
	b, err := s.Data()
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if ok {
			m[k] = append(m[k], v)
		}
	}
	return m, nil
}

// readModule returns a module's ELF bytes, decompressing .xz and .zst with
// the host's xz/zstd (Debian compresses its modules with xz) and .gz in Go.
func readModule(ctx context.Context, p string) ([]byte, error) {
	switch {
	case strings.HasSuffix(p, ".xz"), strings.HasSuffix(p, ".zst"):
		tool := "xz"
		if strings.HasSuffix(p, ".zst") {
			tool = "zstd"
		}
		out, err := exec.CommandContext(ctx, tool, "-dc", p).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("%s -dc %s: %w: %s", tool, p, err, ee.Stderr)
			}
			return nil, fmt.Errorf("decompress %s: %w (apt-get install xz-utils zstd)", p, err)
		}
		return out, nil
	case strings.HasSuffix(p, ".gz"):
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return io.ReadAll(z)
	}
	return os.ReadFile(p)
}

// RunArchive is the small second archive of a run: /init and files.
func RunArchive(w io.Writer, init string, files map[string][]byte) error {
	c := NewCPIOWriter(w)
	if err := c.File("init", 0o755, []byte(init)); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := c.File(n, 0o755, files[n]); err != nil {
			return err
		}
	}
	return c.Close()
}

// JoinInitramfs writes base followed by the run archive into dst: the
// kernel unpacks both, the second on top of the first.
func JoinInitramfs(dst, base string, run []byte) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	in, err := os.Open(base)
	if err != nil {
		out.Close()
		return err
	}
	defer in.Close()
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if _, err := out.Write(run); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
