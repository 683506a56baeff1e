// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
)

// Rule rps-on-irq-cpu: a device's RX interrupt is stuck on one CPU (as
// irq-stuck-rps-off finds it) and RPS is on but includes that CPU, which
// then gets a share of the protocol work on top of the interrupt and the
// driver's own.

func init() {
	register(Rule{
		ID:       "rps-on-irq-cpu",
		Summary:  "RPS on, but including the one CPU that takes all of a device's RX interrupt work",
		Findings: []string{"rps-on-irq-cpu"},
		Check:    checkRPSOnIRQCPU,
	})
}

func checkRPSOnIRQCPU(in *Input) ([]Finding, []Skipped) {
	var out []Finding
	cpus := onlineCPUs(in.Snap)
	for _, s := range stuckIRQs(in) {
		d := s.d
		if !s.known || len(cpus) <= 2 || !slices.Contains(s.rps, s.hot) {
			continue // unreadable rps_cpus is irq-stuck-rps-off's to report
		}
		f := Finding{
			ID: "rps-on-irq-cpu", Severity: Info, Impact: 25, Devices: []string{d.Name},
			Title:    fmt.Sprintf("%s: RPS sends work back to CPU%d, the CPU that takes all its interrupts", d.Name, s.hot),
			Evidence: append(s.ev, snapEv(devField(d, "rx_queues[*].rps_cpus"), "%s (CPUs %s)", rpsMasks(d), cpumask.FormatList(s.rps))),
			Why: fmt.Sprintf("CPU%d already runs the interrupt and the driver's RX work; RPS including it puts a share of the protocol work there too. "+
				"Leaving it out keeps that CPU for what only it can do.", s.hot),
			Fix:       rpsFix(in.Snap, d, s.others, s.hot),
			Verify:    verifyRX(d.Name),
			Unchecked: s.unchecked,
		}
		f.Fix.Actions = f.Fix.Actions[:len(d.RXQueues)] // the mask only; RFS is its own question here
		f.Fix.Commands = commands(f.Fix.Actions)
		f.Fix.Caveat, _, _ = strings.Cut(f.Fix.Caveat, " RFS")
		out = append(out, f)
	}
	return out, nil
}
