// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// Two real bench results: a VM lab run against a USB NIC (one snapshot,
// "local", with the xHCI controller's IRQs sampled) and a host-lab run of
// three variants (snapshots per variant and role).
const (
	vmResultFile  = "../../testdata/results/vm-usb-nic-ours.json"
	labResultFile = "../report/testdata/lab-gro-threaded.json.gz"
)

func loadResult(t *testing.T, file string) *bench.Result {
	t.Helper()
	res, err := bench.Decode(testfiles.Read(t, file), file)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFromResultReadings: the run's first and last samples become the two
// readings; what the samples do not give keeps the snapshot's value.
func TestFromResultReadings(t *testing.T) {
	res := loadResult(t, vmResultFile)
	in, desc, err := FromResult(res, "r.json", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[len(res.Runs)-1]
	first, last := run.Samples[0], run.Samples[len(run.Samples)-1]
	if want := "snapshot local of result r.json, run peer #1"; desc != want {
		t.Errorf("desc %q, want %q", desc, want)
	}
	if in.Obs == nil || in.Before == nil || in.Snap == nil {
		t.Fatalf("input %+v: want an observation and two readings", in)
	}
	if !reflect.DeepEqual(in.Before.Host.Softnet, first.Softnet) || !reflect.DeepEqual(in.Snap.Host.Softnet, last.Softnet) {
		t.Errorf("softnet readings are not the first and last samples'")
	}
	var embedded inspect.Snapshot
	if err := json.Unmarshal(res.Inspect["local"], &embedded); err != nil {
		t.Fatal(err)
	}
	dev := embedded.Devices[0]
	checked := 0
	for j, irq := range dev.IRQs {
		b, a := in.Before.Devices[0].IRQs[j], in.Snap.Devices[0].IRQs[j]
		f, l := first.IRQs[itoa(irq.Number)], last.IRQs[itoa(irq.Number)]
		if len(f) == 0 {
			// not sampled: both readings keep the snapshot's counts
			if !reflect.DeepEqual(b.Counts, irq.Counts) || !reflect.DeepEqual(a.Counts, irq.Counts) {
				t.Errorf("IRQ %d not sampled, counts changed: %v %v, snapshot %v", irq.Number, b.Counts, a.Counts, irq.Counts)
			}
			continue
		}
		checked++
		if !reflect.DeepEqual(b.Counts, f) || !reflect.DeepEqual(a.Counts, l) || b.Total != sum(f) || a.Total != sum(l) ||
			!reflect.DeepEqual(a.CountCPUs, []int{0, 1}[:len(l)]) {
			t.Errorf("IRQ %d: before %v (%d), after %v (%d) on %v; samples %v, %v",
				irq.Number, b.Counts, b.Total, a.Counts, a.Total, a.CountCPUs, f, l)
		}
	}
	if checked == 0 {
		t.Fatal("the fixture's samples hold none of its device's IRQs")
	}
	if in.Before.Devices[0].Stats != (inspect.Stats{}) {
		t.Errorf("the earlier reading keeps device counters that are not from the run: %+v", in.Before.Devices[0].Stats)
	}
	if !reflect.DeepEqual(in.Snap.Devices[0].Stats, dev.Stats) || dev.Stats.RxBytes == nil {
		t.Errorf("the later reading lost the snapshot's device counters")
	}
	// A reading that moved is what the delta rules need: Diagnose must run
	// on it without asking for more data.
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range rep.Skipped {
		if strings.Contains(sk.Reason, "--result") || strings.Contains(sk.Reason, "--observe") {
			t.Errorf("rule %s skipped with a result that has samples and an observation: %s", sk.Rule, sk.Reason)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func sum(c []uint64) (s uint64) {
	for _, v := range c {
		s += v
	}
	return s
}

// TestFromResultPicksReceiver: of a host-lab result's snapshots the
// receiver's is read (the first variant's by name), and the run is the
// last one.
func TestFromResultPicksReceiver(t *testing.T) {
	res := loadResult(t, labResultFile)
	in, desc, err := FromResult(res, "lab.json", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "snapshot gro/receiver of result lab.json, run threaded #2"; desc != want {
		t.Errorf("desc %q, want %q", desc, want)
	}
	var rcv inspect.Snapshot
	if err := json.Unmarshal(res.Inspect["gro/receiver"], &rcv); err != nil {
		t.Fatal(err)
	}
	if len(in.Snap.Devices) != len(rcv.Devices) || in.Snap.Devices[0].Name != rcv.Devices[0].Name {
		t.Errorf("device %s, want the receiver's %s", in.Snap.Devices[0].Name, rcv.Devices[0].Name)
	}
	name := rcv.Devices[0].Name
	if _, _, err := FromResult(res, "lab.json", nil, []string{name}); err != nil {
		t.Errorf("iface %s of the receiver's snapshot: %v", name, err)
	}
	_, _, err = FromResult(res, "lab.json", nil, []string{"nosuch0"})
	if !errors.Is(err, inspect.ErrUnknownInterface) || !strings.Contains(err.Error(), "nosuch0") || !strings.Contains(err.Error(), name) {
		t.Errorf("unknown iface: %v, want ErrUnknownInterface naming it and what the snapshot holds", err)
	}
}

// TestFromResultGivenSnapshot: a --from snapshot replaces the embedded one
// and is not changed itself.
func TestFromResultGivenSnapshot(t *testing.T) {
	res := loadResult(t, vmResultFile)
	given := &inspect.Snapshot{Schema: inspect.SchemaVersion, Host: inspect.Host{Hostname: "given"}}
	in, desc, err := FromResult(res, "r.json", given, []string{"whatever"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Snap.Host.Hostname != "given" || in.Before.Host.Hostname != "given" || strings.HasPrefix(desc, "snapshot ") {
		t.Errorf("desc %q, hosts %q %q: want the given snapshot", desc, in.Before.Host.Hostname, in.Snap.Host.Hostname)
	}
	if given.Host.Softnet != nil {
		t.Errorf("the given snapshot was changed: %+v", given.Host.Softnet)
	}
}

// TestFromResultLacking: no usable snapshot is an error; runs without
// samples or observation give the snapshot alone.
func TestFromResultLacking(t *testing.T) {
	res := loadResult(t, vmResultFile)
	for k := range res.Inspect {
		res.Inspect[k] = json.RawMessage(`{"schema":"something.else/v1"}`)
	}
	if _, _, err := FromResult(res, "r.json", nil, nil); err == nil || !strings.Contains(err.Error(), "r.json holds no inspect snapshot") {
		t.Errorf("no snapshot: %v", err)
	}

	res = loadResult(t, vmResultFile)
	for i := range res.Runs {
		res.Runs[i].Samples, res.Runs[i].Observe = nil, nil
	}
	in, desc, err := FromResult(res, "r.json", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.Before != nil || in.Obs != nil || in.Snap == nil || !strings.HasSuffix(desc, "(no observation or samples)") {
		t.Errorf("desc %q, input %+v", desc, in)
	}
}
