// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// FromResult builds the Input of `doctor --result`: a bench result's
// snapshot, the observation of its last run that has one or two samples,
// and that run's first and last samples as two readings (Before, Snap) of
// softnet and the devices' IRQ counts. name is the result's file, for the
// description and the errors.
//
// snap, when not nil, replaces the snapshot the result embedded (`--from`:
// it is already restricted to ifaces); otherwise the receiver's snapshot is
// taken, else the local device's, else the first by key, and an iface it
// does not hold is an error wrapping inspect.ErrUnknownInterface.
//
// The description says which snapshot and which run were used ("snapshot
// gro/receiver of result lab.json, run gro #2").
func FromResult(res *bench.Result, name string, snap *inspect.Snapshot, ifaces []string) (*Input, string, error) {
	in := &Input{Snap: snap, Ifaces: ifaces}
	desc := ""
	if in.Snap == nil {
		key, s := resultSnapshot(res)
		if s == nil {
			return nil, "", fmt.Errorf("%s holds no inspect snapshot (run bench without --no-inspect, or give one with --from)", name)
		}
		var held []string
		for _, d := range s.Devices {
			held = append(held, d.Name)
		}
		for _, n := range ifaces {
			if !slices.Contains(held, n) {
				return nil, "", fmt.Errorf("%w %q: not in the snapshot %s of %s (it holds %s)",
					inspect.ErrUnknownInterface, n, key, name, strings.Join(held, ", "))
			}
		}
		in.Snap = s
		desc = "snapshot " + key + " of "
	}
	var run *bench.Run
	for i := len(res.Runs) - 1; i >= 0; i-- {
		if len(res.Runs[i].Observe) > 0 || len(res.Runs[i].Samples) >= 2 {
			run = &res.Runs[i]
			break
		}
	}
	if run == nil {
		return in, desc + "result " + name + " (no observation or samples)", nil
	}
	desc += fmt.Sprintf("result %s, run %s #%d", name, run.Variant, run.Rep)
	if len(run.Observe) > 0 {
		var o observe.Observation
		if err := json.Unmarshal(run.Observe, &o); err == nil && strings.HasPrefix(o.Schema, "wirespeed.observe/") {
			in.Obs = &o
		}
	}
	if n := len(run.Samples); n >= 2 {
		in.Before, in.Snap = readingsFromSamples(in.Snap, run.Samples[0], run.Samples[n-1])
	}
	return in, desc, nil
}

// resultSnapshot picks the result's snapshot doctor reads: the receiver's,
// then the local device's, then the first by key; one that does not decode
// as an inspect snapshot is passed over.
func resultSnapshot(res *bench.Result) (string, *inspect.Snapshot) {
	keys := make([]string, 0, len(res.Inspect))
	for k := range res.Inspect {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		switch {
		case strings.HasSuffix(k, "/receiver"):
			return 0
		case k == "local":
			return 1
		}
		return 2
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank(keys[i]), rank(keys[j])
		return ri < rj || (ri == rj && keys[i] < keys[j])
	})
	for _, k := range keys {
		var s inspect.Snapshot
		if json.Unmarshal(res.Inspect[k], &s) == nil && strings.HasPrefix(s.Schema, "wirespeed.inspect/") {
			return k, &s
		}
	}
	return "", nil
}

// readingsFromSamples makes two readings of snap from a bench run's first
// and last samples: softnet and the devices' IRQ counts per CPU move
// between them. The snapshot's other counters are not from the run, so the
// earlier reading keeps only what the samples give (no device counters).
// snap itself is not changed.
func readingsFromSamples(snap *inspect.Snapshot, first, last bench.Sample) (before, after *inspect.Snapshot) {
	b, a := cloneSnapshot(snap), cloneSnapshot(snap)
	if len(first.Softnet) > 0 && len(last.Softnet) > 0 {
		b.Host.Softnet, a.Host.Softnet = first.Softnet, last.Softnet
	}
	for i := range a.Devices {
		b.Devices[i].Stats = inspect.Stats{}
		for j := range a.Devices[i].IRQs {
			k := strconv.Itoa(a.Devices[i].IRQs[j].Number)
			f, l := first.IRQs[k], last.IRQs[k]
			if len(f) == 0 || len(f) != len(l) {
				continue
			}
			setCounts(&b.Devices[i].IRQs[j], f)
			setCounts(&a.Devices[i].IRQs[j], l)
		}
	}
	return b, a
}

// setCounts replaces an IRQ's per-CPU counts with a sample's, whose index
// is the CPU.
func setCounts(irq *inspect.IRQ, counts []uint64) {
	irq.Counts, irq.CountCPUs, irq.Total = append([]uint64(nil), counts...), nil, 0
	for i, c := range counts {
		irq.CountCPUs = append(irq.CountCPUs, i)
		irq.Total += c
	}
}

func cloneSnapshot(s *inspect.Snapshot) *inspect.Snapshot {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Snapshot always marshals
	}
	var c inspect.Snapshot
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}
