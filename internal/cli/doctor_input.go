package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Reading doctor's input: live, from a snapshot file, or from a bench result.

func liveSnapshot(ctx context.Context, ifaces []string) (*inspect.Snapshot, error) {
	fsys := hostfs.Live()
	snap, err := inspect.Collect(ctx, inspect.Options{FS: fsys, Answers: inspect.LiveAnswers(fsys), Ifaces: ifaces})
	if err != nil {
		return nil, unknownIface(err)
	}
	return snap, nil
}

// loadSnapshot reads a snapshot file as 'inspect --from' does.
func loadSnapshot(ctx context.Context, file string, ifaces []string) (*inspect.Snapshot, error) {
	sf, err := hostfs.OpenSnapshot(file)
	if err != nil {
		return nil, snapshotError(file, err)
	}
	defer sf.Close()
	a, err := inspect.ReplayAnswers(sf.Answers)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	snap, err := inspect.Collect(ctx, inspect.Options{FS: sf.FS, Answers: a, Ifaces: ifaces})
	if errors.Is(err, inspect.ErrUnknownInterface) {
		return nil, unknownIface(err)
	}
	if err != nil {
		return nil, err
	}
	snap.Source = inspect.Source{Kind: "snapshot", File: file, Root: a.Euid == 0,
		Captured: sf.Meta.Created.UTC().Format(time.RFC3339)}
	return snap, nil
}

// fromResult builds doctor's input from a bench result: the snapshot it
// embedded (or --from), softnet counters of its first and last samples as
// two readings, and the observation of its last observed run.
func fromResult(ctx context.Context, file, from string, ifaces []string) (snap, before *inspect.Snapshot, obs *observe.Observation, desc string, err error) {
	res, err := bench.Load(file)
	if err != nil {
		return nil, nil, nil, "", err
	}
	if from != "" {
		if snap, err = loadSnapshot(ctx, from, ifaces); err != nil {
			return nil, nil, nil, "", err
		}
	} else {
		keys := make([]string, 0, len(res.Inspect))
		for k := range res.Inspect {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return resultSnapRank(keys[i]) < resultSnapRank(keys[j]) || (resultSnapRank(keys[i]) == resultSnapRank(keys[j]) && keys[i] < keys[j])
		})
		for _, k := range keys {
			var s inspect.Snapshot
			if json.Unmarshal(res.Inspect[k], &s) == nil && strings.HasPrefix(s.Schema, "wirespeed.inspect/") {
				snap = &s
				desc = "snapshot " + k + " of "
				break
			}
		}
		if snap == nil {
			return nil, nil, nil, "", fmt.Errorf("%s holds no inspect snapshot (run bench without --no-inspect, or give one with --from)", file)
		}
		if err := checkIfaces(snap, ifaces); err != nil {
			return nil, nil, nil, "", err
		}
	}
	var run *bench.Run
	for i := len(res.Runs) - 1; i >= 0; i-- {
		if len(res.Runs[i].Observe) > 0 || len(res.Runs[i].Samples) >= 2 {
			run = &res.Runs[i]
			break
		}
	}
	if run == nil {
		return snap, nil, nil, desc + "result " + file + " (no observation or samples)", nil
	}
	desc += fmt.Sprintf("result %s, run %s #%d", file, run.Variant, run.Rep)
	if len(run.Observe) > 0 {
		var o observe.Observation
		if err := json.Unmarshal(run.Observe, &o); err == nil && strings.HasPrefix(o.Schema, "wirespeed.observe/") {
			obs = &o
		}
	}
	if n := len(run.Samples); n >= 2 {
		before, snap = readingsFromSamples(snap, run.Samples[0], run.Samples[n-1])
	}
	return snap, before, obs, desc, nil
}

// resultSnapRank prefers the receiver's snapshot, then the local device's.
func resultSnapRank(k string) int {
	switch {
	case strings.HasSuffix(k, "/receiver"):
		return 0
	case k == "local":
		return 1
	}
	return 2
}

func checkIfaces(s *inspect.Snapshot, ifaces []string) error {
	for _, n := range ifaces {
		found := false
		for _, d := range s.Devices {
			found = found || d.Name == n
		}
		if !found {
			return usageErrorf("%s: not in the result's snapshot", n)
		}
	}
	return nil
}

// readingsFromSamples makes two readings of snap from a bench run's first
// and last samples: softnet and the devices' IRQ counts per CPU move
// between them. The snapshot's other counters are not from the run, so the
// earlier reading keeps only what the samples give (no device counters).
func readingsFromSamples(snap *inspect.Snapshot, first, last bench.Sample) (*inspect.Snapshot, *inspect.Snapshot) {
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
