// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Heterogeneous CPUs (big.LITTLE, DynamIQ): cpuN/cpu_capacity says how
// much work each CPU does per unit of time, 1024 for the biggest. A
// packet's protocol processing costs the same instructions wherever it
// runs, so on a little core it takes longer: RPS masks and IRQ moves go
// to the biggest cores that are free, and the finding says why.

// bigCPUs narrows cpus to those of the highest capacity among them, with
// the sentence that says why; cpus unchanged (and "") when the snapshot
// has no capacities or they are all alike.
func bigCPUs(s *inspect.Snapshot, cpus []int) ([]int, string) {
	capOf := map[int]int{}
	for _, c := range s.Host.CPUs.PerCPU {
		if c.Capacity != nil {
			capOf[c.CPU] = *c.Capacity
		}
	}
	top, low := 0, -1
	for _, c := range cpus {
		v, ok := capOf[c]
		if !ok {
			return cpus, "" // a CPU without a capacity: cannot compare
		}
		top = max(top, v)
		if low < 0 || v < low {
			low = v
		}
	}
	if len(cpus) == 0 || top == low {
		return cpus, ""
	}
	var big []int
	for _, c := range cpus {
		if capOf[c] == top {
			big = append(big, c)
		}
	}
	// cpu_capacity is capacity-dmips-mhz times each CPU's top frequency,
	// scaled to 1024 (drivers/base/arch_topology.c): a rating, not a
	// measurement of packet work, so no speed-up is promised
	return big, fmt.Sprintf("The CPUs differ in capacity (cpu_capacity %d to %d: the kernel rates the biggest %.1fx the smallest): the mask takes the biggest, CPUs %s.",
		low, top, float64(top)/float64(low), cpumask.FormatList(big))
}

// capacityEvidence cites the capacities behind a big-core choice.
func capacityEvidence(s *inspect.Snapshot) []Evidence {
	var ev []Evidence
	for _, c := range s.Host.CPUs.PerCPU {
		if c.Capacity != nil {
			ev = append(ev, snapEv(fmt.Sprintf("host.cpus.per_cpu[cpu=%d].capacity", c.CPU), "%d", *c.Capacity))
		}
	}
	return ev
}
