// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// complete runs the generated completion in bash for the words typed so
// far (the last one being completed) and returns what it offers.
func complete(t *testing.T, script, dir string, words ...string) []string {
	t.Helper()
	var q []string
	for _, w := range words {
		q = append(q, "'"+w+"'")
	}
	prog := "source " + script + " || exit 9\n" +
		"COMP_WORDS=(" + strings.Join(q, " ") + "); COMP_CWORD=" + itoa(len(words)-1) + "\n" +
		"_wirespeed; printf '%s\\n' \"${COMPREPLY[@]}\""
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completing %q: %v\n%s", words, err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			got = append(got, l)
		}
	}
	return got
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	withTestCommand(t)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{completionName, "bash"}, &out, &errb); code != ExitOK {
		t.Fatalf("%s bash: exit %d: %s", completionName, code, errb.String())
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "wirespeed.bash")
	if err := os.WriteFile(script, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snap.tar.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := exec.Command("bash", "--norc", "-c", "source "+script+" && complete -p wirespeed").CombinedOutput()
	if err != nil || !strings.Contains(string(reg), "-F _wirespeed wirespeed") {
		t.Errorf("complete -p wirespeed after sourcing: %v: %s", err, reg)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{"wirespeed", "ins"}, "inspect"},
		{[]string{"wirespeed", "__"}, ""}, // hidden commands are not offered
		{[]string{"wirespeed", "help", "exp"}, "exporter"},
		{[]string{"wirespeed", "inspect", "--j"}, "--json"},
		{[]string{"wirespeed", "lab", ""}, "up down status reap vm"},
		{[]string{"wirespeed", "lab", "up", "--na"}, "--name"},
		{[]string{"wirespeed", "tune", "apply", "--pa"}, "--pairs"},
		{[]string{"wirespeed", "doctor", "--from", "sn"}, "snap.tar.gz"},
		{[]string{"wirespeed", "doctor", "-from", "sn"}, "snap.tar.gz"},
		{[]string{"wirespeed", "zz-doctest", "--"}, "--alpha --beta-gamma --every"},
		{[]string{"wirespeed", "zz-doctest", "-"}, "--alpha -b --beta-gamma --every"},
		{[]string{"wirespeed", "zz-doctest", "go", "--"}, "--gamma"},
		{[]string{"wirespeed", "zz-doctest", "stop", "--"}, ""},
	} {
		if got := strings.Join(complete(t, script, dir, tc.words...), " "); got != tc.want {
			t.Errorf("completing %q: got %q, want %q", tc.words, got, tc.want)
		}
	}
	if _, err := os.Stat("/sys/class/net/lo"); err == nil {
		if got := complete(t, script, dir, "wirespeed", "inspect", "l"); !strings.Contains(" "+strings.Join(got, " ")+" ", " lo ") {
			t.Errorf("completing an inspect IFACE: got %q, want lo among them", got)
		}
	}
}

func TestCompletionWantsBash(t *testing.T) {
	for _, args := range [][]string{{completionName}, {completionName, "zsh"}, {completionName, "bash", "x"}} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), args, &out, &errb); code != ExitUsage || out.Len() > 0 {
			t.Errorf("%q: exit %d, %d bytes out; want exit %d and nothing", args, code, out.Len(), ExitUsage)
		}
	}
}
