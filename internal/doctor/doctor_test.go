// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/hostfs"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

const fixtures = "../../testdata/snapshots"

var fixtureJSON = map[string][]byte{}

// fixture reads a snapshot fixture as `doctor --from` does. Each call
// returns a fresh Snapshot the test may change.
func fixture(t *testing.T, name string) *inspect.Snapshot {
	t.Helper()
	if _, ok := fixtureJSON[name]; !ok {
		b, err := json.Marshal(readFixture(t, name))
		if err != nil {
			t.Fatal(err)
		}
		fixtureJSON[name] = b
	}
	var snap inspect.Snapshot
	if err := json.Unmarshal(fixtureJSON[name], &snap); err != nil {
		t.Fatal(err)
	}
	return &snap
}

func readFixture(t *testing.T, name string) *inspect.Snapshot {
	s, err := hostfs.OpenSnapshot(filepath.Join(fixtures, name+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := inspect.ReplayAnswers(s.Answers)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := inspect.Collect(context.Background(), inspect.Options{FS: s.FS, Answers: a})
	if err != nil {
		t.Fatal(err)
	}
	snap.Source = inspect.Source{Kind: "snapshot", File: name, AsRoot: a.Euid == 0}
	return snap
}

func dev(t *testing.T, s *inspect.Snapshot, name string) *inspect.Device {
	t.Helper()
	if d := deviceByName(s, name); d != nil {
		return d
	}
	t.Fatalf("no device %s in the snapshot", name)
	return nil
}

func setOffload(d *inspect.Device, name string, on, fixed bool) {
	for i := range d.Offloads {
		if d.Offloads[i].Name == name {
			d.Offloads[i].Active = &on
			d.Offloads[i].Fixed = fixed
		}
	}
}

func setSysctl(s *inspect.Snapshot, name, value string) {
	for i := range s.Host.Sysctls {
		if s.Host.Sysctls[i].Name == name {
			s.Host.Sysctls[i].Value = value
			s.Host.Sysctls[i].Error = ""
			return
		}
	}
	s.Host.Sysctls = append(s.Host.Sysctls, inspect.Sysctl{Name: name, Value: value})
}

func ptr[T any](v T) *T { return &v }

// run diagnoses in and returns the findings with the given id.
func run(t *testing.T, in *Input, id string) ([]Finding, *Report) {
	t.Helper()
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	checkTraceable(t, in, rep)
	var out []Finding
	for _, f := range rep.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out, rep
}

func actionIDs(f Finding) []string {
	var ids []string
	if f.Fix != nil {
		for _, a := range f.Fix.Actions {
			ids = append(ids, a.ID+"="+a.Value)
		}
	}
	return ids
}

// busyNAPI is an observed device with one NAPI doing 50k packets/s, all of
// its polls in ctx on cpu.
func busyNAPI(dev string, cpu int, ctx observe.PollKind) observe.Device {
	return observe.Device{Name: dev, RXPath: observe.PathNAPIGRO, NAPIs: []observe.NAPI{{
		Napi: "0xffff1", Polls: 10000, Work: 500000, WorkPerSec: 50000,
		Contexts: []observe.PollContext{{Kind: ctx, Polls: 10000, Work: 500000, PollShare: 1}},
		CPUs:     []observe.NAPICPU{{CPU: cpu, Polls: 10000, Work: 500000, PollShare: 1, WorkShare: 1}},
	}}}
}

// TestHealthy: devices the issue names as healthy raise no warning.
func TestHealthy(t *testing.T) {
	for _, name := range []string{"firecracker-host", "firecracker-veth-threaded", "wg-gateway-16"} {
		rep, err := Diagnose(&Input{Snap: fixture(t, name)})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Severity.Rank() >= Warn.Rank() {
				t.Errorf("%s: %s %s: %s", name, f.Severity, f.ID, f.Title)
			}
		}
	}
	// An r8152 on a Pi 4 with RPS spreading the stuck xHCI IRQ: its own
	// NAPI + GRO, BQL in use.
	s := fixture(t, "rpi4-ax88179")
	d := dev(t, s, "eth1")
	d.Driver = "r8152"
	d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.No}, OwnNAPI: inspect.Tri{State: datapath.Yes}, RXPath: datapath.NAPIPath(datapath.Yes, datapath.Softirq)}
	d.NAPIs = []inspect.NAPI{{ID: 9}}
	d.RXQueues[0].RPSCPUs = "e"
	d.TXQueues[0].BQL.Limit, d.TXQueues[0].BQL.Inflight = ptr(int64(30280)), ptr(int64(0))
	rep, err := Diagnose(&Input{Snap: s, Ifaces: []string{"eth1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity.Rank() >= Warn.Rank() {
			t.Errorf("r8152: %s %s: %s", f.Severity, f.ID, f.Title)
		}
	}
}

// TestUnknownStaysSilent: a snapshot from a kernel without napi-get (RX
// path unknown) and taken without root (affinity unknown) says what it
// could not check instead of guessing.
func TestUnknownStaysSilent(t *testing.T) {
	s := fixture(t, "rpi4-ax88179")
	d := dev(t, s, "eth1")
	d.Datapath = inspect.Datapath{USBNet: inspect.Tri{State: datapath.Unknown}, OwnNAPI: inspect.Tri{State: datapath.Unknown}, RXPath: datapath.NoNAPIGetPath}
	d.RXQueues[0].RPSCPUs = "0"
	for i := range d.IRQs {
		d.IRQs[i].Changeable = inspect.Tri{State: datapath.Unknown, Evidence: "needs root"}
	}
	s.Host.Sysctls = nil
	rep, err := Diagnose(&Input{Snap: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.ID == "usbnet-no-gro" || f.ID == "irq-stuck-rps-off" {
			t.Errorf("fired on unknowns: %s", f.Title)
		}
	}
	skipped := map[string]bool{}
	for _, s := range rep.Skipped {
		skipped[s.Rule] = true
	}
	for _, r := range []string{"softnet", "napi-convergence", "cpufreq"} {
		if !skipped[r] {
			t.Errorf("rule %s did not say what it could not check", r)
		}
	}
}

func TestOrderAndFailOn(t *testing.T) {
	in := &Input{Snap: fixture(t, "rpi4-ax88179"), Before: fixture(t, "rpi4-ax88179")}
	in.Snap.Host.Softnet[0].Processed += 1000
	in.Snap.Host.Softnet[0].Dropped += 5
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rep.Findings); i++ {
		a, b := rep.Findings[i-1], rep.Findings[i]
		if a.Severity.Rank() < b.Severity.Rank() || (a.Severity == b.Severity && a.Impact < b.Impact) {
			t.Errorf("out of order: %s (%s %d) before %s (%s %d)", a.ID, a.Severity, a.Impact, b.ID, b.Severity, b.Impact)
		}
	}
	if rep.Findings[0].ID != "softnet-drops" || rep.Worst() != Crit {
		t.Errorf("first %s, worst %s; want softnet-drops, crit", rep.Findings[0].ID, rep.Worst())
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || back.Schema != SchemaVersion || len(back.Findings) != len(rep.Findings) {
		t.Fatalf("JSON round trip: %v", err)
	}
}

func TestIfacesFilter(t *testing.T) {
	in := &Input{Snap: fixture(t, "rpi4-ax88179"), Ifaces: []string{"eth0"}}
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		for _, d := range f.Devices {
			if d != "eth0" {
				t.Errorf("finding about %s with the filter eth0: %s", d, f.Title)
			}
		}
	}
}
