package cli

import (
	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Every bench run carries what observe saw during its load. By default in
// light mode: a bench measures throughput, so the observer leaves out the
// per-packet pre-GRO tracepoints (most of its cost, see docs/results.md
// "Observe overhead"); the GRO ratio then comes from NAPI work per
// delivered skb, which is exact only where a NAPI's work counts packets
// (usbnet's counts URBs). --observe full counts the segments themselves.
func init() {
	benchObservers = map[string]bench.Observer{
		"light": observe.BenchObserver{Light: true},
		"full":  observe.BenchObserver{},
	}
}
