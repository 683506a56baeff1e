// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The selftests scenario's results: each test's KTAP output
// (ksft-NAME.tap) and exit code (ksft-exit.txt), read into selftests.json.

// KsftCase is one result line: "ok 3 gro.test.sw_ipv4_ack # XFAIL why".
type KsftCase struct {
	Name string `json:"name"`
	// Result is PASS, FAIL, SKIP or XFAIL.
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// KsftTest is one test program's run.
type KsftTest struct {
	Test string `json:"test"`
	// Exit is the program's exit code (4: kselftest's skip; 124: the
	// time limit); -1 when it was not recorded.
	Exit  int        `json:"exit"`
	Plan  int        `json:"plan"`
	Cases []KsftCase `json:"cases"`
	// Result sums the test up: FAIL when a case failed, the program
	// died before its plan was complete or hit the limit; SKIP when the
	// whole test skipped; else PASS.
	Result string `json:"result"`
	Note   string `json:"note,omitempty"`
}

// KsftRun is selftests.json.
type KsftRun struct {
	Schema string            `json:"schema"`
	Facts  map[string]string `json:"facts,omitempty"`
	Tests  []KsftTest        `json:"tests"`
}

var (
	ktapPlanRe   = regexp.MustCompile(`^1\.\.(\d+)`)
	ktapResultRe = regexp.MustCompile(`^(not ok|ok) (\d+) ?([^#]*?)\s*(?:#\s*(.*))?$`)
)

// ParseKTAP reads one test program's top-level KTAP output. Lines that
// are not results (diagnostics, the program's own output) are skipped.
func ParseKTAP(test, out string, exit int) KsftTest {
	t := KsftTest{Test: test, Exit: exit, Cases: []KsftCase{}}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if m := ktapPlanRe.FindStringSubmatch(l); m != nil {
			t.Plan, _ = strconv.Atoi(m[1])
			continue
		}
		m := ktapResultRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		c := KsftCase{Name: strings.TrimPrefix(m[3], test+"."), Result: "PASS"}
		if c.Name == "" {
			c.Name = test
		}
		dir := strings.TrimSpace(m[4])
		switch {
		case strings.HasPrefix(strings.ToUpper(dir), "SKIP"):
			c.Result, c.Reason = "SKIP", strings.TrimSpace(dir[4:])
		case strings.HasPrefix(strings.ToUpper(dir), "XFAIL"):
			c.Result, c.Reason = "XFAIL", strings.TrimSpace(dir[5:])
		case m[1] == "not ok":
			c.Result, c.Reason = "FAIL", dir
		}
		t.Cases = append(t.Cases, c)
	}
	t.Result, t.Note = summarize(t)
	return t
}

// summarize is a test's overall result and why, when that is not PASS.
func summarize(t KsftTest) (string, string) {
	n := map[string]int{}
	for _, c := range t.Cases {
		n[c.Result]++
	}
	switch {
	case t.Exit == 124 || t.Exit == 137:
		return "FAIL", fmt.Sprintf("stopped at the time limit after %d of %d cases", len(t.Cases), t.Plan)
	case n["FAIL"] > 0:
		return "FAIL", fmt.Sprintf("%d of %d cases failed", n["FAIL"], len(t.Cases))
	case len(t.Cases) < t.Plan || (len(t.Cases) == 0 && t.Exit != 4):
		return "FAIL", fmt.Sprintf("exit %d after %d of %d planned cases", t.Exit, len(t.Cases), t.Plan)
	case len(t.Cases) > 0 && n["SKIP"]+n["XFAIL"] == len(t.Cases) || len(t.Cases) == 0:
		return "SKIP", fmt.Sprintf("every case skipped (exit %d)", t.Exit)
	}
	return "PASS", ""
}

// readExits reads ksft-exit.txt: "NAME CODE" a line.
func readExits(b []byte) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			if v, err := strconv.Atoi(f[1]); err == nil {
				m[f[0]] = v
			}
		}
	}
	return m
}

// WriteSelftestsJSON reads a selftests run's ksft-*.tap and ksft-exit.txt
// in dir and writes dir/selftests.json; a run that recorded no test is an
// error.
func WriteSelftestsJSON(dir string) error {
	exitB, _ := os.ReadFile(filepath.Join(dir, "ksft-exit.txt"))
	exits := readExits(exitB)
	taps, _ := filepath.Glob(filepath.Join(dir, "ksft-*.tap"))
	sort.Strings(taps)
	run := KsftRun{Schema: "wirespeed.selftests/v1", Tests: []KsftTest{}}
	if b, err := os.ReadFile(filepath.Join(dir, "facts.txt")); err == nil {
		run.Facts = parseFacts(b)
	}
	for _, p := range taps {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "ksft-"), ".tap")
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		code, ok := exits[name]
		if !ok {
			code = -1
		}
		run.Tests = append(run.Tests, ParseKTAP(name, string(b), code))
	}
	if len(run.Tests) == 0 {
		return fmt.Errorf("no selftest output (ksft-*.tap) in %s", dir)
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "selftests.json"), append(b, '\n'), 0o644)
}
