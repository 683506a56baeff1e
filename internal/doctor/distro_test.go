// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// TestUsbnetAdviceFitsDistro: the usbnet-no-gro advice fits the host's
// distribution, inferred from the kernel name (snapshots do not record
// /etc/os-release): no host is told to boot another distribution's
// kernel, a 7.x kernel newer than the tested ones gets no KSRC override,
// and the finding says when it inferred the distribution.
func TestUsbnetAdviceFitsDistro(t *testing.T) {
	for _, c := range []struct {
		kernel    string
		must      []string
		mustNot   []string
		unchecked string // a substring of the finding's unchecked list
	}{
		// Ubuntu 24.04 on its GA kernel: the HWE kernel (7.0) is supported
		{kernel: "6.8.0-45-generic",
			must:      []string{"this host: Ubuntu (inferred from the kernel name 6.8.0-45-generic)", "HWE kernel is 7.0", "apt install --install-recommends linux-generic-hwe-24.04"},
			mustNot:   []string{"linux-image-", "apt install -t", "apt full-upgrade", "dkms install wirespeed-usbnet", "dnf"},
			unchecked: "Ubuntu (inferred from the kernel name 6.8.0-45-generic)"},
		{kernel: "7.0.0-15-generic",
			must:      []string{"dkms install wirespeed-usbnet", "on Ubuntu (inferred from the kernel name", "apt install linux-headers-7.0.0-15-generic", "/proc/version_signature"},
			mustNot:   []string{"linux-image-", "Debian's archive", "dnf"},
			unchecked: "inferred from the kernel name"},
		{kernel: "7.0.0-1012-raspi",
			must:    []string{"dkms install wirespeed-usbnet", "on Ubuntu", "KSRC=DIR dkms install"},
			mustNot: []string{"linux-image-", "Raspberry Pi OS (inferred"}},
		// Raspberry Pi OS on 6.12 and 6.18: the module builds, full-upgrade keeps it current
		{kernel: "6.18.20+rpt-rpi-v8",
			must:      []string{"dkms install wirespeed-usbnet", "on Raspberry Pi OS (inferred from the kernel name 6.18.20+rpt-rpi-v8)", "apt full-upgrade keeps the kernel current", "KSRC=DIR dkms install"},
			mustNot:   []string{"linux-image-", "reboot into", "HWE"},
			unchecked: "Raspberry Pi OS (inferred"},
		{kernel: "6.12.47+rpt-rpi-2712",
			must:    []string{"dkms install wirespeed-usbnet", "Raspberry Pi OS", "apt full-upgrade keeps the kernel current"},
			mustNot: []string{"linux-image-", "HWE"}},
		{kernel: "6.6.74+rpt-rpi-2712",
			must:    []string{"does not apply to kernel 6.6.74+rpt-rpi-2712", "apt full-upgrade brings Raspberry Pi OS's current kernel"},
			mustNot: []string{"linux-image-", "dkms install wirespeed-usbnet", "HWE"}},
		// Fedora: 7.0-7.3 accepted; 7.4 untested, no KSRC, no apt
		{kernel: "7.1.4-200.fc44.aarch64",
			must:      []string{"dkms install wirespeed-usbnet", "on Fedora 44 (inferred from the kernel name 7.1.4-200.fc44.aarch64)", "dnf install kernel-devel-7.1.4-200.fc44.aarch64"},
			mustNot:   []string{"apt ", "linux-image-", "linux-headers-"},
			unchecked: "Fedora 44 (inferred"},
		{kernel: "7.4.1-200.fc44.x86_64",
			must:    []string{"not built for kernel 7.4.1-200.fc44.x86_64", "newer than the 7.x releases it is tested on (7.0, 7.1, 7.2, 7.3)", "no KSRC override", "wait for a wirespeed release that lists 7.4", "Fedora keeps earlier kernels", "only the NAPI + GRO half"},
			mustNot: []string{"KSRC=DIR", "dkms install wirespeed-usbnet", "apt ", "linux-image-"}},
		// Debian 12 on 6.1, Debian 13 on trixie-backports' 7.3
		{kernel: "6.1.0-56-arm64",
			must:      []string{"dkms install wirespeed-usbnet", "on Debian 12 (inferred from the kernel name 6.1.0-56-arm64)", "apt install linux-headers-6.1.0-56-arm64"},
			mustNot:   []string{"HWE", "dnf", "apt full-upgrade"},
			unchecked: "Debian 12 (inferred"},
		{kernel: "7.3.4+deb13-arm64",
			must:    []string{"dkms install wirespeed-usbnet", "on Debian 13 (inferred", "linux-source-X.Y from Debian's archive"},
			mustNot: []string{"HWE", "dnf"}},
		{kernel: "6.17.8+deb13-amd64",
			must:    []string{"does not apply to kernel 6.17.8+deb13-amd64", "apt install -t trixie-backports linux-image-amd64"},
			mustNot: []string{"HWE", "dnf", "dkms install wirespeed-usbnet"}},
		{kernel: "6.19.2+deb13-arm64",
			must:    []string{"only the NAPI + GRO half", "apt install -t trixie-backports linux-image-arm64"},
			mustNot: []string{"dkms install wirespeed-usbnet"}},
		// Armbian
		{kernel: "6.18.8-current-rockchip64",
			must:    []string{"dkms install wirespeed-usbnet", "on Armbian (inferred", "armbian-config"},
			mustNot: []string{"linux-image-", "apt full-upgrade"}},
		{kernel: "6.6.60-current-rockchip64",
			must:    []string{"armbian-config (System, Kernel) switches to Armbian's current branch (6.18)"},
			mustNot: []string{"linux-image-", "dkms install wirespeed-usbnet"}},
		// unknown: the families and KSRC, nothing distribution-specific
		{kernel: "6.10.3-custom",
			must:      []string{"does not apply to kernel 6.10.3-custom", "the Linux 6.1, 6.12 and 6.18 families and the tested 7.x releases 7.0-7.3", "KSRC=DIR"},
			mustNot:   []string{"apt install", "apt full-upgrade", "linux-image-", "HWE", "dnf", "this host:"},
			unchecked: "the distribution (not known"},
		{kernel: "5.15.4-0-rpi4", // Alpine's Raspberry Pi kernel: not Pi OS
			must:    []string{"does not apply to kernel 5.15.4-0-rpi4", "KSRC=DIR"},
			mustNot: []string{"apt full-upgrade", "apt install", "linux-image-"}},
		{kernel: "7.4.0-rc3",
			must:    []string{"not built for kernel 7.4.0-rc3", "no KSRC override", "wait for a wirespeed release that lists 7.4"},
			mustNot: []string{"KSRC=DIR", "dkms install wirespeed-usbnet", "apt "}},
		{kernel: "6.18.19",
			must:    []string{"dkms install wirespeed-usbnet", "KSRC=DIR"},
			mustNot: []string{"apt install", "on Ubuntu", "on Debian"}},
	} {
		t.Run(c.kernel, func(t *testing.T) {
			in := &Input{Snap: fixture(t, "rpi4-ax88179")}
			in.Snap.Host.Kernel = c.kernel
			got, _ := run(t, in, "usbnet-no-gro")
			if len(got) != 1 {
				t.Fatalf("want one usbnet-no-gro, got %d", len(got))
			}
			text := fixText(got[0])
			for _, s := range c.must {
				if !strings.Contains(text, s) {
					t.Errorf("want %q in\n%s", s, text)
				}
			}
			for _, s := range c.mustNot {
				if strings.Contains(text, s) {
					t.Errorf("must not say %q:\n%s", s, text)
				}
			}
			if c.unchecked != "" && !strings.Contains(strings.Join(got[0].Unchecked, "\n"), c.unchecked) {
				t.Errorf("unchecked %q lacks %q", got[0].Unchecked, c.unchecked)
			}
		})
	}
}

// TestDistroOf: conservative: only names one distribution gives its
// kernels count.
func TestDistroOf(t *testing.T) {
	for k, want := range map[string]string{
		"6.12.117+deb12-amd64":     "Debian 12",
		"6.12.9+bpo-amd64":         "Debian 12",
		"6.1.0-56-cloud-amd64":     "Debian 12",
		"7.3.4+deb13-amd64":        "Debian 13",
		"7.2.13+deb14-amd64":       "Debian 14",
		"6.18.20+rpt-rpi-2712":     "Raspberry Pi OS",
		"6.1.21-v8+":               "Raspberry Pi OS",
		"7.0.0-15-generic":         "Ubuntu",
		"7.0.0-1012-raspi":         "Ubuntu",
		"7.3.2-200.fc44.aarch64":   "Fedora 44",
		"6.18.8-current-bcm2711":   "Armbian",
		"7.1.2-edge-rockchip64":    "Armbian",
		"5.15.4-0-rpi4":            "an unknown distribution",
		"6.19.3-arch1-1":           "an unknown distribution",
		"6.18.19":                  "an unknown distribution",
		"6.1.0-56-generic-ish":     "an unknown distribution",
		"6.8.0-45-generic.fc44":    "an unknown distribution",
		"":                         "an unknown distribution",
		"6.12.1+deb12-amd64 extra": "Debian 12",
	} {
		h := distroOf(k)
		got := h.Distro.String()
		if h.Release != "" {
			got += " " + h.Release
		}
		if got != want {
			t.Errorf("distroOf(%q) = %s, want %s", k, got, want)
		}
	}
}

// TestUsbnetAdviceFromOSRelease: with /etc/os-release in the snapshot the
// distribution and its release are the host's word, not an inference: an
// Ubuntu 22.04 host on its 6.8 HWE kernel is not told to install 24.04's
// HWE package; Raspberry Pi OS (ID=debian plus /etc/rpi-issue) gets Pi
// advice whatever the kernel is called; nothing says "inferred".
func TestUsbnetAdviceFromOSRelease(t *testing.T) {
	for _, c := range []struct {
		name, kernel  string
		os            inspect.OS
		must, mustNot []string
	}{
		{"Ubuntu 22.04 on its HWE 6.8", "6.8.0-52-generic", inspect.OS{ID: "ubuntu", VersionID: "22.04"},
			[]string{"this host: Ubuntu 22.04", "do-release-upgrade"}, []string{"linux-generic-hwe-24.04", "inferred", "linux-image-"}},
		{"Ubuntu 24.04 on GA 6.8", "6.8.0-52-generic", inspect.OS{ID: "ubuntu", VersionID: "24.04"},
			[]string{"this host: Ubuntu 24.04", "linux-generic-hwe-24.04"}, []string{"inferred", "do-release-upgrade"}},
		{"Pi OS on a self-built kernel", "6.6.40-v8-16k+", inspect.OS{ID: "debian", VersionID: "12", RPiIssue: true},
			[]string{"Raspberry Pi OS", "apt full-upgrade brings Raspberry Pi OS's current kernel (6.18.N"}, []string{"inferred", "linux-image-", "apt install -t trixie-backports"}},
		{"Debian 12 on 6.6", "6.6.74-custom", inspect.OS{ID: "debian", VersionID: "12"},
			[]string{"this host: Debian 12", "bookworm-backports closed 2026-07-11", "apt install linux-image-arm64"}, []string{"inferred", "HWE", "full-upgrade"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &Input{Snap: fixture(t, "rpi4-ax88179")}
			o := c.os
			o.File = "/etc/os-release"
			in.Snap.Host.Kernel, in.Snap.Host.OS = c.kernel, &o
			got, _ := run(t, in, "usbnet-no-gro")
			if len(got) != 1 {
				t.Fatalf("want one usbnet-no-gro, got %d", len(got))
			}
			text := fixText(got[0]) + "\n" + strings.Join(got[0].Unchecked, "\n")
			for _, s := range c.must {
				if !strings.Contains(text, s) {
					t.Errorf("want %q in\n%s", s, text)
				}
			}
			for _, s := range c.mustNot {
				if strings.Contains(text, s) {
					t.Errorf("must not say %q:\n%s", s, text)
				}
			}
		})
	}
}
