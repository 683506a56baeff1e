// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// realResult writes the report package's real lab fixture as a plain
// result file.
func realResult(t *testing.T, dir string) string {
	t.Helper()
	b := testfiles.Read(t, "../report/testdata/lab-gro-threaded.json.gz")
	p := filepath.Join(dir, "lab.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	res := realResult(t, dir)
	out := filepath.Join(dir, "r.html")
	fl := filepath.Join(dir, "r.flent.gz")
	code, stdout, stderr := run("report", res, "-o", out, "--flent", fl, "--variant", "threaded", "--rep", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out+" (1 file(s), 7 chart(s))") || !strings.Contains(stdout, "run threaded #2") {
		t.Errorf("stdout: %s", stdout)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), `data-chart="cpu-load"`) {
		t.Fatalf("no page: %v", err)
	}
	if st, err := os.Stat(fl); err != nil || st.Size() == 0 {
		t.Errorf("no flent file: %v", err)
	}
	// Leftover temporary files would be litter in the user's directory.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v", names)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	res := realResult(t, dir)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, ExitUsage, "one or more result files"},
		// An unwritable destination is refused before the inputs are read
		// (the input here does not even exist).
		{[]string{"report", filepath.Join(dir, "missing.json"), "-o", "/proc/wirespeed-nope/r.html"}, ExitUsage, "cannot write /proc/wirespeed-nope/r.html"},
		{[]string{"report", res, "-o", dir}, ExitUsage, "is a directory"},
		{[]string{"report", res, "--flent", "/proc/wirespeed-nope/x.flent.gz"}, ExitUsage, "cannot write"},
		{[]string{"report", filepath.Join(dir, "missing.json"), "-o", filepath.Join(dir, "x.html")}, ExitFail, "cannot read the result"},
		{[]string{"report", res, res, "--flent", filepath.Join(dir, "x.flent.gz")}, ExitUsage, "one run of one result file"},
		{[]string{"report", res, "--variant", "gro"}, ExitUsage, "give --flent too"},
		{[]string{"report", res, "--flent", filepath.Join(dir, "x.flent.gz"), "--variant", "nope"}, ExitUsage, `no runs of variant "nope"`},
	}
	for _, c := range cases {
		code, _, stderr := run(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	// Nothing was written by the refused calls.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("refused calls left %v", names)
	}
	// A foreign file is an error, not an empty page.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"nope"}`), 0o644)
	if code, _, stderr := run("report", bad, "-o", filepath.Join(dir, "bad.html")); code != ExitFail || !strings.Contains(stderr, "schema") {
		t.Errorf("foreign file: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.html")); err == nil {
		t.Error("page written for a foreign file")
	}
}
