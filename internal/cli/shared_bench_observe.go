// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Every bench run carries what observe saw during its load. By default in
// light mode: a bench measures throughput, so the observer leaves out the
// per-packet pre-GRO tracepoints (most of its cost, see docs/results.md
// "Observe overhead"); the GRO ratio then comes from NAPI work per
// delivered skb, which is exact only where a NAPI's work counts packets
// (usbnet's counts URBs). --observe full counts the segments themselves.
// Both are sampled, 10% of every second by default (--observe-sample):
// even light mode cost 7% of throughput at 10 Gbit/s on two CPUs
// continuously, nearly all of it paid per event while attached.
//
// benchObserver gives the observer started for every bench run in a mode
// ("light", "full") sampling a share of the time (observe.Options.Sample),
// whose JSON is stored under "observe" in that run's result; an error says
// why the sampling share or the programs cannot be used.
func benchObserver(mode string, sample float64, programs string) (bench.Observer, error) {
	if err := observe.CheckSample(sample, 0); err != nil {
		return nil, fmt.Errorf("--observe-sample: %w", err)
	}
	if err := observe.CheckProgramsFlag(programs); err != nil {
		return nil, fmt.Errorf("--observe-programs: %w", err)
	}
	return observe.BenchObserver{Light: mode == "light", Sample: sample, Programs: programs}, nil
}
