// SPDX-License-Identifier: Apache-2.0

package usbnetselftests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two sides' selftests.json make one row per test program and one per
// case, gro's cases counted by mode and protocol.
func TestTables(t *testing.T) {
	dir := t.TempDir()
	write := func(side, body string) {
		d := filepath.Join(dir, "data", "r1", side)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "selftests.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stock", `{"tests":[{"test":"napi_id","result":"FAIL","cases":[{"name":"test_napi_id","result":"FAIL"}]},
		{"test":"gro","result":"PASS","cases":[{"name":"test.sw_ipv4_ack","result":"PASS"},{"name":"test.sw_ipv4_data_same","result":"PASS"},{"name":"test.hw_ipv4_ack","result":"XFAIL"}]}]}`)
	write("modules", `{"tests":[{"test":"napi_id","result":"PASS","cases":[{"name":"test_napi_id","result":"PASS"}]},
		{"test":"gro","result":"FAIL","cases":[{"name":"test.sw_ipv4_ack","result":"PASS"},{"name":"test.sw_ipv4_data_same","result":"FAIL"},{"name":"test.hw_ipv4_ack","result":"XFAIL"}]}]}`)
	out, err := tables(dir)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]string{
		"r1-tests": {"| gro | PASS | 2/0/0/1 | FAIL | 1/1/0/1 |", "| napi_id | FAIL | 0/1/0/0 | PASS | 1/0/0/0 |"},
		"r1-cases": {"| gro test.sw_ipv4_* | PASS 2 | PASS 1, FAIL 1 |", "| gro test.hw_ipv4_* | XFAIL | XFAIL |", "| napi_id test_napi_id | FAIL | PASS |"},
	} {
		for _, w := range want {
			if !strings.Contains(out[id], w) {
				t.Errorf("%s lacks %q:\n%s", id, w, out[id])
			}
		}
	}
}

// The by-architecture table takes each program from the newest run of
// its architecture that has it, and is made only when every
// architecture has a run.
func TestArchTable(t *testing.T) {
	side := func(test, result string) run {
		var r run
		if err := json.Unmarshal([]byte(`{"tests":[{"test":"`+test+`","result":"`+result+`","cases":[{"name":"c","result":"`+result+`"}]}]}`), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	two := func(a, b run) [2]run { return [2]run{a, b} }
	byID := map[string][2]run{
		"a1": two(side("ping", "FAIL"), side("ping", "FAIL")),
		"a2": two(side("ping", "PASS"), side("ping", "PASS")),
		"b1": two(side("napi_id", "FAIL"), side("napi_id", "PASS")),
	}
	arches := []archRuns{{"amd64", []string{"a1", "a2"}}, {"arm64", []string{"b1"}}}
	got, ok := archTable(arches, byID)
	if !ok {
		t.Fatal("no table with both architectures' runs present")
	}
	for _, w := range []string{
		"| test | amd64 stock | amd64 ours | amd64 run | arm64 stock | arm64 ours | arm64 run |",
		"| ping | PASS 1/0/0/0 | PASS 1/0/0/0 | a2 | - | - | - |",
		"| napi_id | - | - | - | FAIL 0/1/0/0 | PASS 1/0/0/0 | b1 |",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("by-arch table lacks %q:\n%s", w, got)
		}
	}
	delete(byID, "b1")
	if got, ok := archTable(arches, byID); ok {
		t.Errorf("a table without arm64's run:\n%s", got)
	}
}
