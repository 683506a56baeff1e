// SPDX-License-Identifier: Apache-2.0

package doctor

import "fmt"

// Rule irq-stuck-rps-off: the interrupt that starts all of a device's RX
// work lands on one CPU and cannot be moved (the Pi 4's xHCI MSI), or the
// device has one RX source whose processing stays where the interrupt ran
// (usbnet's bottom half, the netif_rx backlog), and RPS is off - so one CPU
// does everything while the others wait. RPS over the other CPUs spreads
// protocol processing; RFS steers each flow to its reader's CPU. Its
// sibling rps-on-irq-cpu reads the same stuck interrupts, with RPS on:
// what both read, and the RPS fix, is in shared_rps.go.

func init() {
	register(Rule{
		ID:       "irq-stuck-rps-off",
		Summary:  "all RX interrupt work on one CPU that cannot be spread by moving the IRQ, with RPS off",
		Findings: []string{"irq-stuck-rps-off"},
		Check:    checkIRQStuckRPSOff,
	})
}

func checkIRQStuckRPSOff(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	var skipped []Skipped
	for _, s := range stuckIRQs(in) {
		d := s.d
		switch {
		case s.known && len(s.rps) == 0:
			out = append(out, Finding{
				ID: "irq-stuck-rps-off", Severity: Warn, Impact: 60, Devices: []string{d.Name},
				Title:     fmt.Sprintf("%s: all RX interrupt work on CPU%d, RPS off", d.Name, s.hot),
				Evidence:  append(s.ev, snapEv(devField(d, "rx_queues[*].rps_cpus"), "%s", rpsMasks(d))),
				Why:       s.why,
				Fix:       rpsFix(in.Snap, d, s.others, s.hot),
				Verify:    verifyRX(d.Name),
				Unchecked: s.unchecked,
			})
		case !s.known:
			skipped = append(skipped, Skipped{Device: d.Name, Reason: "rps_cpus could not be read"})
		}
	}
	return out, skipped
}
