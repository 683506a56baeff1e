// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// Rule udp-gro-forwarding-off: a forwarding host carrying UDP tunnels
// without rx-udp-gro-forwarding on its NAPI devices, so tunnel packets are
// forwarded one by one.

func init() {
	register(Rule{
		ID:       "udp-gro-forwarding-off",
		Summary:  "UDP GRO forwarding off on a forwarding tunnel host",
		Findings: []string{"udp-gro-forwarding-off"},
		Check:    checkUDPGROForwardingOff,
	})
}

func checkUDPGROForwardingOff(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	var skipped []Skipped
	tunnels := udpTunnels(in)
	fwd, fwdKnown := sysctl(in.Snap, "net.ipv4.ip_forward")
	gf := fact("udp-gro-fwd-tunnels")
	kernelHas := Has(in.Snap.Host.Kernel, gf.Key)
	for _, d := range in.devices() {
		if d.Datapath.OwnNAPI.State != datapath.Yes {
			continue
		}
		if len(tunnels) == 0 || !physical(d) {
			continue
		}
		if !fwdKnown {
			skipped = append(skipped, Skipped{Device: d.Name,
				Reason: "udp-gro-forwarding: net.ipv4.ip_forward not in the snapshot"})
			continue
		}
		if fwd != "1" {
			continue
		}
		if kernelHas == datapath.No {
			continue // the tunnels' advice is for Linux gf.Release and later
		}
		if on, fixed := offload(d, "rx-udp-gro-forwarding"); on != nil && !*on && !fixed {
			acts := []Action{ethtoolAction(d.Name, "rx-udp-gro-forwarding", "on")}
			ev := []Evidence{
				snapEv("host.sysctls[net.ipv4.ip_forward]", "1"),
				snapEv(devField(d, "offloads[rx-udp-gro-forwarding].active"), "false"),
				snapEv("devices[*].driver", "UDP tunnel devices: %s", strings.Join(tunnels, ", ")),
			}
			// GRO's fraglist mode would pass the merged packets on as
			// chains the tunnel's socket takes apart again: off with it
			if list, listFixed := offload(d, "rx-gro-list"); list != nil && *list && !listFixed {
				a := ethtoolAction(d.Name, "rx-gro-list", "off")
				a.Needs = []string{acts[0].ID}
				acts = append(acts, a)
				ev = append(ev, snapEv(devField(d, "offloads[rx-gro-list].active"), "true"))
			}
			cmd := "ethtool -K " + d.Name
			for _, a := range acts {
				cmd += " " + a.Target + " " + a.Value
			}
			f := Finding{
				ID: "udp-gro-forwarding-off", Severity: Warn, Impact: 40, Devices: []string{d.Name},
				Title:    fmt.Sprintf("%s: a forwarding host with tunnels (%s) and rx-udp-gro-forwarding off", d.Name, strings.Join(tunnels, ", ")),
				Evidence: ev,
				Why: "on a forwarding host GRO leaves UDP alone unless rx-udp-gro-forwarding is on; with it, the datagrams of a UDP flow this host forwards are merged " +
					"and forwarded as one (segmented again on the way out), saving per-packet routing cost. It matters for the UDP " + d.Name + " forwards: another " +
					"tunnel's datagrams passing through, and the UDP flows (QUIC, DNS, games) routed between " + strings.Join(tunnels, ", ") + " and the network. " +
					"It does nothing for these tunnels' own datagrams, which end in this host's socket (the kernel's or the tunnel daemon's) and are not forwarded. " +
					"The setting Tailscale gives its exit nodes and subnet routers (rx-udp-gro-forwarding on, rx-gro-list off; " + gf.Source + ").",
				Fix: &Fix{Commands: []string{cmd}, Actions: acts,
					Caveat: "helps traffic forwarded through this host, not traffic it terminates; " + gf.Note + " (wirespeed tune persist keeps it)."},
				Verify: verifyRX(d.Name),
			}
			if kernelHas == datapath.Unknown {
				f.Unchecked = append(f.Unchecked, "whether kernel "+in.Snap.Host.Kernel+" is Linux "+gf.Release+" or later")
			}
			out = append(out, f)
		}
	}
	return out, skipped
}
