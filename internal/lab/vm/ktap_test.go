// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A KTAP stream as the kernel's Python tests print it (lib/py/ksft.py):
// diagnostics, results with SKIP and XFAIL directives, the totals.
const ktapSample = `TAP version 13
1..5
# Exception| Traceback (most recent call last):
ok 1 napi_id.test_napi_id
not ok 2 napi_id.test_other
ok 3 napi_id.test_skipped # SKIP Test requires IPv6 connectivity
ok 4 napi_id.test_x # XFAIL Device does not support rx-gro-hw
not ok 5 napi_id.test_bad # timed out waiting
# Totals: pass:1 fail:2 xfail:1 xpass:0 skip:1 error:0
`

func TestParseKTAP(t *testing.T) {
	got := ParseKTAP("napi_id", ktapSample, 1)
	want := []KsftCase{
		{Name: "test_napi_id", Result: "PASS"},
		{Name: "test_other", Result: "FAIL"},
		{Name: "test_skipped", Result: "SKIP", Reason: "Test requires IPv6 connectivity"},
		{Name: "test_x", Result: "XFAIL", Reason: "Device does not support rx-gro-hw"},
		{Name: "test_bad", Result: "FAIL", Reason: "timed out waiting"},
	}
	if got.Plan != 5 || len(got.Cases) != len(want) {
		t.Fatalf("plan %d, %d cases: %+v", got.Plan, len(got.Cases), got.Cases)
	}
	for i := range want {
		if got.Cases[i] != want[i] {
			t.Errorf("case %d = %+v, want %+v", i, got.Cases[i], want[i])
		}
	}
	if got.Result != "FAIL" || !strings.Contains(got.Note, "2 of 5") {
		t.Errorf("summary %s (%s), want FAIL, 2 of 5 failed", got.Result, got.Note)
	}
}

func TestKsftSummaries(t *testing.T) {
	for _, c := range []struct {
		name, out string
		exit      int
		want      string
	}{
		{"all pass", "1..2\nok 1 t.a\nok 2 t.b\n", 0, "PASS"},
		{"pass and skip", "1..2\nok 1 t.a\nok 2 t.b # SKIP no\n", 0, "PASS"},
		{"all skip", "1..2\nok 1 t.a # SKIP no\nok 2 t.b # XFAIL no\n", 0, "SKIP"},
		{"kselftest skip, no cases", "Failed importing\n", 4, "SKIP"},
		{"died before its plan", "1..3\nok 1 t.a\n", 1, "FAIL"},
		{"nothing at all", "Traceback\n", 1, "FAIL"},
		{"time limit", "1..3\nok 1 t.a\nok 2 t.b\nok 3 t.c\n", 124, "FAIL"},
	} {
		if got := ParseKTAP("t", c.out, c.exit); got.Result != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got.Result, got.Note, c.want)
		}
	}
}

func TestWriteSelftestsJSON(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSelftestsJSON(dir); err == nil {
		t.Error("a run without any test output gave no error")
	}
	write := func(n, s string) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ksft-napi_id.tap", ktapSample)
	write("ksft-ping.tap", "1..1\nok 1 ping.test_default_v4\n")
	write("ksft-exit.txt", "napi_id 1\nping 0\n")
	write("facts.txt", "kernel=7.3.4+deb13-amd64\n")
	if err := WriteSelftestsJSON(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "selftests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run KsftRun
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Tests) != 2 || run.Tests[0].Test != "napi_id" || run.Tests[0].Exit != 1 || run.Tests[1].Result != "PASS" || run.Facts["kernel"] == "" {
		t.Errorf("selftests.json: %s", b)
	}
}

// The scenario's guest script names every test asked for and the remote
// the framework reaches through the gadget namespace; bad names are refused.
func TestSelftestsScenario(t *testing.T) {
	s := initScript(scenarios["selftests"], Options{Scenario: "selftests", Speed: "super", Tests: []string{"napi_id", "gro"}}, nil)
	for _, want := range []string{"for t in napi_id gro; do", "REMOTE_TYPE=netns", "REMOTE_ARGS=gadget", "NETIF=$HIF", "LOCAL_V4=" + gadgetHostAddr, "mount -t ext4 /dev/vda /deb"} {
		if !strings.Contains(s, want) {
			t.Errorf("the selftests script lacks %q", want)
		}
	}
	if strings.Contains(s, "ws_pin_tracepoints") {
		t.Error("the selftests scenario pins observe's tracepoints (it runs no bench)")
	}
	for _, bad := range [][]string{{"../x"}, {"gro.py"}, {"a b"}, {""}} {
		if checkTests(bad) == nil {
			t.Errorf("test list %q accepted", bad)
		}
	}
	if err := checkTests(SelftestNames); err != nil {
		t.Error(err)
	}
	files := map[string][]byte{}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "drivers", "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "drivers", "net", "ping.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := selftestFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	if string(files["ksft/drivers/net/ping.py"]) != "x" || !strings.Contains(string(files["ksft/ws-napi-threaded.sh"]), "napi_set") {
		t.Errorf("run archive files: %d, ping.py %q", len(files), files["ksft/drivers/net/ping.py"])
	}
}
