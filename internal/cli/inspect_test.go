// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/testnet"
	"github.com/wirespeed/wirespeed/internal/tune"
)

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestInspectBadInput(t *testing.T) {
	fixture := "../../testdata/snapshots/rpi4-ax88179.tar.gz"
	code, _, errOut := run("inspect", "--save", "x.tar.gz", "--from", fixture)
	if code != ExitUsage || !strings.Contains(errOut, "do not go together") {
		t.Errorf("--save with --from: %d %q", code, errOut)
	}
	if code, _, _ := run("inspect", "--bogus"); code != ExitUsage {
		t.Errorf("unknown flag: exit %d", code)
	}
	code, _, errOut = run("inspect", "--from", fixture, "wlan0")
	if code != ExitUsage || !strings.Contains(errOut, `unknown interface "wlan0"`) || !strings.Contains(errOut, "eth0, eth1, lo") {
		t.Errorf("unknown interface: %d %q", code, errOut)
	}
	junk := filepath.Join(t.TempDir(), "junk.tar.gz")
	os.WriteFile(junk, []byte("not a snapshot at all"), 0o644)
	code, _, errOut = run("inspect", "--from", junk)
	if code != ExitFail || !strings.Contains(errOut, "not a wirespeed snapshot") {
		t.Errorf("junk snapshot: %d %q", code, errOut)
	}
	code, _, errOut = run("inspect", "--from", filepath.Join(t.TempDir(), "missing.tar.gz"))
	if code != ExitFail || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing snapshot: %d %q", code, errOut)
	}
	code, out, _ := run("inspect", "--from", fixture, "--json", "eth1")
	var s inspect.Snapshot
	if code != ExitOK || json.Unmarshal([]byte(out), &s) != nil || len(s.Devices) != 1 || s.Source.Kind != "snapshot" {
		t.Errorf("--json --from: exit %d, %d devices, source %+v", code, len(s.Devices), s.Source)
	}
}

// ---- root integration: a veth pair in two fresh namespaces ----

func TestMain(m *testing.M) {
	testnet.RefuseRerun()
	// In-process tunes of the host's namespace lock a directory of this
	// test binary's own: packages' tests run side by side.
	lockDir, _ := os.MkdirTemp("", "ws-test-locks-")
	tune.HostLockDir = lockDir
	code := m.Run()
	os.RemoveAll(lockDir)
	testnet.RemoveBinary()
	os.Exit(code)
}

// binary is the wirespeed command built for tests that need a process of
// its own (`ip netns exec` sees the namespace's /sys only in a new one).
func binary(t *testing.T) string { return testnet.Binary(t) }

func sh(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

type vethLab struct{ nsA, nsB, a, b string }

func newVethLab(t *testing.T) *vethLab {
	t.Helper()
	id := os.Getpid() % 100000
	l := &vethLab{
		nsA: fmt.Sprintf("ws-t%d-a", id), nsB: fmt.Sprintf("ws-t%d-b", id),
		a: fmt.Sprintf("wst%da", id), b: fmt.Sprintf("wst%db", id),
	}
	exec.Command("ip", "netns", "del", l.nsA).Run()
	exec.Command("ip", "netns", "del", l.nsB).Run()
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", l.nsA).Run()
		exec.Command("ip", "netns", "del", l.nsB).Run()
	})
	sh(t, "ip", "netns", "add", l.nsA)
	sh(t, "ip", "netns", "add", l.nsB)
	sh(t, "ip", "link", "add", l.a, "netns", l.nsA, "type", "veth", "peer", "name", l.b, "netns", l.nsB)
	sh(t, "ip", "-n", l.nsA, "addr", "add", "198.18.0.1/30", "dev", l.a)
	sh(t, "ip", "-n", l.nsB, "addr", "add", "198.18.0.2/30", "dev", l.b)
	sh(t, "ip", "-n", l.nsA, "link", "set", l.a, "up")
	sh(t, "ip", "-n", l.nsB, "link", "set", l.b, "up")
	return l
}

func (l *vethLab) inspect(t *testing.T, args ...string) (*inspect.Snapshot, string) {
	t.Helper()
	argv := append([]string{"netns", "exec", l.nsB, binary(t), "inspect"}, args...)
	out, err := exec.Command("ip", argv...).Output()
	if err != nil {
		t.Fatalf("inspect %v: %v", args, err)
	}
	if !slices.Contains(args, "--json") {
		return nil, string(out)
	}
	var s inspect.Snapshot
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("bad JSON: %v", err)
	}
	return &s, string(out)
}

func (l *vethLab) inB(t *testing.T, argv ...string) {
	t.Helper()
	sh(t, append([]string{"ip", "netns", "exec", l.nsB}, argv...)...)
}

func TestInspectVethIntegration(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool")
	l := newVethLab(t)

	l.inB(t, "ethtool", "-K", l.b, "gro", "off")
	s, _ := l.inspect(t, "--json", l.b)
	d := s.Devices[0]
	if d.Driver != "veth" || len(d.NAPIs) != 0 || d.Datapath.RXPath.String() != "no NAPI registered" {
		t.Fatalf("GRO off: driver %q napis %d path %q", d.Driver, len(d.NAPIs), d.Datapath.RXPath)
	}

	l.inB(t, "ethtool", "-K", l.b, "gro", "on")
	s, _ = l.inspect(t, "--json", l.b)
	d = s.Devices[0]
	if len(d.NAPIs) != 1 || d.NAPIs[0].ID == 0 || d.Datapath.RXPath.String() != "NAPI + GRO (softirq)" {
		t.Fatalf("GRO on: napis %+v path %q", d.NAPIs, d.Datapath.RXPath)
	}

	l.inB(t, "sh", "-c", "echo 1 > /sys/class/net/"+l.b+"/threaded")
	s, _ = l.inspect(t, "--json", l.b)
	d = s.Devices[0]
	if len(d.NAPIs) != 1 || d.NAPIs[0].PID == nil || d.NAPIs[0].Thread == nil {
		t.Fatalf("threaded: %+v", d.NAPIs)
	}
	n := d.NAPIs[0]
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", *n.PID))
	wantComm := fmt.Sprintf("napi/%s-%d", l.b, n.ID)
	if err != nil || strings.TrimSpace(string(comm)) != wantComm || n.Thread.Comm != wantComm {
		t.Errorf("thread pid %d: comm %q (%v), inspect says %q, want %q", *n.PID, comm, err, n.Thread.Comm, wantComm)
	}
	if d.Datapath.RXPath.String() != "NAPI + GRO (threaded)" || d.NAPISysfs.Threaded != "1" {
		t.Errorf("threaded: path %q sysfs %q", d.Datapath.RXPath, d.NAPISysfs.Threaded)
	}

	l.inB(t, "sh", "-c", "echo 1 > /sys/class/net/"+l.b+"/queues/rx-0/rps_cpus")
	s, _ = l.inspect(t, "--json", l.b)
	if q := s.Devices[0].RXQueues[0]; q.RPSCPUs != "1" || q.RPSCPUList != "0" {
		t.Errorf("rps read back: %+v", q)
	}

	// A snapshot taken in the namespace reads the same on the host.
	snapFile := filepath.Join(t.TempDir(), "veth.tar.gz")
	_, liveOut := l.inspect(t, "--save", snapFile)
	fromOut, err := exec.Command(binary(t), "inspect", "--from", snapFile).Output()
	if err != nil {
		t.Fatal(err)
	}
	_, fromBody, _ := strings.Cut(string(fromOut), "\n") // first line names the snapshot
	if fromBody != liveOut {
		t.Errorf("--from output differs from the live output it captured:\nlive:\n%s\nfrom:\n%s", liveOut, fromBody)
	}
	if !strings.Contains(liveOut, l.b) {
		t.Errorf("live output lacks %s", l.b)
	}
}

func TestInspectNotRoot(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool") // to become someone else
	cmd := exec.Command(binary(t), "inspect", "--json")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspect as nobody: %v\n%s", err, stderr.String())
	}
	var s inspect.Snapshot
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if s.Source.AsRoot || len(s.Devices) == 0 {
		t.Errorf("source %+v, %d devices", s.Source, len(s.Devices))
	}
	var note bool
	for _, n := range s.Host.Notes {
		note = note || strings.Contains(n, "not root")
	}
	if !note {
		t.Errorf("no not-root note in %q", s.Host.Notes)
	}
	for _, d := range s.Devices {
		for _, q := range d.IRQs {
			if q.Changeable.State.String() == "yes" {
				t.Errorf("%s irq %d: changeable %q without a probe", d.Name, q.Number, q.Changeable.State)
			}
		}
	}
}
