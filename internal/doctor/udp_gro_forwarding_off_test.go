// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
)

var udpGroForwardingOffCases = addCases("udp-gro-forwarding-off", []ruleCase{
	{name: "forwarding WireGuard host without UDP GRO forwarding", fixture: "firecracker-host", id: "udp-gro-forwarding-off", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
			setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
		}, actions: []string{"rx-udp-gro-forwarding:eth0=on"}, text: "Tailscale"},
	{name: "Tailscale subnet router (tun) with GRO lists on", fixture: "firecracker-host", id: "udp-gro-forwarding-off", fire: true, sev: Warn,
		change: func(t *testing.T, in *Input) {
			in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "tailscale0", Driver: "tun", Bus: "virtual"})
			setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
			setOffload(dev(t, in.Snap, "eth0"), "rx-gro-list", true, false)
		}, actions: []string{"rx-udp-gro-forwarding:eth0=on", "rx-gro-list:eth0=off"}, text: "ethtool -K eth0 rx-udp-gro-forwarding on rx-gro-list off"},
	{name: "forwarding tunnel host on a kernel before the advice's release", fixture: "firecracker-host", id: "udp-gro-forwarding-off",
		change: func(t *testing.T, in *Input) {
			in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
			setSysctl(in.Snap, "net.ipv4.ip_forward", "1")
			in.Snap.Host.Kernel = "6.1.0-56-amd64"
		}},
	{name: "not forwarding", fixture: "firecracker-host", id: "udp-gro-forwarding-off",
		change: func(t *testing.T, in *Input) {
			in.Snap.Devices = append(in.Snap.Devices, inspect.Device{Name: "wg0", Driver: "wireguard", Bus: "virtual"})
			setSysctl(in.Snap, "net.ipv4.ip_forward", "0")
		}},
})

func TestRuleUdpGroForwardingOff(t *testing.T) { runCases(t, udpGroForwardingOffCases) }
