// SPDX-License-Identifier: Apache-2.0

package doctor

// What the UDP tunnel rules share (udp-gro-forwarding-off, udp-gso-
// corruption): which devices are UDP tunnels.

// udpTunnels lists the snapshot's UDP tunnel devices: the kernel's UDP
// tunnels and tun devices (wireguard-go, Tailscale, OpenVPN over UDP).
func udpTunnels(in *Input) []string {
	var out []string
	for _, d := range in.Snap.Devices {
		if udpTunnelDrivers[d.Driver] || d.Driver == "tun" {
			out = append(out, d.Name)
		}
	}
	return out
}

var udpTunnelDrivers = map[string]bool{"wireguard": true, "vxlan": true, "geneve": true, "fou": true, "gtp": true, "bareudp": true}
