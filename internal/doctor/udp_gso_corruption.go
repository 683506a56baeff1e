// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
)

// Rule udp-gso-corruption: kernels of a range corrupt UDP GSO on some
// drivers (facts.go: "udp-gso-corruption", fixed by
// "udp-gso-corruption-fix"): hosts that send UDP in GSO batches - kernel
// WireGuard, Tailscale and wireguard-go on tun, QUIC servers - lose
// heavily. Until the upgrade, turning tx-udp-segmentation off on the
// device the tunnel's packets leave by makes the stack segment in
// software. The workaround is offered only where the device has that
// feature on and ethtool may change it.

func init() {
	register(Rule{
		ID:       "udp-gso-corruption",
		Summary:  "a kernel whose UDP GSO corrupts datagrams on some drivers, on a host with UDP tunnels",
		Findings: []string{"udp-gso-corruption"},
		Check:    checkUDPGSO,
	})
}

func checkUDPGSO(in *Input) ([]Finding, []Skipped) {
	k := in.Snap.Host.Kernel
	bug, fix := fact("udp-gso-corruption"), fact("udp-gso-corruption-fix")
	if Has(k, bug.Key) != datapath.Yes {
		return nil, nil
	}
	fixed := Has(k, fix.Key)
	if fixed == datapath.Yes {
		return nil, nil
	}
	tunnels := udpTunnels(in)
	if len(tunnels) == 0 {
		return nil, nil
	}
	h := hostDistroOf(in.Snap)
	var out []Finding
	for _, d := range in.devices() {
		if !physical(d) && !udpTunnelDrivers[d.Driver] || !isUp(d) {
			continue // the senders that segment UDP: NICs with USO, tunnel devices with software UDP segmentation
		}
		on, fixedFeature := offload(d, "uso") // tx-udp-segmentation
		if on == nil || !*on || fixedFeature {
			continue // no UDP segmentation offload to turn off here
		}
		a := ethtoolAction(d.Name, "tx-udp-segmentation", "off")
		f := Finding{
			ID: "udp-gso-corruption", Severity: Warn, Impact: 75, Devices: []string{d.Name},
			Title: fmt.Sprintf("%s: kernel %s corrupts UDP GSO on some drivers, and this host carries UDP tunnels (%s)", d.Name, k, nameList(tunnels)),
			Evidence: []Evidence{
				snapEv("host.kernel", "%s", k),
				snapEv(devField(d, "offloads[uso].active"), "true"),
				snapEv("devices[*].driver", "UDP tunnel devices: %s", strings.Join(tunnels, ", ")),
			},
			Why: "the kernel's " + bug.What + ": introduced by " + bug.Commit + " (Linux " + bug.Release + "), fixed by " + fix.Commit +
				" (Linux " + fix.Release + ", stable " + fix.StableRanges() + "). Every sender that segments UDP in GSO batches is concerned, not only a NIC's USO: " +
				"tunnels batch their UDP with GSO, and a tunnel device such as WireGuard's carries software UDP segmentation (tx-udp-segmentation on), so this host sends exactly what gets corrupted.",
			Fix: &Fix{Commands: []string{"# until the upgrade, segment UDP in software on " + d.Name + ":", a.Command}, Actions: []Action{a},
				Caveat: "software segmentation costs CPU per datagram; turn it back on (ethtool -K " + d.Name + " tx-udp-segmentation on) once the kernel has the fix."},
			Verify: "wirespeed bench --peer PEER --iface " + d.Name + " --direction send through the tunnel before and after: the loss (iperf3 -u) falls to the link's",
		}
		f.Fix.Commands = append(f.Fix.Commands, reachAdvice(h, k, in.Snap.Host.Arch, "the fix", fix.Release, hasSeries(fix.Key))...)
		if kk, ok := ParseKernel(k); ok && !kk.PatchKnown {
			f.Unchecked = append(f.Unchecked, "whether this distribution kernel carries the fix as a backport: "+patchUnknownNote(k)+"; "+fix.Note)
		}
		if fixed == datapath.Unknown {
			f.Unchecked = append(f.Unchecked, "whether kernel "+k+" is in the fixed range "+fix.StableRanges())
		}
		f.Unchecked = append(f.Unchecked, distroAssumed(h)...)
		out = append(out, f)
	}
	return out, nil
}
