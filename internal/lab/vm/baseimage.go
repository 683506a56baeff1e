// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ImageSpec is everything the cached base initramfs is made of.
type ImageSpec struct {
	Tools   Tools
	Modules []ModuleFile
	// Root is where Tools' libraries are found ("" for this host; a
	// foreign architecture's GuestRoot).
	Root string
	// Arch is the guest's architecture ("" for this host's).
	Arch string
}

// BaseImage returns the cached base initramfs for spec, building it when
// no image with the same inputs (hashed by content) exists yet. It holds
// busybox and its applet links, iperf3, ip, tc, ethtool and wirespeed with
// their libraries, and the modules under /lib/modules/ws/NAME.ko. The
// per-run /init comes in a second archive (see RunArchive).
func BaseImage(ctx context.Context, cacheDir string, spec ImageSpec, logf func(string, ...any)) (path string, built bool, err error) {
	files, keys, err := imageFiles(spec)
	if err != nil {
		return "", false, err
	}
	sum, applets, err := imageHash(ctx, files, keys, spec)
	if err != nil {
		return "", false, err
	}
	dir := filepath.Join(cacheDir, "initramfs")
	path = filepath.Join(dir, "base-"+sum+".cpio")
	if fileExists(path) {
		now := time.Now()
		_ = os.Chtimes(path, now, now) // most recently used
		return path, false, nil
	}
	defer pruneImages(dir, 4)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	logf("building initramfs %s (%d files)", filepath.Base(path), len(keys))
	if err := writeImage(ctx, dir, path, files, keys, applets); err != nil {
		return "", false, err
	}
	return path, true, nil
}

// imageFiles collects the base image's files: spec's programs with their
// libraries and its modules. It returns where each guest path comes from
// on the host (one entry for a library two programs need), and the guest
// paths sorted.
func imageFiles(spec ImageSpec) (files map[string]string, keys []string, err error) {
	type input struct{ guest, host string }
	var inputs []input
	add := func(key, host string) error {
		if host == "" {
			return nil
		}
		inputs = append(inputs, input{guestPath[key], host})
		libs, err := sharedLibsIn(spec.Root, host)
		if err != nil {
			return err
		}
		for _, l := range libs {
			inputs = append(inputs, input{strings.TrimPrefix(l, "/"), inRoot(spec.Root, l)})
		}
		return nil
	}
	t := spec.Tools
	for _, kv := range [][2]string{{"busybox", t.Busybox}, {"iperf3", t.Iperf3}, {"ip", t.IP}, {"tc", t.TC}, {"ethtool", t.Ethtool}, {"wg", t.WG}, {"wirespeed", t.Wirespeed}, {"perf", t.Perf}} {
		if err := add(kv[0], kv[1]); err != nil {
			return nil, nil, err
		}
	}
	for _, m := range spec.Modules {
		inputs = append(inputs, input{"lib/modules/ws/" + m.Name + ".ko", m.Source})
	}
	// Deduplicate (a library needed by two programs).
	uniq := map[string]string{}
	for _, in := range inputs {
		uniq[in.guest] = in.host
	}
	keys = make([]string, 0, len(uniq))
	for k := range uniq {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return uniq, keys, nil
}

// imageHash is the base image's cache key: a hash of every file's guest
// path and content (keys in order) and of busybox's applets, which it
// returns too.
func imageHash(ctx context.Context, files map[string]string, keys []string, spec ImageSpec) (sum string, applets []string, err error) {
	h := sha256.New()
	fmt.Fprintf(h, "wirespeed-initramfs-v1\n")
	for _, k := range keys {
		fsum, err := fileHash(files[k])
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(h, "%s %s\n", k, fsum)
	}
	applets, err = busyboxApplets(ctx, spec.Tools.Busybox, spec.Arch)
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(h, "applets %s\n", strings.Join(applets, ","))
	return hex.EncodeToString(h.Sum(nil))[:20], applets, nil
}

// writeImage writes the base image to path through a temporary file in
// dir: the directories, the console and null devices, the files (modules
// decompressed), busybox's applet links and a root account.
func writeImage(ctx context.Context, dir, path string, files map[string]string, keys, applets []string) error {
	tmp, err := os.CreateTemp(dir, "tmp-*.cpio")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := NewCPIOWriter(tmp)
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "run", "tmp", "etc", "root", "results", "lib/modules/ws"} {
		if err := w.Dir(d); err != nil {
			return err
		}
	}
	// The kernel opens /dev/console for init before anything is mounted.
	if err := w.Add(CPIOEntry{Name: "dev/console", Mode: modeCharDev | 0o600, DevMajor: 5, DevMinor: 1}); err != nil {
		return err
	}
	if err := w.Add(CPIOEntry{Name: "dev/null", Mode: modeCharDev | 0o666, DevMajor: 1, DevMinor: 3}); err != nil {
		return err
	}
	for _, k := range keys {
		var data []byte
		if strings.HasPrefix(k, "lib/modules/ws/") {
			data, err = readModule(ctx, files[k])
		} else {
			data, err = os.ReadFile(files[k])
		}
		if err != nil {
			return err
		}
		if err := w.File(k, 0o755, data); err != nil {
			return err
		}
	}
	have := map[string]bool{}
	for _, k := range keys {
		have[k] = true
	}
	for _, a := range applets {
		// Real tools of the same name win (ip, tc, ethtool live in /sbin).
		if a == "busybox" || have["sbin/"+a] || have["usr/bin/"+a] {
			continue
		}
		if err := w.Symlink("bin/"+a, "busybox"); err != nil {
			return err
		}
	}
	if err := w.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n")); err != nil {
		return err
	}
	if err := w.File("etc/group", 0o644, []byte("root:x:0:\n")); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// pruneImages keeps the keep most recently used base images (each new
// wirespeed build makes a new one).
func pruneImages(dir string, keep int) {
	m, _ := filepath.Glob(filepath.Join(dir, "base-*.cpio"))
	type img struct {
		p string
		t time.Time
	}
	var imgs []img
	for _, p := range m {
		if st, err := os.Stat(p); err == nil {
			imgs = append(imgs, img{p, st.ModTime()})
		}
	}
	sort.Slice(imgs, func(i, j int) bool { return imgs[i].t.After(imgs[j].t) })
	for i := keep; i < len(imgs); i++ {
		_ = os.Remove(imgs[i].p)
	}
}

// busyboxApplets asks busybox for its applets; a foreign architecture's
// busybox runs under QEMU's user-mode emulation (qemu-user-static).
func busyboxApplets(ctx context.Context, busybox, arch string) ([]string, error) {
	argv := []string{busybox, "--list"}
	if arch != "" && arch != hostArch() {
		emu, err := userEmulator(arch)
		if err != nil {
			return nil, err
		}
		argv = append([]string{emu}, argv...)
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	var a []string
	for _, l := range strings.Fields(string(out)) {
		if !strings.ContainsAny(l, "/[") {
			a = append(a, l)
		}
	}
	if len(a) == 0 {
		return nil, fmt.Errorf("%s --list printed no applets", busybox)
	}
	sort.Strings(a)
	return a, nil
}

func fileHash(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
