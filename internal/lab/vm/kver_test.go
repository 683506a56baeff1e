// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsbnetKernelRule runs kernel/usbnet/test-kver.sh: build.sh and
// dkms.conf must accept the 6.1, 6.12 and 6.18 families and the tested 7.x
// releases (7.0-7.3) under every distribution's names (Debian, Raspberry
// Pi OS, Armbian, Ubuntu, Fedora, self-built), refuse the rest (6.19, 7.4+
// untested) with a message that names what they accept and what to do,
// and agree on every name.
func TestUsbnetKernelRule(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out, err := exec.Command("bash", "../../../kernel/usbnet/test-kver.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("test-kver.sh: %v\n%s", err, out)
	}
	t.Log(string(out))
}

// TestNormalizeRelease: --kernel-version takes a family or a release of
// Debian 12's two kernel families and refuses anything else with a usage
// error, and each release names the packages of its own family.
func TestNormalizeRelease(t *testing.T) {
	for _, c := range []struct{ in, family, release string }{
		{"", "6.12", ""},
		{"6.12", "6.12", ""},
		{"6.1", "6.1", ""},
		{"6.12.117", "6.12", "6.12.117+deb12-amd64"},
		{"6.12.117+deb12-amd64", "6.12", "6.12.117+deb12-amd64"},
		{"linux-image-6.12.107+deb12-amd64-unsigned", "6.12", "6.12.107+deb12-amd64"},
		{"6.1.0-56", "6.1", "6.1.0-56-amd64"},
		{"6.1.0-56-amd64", "6.1", "6.1.0-56-amd64"},
		{"7.x", "7.x", ""},
		{"7.3.4", "7.x", "7.3.4+deb13-amd64"},
		{"7.0.13+deb13-amd64", "7.x", "7.0.13+deb13-amd64"},
		{"linux-image-7.3.4+deb13-amd64", "7.x", "7.3.4+deb13-amd64"},
	} {
		f, r, err := normalizeRelease(c.in, "amd64")
		if err != nil || f != c.family || r != c.release {
			t.Errorf("normalizeRelease(%q) = %q, %q, %v; want %q, %q", c.in, f, r, err, c.family, c.release)
		}
		// the same names on an arm64 guest: its releases end in -arm64
		wantArm := strings.Replace(c.release, "-amd64", "-arm64", 1)
		in := c.in
		if strings.HasSuffix(in, "-amd64") || strings.HasSuffix(in, "-amd64-unsigned") {
			in = strings.Replace(in, "-amd64", "-arm64", 1)
		}
		if f, r, err := normalizeRelease(in, "arm64"); err != nil || f != c.family || r != wantArm {
			t.Errorf("arm64: normalizeRelease(%q) = %q, %q, %v; want %q, %q", in, f, r, err, c.family, wantArm)
		}
	}
	for _, bad := range []string{"6.6", "6.1.192", "5.15.0-91-generic", "6.12.117+deb12-arm64", "6.1.0-56-rt-amd64", "6.19.1", "x", "6.12.117+deb12-armhf", "7.4.1", "7.3", "7.3.4+deb14-amd64", "7.3.4+deb13-rt-amd64", "6.18.15+deb13-amd64"} {
		if _, _, err := normalizeRelease(bad, "amd64"); err == nil {
			t.Errorf("normalizeRelease(%q) accepted", bad)
		}
	}
	// a release of the other architecture names the --arch it needs
	if _, _, err := normalizeRelease("6.12.117+deb12-amd64", "arm64"); err == nil || !strings.Contains(err.Error(), "--arch amd64") {
		t.Errorf("an amd64 release on an arm64 guest: %v", err)
	}
	want := map[string][]string{
		"6.1.0-56-amd64": {"linux-image-6.1.0-56-amd64-unsigned", "linux-headers-6.1.0-56-amd64", "linux-headers-6.1.0-56-common", "linux-kbuild-6.1"},
		"6.12.117+deb12-amd64": {"linux-image-6.12.117+deb12-amd64-unsigned", "linux-headers-6.12.117+deb12-amd64",
			"linux-headers-6.12.117+deb12-common", "linux-kbuild-6.12.117+deb12"},
		"6.12.117+deb12-arm64": {"linux-image-6.12.117+deb12-arm64-unsigned", "linux-headers-6.12.117+deb12-arm64",
			"linux-headers-6.12.117+deb12-common", "linux-kbuild-6.12.117+deb12"},
		// Debian 13 splits the image: binary, base files, modules
		"7.3.4+deb13-arm64": {"linux-binary-unsigned-7.3.4+deb13-arm64", "linux-base-7.3.4+deb13-arm64", "linux-modules-7.3.4+deb13-arm64",
			"linux-headers-7.3.4+deb13-arm64", "linux-headers-7.3.4+deb13-common", "linux-kbuild-7.3.4+deb13"},
	}
	for rel, pkgs := range want {
		if got := kernelPackages(rel); strings.Join(got, " ") != strings.Join(pkgs, " ") {
			t.Errorf("kernelPackages(%s) = %v, want %v", rel, got, pkgs)
		}
	}
}

// TestCachedReleasesByFamily: a cached 6.1 kernel is never taken for the
// newest 6.12, and the order within a family is numeric.
func TestCachedReleasesByFamily(t *testing.T) {
	cache := t.TempDir()
	for _, r := range []string{"6.1.0-9-amd64", "6.1.0-56-amd64", "6.12.9+deb12-amd64", "6.12.117+deb12-amd64", "6.12.200+deb12-amd64", "6.12.300+deb12-arm64"} {
		d := filepath.Join(cache, "kernel", r)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if r != "6.12.200+deb12-amd64" { // not ready: never used
			if err := os.WriteFile(filepath.Join(d, "ready"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := strings.Join(cachedReleases(cache, "6.1", "amd64"), " "); got != "6.1.0-56-amd64 6.1.0-9-amd64" {
		t.Errorf("6.1: %s", got)
	}
	if got := strings.Join(cachedReleases(cache, "6.12", "amd64"), " "); got != "6.12.117+deb12-amd64 6.12.9+deb12-amd64" {
		t.Errorf("6.12: %s", got)
	}
	if got := strings.Join(cachedReleases(cache, "6.12", "arm64"), " "); got != "6.12.300+deb12-arm64" {
		t.Errorf("6.12 arm64: %s", got)
	}
}

// TestIcountRefusesSixOne: tcg-icount hangs Debian's 6.1 in early boot, so
// asking for it is a usage error naming tcg-single; 6.12 and tcg-single on
// 6.1 are fine, and a bad --kernel-version is refused before anything runs.
func TestIcountRefusesSixOne(t *testing.T) {
	base := Options{Scenario: "usb-gadget", Duration: 3e9, Streams: 2, Direction: "send", Tunnels: 4}
	for _, c := range []struct {
		kver, accel, want string
	}{
		{"6.1", "tcg-icount", "tcg-single"},
		{"6.1.0-56", "tcg-icount", "tcg-single"},
		{"6.1", "tcg-single", ""},
		{"6.12", "tcg-icount", ""},
		{"", "tcg-icount", ""},
		{"6.6", "tcg-single", "family"},
	} {
		cfg := Config{Options: base, KernelRelease: c.kver, Accel: c.accel}
		err := cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.kver, c.accel, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: err %v, want one naming %q", c.kver, c.accel, err, c.want)
		}
	}
}

// TestParseCandidate reads apt-cache policy as apt 2.6 prints it.
func TestParseCandidate(t *testing.T) {
	out := "linux-image-6.1.0-56-amd64-unsigned:\n  Installed: (none)\n  Candidate: 6.1.192-2\n  Version table:\n     6.1.192-2 500\n"
	if v := parseCandidate(out); v != "6.1.192-2" {
		t.Errorf("got %q", v)
	}
	for _, bad := range []string{"", "x:\n  Installed: (none)\n  Candidate: (none)\n", "  Candidate: 1.0 extra\n", "  Candidate: a=b\n"} {
		if v := parseCandidate(bad); v != "" {
			t.Errorf("parseCandidate(%q) = %q, want none", bad, v)
		}
	}
}

// FuzzParseCandidate: apt-cache's output and --kernel-version are outside
// input; neither may panic, and what they return keeps its promises.
func FuzzParseCandidate(f *testing.F) {
	f.Add("  Candidate: 6.12.117-1~deb12u1\n", "6.12.117")
	f.Add("Candidate: (none)", "6.1.0-56")
	f.Add("", "linux-image-6.1.0-56-amd64-unsigned")
	f.Fuzz(func(t *testing.T, out, kver string) {
		if v := parseCandidate(out); strings.ContainsAny(v, " \t\n=") {
			t.Errorf("parseCandidate returned %q", v)
		}
		fam, rel, err := normalizeRelease(kver, "amd64")
		if err != nil {
			return
		}
		if fam != "6.1" && fam != "6.12" && fam != Family7x {
			t.Errorf("normalizeRelease(%q) family %q", kver, fam)
		}
		if f2, _ := releaseFamily(rel); rel != "" && f2 != fam {
			t.Errorf("normalizeRelease(%q) = %q, %q: the release is not of its family", kver, fam, rel)
		}
	})
}

// FuzzParseDepends: apt-cache's dependency listing is outside input; the
// names it yields are single words.
func FuzzParseDepends(f *testing.F) {
	f.Add("iproute2\n  Depends: libbpf1\nlibbpf1\n<debconf-2.0>\n  debconf\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, out string) {
		for _, n := range parseDepends(out) {
			if n == "" || strings.ContainsAny(n, " \t\n<") {
				t.Errorf("parseDepends gave %q", n)
			}
		}
	})
}
