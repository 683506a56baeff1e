// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the commands' current output")

// goldenFixtures is where the snapshot fixtures live, as the commands are
// given them (the path is part of the output: doctor's source.snapshot).
const goldenFixtures = "../../testdata/snapshots"

// goldenUpdate is the command that writes a missing or changed golden file.
const goldenUpdate = "make golden (go test ./internal/cli -run Golden -update for these alone)"

// goldenRuns are the commands each fixture goes through, by the suffix of
// their golden file: what a user sees of inspect and doctor on a snapshot.
var goldenRuns = []struct {
	suffix string
	args   []string
}{
	{".inspect.txt", []string{"inspect"}},
	{".inspect.json", []string{"inspect", "--json"}},
	{".doctor.txt", []string{"doctor"}},
	{".doctor.json", []string{"doctor", "--json"}},
}

// TestGolden runs `wirespeed inspect --from F` and `wirespeed doctor --from
// F`, text and --json, on every fixture in testdata/snapshots (found by
// glob, so a new fixture needs its golden files) and compares stdout, stderr
// and exit status with testdata/golden/F.*. Nothing is normalised: with
// --from both commands print only what the snapshot holds (no clock
// reading, nothing of this machine), which TestGoldenStable checks.
func TestGolden(t *testing.T) {
	fixtures, err := filepath.Glob(filepath.Join(goldenFixtures, "*.tar.gz"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures in %s (%v)", goldenFixtures, err)
	}
	want := map[string]bool{}
	for _, f := range fixtures {
		name := strings.TrimSuffix(filepath.Base(f), ".tar.gz")
		for _, r := range goldenRuns {
			want[name+r.suffix] = true
			t.Run(name+r.suffix, func(t *testing.T) {
				got := goldenOutput(append(r.args, "--from", goldenFixtures+"/"+name+".tar.gz"))
				p := filepath.Join("testdata", "golden", name+r.suffix)
				if *updateGolden {
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				old, err := os.ReadFile(p)
				if os.IsNotExist(err) {
					t.Fatalf("fixture %s has no golden file %s: review the output of `wirespeed %s --from %s`, then write it with %s",
						name, p, strings.Join(r.args, " "), f, goldenUpdate)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, old) {
					t.Errorf("wirespeed %s --from %s differs from %s (if the change is meant, %s and commit the diff):\n%s",
						strings.Join(r.args, " "), f, p, goldenUpdate, goldenDiff(string(old), string(got)))
				}
			})
		}
	}
	// A golden file whose fixture is gone would pass unnoticed forever.
	have, _ := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	for _, p := range have {
		if !want[filepath.Base(p)] {
			if *updateGolden {
				os.Remove(p)
				continue
			}
			t.Errorf("%s belongs to no fixture in %s and no command here: remove it (%s does)", p, goldenFixtures, goldenUpdate)
		}
	}
}

// goldenOutput runs the command in process and returns what the golden file
// holds: stdout, then stderr and the exit status where they say anything.
func goldenOutput(args []string) []byte {
	code, out, errOut := run(args...)
	var b strings.Builder
	b.WriteString(out)
	if errOut != "" || code != ExitOK {
		b.WriteString("---- stderr, exit status " + strconv.Itoa(code) + " ----\n")
		b.WriteString(errOut)
	}
	return []byte(b.String())
}

// TestGoldenStable: the outputs do not depend on the time zone, the run or
// the machine, so goldens written anywhere hold everywhere: each command
// runs twice, in two local time zones (the capture time is printed; it must
// be the snapshot's, not this machine's rendering of it).
func TestGoldenStable(t *testing.T) {
	fixtures, _ := filepath.Glob(filepath.Join(goldenFixtures, "*.tar.gz"))
	if len(fixtures) == 0 {
		t.Fatal("no fixtures")
	}
	f := fixtures[0]
	host, _ := os.Hostname()
	for _, r := range goldenRuns {
		args := append(r.args, "--from", f)
		local := time.Local
		time.Local = time.UTC
		a := goldenOutput(args)
		time.Local = time.FixedZone("golden", 12*3600+45*60)
		b := goldenOutput(args)
		time.Local = local
		if !bytes.Equal(a, b) {
			t.Errorf("wirespeed %s: output depends on the time zone or the run:\n%s", strings.Join(args, " "), goldenDiff(string(a), string(b)))
		}
		if host != "" && len(host) > 3 && bytes.Contains(a, []byte(host)) {
			t.Errorf("wirespeed %s: output holds this machine's hostname %q", strings.Join(args, " "), host)
		}
	}
}

// goldenDiff shows the first differing line and a few around it.
func goldenDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		line := func(l []string) string {
			if i < len(l) {
				return l[i]
			}
			return "(end of file)"
		}
		if line(w) != line(g) {
			return "line " + strconv.Itoa(i+1) + ":\n  golden: " + line(w) + "\n  now:    " + line(g)
		}
	}
	return "(same lines; the files differ only in their last newline)"
}
