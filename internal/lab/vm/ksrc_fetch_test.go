// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestUsbnetKernelOrgSource runs kernel/usbnet/build.sh --source-only
// against a local mirror (an httptest server on 127.0.0.1) standing in for
// cdn.kernel.org: small fake kernel tarballs made here, one directory with
// a sha256sums.asc and one without. The fakes test the fetch, the checksum
// and the extraction, not the patches. It checks that the kernel's X.Y.Z
// comes from its name, its headers' Makefile or Ubuntu's version
// signature; that linux-source-X.Y is tried first and kernel.org after it;
// that a wrong checksum, a 404 and a broken tarball are refused clearly;
// and that nothing is left half-extracted or half-downloaded in the cache.
func TestUsbnetKernelOrgSource(t *testing.T) {
	for _, tool := range []string{"bash", "tar", "xz", "curl", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	work := t.TempDir()

	// A copy of kernel/usbnet's scripts with every family's patches
	// directory (empty): the fetch does not depend on which series exist.
	usbnet := filepath.Join(work, "usbnet")
	for _, f := range []string{"build.sh", "dkms.conf"} {
		b, err := os.ReadFile(filepath.Join("../../../kernel/usbnet", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(usbnet, f), string(b), 0o755)
	}
	for _, fam := range []string{"6.1", "6.12", "6.18", "7.x"} {
		if err := os.MkdirAll(filepath.Join(usbnet, "patches", fam), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// The mirror: good/ with sha256sums.asc, nosums/ without.
	mirror := filepath.Join(work, "mirror")
	sums := map[string][]string{}
	add := func(sub, major, name, top, makefileVer string, corrupt bool, sum string) {
		t.Helper()
		dir := filepath.Join(mirror, sub, "v"+major+".x")
		p := filepath.Join(dir, name)
		if corrupt {
			writeFile(t, p, "this is not an xz stream\n", 0o644)
		} else {
			fakeKernelTarball(t, p, top, makefileVer)
		}
		if sum == "" {
			sum = fileSHA256(t, p)
		}
		sums[dir] = append(sums[dir], sum+"  "+name)
	}
	add("good", "6", "linux-6.18.19.tar.xz", "linux-6.18.19", "6.18.19", false, "")
	add("good", "6", "linux-6.18.7.tar.xz", "linux-6.18.7", "6.18.7", false, strings.Repeat("0", 64)) // listed with a wrong sum
	add("good", "6", "linux-6.18.9.tar.xz", "linux-6.18.9", "", true, "")                             // right sum, not a tarball
	add("good", "6", "linux-6.18.8.tar.xz", "linux-6.18.8", "6.18.6", false, "")                      // says another release
	add("good", "7", "linux-7.0.5.tar.xz", "linux-7.0.5", "7.0.5", false, "")
	add("good", "7", "linux-7.0.tar.xz", "linux-7.0", "7.0.0", false, "")
	add("nosums", "7", "linux-7.1.4.tar.xz", "linux-7.1.4", "7.1.4", false, "")
	for dir, lines := range sums {
		if strings.Contains(dir, "nosums") {
			continue
		}
		// kernel.org's file is a PGP clear-signed list of "SUM  NAME"
		body := "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n" + strings.Join(lines, "\n") +
			"\n-----BEGIN PGP SIGNATURE-----\n\nnot checked here\n-----END PGP SIGNATURE-----\n"
		writeFile(t, filepath.Join(dir, "sha256sums.asc"), body, 0o644)
	}
	var mu sync.Mutex
	var requests []string
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(requests) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.URL.Path)
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/stall/") {
			// a download that stops halfway, until the client goes away
			w.Header().Set("Content-Length", "10000000")
			w.Write(make([]byte, 100000))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		http.FileServer(http.Dir(mirror)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("the test mirror is not on 127.0.0.1: %s", srv.URL)
	}

	// Stubs that make this host look like one without linux-source-X.Y
	// (dpkg knows none installed, apt knows none): the lookup must reach
	// kernel.org after them, whatever this host's apt knows.
	stubs := filepath.Join(work, "bin")
	writeFile(t, filepath.Join(stubs, "dpkg-query"), "#!/bin/sh\nexit 1\n", 0o755)
	writeFile(t, filepath.Join(stubs, "apt-cache"), "#!/bin/sh\necho \"apt-cache $*\" >>\"$STUB_LOG\"\nexit 0\n", 0o755)
	stubLog := filepath.Join(work, "stub.log")

	// Headers whose Makefile says SUBLEVEL 0, as Ubuntu's do.
	ubuntuHdr := filepath.Join(work, "linux-headers-7.0.0-15-generic")
	writeFile(t, filepath.Join(ubuntuHdr, "Makefile"), "VERSION = 7\nPATCHLEVEL = 0\nSUBLEVEL = 0\nEXTRAVERSION =\n", 0o644)
	sig := filepath.Join(work, "version_signature")
	writeFile(t, sig, "Ubuntu 7.0.0-15.15-generic 7.0.5\n", 0o644)

	type result struct {
		src, stderr string
		err         error
	}
	run := func(cache string, env []string, args ...string) result {
		t.Helper()
		cmd := exec.Command("bash", append([]string{filepath.Join(usbnet, "build.sh"), "--source-only", "--cache", cache}, args...)...)
		cmd.Env = append(testEnv(stubs), "STUB_LOG="+stubLog, "WIRESPEED_VERSION_SIGNATURE="+filepath.Join(work, "none"))
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return result{strings.TrimSpace(stdout.String()), stderr.String(), err}
	}
	good, nosums := srv.URL+"/good", srv.URL+"/nosums"

	for _, c := range []struct {
		name    string
		env     []string
		args    []string
		srcDir  string   // under the cache
		stderr  []string // substrings
		apt     bool     // apt-cache was asked first
		release string   // the Makefile the source must have
	}{
		{name: "self-built 6.18, kernel.org asked for", args: []string{"--kver", "6.18.19", "--kernel-org", "--mirror", good},
			srcDir: "src-linux-6.18.19", release: "6.18.19",
			stderr: []string{"fetching " + good + "/v6.x/linux-6.18.19.tar.xz", "source: " + good + "/v6.x/linux-6.18.19.tar.xz, sha256 ok"}},
		{name: "Armbian 6.18: no linux-source-6.18, so kernel.org", args: []string{"--kver", "6.18.19-current-rockchip64", "--mirror", good},
			srcDir: "src-linux-6.18.19", release: "6.18.19", apt: true, stderr: []string{"sha256 ok"}},
		{name: "Ubuntu 7.0.0-N, the release from its version signature", args: []string{"--kver", "7.0.0-15-generic", "--kdir", ubuntuHdr},
			env: []string{"WIRESPEED_KERNEL_MIRROR=" + good, "WIRESPEED_VERSION_SIGNATURE=" + sig}, apt: true,
			srcDir: "src-linux-7.0.5", release: "7.0.5", stderr: []string{"/v7.x/linux-7.0.5.tar.xz, sha256 ok"}},
		{name: "Ubuntu 7.0.0-N, patch level unknown: Linux 7.0 itself", args: []string{"--kver", "7.0.0-1012-raspi", "--kdir", ubuntuHdr, "--mirror", good},
			srcDir: "src-linux-7.0", release: "7.0.0", apt: true,
			stderr: []string{"patch level is unknown", "--upstream 7.0.N", "/v7.x/linux-7.0.tar.xz, sha256 ok"}},
		{name: "--upstream picks the release", args: []string{"--kver", "7.0.0-1012-raspi", "--upstream", "7.0.5", "--mirror", good},
			srcDir: "src-linux-7.0.5", release: "7.0.5", stderr: []string{"linux-7.0.5.tar.xz, sha256 ok"}},
		{name: "Fedora 7.1 from a mirror without sha256sums.asc", args: []string{"--kver", "7.1.4-200.fc44.x86_64", "--mirror", nosums},
			srcDir: "src-linux-7.1.4", release: "7.1.4", apt: true,
			stderr: []string{"warning: no checksum checked: " + nosums + "/v7.x/sha256sums.asc: not found there (HTTP 404)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			os.Remove(stubLog)
			r := run(cache, c.env, c.args...)
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.stderr)
			}
			if want := filepath.Join(cache, c.srcDir); r.src != want {
				t.Errorf("source %q, want %q\n%s", r.src, want, r.stderr)
			}
			for _, s := range c.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			log, _ := os.ReadFile(stubLog)
			if asked := strings.Contains(string(log), "madison linux-source-"); asked != c.apt {
				t.Errorf("apt-cache asked for linux-source: %v, want %v (%s)", asked, c.apt, log)
			}
			checkExtracted(t, r.src, c.release)
			checkNoLeftovers(t, cache)
			// a second run takes the cached source: no fetch, same origin
			n := count()
			r2 := run(cache, c.env, c.args...)
			if r2.err != nil || r2.src != r.src || count() != n || strings.Contains(r2.stderr, "fetching") {
				t.Errorf("second run: %v %q, %d requests\n%s", r2.err, r2.src, count()-n, r2.stderr)
			}
			if first := sourceLine(r.stderr); first == "" || sourceLine(r2.stderr) != first {
				t.Errorf("second run names another source:\n%s\nfirst:\n%s", r2.stderr, r.stderr)
			}
		})
	}

	for _, c := range []struct {
		name   string
		args   []string
		stderr []string
	}{
		{name: "wrong checksum", args: []string{"--kver", "6.18.7", "--mirror", good},
			stderr: []string{"its sha256 ", "is not the " + strings.Repeat("0", 64), "refused and deleted"}},
		{name: "404", args: []string{"--kver", "6.18.3+rpt-rpi-v8", "--mirror", good},
			stderr: []string{good + "/v6.x/linux-6.18.3.tar.xz: not found there (HTTP 404)"}},
		{name: "not a tarball", args: []string{"--kver", "6.18.9", "--mirror", good},
			stderr: []string{"not a kernel tarball"}},
		{name: "another release inside", args: []string{"--kver", "6.18.8", "--mirror", good},
			stderr: []string{"its Makefile says Linux 6.18.6, not 6.18.8"}},
		{name: "nothing listens", args: []string{"--kver", "7.2.13+deb14-amd64", "--mirror", "http://127.0.0.1:1"},
			stderr: []string{"(no answer)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			r := run(cache, nil, c.args...)
			if r.err == nil {
				t.Fatalf("accepted: %s\n%s", r.src, r.stderr)
			}
			// the refusal says what was tried and what to do
			want := append([]string{"no source of Linux", "no linux-source-", "What to do: on Debian or Raspberry Pi OS, apt-get install linux-source-",
				"KSRC=DIR", "needs network access"}, c.stderr...)
			for _, s := range want {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("refusal lacks %q:\n%s", s, r.stderr)
				}
			}
			checkNoLeftovers(t, cache)
			if m, _ := filepath.Glob(filepath.Join(cache, "src-*")); len(m) != 0 {
				t.Errorf("a refused source left %v in the cache", m)
			}
		})
	}

	// Interrupted halfway through the download: nothing left behind.
	t.Run("interrupted", func(t *testing.T) {
		cache := t.TempDir()
		cmd := exec.Command("bash", filepath.Join(usbnet, "build.sh"), "--source-only", "--cache", cache,
			"--kver", "6.12.40", "--kernel-org", "--mirror", srv.URL+"/stall")
		cmd.Env = testEnv(stubs)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		part := filepath.Join(cache, "dl", "linux-6.12.40.tar.xz.part.*")
		for i := 0; i < 200; i++ {
			if m, _ := filepath.Glob(part); len(m) > 0 {
				if fi, err := os.Stat(m[0]); err == nil && fi.Size() > 0 {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if m, _ := filepath.Glob(part); len(m) == 0 {
			t.Errorf("no partial download to interrupt:\n%s", stderr.String())
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // as Ctrl-C does: the whole group
		if err := cmd.Wait(); err == nil {
			t.Errorf("an interrupted fetch exited 0:\n%s", stderr.String())
		}
		checkNoLeftovers(t, cache)
		if m, _ := filepath.Glob(filepath.Join(cache, "src-*")); len(m) != 0 {
			t.Errorf("an interrupted fetch left %v", m)
		}
	})
}

// sourceLine: build.sh's "source: ..." line.
func sourceLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "wirespeed-usbnet: source: ") {
			return l
		}
	}
	return ""
}

// fakeKernelTarball writes a tar.xz of a minimal tree under top/: a
// Makefile naming the release, what build.sh extracts, and a file it must
// not extract.
func fakeKernelTarball(t *testing.T, path, top, release string) {
	t.Helper()
	var v, p, s string
	if _, err := fmt.Sscanf(strings.ReplaceAll(release, ".", " "), "%s %s %s", &v, &p, &s); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(t.TempDir(), top)
	for name, body := range map[string]string{
		"Makefile":                           fmt.Sprintf("# SPDX-License-Identifier: GPL-2.0\nVERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = %s\nEXTRAVERSION =\nNAME = Fake\n", v, p, s),
		"drivers/net/usb/usbnet.c":           "// fake usbnet " + release + "\n",
		"drivers/net/usb/cdc_ncm.c":          "// fake\n",
		"drivers/net/usb/Makefile":           "obj-m := usbnet.o\n",
		"include/linux/usb/usbnet.h":         "/* fake */\n",
		"include/linux/usb/cdc_ncm.h":        "/* fake */\n",
		"drivers/usb/gadget/udc/dummy_hcd.c": "// fake\n",
		"scripts/checkpatch.pl":              "#!/usr/bin/perl\n",
		"scripts/spelling.txt":               "\n",
		"scripts/const_structs.checkpatch":   "\n",
		"fs/not-wanted.c":                    "// build.sh must not extract this\n",
	} {
		writeFile(t, filepath.Join(tree, name), body, 0o644)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-cJf", path, "-C", filepath.Dir(tree), top).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
}

func checkExtracted(t *testing.T, src, release string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(src, "drivers/net/usb/usbnet.c"))
	if err != nil {
		t.Fatalf("no usbnet.c in %s: %v", src, err)
	}
	if want := "fake usbnet " + release; !strings.Contains(string(b), want) {
		t.Errorf("usbnet.c is %q, want the one of %s", b, release)
	}
	for _, f := range []string{"include/linux/usb/usbnet.h", "include/linux/usb/cdc_ncm.h", "scripts/checkpatch.pl", "Makefile", ".complete"} {
		if _, err := os.Stat(filepath.Join(src, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "fs")); err == nil {
		t.Errorf("%s: fs/ was extracted: only what the build needs must be", src)
	}
}

// checkNoLeftovers: no partial download, partial extraction or kept
// tarball in the cache.
func checkNoLeftovers(t *testing.T, cache string) {
	t.Helper()
	filepath.Walk(cache, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		n := info.Name()
		if strings.Contains(n, ".part") || strings.HasSuffix(n, ".tar.xz") || strings.HasPrefix(n, "sha256sums") || strings.HasSuffix(n, ".err") {
			t.Errorf("left in the cache: %s", p)
		}
		return nil
	})
}

// testEnv: this environment without proxies (only 127.0.0.1 is reached),
// with the stubs first on PATH.
func testEnv(stubs string) []string {
	var env []string
	for _, e := range os.Environ() {
		k := strings.ToLower(e[:strings.IndexByte(e+"=", '=')])
		switch k {
		case "http_proxy", "https_proxy", "all_proxy", "no_proxy", "path", "ksrc", "wirespeed_kernel_mirror", "wirespeed_cache", "wirespeed_version_signature", "curl_home":
			continue
		}
		env = append(env, e)
	}
	return append(env, "PATH="+stubs+":"+os.Getenv("PATH"), "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
}

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
