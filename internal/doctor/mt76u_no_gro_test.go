// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

var mt76uNoGroCases = addCases("mt76u-no-gro", []ruleCase{
	{name: "mt76 USB WiFi receiving in its worker", fixture: "mt7921u-stock", id: "mt76u-no-gro", fire: true, sev: Warn},
	{name: "mt76u's threaded NAPI (wireless-next)", fixture: "mt7921u-napi", id: "mt76u-no-gro"},
	{name: "7.3: threaded NAPI, the worker kept for the MCU", fixture: "mt7921u-73", id: "mt76u-no-gro"},
	{name: "a stale 7.3 snapshot with only the worker", fixture: "mt7921u-stock", id: "mt76u-no-gro",
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "7.3.4+deb13-amd64" }},
})

func TestRuleMt76uNoGro(t *testing.T) { runCases(t, mt76uNoGroCases) }

// The mt76u advice fits the distribution (os-release, else the kernel's
// name): the release that has the change and how this host gets it, or
// that its distribution has none yet; never another distribution's
// command; Debian 12's closed backports said.
func TestMT76UAdviceFitsDistro(t *testing.T) {
	for _, c := range []struct {
		name, kernel string
		os           *inspect.OS
		must, not    []string
	}{
		{"Debian 13", "6.12.117+deb13-amd64", &inspect.OS{ID: "debian", VersionID: "13", File: "/etc/os-release"},
			[]string{"on Debian 13: Debian 13's trixie-backports (7.3) has it: apt install -t trixie-backports linux-image-amd64", "reboot"}, []string{"HWE", "dnf", "full-upgrade", "(inferred"}},
		{"Debian 12", "6.1.0-56-amd64", &inspect.OS{ID: "debian", VersionID: "12", File: "/etc/os-release"},
			[]string{"no kernel of Debian 12 has it yet", "bookworm-backports closed 2026-07-11", "after an upgrade to Debian 13"}, []string{"apt install -t trixie-backports linux-image-amd64, then", "HWE", "dnf"}},
		{"Ubuntu 24.04", "7.0.0-15-generic", &inspect.OS{ID: "ubuntu", VersionID: "24.04", File: "/etc/os-release"},
			[]string{"no kernel of Ubuntu 24.04 has it yet"}, []string{"linux-image-", "trixie", "dnf", "full-upgrade"}},
		{"Fedora", "7.1.4-200.fc44.x86_64", &inspect.OS{ID: "fedora", VersionID: "44", File: "/etc/os-release"},
			[]string{"dnf upgrade --refresh 'kernel*'"}, []string{"apt ", "linux-image-"}},
		{"Pi OS", "6.18.20+rpt-rpi-v8", &inspect.OS{ID: "debian", VersionID: "13", RPiIssue: true, File: "/etc/os-release"},
			[]string{"no kernel of Raspberry Pi OS has it yet"}, []string{"trixie-backports", "HWE", "dnf"}},
		{"Ubuntu os-release wins over a Debian-like name", "6.12.117+deb13-amd64", &inspect.OS{ID: "ubuntu", VersionID: "26.04", File: "/etc/os-release"},
			[]string{"Ubuntu 26.04"}, []string{"trixie-backports", "Debian"}},
		{"old snapshot: assumed", "6.12.117+deb13-amd64", nil,
			[]string{"Debian 13 (inferred from the kernel name 6.12.117+deb13-amd64)", "trixie-backports"}, []string{"HWE"}},
		{"unknown", "6.12.9-custom", nil, []string{"needs Linux 7.3 or later"}, []string{"apt", "dnf", "linux-image-"}},
		{"alpine", "6.12.9-0-lts", &inspect.OS{ID: "alpine", VersionID: "3.21", File: "/etc/os-release"}, []string{"needs Linux 7.3 or later"}, []string{"apt", "dnf"}},
	} {
		got, _ := findings(t, "mt7921u-stock", func(in *Input) {
			in.Snap.Host.Kernel, in.Snap.Host.OS = c.kernel, c.os
		})
		f, ok := got["mt76u-no-gro"]
		if !ok {
			t.Errorf("%s: no mt76u-no-gro", c.name)
			continue
		}
		mustSay(t, c.name, fixText(f)+"\n"+strings.Join(f.Unchecked, "\n"), c.must, c.not)
		if c.os == nil && !strings.Contains(strings.Join(f.Unchecked, "\n"), "the distribution") {
			t.Errorf("%s: an old snapshot's advice must say what it assumed: %v", c.name, f.Unchecked)
		}
	}
}
