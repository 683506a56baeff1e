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
	"strings"
	"syscall"
	"testing"

	"github.com/wirespeed/wirespeed/internal/doctor"
)

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

func jsonFile(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTuneUsage(t *testing.T) {
	acts := writeActions(t, []doctor.Action{{ID: "rps/lo/rx-0", Kind: doctor.KindSysfs, Device: "lo",
		Target: "/sys/class/net/lo/queues/rx-0/rps_cpus", Value: "1"}})
	state := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--only", "rps/lo/rx-0,nope"}, ExitUsage, "no action nope"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--lab", "--peer", "198.18.0.2"}, ExitUsage, "one of"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--pairs", "1"}, ExitUsage, "pairs"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--goal", "speed"}, ExitUsage, "goal"},
		{[]string{"tune", "revert", "--state-dir", state}, ExitUsage, "ids or --all"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--peer", "198.18.0.2", "-P", "0"}, ExitUsage, "-P 0"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--peer", "198.18.0.2", "--guard", "speed"}, ExitUsage, "--guard"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--peer", "198.18.0.2", "--bench-args", "--repeat 3"}, ExitUsage, "set by tune apply"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--peer", "198.18.0.2", "--bench-args", "--port=5300 -t 3s"}, ExitUsage, "-t is set"},
		{[]string{"tune", "apply", "--actions", acts, "--state-dir", state, "--peer", "198.18.0.2", "--bench-args", "fast"}, ExitUsage, "not a flag"},
		{[]string{"tune", "apply", "--actions", "/nonexistent.json", "--state-dir", state}, ExitUsage, "nonexistent"},
		{[]string{"tune", "plan", "--actions", jsonFile(t, `{}`), "--state-dir", state}, ExitUsage, "neither"},
		{[]string{"tune", "plan", "--actions", jsonFile(t, `{"foo":1}`), "--state-dir", state}, ExitUsage, "neither"},
		{[]string{"tune", "apply", "--actions", jsonFile(t, `{"foo":1}`), "--state-dir", state}, ExitUsage, "neither"},
		{[]string{"tune", "plan", "--actions", jsonFile(t, `{"schema":"wirespeed.bench/v3","runs":[]}`), "--state-dir", state}, ExitUsage, "wirespeed.bench/v3"},
		{[]string{"tune", "plan", "--actions", jsonFile(t, `"rps"`), "--state-dir", state}, ExitUsage, "doctor --json"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d (%s), want %d mentioning %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Errorf("a refused command left files in the state directory: %v", ents)
	}
	if os.Geteuid() == 0 {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"tune", "revert", "--state-dir", state, "nope"}, &stdout, &stderr)
		if code != ExitUsage || !strings.Contains(stderr.String(), "no change with id nope") {
			t.Errorf("revert of an unknown id: exit %d: %s", code, stderr.String())
		}
	}
}

func TestTuneCorruptJournal(t *testing.T) {
	state := t.TempDir()
	bad := []byte(`{"version":1,"entries":[`)
	os.WriteFile(filepath.Join(state, "tune-journal.json"), bad, 0o644)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"tune", "status", "--state-dir", state}, &stdout, &stderr)
	if code != ExitFail || !strings.Contains(stderr.String(), "mv ") {
		t.Fatalf("status with a corrupt journal: exit %d: %s", code, stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(state, "tune-journal.json")); !bytes.Equal(b, bad) {
		t.Fatal("the corrupt journal was changed")
	}
}

// Not root: plan works, apply refuses and says why.
func TestTuneNotRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs wirespeed as nobody, which needs root to arrange")
	}
	bin := binary(t)
	acts := writeActions(t, []doctor.Action{{ID: "rps/lo/rx-0", Kind: doctor.KindSysfs, Device: "lo",
		Target: "/sys/class/net/lo/queues/rx-0/rps_cpus", Value: "1", Command: "echo 1 > /sys/class/net/lo/queues/rx-0/rps_cpus"}})
	pub, err := os.MkdirTemp("", "ws-tune-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(pub)
	os.Chmod(pub, 0o755)
	b, _ := os.ReadFile(acts)
	acts = filepath.Join(pub, "actions.json")
	os.WriteFile(acts, b, 0o644)
	state := t.TempDir()
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run("tune", "plan", "--actions", acts)
	if code != 0 || !strings.Contains(out, "rps/lo/rx-0") || !strings.Contains(out, "echo 1 >") {
		t.Errorf("plan as nobody: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run("tune", "apply", "--actions", acts, "--state-dir", state)
	if code != ExitFail || !strings.Contains(errOut, "needs root") {
		t.Errorf("apply as nobody: exit %d: %s", code, errOut)
	}
}

// persistJournal writes a journal with one applied rps change made in
// network namespace netns.
func persistJournal(t *testing.T, netns string) string {
	t.Helper()
	state := t.TempDir()
	j := fmt.Sprintf(`{"version":1,"entries":[{"seq":1,"action":{"id":"rps/eth9","kind":"sysfs","device":"eth9","target":"/sys/class/net/eth9/queues/rx-0/rps_cpus","value":"3"},"old":"0\n","state":"applied","netns":%q,"ifindex":9,"mac":"02:00:00:00:00:09","time":"2026-11-24T00:00:00Z"}]}`, netns)
	if err := os.WriteFile(filepath.Join(state, "tune-journal.json"), []byte(j), 0o644); err != nil {
		t.Fatal(err)
	}
	return state
}

// TestTunePersistNamespaceAndRoot: persist refuses a change made in another
// network namespace (as revert does) and writes nothing; with --root it
// names the files where it wrote them.
func TestTunePersistNamespaceAndRoot(t *testing.T) {
	here, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Skip(err)
	}
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"tune", "persist", "--root", root, "--state-dir", persistJournal(t, "net:[1]")}, &stdout, &stderr)
	if code == ExitOK || !strings.Contains(stderr.String(), "net:[1]") || !strings.Contains(stderr.String(), "ip netns exec") {
		t.Errorf("persist of another namespace's change: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("persist of another namespace's change wrote %v", ents)
	}
	stdout.Reset()
	stderr.Reset()
	code = Main(context.Background(), []string{"tune", "persist", "--root", root, "--state-dir", persistJournal(t, here)}, &stdout, &stderr)
	want := "wrote " + filepath.Join(root, "/etc/udev/rules.d/90-wirespeed-tune.rules")
	if code != ExitOK || !strings.Contains(stdout.String(), want) {
		t.Errorf("persist --root: exit %d, want %q in\n%s%s", code, want, stdout.String(), stderr.String())
	}
}

// TestTuneHelpHidesInternalFlag: -h lists tune apply's flags but not the
// one wirespeed passes to itself for the lab's re-run (which still parses).
func TestTuneHelpHidesInternalFlag(t *testing.T) {
	for _, args := range [][]string{{"tune", "-h"}, {"tune", "apply", "-h"}} {
		var stdout, stderr bytes.Buffer
		Main(context.Background(), args, &stdout, &stderr)
		help := stdout.String() + stderr.String()
		if strings.Contains(help, "lab-sender-ns") || !strings.Contains(help, "-state-dir") {
			t.Errorf("%v:\n%s", args, help)
		}
	}
	var stdout, stderr bytes.Buffer
	Main(context.Background(), []string{"tune", "apply", "-h"}, &stdout, &stderr)
	if help := stderr.String(); !strings.Contains(help, "-pairs int") || !strings.Contains(help, "(default 3)") {
		t.Errorf("tune apply -h lost its flags:\n%s", help)
	}
	stderr.Reset()
	Main(context.Background(), []string{"tune", "apply", "--lab-sender-ns", "x", "--pairs", "1"}, &stdout, &stderr)
	if strings.Contains(stderr.String(), "unknown flag") {
		t.Errorf("the internal flag no longer parses: %s", stderr.String())
	}
}

// TestTuneRevertRefusesForeignTargets: 'tune revert --all' and 'tune status'
// on a hand-edited journal that names a file outside tune's targets refuse
// it and leave the file as it was (a canary stands in for /etc/passwd).
func TestTuneRevertRefusesForeignTargets(t *testing.T) {
	canary := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(canary, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	here, _ := os.Readlink("/proc/self/ns/net")
	for _, target := range []string{canary, "/sys/../" + canary, "/sys/class/net/lo/../../.." + canary} {
		state := t.TempDir()
		j := fmt.Sprintf(`{"version":2,"entries":[{"seq":1,"action":{"id":"evil","kind":"sysfs","device":"lo","target":%q,"value":"1"},"old":"owned\n","state":"applied","netns":%q,"time":"2026-11-25T00:00:00Z"}]}`, target, here)
		if err := os.WriteFile(filepath.Join(state, "tune-journal.json"), []byte(j), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"tune", "revert", "--all"}, {"tune", "status"}} {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append(args, "--state-dir", state), &stdout, &stderr)
			if code == ExitOK || !strings.Contains(stderr.String(), "not a change wirespeed makes") {
				t.Errorf("%v on a journal naming %s: exit %d\n%s%s", args, target, code, stdout.String(), stderr.String())
			}
		}
		if b, _ := os.ReadFile(canary); string(b) != "root:x:0:0\n" {
			t.Fatalf("the canary named by the journal was overwritten: %q", b)
		}
	}
}
