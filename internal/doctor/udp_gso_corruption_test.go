// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

// udpGSOHost: firecracker-host on kernel k with a UDP tunnel device of
// driver drv and virtio's uso on and changeable.
func udpGSOHost(k, drv string) func(t *testing.T, in *Input) {
	return func(t *testing.T, in *Input) {
		in.Snap.Host.Kernel = k
		in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "tun0", Driver: drv, Bus: "virtual"})
		setOffload(dev(t, in.Snap, "eth0"), "uso", true, false)
	}
}

var udpGsoCorruptionCases = addCases("udp-gso-corruption", []ruleCase{
	{name: "WireGuard on 7.1.4", fixture: "firecracker-host", id: "udp-gso-corruption", fire: true, sev: Warn,
		change: udpGSOHost("7.1.4", "wireguard"), actions: []string{"tx-udp-segmentation:eth0=off"}},
	{name: "tun on 7.1.5, the fix", fixture: "firecracker-host", id: "udp-gso-corruption", change: udpGSOHost("7.1.5", "tun")},
	{name: "uso off [fixed] as captured: no command the host would refuse", fixture: "firecracker-host", id: "udp-gso-corruption",
		change: func(t *testing.T, in *Input) { in.Snap.Host.Kernel = "7.1.4" }},
})

func TestRuleUdpGsoCorruption(t *testing.T) { runCases(t, udpGsoCorruptionCases) }

// UDP GSO corruption: warn on 7.0-7.1.4 with UDP tunnels and a device
// whose tx-udp-segmentation is on and changeable; silent once fixed, without
// tunnels, or where the feature is fixed or unknown (a command the host
// would refuse is never printed).
func TestUDPGSOCorruption(t *testing.T) {
	tun := func(kernel string, drv string) func(in *Input) {
		return func(in *Input) {
			in.Snap.Host.Kernel = kernel
			if drv != "" {
				in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "tun0", Driver: drv, Bus: "virtual"})
			}
			setOffload(dev(t, in.Snap, "eth0"), "uso", true, false)
		}
	}
	for _, c := range []struct {
		kernel, drv string
		fire        bool
	}{
		{"7.1.4", "wireguard", true}, {"7.0.9", "tun", true}, {"7.0.0-15-generic", "wireguard", true},
		{"7.1.5", "wireguard", false}, {"7.2.13+deb14-amd64", "wireguard", false}, {"6.18.44", "wireguard", false},
		{"7.1.4", "", false},
	} {
		got, _ := findings(t, "firecracker-host", tun(c.kernel, c.drv))
		f, ok := got["udp-gso-corruption"]
		if ok != c.fire {
			t.Errorf("%s %s: fired %v, want %v", c.kernel, c.drv, ok, c.fire)
			continue
		}
		if ok {
			if g := strings.Join(actionIDs(f), " "); g != "tx-udp-segmentation:eth0=off" || f.Severity != Warn {
				t.Errorf("%s: %s %s", c.kernel, f.Severity, g)
			}
		}
		if c.kernel == "7.0.0-15-generic" && !strings.Contains(strings.Join(f.Unchecked, "\n"), "backport") {
			t.Errorf("Ubuntu's ABI name: say a backport cannot be seen: %v", f.Unchecked)
		}
	}
	// the captured virtio device has uso off [fixed]: nothing to print
	got, _ := findings(t, "firecracker-host", func(in *Input) {
		in.Snap.Host.Kernel = "7.1.4"
		in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
	})
	expect(t, got, nil, "udp-gso-corruption")
}
