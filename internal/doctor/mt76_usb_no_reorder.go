// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule mt76-usb-no-reorder: mt76 on USB skips RX reordering on kernels
// with a regression (facts.go: "mt76-usb-reorder-regression") until the
// fix ("mt76-usb-reorder-fix"): block-ack reordering is what puts an
// aggregate's frames back in order, so without it TCP sees reordered
// segments and retransmits (20-71 per 10 s on an mt7921u, 0 after the
// fix). The fix's first release per series is not recorded, so on an
// affected series the finding says how to tell rather than guess.

func init() {
	register(Rule{
		ID:       "mt76-usb-no-reorder",
		Summary:  "mt76 USB WiFi on a kernel whose mt76 skips RX reordering on USB (TCP retransmits)",
		Findings: []string{"mt76-usb-no-reorder"},
		Check:    checkMT76Reorder,
	})
}

func checkMT76Reorder(in *Input) ([]Finding, []Skipped) {
	k := in.Snap.Host.Kernel
	bug, fix := fact("mt76-usb-reorder-regression"), fact("mt76-usb-reorder-fix")
	if Has(k, bug.Key) != datapath.Yes {
		return nil, nil
	}
	fixed := Has(k, fix.Key)
	if fixed == datapath.Yes {
		return nil, nil
	}
	var out []Finding
	for _, d := range in.devices() {
		if d.Wireless == nil || d.Wireless.Family != inspect.FamilyMT76USB || !isUp(d) {
			continue
		}
		f := Finding{
			ID: "mt76-usb-no-reorder", Severity: Info, Impact: 40, Devices: []string{d.Name},
			Title: fmt.Sprintf("%s (%s): kernel %s may skip RX reordering on mt76 USB (a regression since Linux %s)", d.Name, d.Driver, k, bug.Release),
			Evidence: []Evidence{
				snapEv(devField(d, "driver"), "%s", d.Driver),
				snapEv(devField(d, "wireless.family"), "%s", d.Wireless.Family),
				snapEv("host.kernel", "%s", k),
			},
			Why: "mt76 " + bug.What + ". The regression came with " + bug.Commit + " (Linux " + bug.Release + "); the fix is " + fix.Commit +
				", in mainline and stable. Frames of an aggregate then reach TCP out of order, which it takes for loss: retransmits and a smaller window on a clean link.",
			Fix: &Fix{Commands: []string{
				"# check whether kernel " + k + " carries " + fix.Commit + " (its changelog; on Debian: apt changelog linux-image-$(uname -r))",
				"# if it does not: a kernel that does (your distribution's next update of this series, once its changelog lists the fix)",
			}},
			Verify: "nstat -n; iperf3 -c PEER -R -t 10; nstat TcpRetransSegs TcpExtTCPSACKReorder: tens of retransmits in 10 s of a clean link's download is the bug's sign, about 0 once fixed",
		}
		if fixed == datapath.Unknown {
			f.Unchecked = append(f.Unchecked, "whether kernel "+k+" has the fix: "+fix.Note)
		}
		out = append(out, f)
	}
	return out, nil
}
