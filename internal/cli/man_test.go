// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// withTestCommand registers zz-doctest, a command with sub-commands whose
// flags the test knows, for as long as the test runs.
func withTestCommand(t *testing.T) {
	t.Helper()
	c := &Command{
		Name:    "zz-doctest",
		Summary: "a command only the tests register",
		Usage: `wirespeed zz-doctest [IFACE...] [--alpha FILE] | go [--gamma N] | stop

A paragraph of prose that is filled,
over two lines.

  wirespeed zz-doctest --alpha x.json    (an example, kept as it is)`,
	}
	c.Run = func(ctx context.Context, env Env, args []string) error {
		fs := newFlagSet(c, env)
		if len(args) > 0 && (args[0] == "go" || args[0] == "stop") {
			if args[0] == "go" {
				fs.Int("gamma", 3, "how many `N`")
			}
			_, err := parseFlags(fs, args[1:])
			return err
		}
		fs.String("alpha", "", "read `FILE`\nand say so")
		fs.Bool("b", false, "a one-letter bool")
		fs.Bool("beta-gamma", false, "a long bool")
		fs.Duration("every", 0, "a duration")
		_, err := parseFlags(fs, args)
		if err == nil {
			return usageErrorf("zz-doctest ran: the generators must only ask for -h")
		}
		return err
	}
	register(c)
	t.Cleanup(func() { delete(commands, c.Name) })
}

// printedAsHelp writes flags as flag.PrintDefaults does, for comparing the
// declarations the generators read with what -h prints.
func printedAsHelp(flags []flagDoc) string {
	var b strings.Builder
	for _, f := range flags {
		line := "  -" + f.Name
		if f.Value != "" {
			line += " " + f.Value
		}
		if len(line) <= 4 {
			line += "\t"
		} else {
			line += "\n    \t"
		}
		b.WriteString(line + strings.ReplaceAll(f.Usage, "\n", "\n    \t") + "\n")
	}
	return b.String()
}

// TestFlagDocsAreHelp: what the man page and the completion read from the
// declarations is, flag for flag, what each command's and sub-command's -h
// prints (hidden flags left out, defaults as -h shows them).
func TestFlagDocsAreHelp(t *testing.T) {
	withTestCommand(t)
	docs, err := helpDocs()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range docs {
		for _, c := range append([]*cmdDoc{d}, d.Subs...) {
			args := []string{d.Name, "-h"}
			if c.Sub != "" {
				args = []string{d.Name, c.Sub, "-h"}
			}
			var out, errb bytes.Buffer
			if code := Main(context.Background(), args, &out, &errb); code != ExitOK {
				t.Fatalf("%q: exit %d: %s", args, code, errb.String())
			}
			help := out.String() + errb.String()
			_, flags, _ := strings.Cut(help, "\nFlags:\n")
			if got := printedAsHelp(c.Flags); got != flags {
				t.Errorf("%q: the declarations read\n%s\n-h prints\n%s", args, got, flags)
			}
			n += len(c.Flags)
		}
	}
	if n < 100 {
		t.Errorf("%d flags in all: the generators read too few", n)
	}
}

func TestManHasEveryCommandAndFlag(t *testing.T) {
	withTestCommand(t)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{manName}, &out, &errb); code != ExitOK {
		t.Fatalf("%s: exit %d: %s", manName, code, errb.String())
	}
	man := out.String()
	for _, want := range []string{
		".TH WIRESPEED 8",
		".SS zz\\-doctest",
		`\fB\-\-alpha\fR \fIFILE\fR`,
		`\fB\-b\fR` + "\n",
		`\fB\-\-beta\-gamma\fR` + "\n",
		`\fB\-\-every\fR \fIduration\fR`,
		"read FILE\nand say so",
		`\fBwirespeed zz\-doctest go\fR`,
		`\fB\-\-gamma\fR \fIN\fR`,
		".nf\n  wirespeed zz\\-doctest \\-\\-alpha x.json    (an example, kept as it is)\n.fi",
		"A paragraph of prose that is filled,\nover two lines.",
	} {
		if !strings.Contains(man, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
	if strings.Contains(man, "wirespeed zz\\-doctest stop\\fR") {
		t.Errorf("the man page has a section for 'stop', which has neither text nor flags of its own")
	}
	for name, c := range commands {
		sec := ".SS " + roff(name) + "\n"
		if c.Hidden == strings.Contains(man, sec) {
			t.Errorf("command %s (hidden %v): section in the man page %v", name, c.Hidden, !c.Hidden)
		}
	}
	// The real commands' flags, as their -h shows them.
	for _, want := range []string{`\fB\-\-sender\-offloads\fR`, `\fB\-P\fR \fIint\fR`, `\fBwirespeed tune apply\fR`, `\fB\-\-pairs\fR`, `\fBwirespeed lab vm\fR`} {
		if !strings.Contains(man, want) {
			t.Errorf("the man page lacks %q", want)
		}
	}
}

func TestManRendersWithoutWarnings(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff to render the man page with")
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{manName}, &out, &errb); code != ExitOK {
		t.Fatalf("%s: exit %d: %s", manName, code, errb.String())
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = &out
	msg, err := cmd.CombinedOutput()
	if err != nil || len(msg) > 0 {
		t.Errorf("groff -man -ww: %v\n%s", err, msg)
	}
}

func TestManRejectsArguments(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{manName, "extra"}, &out, &errb); code != ExitUsage || out.Len() > 0 {
		t.Errorf("%s extra: exit %d, %d bytes out; want exit %d and nothing", manName, code, out.Len(), ExitUsage)
	}
}

func TestManSubCommandsFromSynopsis(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"lab", "wirespeed lab up [--name NAME] | down [NAME] | status [--json] | reap\nwirespeed lab vm ...", "up down status reap vm"},
		{"tune", "wirespeed tune [plan] [IFACE...]   x\nwirespeed tune revert ID... | --all", "plan revert"},
		{"compare", "wirespeed compare A.json B.json\nwirespeed compare FILE.json", ""},
		{"inspect", "wirespeed inspect [IFACE...] [--json]\n\nwirespeed lab up is not ours", ""},
	} {
		if got := strings.Join(subCommands(tc.name, tc.text), " "); got != tc.want {
			t.Errorf("subCommands(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
