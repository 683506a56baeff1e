// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/wirespeed/wirespeed/internal/hostfs"
)

const fixtures = "../../testdata/snapshots"

// openFixture opens a snapshot fixture and replays its answers.
func openFixture(t *testing.T, name string) (*hostfs.Snapshot, *Answers) {
	t.Helper()
	s, err := hostfs.OpenSnapshot(filepath.Join(fixtures, name+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a, err := ReplayAnswers(s.Answers)
	if err != nil {
		t.Fatal(err)
	}
	return s, a
}

// fromFixture collects a snapshot fixture as `inspect --from` does.
func fromFixture(t *testing.T, name string, ifaces ...string) *Snapshot {
	t.Helper()
	s, a := openFixture(t, name)
	snap, err := Collect(context.Background(), Options{FS: s.FS, Answers: a, Ifaces: ifaces})
	if err != nil {
		t.Fatal(err)
	}
	snap.Source = Source{Kind: "snapshot", File: name + ".tar.gz", AsRoot: a.Euid == 0,
		Captured: s.Meta.Created.UTC().Format(time.RFC3339)}
	return snap
}

// fixtureNames lists every snapshot fixture, by listing the directory.
func fixtureNames(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtures, "*.tar.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s (%v)", fixtures, err)
	}
	var out []string
	for _, p := range paths {
		out = append(out, strings.TrimSuffix(filepath.Base(p), ".tar.gz"))
	}
	return out
}

// golden is the one golden set of inspect's output: internal/cli's, which
// its TestGolden writes from 'wirespeed inspect --from' ('make golden').
const golden = "../cli/testdata/golden"

// TestGolden compares the text and JSON of every fixture, collected and
// rendered here, with what 'wirespeed inspect --from' wrote into the golden
// set (the same fixture path, so the same source line): a change shows in
// this package's tests, not only in the command's.
func TestGolden(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			snap := fromFixture(t, name)
			snap.Source.File = filepath.Join(fixtures, name+".tar.gz")
			var txt bytes.Buffer
			if err := WriteText(&txt, snap); err != nil {
				t.Fatal(err)
			}
			js, err := json.MarshalIndent(snap, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			for ext, got := range map[string][]byte{".inspect.txt": txt.Bytes(), ".inspect.json": append(js, '\n')} {
				p := filepath.Join(golden, name+ext)
				want, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%v (make golden writes it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s (if the change is meant, make golden and commit the diff):\n%s", name+ext, p, firstDiff(string(want), string(got)))
				}
			}
		})
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return "(same lines)"
}

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../../docs/inspect.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validate(t *testing.T, sch *jsonschema.Schema, snap *Snapshot) error {
	t.Helper()
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return validateJSON(t, sch, b)
}

func validateJSON(t *testing.T, sch *jsonschema.Schema, b []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

func TestSchemaValidates(t *testing.T) {
	sch := schema(t)
	for _, name := range fixtureNames(t) {
		if err := validate(t, sch, fromFixture(t, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	live, err := Collect(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, sch, live); err != nil {
		t.Errorf("live: %v", err)
	}
	// The schema must be able to say no.
	// A tri-state other than yes/no/unknown cannot be made in Go
	// (datapath.State refuses it), so it is written into the JSON.
	b, err := json.Marshal(fromFixture(t, "rpi4-ax88179"))
	if err != nil {
		t.Fatal(err)
	}
	maybe := bytes.Replace(b, []byte(`"state":"yes"`), []byte(`"state":"maybe"`), 1)
	if bytes.Equal(maybe, b) {
		t.Fatal("no tri-state of \"yes\" to change")
	}
	if validateJSON(t, sch, maybe) == nil {
		t.Error("schema accepted a tri-state of \"maybe\"")
	}
	bad := fromFixture(t, "rpi4-ax88179")
	bad.Schema = "wirespeed.inspect/v0"
	if validate(t, sch, bad) == nil {
		t.Error("schema accepted another schema version")
	}
}

func device(t *testing.T, s *Snapshot, name string) *Device {
	t.Helper()
	for i := range s.Devices {
		if s.Devices[i].Name == name {
			return &s.Devices[i]
		}
	}
	t.Fatalf("no device %s", name)
	return nil
}

// The Raspberry Pi 4 of seed 003: ax88179 on usbnet, xHCI MSI stuck on
// CPU0, RPS set, XPS impossible on its one TX queue.
func TestRPi4Facts(t *testing.T) {
	s := fromFixture(t, "rpi4-ax88179")
	if s.Host.Features.NAPIGet.State != datapath.No || s.Host.Features.BQLStallStats.State != datapath.No || s.Host.Features.ThreadedSysfs.State != datapath.Yes {
		t.Errorf("5.15 features = %+v", s.Host.Features)
	}
	d := device(t, s, "eth1")
	if d.Bus != "usb" || d.Driver != "ax88179_178a" || d.USB == nil {
		t.Fatalf("eth1 identity = %s/%s usb=%v", d.Bus, d.Driver, d.USB)
	}
	if d.USB.SpeedMbps != "5000" || d.USB.VendorID != "0b95" || d.USB.HostController.BusID != "0000:01:00.0" || d.USB.HostController.Driver != "xhci_hcd" {
		t.Errorf("usb = %+v", d.USB)
	}
	if d.Datapath.USBNet.State != datapath.Yes || d.Datapath.RXPath != datapath.USBNetPath {
		t.Errorf("datapath = %+v", d.Datapath)
	}
	if len(d.IRQs) != 1 || d.IRQs[0].Number != 46 || d.IRQs[0].Changeable.State != datapath.No || d.IRQs[0].Counts[0] != 668625 {
		t.Fatalf("irqs = %+v", d.IRQs)
	}
	if !strings.Contains(d.IRQs[0].Via, "host controller") {
		t.Errorf("irq 46 found via %q", d.IRQs[0].Via)
	}
	if d.RXQueues[0].RPSCPUList != "0-3" {
		t.Errorf("rps = %+v", d.RXQueues[0])
	}
	if d.TXQueues[0].XPSNote != "not applicable: one TX queue" {
		t.Errorf("xps = %+v", d.TXQueues[0])
	}
	// The GIC interrupts of the built-in port can move.
	e := device(t, s, "eth0")
	if len(e.IRQs) != 2 || e.IRQs[0].Changeable.State != datapath.Yes || e.IRQs[0].SMPAffinityList != "1" {
		t.Errorf("eth0 irqs = %+v", e.IRQs)
	}
}

// The WireGuard gateway of seed 002: per-peer NAPIs have no id, so only
// their threads show them.
func TestWireGuardThreads(t *testing.T) {
	s := fromFixture(t, "wg-gateway-16", "wg0", "wg15")
	if len(s.Devices) != 2 {
		t.Fatalf("devices = %d", len(s.Devices))
	}
	for _, d := range s.Devices {
		if d.Driver != "wireguard" || len(d.NAPIs) != 0 || len(d.Threads) != 1 {
			t.Errorf("%s: driver %q napis %d threads %d", d.Name, d.Driver, len(d.NAPIs), len(d.Threads))
			continue
		}
		if d.Threads[0].Comm != "napi/"+d.Name+"-0" || d.Datapath.RXPath != datapath.NAPIPath(datapath.Yes, datapath.Threaded) {
			t.Errorf("%s: %+v %q", d.Name, d.Threads[0], d.Datapath.RXPath)
		}
	}
	if d := device(t, s, "wg15"); d.Threads[0].CPU != 30 {
		t.Errorf("wg15 thread CPU = %d", d.Threads[0].CPU)
	}
}

// The veth captured here in a namespace: GRO on, threaded, RPS on 0-1.
func TestVethThreadedFixture(t *testing.T) {
	s := fromFixture(t, "firecracker-veth-threaded", "ws-fx1")
	d := &s.Devices[0]
	if len(d.NAPIs) != 1 || d.NAPIs[0].Thread == nil || !strings.HasPrefix(d.NAPIs[0].Thread.Comm, "napi/ws-fx1-") {
		t.Fatalf("napis = %+v", d.NAPIs)
	}
	if d.Datapath.RXPath != datapath.NAPIPath(datapath.Yes, datapath.Threaded) || d.RXQueues[0].RPSCPUList != "0-1" {
		t.Errorf("path %q rps %q", d.Datapath.RXPath, d.RXQueues[0].RPSCPUList)
	}
}

func TestUnknownInterface(t *testing.T) {
	s, err := hostfs.OpenSnapshot(filepath.Join(fixtures, "rpi4-ax88179.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, _ := ReplayAnswers(s.Answers)
	_, err = Collect(context.Background(), Options{FS: s.FS, Answers: a, Ifaces: []string{"wlan0"}})
	if !errors.Is(err, ErrUnknownInterface) || !strings.Contains(err.Error(), "eth0, eth1, lo") || !strings.Contains(err.Error(), "wlan0") {
		t.Errorf("err = %v", err)
	}
}

// captureLive inspects this host (ifaces, or all) while recording, writes
// the snapshot and opens it again, as inspect --save and --from do.
func captureLive(t *testing.T, ifaces ...string) (*Snapshot, *hostfs.Snapshot, *Answers) {
	t.Helper()
	live := hostfs.Live()
	rec := hostfs.NewRecorder()
	live.Record(rec)
	a := LiveAnswers(live)
	snap, err := Collect(context.Background(), Options{FS: live, Answers: a, Ifaces: ifaces})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "live.tar.gz")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := hostfs.WriteSnapshot(f, rec, hostfs.Meta{Created: time.Now()}, a); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err := hostfs.OpenSnapshot(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a2, err := ReplayAnswers(s.Answers)
	if err != nil {
		t.Fatal(err)
	}
	return snap, s, a2
}

// Live capture -> snapshot -> replay gives the same result, as whoever runs
// the test (as non-root the affinity probe is recorded as not done).
func TestLiveRoundTrip(t *testing.T) {
	snap1, s, a2 := captureLive(t)
	snap2, err := Collect(context.Background(), Options{FS: s.FS, Answers: a2})
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.MarshalIndent(snap1, "", " ")
	j2, _ := json.MarshalIndent(snap2, "", " ")
	if !bytes.Equal(j1, j2) {
		t.Errorf("replay differs from live:\n%s", firstDiff(string(j1), string(j2)))
	}
}

func TestSnapshotOfSomeDevices(t *testing.T) {
	_, s, a2 := captureLive(t, "lo")
	all, err := Collect(context.Background(), Options{FS: s.FS, Answers: a2})
	if err != nil || len(all.Devices) != 1 || all.Devices[0].Name != "lo" {
		t.Fatalf("snapshot of lo shows %v (%v)", all, err)
	}
	names, _ := hostfs.Live().ReadDir("/sys/class/net")
	for _, n := range names {
		if n == "lo" {
			continue
		}
		_, err := Collect(context.Background(), Options{FS: s.FS, Answers: a2, Ifaces: []string{n}})
		if !errors.Is(err, ErrUnknownInterface) || !strings.Contains(err.Error(), "not captured") {
			t.Errorf("asking the lo snapshot for %s: %v", n, err)
		}
		break
	}
}
