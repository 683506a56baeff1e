// SPDX-License-Identifier: Apache-2.0

package usbnetselftests

import (
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
