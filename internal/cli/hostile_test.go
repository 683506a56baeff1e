// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// TestHostileInputs is the sweep of issue 34 kept as a test: each input
// below once did the wrong thing (read without a limit, hung, was silently
// ignored, or removed what the user did not name). Each must now exit
// with the code given, say the words given on stderr, and change nothing.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	os.Symlink("/dev/zero", zero)
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	result := filepath.Join(dir, "result.json")
	b, err := os.ReadFile("../../testdata/results/raspi3b-usb-nic-receive.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(result, b, 0o644)
	dup := filepath.Join(dir, "dup.json")
	os.WriteFile(dup, []byte(`[{"id":"a","kind":"sysctl","target":"net.core.netdev_budget","value":"600"},{"id":"a","kind":"sysctl","target":"net.core.netdev_budget","value":"900"}]`), 0o644)
	acts := filepath.Join(dir, "acts.json")
	os.WriteFile(acts, []byte(`[{"id":"a","kind":"sysctl","target":"net.core.netdev_budget","value":"600"}]`), 0o644)
	var res map[string]any
	json.Unmarshal(b, &res)
	res["runs"] = []any{}
	noRuns := filepath.Join(dir, "noruns.json")
	nb, _ := json.Marshal(res)
	os.WriteFile(noRuns, nb, 0o644)
	null := filepath.Join(dir, "null.json")
	os.WriteFile(null, []byte("null\n"), 0o644)
	state := t.TempDir()
	nowhere := filepath.Join(dir, "no", "such", "dir")
	benchOut := filepath.Join(dir, "bench-nothing.json")

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		// 2. Inputs are bounded: regular files only, never blocking.
		{"show /dev/zero", []string{"show", zero}, ExitFail, "character device"},
		{"show FIFO", []string{"show", fifo}, ExitFail, "FIFO"},
		{"compare FIFO", []string{"compare", fifo, result}, ExitFail, "FIFO"},
		{"report /dev/zero", []string{"report", "-o", filepath.Join(dir, "r.html"), zero}, ExitFail, "character device"},
		{"doctor --result FIFO", []string{"doctor", "--from", "../../testdata/snapshots/rpi4-ax88179.tar.gz", "--result", fifo}, ExitFail, "FIFO"},
		{"inspect --from FIFO", []string{"inspect", "--from", fifo}, ExitFail, "not a regular file"},
		{"tune --actions /dev/zero", []string{"tune", "plan", "--actions", zero}, ExitUsage, "character device"},
		{"tune --actions FIFO", []string{"tune", "plan", "--actions", fifo}, ExitUsage, "FIFO"},
		// 4. Empty, conflicting and ignored flags.
		{"--only empty", []string{"tune", "apply", "--actions", acts, "--state-dir", state, "--only", ""}, ExitUsage, "--only is empty"},
		{"--verify-cmd empty", []string{"tune", "apply", "--actions", acts, "--state-dir", state, "--verify-cmd", ""}, ExitUsage, "--verify-cmd is empty"},
		{"--verify-timeout alone", []string{"tune", "apply", "--actions", acts, "--state-dir", state, "--verify-timeout", "5s"}, ExitUsage, "--verify-cmd"},
		{"lab knob without --lab", []string{"tune", "apply", "--actions", acts, "--state-dir", state, "--gro", "on"}, ExitUsage, "--gro does nothing"},
		{"bench flag with --verify-cmd", []string{"tune", "apply", "--actions", acts, "--state-dir", state, "--verify-cmd", "echo 1", "--bench-args", "--port 5300"}, ExitUsage, "--bench-args does nothing"},
		{"doctor --observe 0.001", []string{"doctor", "--observe", "0.001"}, ExitUsage, "want 100ms or more"},
		{"--bench-args unknown flag with --lab", []string{"tune", "apply", "--lab", "--actions", acts, "--state-dir", state, "--bench-args", "--bogus 1"}, ExitUsage, "bogus"},
		{"--bench-args bad value", []string{"tune", "apply", "--peer", "198.18.0.2", "--actions", acts, "--state-dir", state, "--bench-args", "--probe-interval soon"}, ExitUsage, "probe-interval"},
		{"--actions with devices", []string{"tune", "plan", "--actions", acts, "eth0"}, ExitUsage, "would be ignored"},
		{"--iface with ESC", []string{"bench", "--peer", "198.18.0.2", "--iface", "e\x1b[2Jx"}, ExitUsage, `\x1b[2J`},
		{"--out with ESC", []string{"bench", "--out", "/no\x1b[2Jdir/x.json"}, ExitUsage, `\x1b[2J`},
		{"revert --keep --all", []string{"tune", "revert", "--keep", "--all", "--state-dir", state}, ExitUsage, "name the action ids"},
		{"--fail-on empty", []string{"doctor", "--from", "../../testdata/snapshots/rpi4-ax88179.tar.gz", "--fail-on", ""}, ExitUsage, "--fail-on is empty"},
		{"status --state-dir empty", []string{"tune", "status", "--state-dir", ""}, ExitUsage, "--state-dir is empty"},
		{"revert --state-dir empty", []string{"tune", "revert", "--all", "--state-dir", ""}, ExitUsage, "--state-dir is empty"},
		{"persist --state-dir empty", []string{"tune", "persist", "--remove", "--state-dir", ""}, ExitUsage, "--state-dir is empty"},
		{"plan --actions empty", []string{"tune", "plan", "--actions", ""}, ExitUsage, "--actions is empty"},
		{"--actions null", []string{"tune", "plan", "--actions", null}, ExitUsage, "is null"},
		{"bench that measured nothing", []string{"bench", "--peer", "127.0.0.1", "--port", "9", "-t", "2s", "--out", benchOut}, ExitFail, "no iperf3 server reachable"},
		{"report of no run", []string{"report", "-o", filepath.Join(dir, "empty.html"), noRuns}, ExitFail, "nothing was measured"},
		{"--iface without --peer", []string{"bench", "--iface", "lo"}, ExitUsage, "--iface"},
		{"--iface unknown", []string{"bench", "--peer", "198.18.0.2", "--iface", "nosuch0"}, ExitUsage, "no such network device"},
		{"duplicate action id", []string{"tune", "plan", "--actions", dup}, ExitUsage, "two different actions"},
		{"lab name -x", []string{"lab", "up", "--name", "-x"}, ExitUsage, "begin with a letter"},
		{"lab name empty", []string{"lab", "up", "--name", ""}, ExitUsage, "--name is empty"},
		{"report onto its input", []string{"report", "-o", result, result}, ExitUsage, "would overwrite"},
		{"persist --root missing", []string{"tune", "persist", "--root", nowhere, "--state-dir", state}, ExitUsage, "not an existing directory"},
		{"bench --out in a missing dir", []string{"bench", "--out", filepath.Join(nowhere, "r.json")}, ExitUsage, "does not exist"},
		{"lab vm --out in a missing dir", []string{"lab", "vm", "--out", filepath.Join(nowhere, "vm"), "boot"}, ExitUsage, "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan struct{})
			var code int
			var errOut string
			go func() {
				code, _, errOut = run(c.args...)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("%v did not return in 30 s", c.args)
			}
			if code != c.code || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "\x1b") {
				t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, c.code, errOut, c.want)
			}
		})
	}
	if b2, _ := os.ReadFile(result); string(b2) != string(b) {
		t.Error("the result file was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "empty.html")); err == nil {
		t.Error("a report of a result without runs was written")
	}
	if _, err := os.Stat(benchOut); err == nil {
		t.Error("a bench that measured nothing left a result file")
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a directory the user did not name was created")
	}
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Errorf("the state directory got %d files", len(ents))
	}
}

// TestBrokenResultsDrawNoVerdict: a result whose runs lost their figures,
// or that is marked incomplete, is never shown as 0 Mbit/s nor compared.
func TestBrokenResultsDrawNoVerdict(t *testing.T) {
	good := "../../testdata/results/raspi3b-usb-nic-receive.json"
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	json.Unmarshal(b, &r)
	for _, run := range r["runs"].([]any) {
		m := run.(map[string]any)
		delete(m, "throughput")
		for k := range m["metrics"].(map[string]any) {
			if strings.HasSuffix(k, "_mbit") {
				delete(m["metrics"].(map[string]any), k)
			}
		}
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.json")
	bb, _ := json.Marshal(r)
	os.WriteFile(broken, bb, 0o644)
	r["complete"], r["incomplete"] = false, "iperf3 client 1: the server went away"
	incomplete := filepath.Join(dir, "incomplete.json")
	bb, _ = json.Marshal(r)
	os.WriteFile(incomplete, bb, 0o644)

	code, out, errOut := run("show", broken)
	if code != ExitFail || strings.Contains(out, " 0 Mbit/s") || !strings.Contains(out, "no throughput measured") {
		t.Errorf("show of a result without figures: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("compare", broken, good); code != ExitFail || !strings.Contains(errOut, "no verdict") {
		t.Errorf("compare with a side without figures: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("compare", incomplete, good); code != ExitFail || !strings.Contains(errOut, "incomplete result") {
		t.Errorf("compare with an incomplete result: exit %d\n%s%s", code, out, errOut)
	}
}

// rewriteSnapshot copies the snapshot src to dst with entry name's content
// replaced.
func rewriteSnapshot(t *testing.T, src, dst, name, content string) {
	t.Helper()
	tarBytes := testfiles.Read(t, src)
	out, _ := os.Create(dst)
	defer out.Close()
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	tr := tar.NewReader(bytes.NewReader(tarBytes))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if h.Name == name {
			body = []byte(content)
			h.Size = int64(len(body))
		}
		tw.WriteHeader(h)
		tw.Write(body)
	}
	tw.Close()
	zw.Close()
}

// TestDamagedSnapshotsSayWhat: a snapshot with a damaged part is refused
// naming the part and the problem in words - no Go type names, no
// temporary paths, and never read as a host without NAPIs.
func TestDamagedSnapshotsSayWhat(t *testing.T) {
	src := "../../testdata/snapshots/rpi4-ax88179.tar.gz"
	dir := t.TempDir()
	for _, c := range []struct{ entry, content, want string }{
		{"answers.json", "null", "answers.json"},
		{"answers.json", `{"napis":"x"}`, `field "napis" holds a JSON string where a list is expected`},
		{"errors.json", "[1]", "errors.json is damaged"},
		{"meta.json", `{"format":"wirespeed-snapshot","version":1,"kernel":5}`, `field "kernel" holds a JSON number`},
	} {
		p := filepath.Join(dir, "s.tar.gz")
		rewriteSnapshot(t, src, p, c.entry, c.content)
		for _, cmd := range [][]string{{"inspect", "--from", p}, {"doctor", "--from", p}} {
			code, out, errOut := run(cmd...)
			if code != ExitFail || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "Go ") ||
				strings.Contains(errOut, "wirespeed-snapshot-") || strings.Contains(out, "no NAPI") {
				t.Errorf("%v with %s = %s: exit %d\n%s%s", cmd, c.entry, c.content, code, out, errOut)
			}
		}
	}
}
