package cli

import "github.com/wirespeed/wirespeed/internal/observe"

// Every bench run carries what observe saw during its load. Light mode: a
// bench measures throughput, so the observer leaves out the per-packet
// pre-GRO tracepoints (most of its cost, see docs/results.md "Observe
// overhead"); the GRO ratio then comes from NAPI work per delivered skb.
func init() { benchObserver = observe.BenchObserver{Light: true} }
