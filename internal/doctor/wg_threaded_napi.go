// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule wg-threaded-napi: WireGuard devices polled by napi/wgN-* threads.
// Threaded NAPI is WireGuard's default since 6.16; stable kernels got the
// default as a backport and lost it again, because with threaded NAPI a
// peer's RX could stall for good (CVE-2026-52945). On a kernel of those
// stable ranges this is a warning; elsewhere what a user should know and
// watch for. Release and ranges come from facts.go.

func init() {
	register(Rule{
		ID:       "wg-threaded-napi",
		Summary:  "WireGuard devices on threaded NAPI: the default since 6.16, reverted from stable for a stall (CVE ranges)",
		Findings: []string{"wg-threaded-napi"},
		Check:    checkWGThreaded,
	})
}

func checkWGThreaded(in *Input) ([]Finding, []Skipped) {
	var on []*inspect.Device
	for _, d := range wireguards(in) {
		if napiThreaded(d) {
			on = append(on, d)
		}
	}
	if len(on) == 0 {
		return nil, nil
	}
	rel := in.Snap.Host.Kernel
	f0 := fact("wg-threaded-default")
	names := deviceNames(on)
	f := Finding{
		ID: "wg-threaded-napi", Severity: Info, Impact: 10, Devices: names,
		Why: "each WireGuard peer's NAPI is polled by a napi/<dev>-* kthread the scheduler places, which keeps many tunnels from converging on one CPU in softirq (" +
			srcWGPaper + "). " + wgThreadedCaveat(rel),
		Verify: "wg show DEV transfer twice under load: every peer's received bytes must grow",
	}
	for _, d := range on {
		f.Evidence = append(f.Evidence, snapEv(devField(d, "napi_sysfs.threaded"), "%s (%d napi/%s-* threads)", d.NAPISysfs.Threaded, len(d.Threads), d.Name))
	}
	by := "set by hand or by a tool: this kernel predates the default"
	if Has(rel, f0.Key) == datapath.Yes {
		by = "WireGuard's default on this kernel"
	}
	f.Title = fmt.Sprintf("%s: threaded NAPI (%s)", nameList(names), by)
	switch r, inRange, known := InStable(rel, f0.Key); {
	case inRange:
		f.Severity, f.Impact = Warn, 45
		f.Title = fmt.Sprintf("%s: threaded NAPI on kernel %s, a stable release whose WireGuard can stall a peer's RX for good (CVE-2026-52945: %s)",
			nameList(names), rel, r)
		f.Evidence = append(f.Evidence, snapEv("host.kernel", "%s (in %s)", rel, r))
		f.Fix = &Fix{Commands: []string{
			"# upgrade to " + r.After() + " or later (the stable revert of " + f0.Commit + ")",
			"# until then, if a peer's RX stalls, polling in softirq avoids the race:",
		}, Caveat: "threaded off brings back softirq polling, where many busy tunnels converge on one CPU under a surge (" + srcWGPaper + ")."}
		for _, d := range on {
			f.Fix.Commands = append(f.Fix.Commands, "echo 0 > /sys/class/net/"+d.Name+"/threaded")
		}
	case !known:
		f.Evidence = append(f.Evidence, snapEv("host.kernel", "%s", rel))
		f.Unchecked = append(f.Unchecked, "whether this kernel is in CVE-2026-52945's range "+r.String()+": "+patchUnknownNote(rel))
	case Has(rel, f0.Key) == datapath.Yes:
		f.Unchecked = append(f.Unchecked, "whether kernel "+rel+" can stall a peer's RX: "+wgMainlineStall)
	}
	return []Finding{f}, nil
}
