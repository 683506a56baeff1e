// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/cpumask"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule napi-threads-confined: napi/* kthreads allowed on one CPU only, several
// on the same one: threaded NAPI without the freedom that makes it useful.

func init() {
	register(Rule{
		ID:       "napi-threads-confined",
		Summary:  "napi kthreads confined to one CPU, several on the same one",
		Findings: []string{"napi-threads-confined"},
		Check:    func(in *Input) ([]Finding, []Skipped) { return confinedThreads(in), nil },
	})
}

// confinedThreads finds napi kthreads that may run on one CPU only, several
// confined to the same CPU.
func confinedThreads(in *Input) []Finding {
	cpus := onlineCPUs(in.Snap)
	if len(cpus) < 2 {
		return nil
	}
	type th struct {
		dev string
		t   inspect.NAPIThread
	}
	byCPU := map[int][]th{}
	for _, d := range in.devices() {
		ts := append([]inspect.NAPIThread{}, d.Threads...)
		for _, n := range d.NAPIs {
			if n.Thread != nil {
				ts = append(ts, *n.Thread)
			}
		}
		seen := map[int]bool{}
		for _, t := range ts {
			if seen[t.PID] || t.AllowedCPU == "" {
				continue
			}
			seen[t.PID] = true
			l, err := cpumask.ParseList(t.AllowedCPU)
			if err != nil || len(l) != 1 {
				continue
			}
			byCPU[l[0]] = append(byCPU[l[0]], th{d.Name, t})
		}
	}
	var out []Finding
	all := cpumask.FormatList(cpus)
	for _, c := range crowded(byCPU) {
		list := byCPU[c]
		f := Finding{
			ID: "napi-threads-confined", Severity: Warn, Impact: 40,
			Title: fmt.Sprintf("%d napi kthreads may run on CPU%d only", len(list), c),
			Why:   "threaded NAPI helps because the scheduler can place each poll thread; threads pinned to the same single CPU poll one after another as softirq would.",
			Fix:   &Fix{},
		}
		devs := map[string]bool{}
		for _, x := range list {
			f.Evidence = append(f.Evidence, snapEv(fmt.Sprintf("devices[%s].napi_threads[pid=%d].allowed_cpus", x.dev, x.t.PID), "%s (%s)", x.t.AllowedCPU, x.t.Comm))
			f.Fix.Commands = append(f.Fix.Commands, fmt.Sprintf("taskset -p -c %s %d   # %s", all, x.t.PID, x.t.Comm))
			if !devs[x.dev] {
				devs[x.dev] = true
				f.Devices = append(f.Devices, x.dev)
			}
		}
		f.Fix.Caveat = "a thread's affinity is lost when the device or its NAPI is re-created; whoever pinned them (a tuning script?) may do it again."
		f.Verify = verifyRX(f.Devices[0])
		f.Title += " (" + strings.Join(f.Devices, ", ") + ")"
		out = append(out, f)
	}
	return out
}
