// SPDX-License-Identifier: Apache-2.0

package tune

// End-to-end tests of tune's crash safety and error reporting: the
// wirespeed binary run in a test namespace on a veth pair, killed at random
// points, and the values it touched read back with the kernel's own tools.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/testnet"
)

func TestMain(m *testing.M) {
	testnet.RefuseRerun()
	// In-process tunes of the host's namespace lock a directory of this
	// test binary's own: packages' tests run side by side.
	lockDir, _ := os.MkdirTemp("", "ws-test-locks-")
	HostLockDir = lockDir
	code := m.Run()
	os.RemoveAll(lockDir)
	testnet.RemoveBinary()
	os.Exit(code)
}

// writeActions writes acts as an --actions file.
func writeActions(t *testing.T, acts []doctor.Action) string {
	t.Helper()
	b, err := json.Marshal(acts)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "actions.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// crashLab is a namespace with a veth pair, the actions to try on it, and a
// reader of every value they touch, as the kernel shows it.
type crashLab struct {
	ns      *testnet.NS
	a, b    string
	actions []doctor.Action
}

func newCrashLab(t *testing.T) *crashLab {
	ns := testnet.New(t)
	a, b := ns.AddVeth(t)
	q := func(dev, f string) string { return "/sys/class/net/" + dev + "/" + f }
	acts := []doctor.Action{
		{ID: "gro/" + b, Kind: doctor.KindEthtool, Device: b, Target: "rx-gro", Value: "on"},
		// Needs: a veth has a NAPI only with GRO on; without, the loop
		// skips it rather than fail it.
		{ID: "threaded/" + b, Kind: doctor.KindSysfs, Device: b, Target: q(b, "threaded"), Value: "1", Needs: []string{"gro/" + b}},
		{ID: "rps/" + b, Kind: doctor.KindSysfs, Device: b, Target: q(b, "queues/rx-0/rps_cpus"), Value: "3"},
		{ID: "rfs/" + b, Kind: doctor.KindSysfs, Device: b, Target: q(b, "queues/rx-0/rps_flow_cnt"), Value: "4096"},
		{ID: "xps/" + a, Kind: doctor.KindSysfs, Device: a, Target: q(a, "queues/tx-0/xps_cpus"), Value: "1"},
		{ID: "gft/" + b, Kind: doctor.KindSysfs, Device: b, Target: q(b, "gro_flush_timeout"), Value: "20000"},
		{ID: "defer/" + b, Kind: doctor.KindSysfs, Device: b, Target: q(b, "napi_defer_hard_irqs"), Value: "2"},
		{ID: "somaxconn", Kind: doctor.KindSysctl, Target: "net.core.somaxconn", Value: "8192"},
		{ID: "udpfwd/" + b, Kind: doctor.KindEthtool, Device: b, Target: "rx-udp-gro-forwarding", Value: "on"},
		{ID: "qdisc/" + a, Kind: doctor.KindQdisc, Device: a, Target: "root", Value: "pfifo_fast"},
		{ID: "qdisc/" + b, Kind: doctor.KindQdisc, Device: b, Target: "root", Value: "pfifo limit 100"},
	}
	return &crashLab{ns: ns, a: a, b: b, actions: acts}
}

// snapshot reads every touched value with the kernel's own tools, not with
// tune's readers.
func (l *crashLab) snapshot(t *testing.T) map[string]string {
	t.Helper()
	script := `for f in "$@"; do printf '%s=' "$f"; cat "$f" | od -An -c | tr -d ' \n'; echo; done
for d in ` + l.a + ` ` + l.b + `; do ethtool -k $d | grep -E '^(generic-receive-offload|rx-udp-gro-forwarding):' | sed "s/^/$d /"; tc qdisc show dev $d; done`
	args := []string{"sh", "-c", script, "sh", "/proc/sys/net/core/somaxconn"}
	for _, a := range l.actions {
		if a.Kind == doctor.KindSysfs {
			args = append(args, a.Target)
		}
	}
	out := l.ns.Run(t, args...)
	m := map[string]string{}
	for i, line := range strings.Split(out, "\n") {
		m[fmt.Sprintf("%03d", i)] = line
	}
	return m
}

func tuneCrashKills() int {
	if n, err := strconv.Atoi(os.Getenv("WS_TUNE_CRASH_KILLS")); err == nil && n > 0 {
		return n
	}
	return 10
}

// TestTuneCrash kills 'tune apply' with SIGKILL at random points and checks
// after each kill that 'tune revert --all' restores every value byte for
// byte. WS_TUNE_CRASH_KILLS sets the number of kills (default 10);
// WS_TUNE_CRASH_OUT names a JSON file for the tally (experiments/tunecrash/tune-crash.sh).
func TestTuneCrash(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool")
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("needs tc(8)")
	}
	bin := testnet.Binary(t)
	l := newCrashLab(t)
	acts := writeActions(t, l.actions)
	state := t.TempDir()
	base := l.snapshot(t)
	inNS := func(args ...string) *exec.Cmd {
		return exec.Command("ip", append([]string{"netns", "exec", l.ns.Name, bin}, args...)...)
	}
	revert := func() {
		t.Helper()
		out, err := inNS("tune", "revert", "--all", "--state-dir", state).CombinedOutput()
		if err != nil {
			t.Fatalf("tune revert --all: %v\n%s", err, out)
		}
	}
	modes := [][]string{
		{"--verify-cmd", "echo $(( $(od -An -N2 -tu2 /dev/urandom) ))", "--pairs", "2"},
		{}, // static: apply everything
	}
	applyCmd := func(mode []string) *exec.Cmd {
		return inNS(append([]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--json"}, mode...)...)
	}
	// One uninterrupted run of each mode gives the window to kill in.
	window := make([]time.Duration, len(modes))
	for i, mode := range modes {
		start := time.Now()
		if out, err := applyCmd(mode).CombinedOutput(); err != nil {
			t.Fatalf("tune apply %v: %v\n%s", mode, err, out)
		}
		window[i] = time.Since(start)
		revert()
		if diff := diffSnap(base, l.snapshot(t)); diff != "" {
			t.Fatalf("an uninterrupted apply + revert does not restore:\n%s", diff)
		}
	}
	// The run must have changed something, or the harness proves nothing.
	if out, err := applyCmd(nil).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if diffSnap(base, l.snapshot(t)) == "" {
		t.Fatal("tune apply changed none of the values the harness watches")
	}
	revert()

	kills, mismatches, finished := tuneCrashKills(), 0, 0
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var delays []float64
	for i := 0; i < kills; i++ {
		cmd := applyCmd(modes[i%len(modes)])
		w := window[i%len(modes)]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		d := time.Duration(rng.Int64N(int64(w)))
		delays = append(delays, d.Seconds())
		time.Sleep(d)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && !ws.Signaled() {
			finished++
		}
		waitNoPids(t, l.ns.Name)
		revert()
		if diff := diffSnap(base, l.snapshot(t)); diff != "" {
			mismatches++
			t.Errorf("kill %d after %v: revert --all did not restore:\n%s", i, d, diff)
		}
	}
	t.Logf("%d kills (window %v, %d runs had finished before the kill), %d mismatches", kills, window, finished, mismatches)
	if p := os.Getenv("WS_TUNE_CRASH_OUT"); p != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"kills": kills, "mismatches": mismatches, "finished_before_kill": finished,
			"window_s": []float64{window[0].Seconds(), window[1].Seconds()}, "delays_s": delays, "actions": l.actions, "values_watched": len(base),
		}, "", " ")
		os.WriteFile(p, append(b, '\n'), 0o644)
	}
}

func diffSnap(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("  was %s\n  now %s", v, b[k]))
		}
	}
	if len(a) != len(b) {
		out = append(out, fmt.Sprintf("  %d lines, now %d", len(a), len(b)))
	}
	return strings.Join(out, "\n")
}

// waitNoPids waits until no process (an orphaned ethtool or tc) is left in ns.
func waitNoPids(t *testing.T, ns string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		if strings.TrimSpace(string(out)) == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("processes still in %s after the kill", ns)
}

// A value the kernel rejects: a clear error, exit 1, the old value in place,
// nothing left active in the journal; a vanished device: revert says so.
func TestTuneRejectedAndGone(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool")
	bin := testnet.Binary(t)
	ns := testnet.New(t)
	a, b := ns.AddVeth(t)
	path := "/sys/class/net/" + b + "/queues/rx-0/rps_cpus"
	acts := writeActions(t, []doctor.Action{
		{ID: "rps/bad", Kind: doctor.KindSysfs, Device: b, Target: path, Value: "zz"},
		{ID: "rps/good", Kind: doctor.KindSysfs, Device: a, Target: "/sys/class/net/" + a + "/queues/rx-0/rps_cpus", Value: "1"},
	})
	state := t.TempDir()
	before := ns.Run(t, "cat", path)
	run := func(args ...string) (int, string) {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name, bin}, args...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	code, out := run("tune", "apply", "--actions", acts, "--state-dir", state)
	if code != 1 /* the CLI's ExitFail */ || !strings.Contains(out, "rejected") || !strings.Contains(out, "old value is in place") {
		t.Fatalf("apply of a rejected value: exit %d\n%s", code, out)
	}
	if now := ns.Run(t, "cat", path); now != before {
		t.Fatalf("%s is %q after a rejected write, was %q", path, now, before)
	}
	code, out = run("tune", "status", "--state-dir", state, "--json")
	if code != 0 || strings.Contains(out, "rps/bad") || !strings.Contains(out, "rps/good") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	ns.Run(t, "ip", "link", "del", a)
	code, out = run("tune", "revert", "--all", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "gone") || !strings.Contains(out, a+" (ifindex") {
		t.Fatalf("revert of a vanished device: exit %d\n%s", code, out)
	}
}

// TestTuneKilledApplyLeftover is issue 21's repro: 'tune apply' with a
// --verify-cmd is killed with SIGKILL while it measures with an rps_cpus
// change applied. Nothing it started may run on (the verify command's own
// children included), and the next apply must call the change a leftover of
// the interrupted run, put it back and measure it - not "already in force".
func TestTuneKilledApplyLeftover(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool")
	bin := testnet.Binary(t)
	ns := testnet.New(t)
	_, b := ns.AddVeth(t)
	path := "/sys/class/net/" + b + "/queues/rx-0/rps_cpus"
	before := ns.Run(t, "cat", path)
	acts := writeActions(t, []doctor.Action{{ID: "rps/" + b, Kind: doctor.KindSysfs, Device: b, Target: path, Value: "1"}})
	state := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	// The first measurement (without) returns at once; the next ones (with
	// the change applied) start a long sleep in the background and wait.
	verify := `n=$(cat ` + calls + ` 2>/dev/null || echo 0); echo $((n+1)) > ` + calls + `; if [ "$n" -ge 1 ]; then sleep 30 & wait; fi; echo $(( $(od -An -N2 -tu2 /dev/urandom) + 1 ))`
	cmd := exec.Command("ip", "netns", "exec", ns.Name, bin, "tune", "apply", "--actions", acts, "--state-dir", state, "--verify-cmd", verify, "--pairs", "2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, _ := os.ReadFile(calls)
		j, _ := os.ReadFile(filepath.Join(state, "tune-journal.json"))
		if strings.TrimSpace(string(n)) == "2" && strings.Contains(string(j), `"applied"`) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the apply never reached its second measurement (calls %q)", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the sleep is running
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitNoPids(t, ns.Name)
	if now := ns.Run(t, "cat", path); now == before {
		t.Fatalf("the killed apply left nothing to find: %s is %q", path, now)
	}
	out, err := exec.Command("ip", "netns", "exec", ns.Name, bin, "tune", "apply", "--actions", acts, "--state-dir", state,
		"--verify-cmd", "echo $(( $(od -An -N2 -tu2 /dev/urandom) + 1 ))", "--pairs", "2").CombinedOutput()
	if err != nil {
		t.Fatalf("second apply: %v\n%s", err, out)
	}
	s := string(out)
	if strings.Contains(s, "before tune started") || !strings.Contains(s, "interrupted tune") || !strings.Contains(s, "Leftover: rps/"+b) {
		t.Errorf("second apply does not report the leftover:\n%s", s)
	}
	if strings.Contains(s, "already") {
		t.Errorf("second apply did not measure the leftover change:\n%s", s)
	}
	ns.Run(t, bin, "tune", "revert", "--all", "--state-dir", state)
	if now := ns.Run(t, "cat", path); now != before {
		t.Errorf("%s after revert --all: %q, was %q", path, now, before)
	}
}

// TestVerifyTimeoutKillsTheGroup: a --verify-cmd that never ends is killed,
// with what it started, after --verify-timeout; the apply fails and says
// so, and the change it was measuring is not left in force.
func TestVerifyTimeoutKillsTheGroup(t *testing.T) {
	testnet.NeedRoot(t, "ip", "ethtool")
	bin := testnet.Binary(t)
	ns := testnet.New(t)
	_, b := ns.AddVeth(t)
	path := "/sys/class/net/" + b + "/queues/rx-0/rps_cpus"
	before := ns.Run(t, "cat", path)
	acts := writeActions(t, []doctor.Action{{ID: "rps/" + b, Kind: doctor.KindSysfs, Device: b, Target: path, Value: "1"}})
	start := time.Now()
	out, err := exec.Command("ip", "netns", "exec", ns.Name, bin, "tune", "apply", "--actions", acts, "--state-dir", t.TempDir(),
		"--verify-cmd", "sleep 1000 & wait", "--verify-timeout", "2s", "--pairs", "2").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "did not finish within 2s") {
		t.Fatalf("apply with a verify command that never ends: %v\n%s", err, out)
	}
	if el := time.Since(start); el > 60*time.Second {
		t.Errorf("the apply took %s with a 2s verify timeout", el)
	}
	waitNoPids(t, ns.Name)
	if now := ns.Run(t, "cat", path); now != before {
		t.Errorf("%s is %q after the failed measurement, was %q", path, now, before)
	}
}
