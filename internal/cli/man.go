// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// The man page wirespeed(8) and the shell completion are generated from the
// commands themselves - each command's Usage and the flags its -h prints -
// so that neither can drift from what the binary accepts. make deb runs
// 'wirespeed __man' and 'wirespeed __completion bash' on the binary it
// packages.

const manName = "__man"

func init() {
	register(&Command{
		Name:    manName,
		Summary: "internal: print the man page wirespeed(8) (roff), made from every command's help",
		Usage:   "wirespeed " + manName + "   (internal: make deb writes the man page with it)",
		Hidden:  true,
		Run:     runMan,
	})
}

func runMan(ctx context.Context, env Env, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments (got %q)", manName, args[0])
	}
	docs, err := helpDocs()
	if err != nil {
		return err
	}
	return writeMan(env.Stdout, docs)
}

// flagDoc is one flag as the command's -h shows it.
type flagDoc struct {
	Name  string // without dashes
	Value string // the value's name (FILE, int, string, ...); empty for a bool
	Usage string
}

// cmdDoc is one command, or one sub-command (Sub set), as its -h shows it.
type cmdDoc struct {
	Name    string
	Sub     string
	Summary string
	Text    string // the usage text without the flags
	Flags   []flagDoc
	Subs    []*cmdDoc
}

// helpDocs asks every listed command (and every sub-command its usage
// names) for its -h, and parses what it prints.
func helpDocs() ([]*cmdDoc, error) {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.Hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var docs []*cmdDoc
	for _, n := range names {
		c := commands[n]
		text, flags, err := askHelp(c, nil)
		if err != nil {
			return nil, err
		}
		d := &cmdDoc{Name: n, Summary: c.Summary, Text: text, Flags: flags}
		for _, s := range subCommands(n, text) {
			st, sf, err := askHelp(c, []string{s})
			if err != nil {
				continue // named in the usage, but not a sub-command with flags of its own
			}
			sd := &cmdDoc{Name: n, Sub: s, Flags: sf}
			if st != text {
				sd.Text = st
			}
			d.Subs = append(d.Subs, sd)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// askHelp runs command c with PRE... -h and returns the usage text and the
// flags it printed. Every command parses its flags before it does anything
// (-h returns flag.ErrHelp); the context is cancelled anyway, so that a
// command that did not would stop at once.
func askHelp(c *Command, pre []string) (string, []flagDoc, error) {
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Run(ctx, Env{Stdout: &buf, Stderr: &buf}, append(append([]string{}, pre...), "-h"))
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return "", nil, fmt.Errorf("%s: -h: %w", strings.TrimSpace(c.Name+" "+strings.Join(pre, " ")), err)
	}
	if err == nil && len(pre) > 0 {
		return "", nil, fmt.Errorf("%s %s: -h did not answer with help", c.Name, strings.Join(pre, " "))
	}
	out := buf.String()
	text, flags := out, ""
	if i := strings.LastIndex(out, "\nFlags:\n"); i >= 0 {
		text, flags = out[:i], out[i+len("\nFlags:\n"):]
	}
	return strings.TrimSpace(text), parseDefaults(flags), nil
}

// flagHeader is the first line flag.PrintDefaults writes for a flag:
// "  -name", "  -name type" or "  -x\tusage" (a one-letter bool).
var flagHeader = regexp.MustCompile(`^  -(\S+?)(?: (\S+))?(?:\t(.*))?$`)

// parseDefaults reads flag.PrintDefaults output back into flags.
func parseDefaults(s string) []flagDoc {
	var fl []flagDoc
	for _, line := range strings.Split(s, "\n") {
		if m := flagHeader.FindStringSubmatch(line); m != nil {
			fl = append(fl, flagDoc{Name: m[1], Value: m[2], Usage: m[3]})
			continue
		}
		if len(fl) > 0 && strings.HasPrefix(line, "    \t") {
			f := &fl[len(fl)-1]
			f.Usage = strings.TrimSpace(f.Usage + "\n" + strings.TrimPrefix(line, "    \t"))
		}
	}
	return fl
}

// subWord is a sub-command word in a synopsis: "up", or "[plan]" for a
// default one.
var subWord = regexp.MustCompile(`^\[?([a-z][a-z-]*)\]?$`)

// subCommands reads the sub-commands of NAME from the synopsis lines of its
// usage text ("wirespeed lab up ... | down [NAME] | status | reap",
// "wirespeed tune [plan] [IFACE...]").
func subCommands(name, text string) []string {
	var subs []string
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "wirespeed "+name+" ")
		if !ok {
			continue
		}
		for _, alt := range strings.Split(rest, " | ") {
			w := strings.Fields(alt)
			if len(w) == 0 {
				continue
			}
			if m := subWord.FindStringSubmatch(w[0]); m != nil && !seen[m[1]] {
				seen[m[1]] = true
				subs = append(subs, m[1])
			}
		}
	}
	return subs
}

// roff escapes text for the man page: backslashes, dashes (a real
// hyphen-minus, as typed), and a leading dot or quote.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// writeText writes a usage text: paragraphs split at blank lines; within
// one, indented lines and command lines ("wirespeed ...") are kept as they
// are (.nf), the other lines are filled.
func writeText(w io.Writer, text string) {
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.Trim(para, "\n")
		if strings.TrimSpace(para) == "" {
			continue
		}
		fmt.Fprintln(w, ".PP")
		literal := false
		for _, l := range strings.Split(para, "\n") {
			lit := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "wirespeed ")
			if lit != literal {
				if lit {
					fmt.Fprintln(w, ".nf")
				} else {
					fmt.Fprintln(w, ".fi")
				}
				literal = lit
			}
			if lit {
				fmt.Fprintln(w, roff(strings.ReplaceAll(l, "\t", "    ")))
			} else {
				fmt.Fprintln(w, roff(strings.TrimSpace(l)))
			}
		}
		if literal {
			fmt.Fprintln(w, ".fi")
		}
	}
}

func writeFlags(w io.Writer, flags []flagDoc) {
	for _, f := range flags {
		fmt.Fprintln(w, ".TP")
		v := ""
		if f.Value != "" {
			v = ` \fI` + roff(f.Value) + `\fR`
		}
		fmt.Fprintf(w, "\\fB%s\\fR%s\n", roff(dashed(f.Name)), v)
		for _, l := range strings.Split(f.Usage, "\n") {
			fmt.Fprintln(w, roff(l))
		}
	}
}

// writeMan writes wirespeed(8).
func writeMan(w io.Writer, docs []*cmdDoc) error {
	fmt.Fprintf(w, `.\" wirespeed(8), generated by 'wirespeed %s' from the commands' own help: do not edit.
.TH WIRESPEED 8 "" "wirespeed %s" "System Administration"
.SH NAME
wirespeed \- see, measure and fix the Linux network datapath of USB and virtual NICs
.SH SYNOPSIS
.B wirespeed
.I COMMAND
[\fIflags\fR] [\fIargs\fR]
.br
.B wirespeed help
[\fICOMMAND\fR]
.br
.B wirespeed \-\-version
.SH DESCRIPTION
wirespeed shows how a host's network datapath is built and how it behaves
under load (NAPI, GRO, IRQs, RPS, XPS, BQL, softirq time), measures it
with iperf3, says why it is slow, and applies and verifies the fixes.
Every command takes \fB\-h\fR; a flag may be written with one dash or two
(\fB\-json\fR, \fB\-\-json\fR), before or after the arguments.
Most commands need root for part of their work and say what they cannot
do without it.
.SH COMMANDS
`, manName, roff(Version))
	for _, d := range docs {
		fmt.Fprintf(w, ".SS %s\n", roff(d.Name))
		fmt.Fprintf(w, ".PP\n%s.\n", roff(strings.TrimSuffix(d.Summary, ".")))
		writeText(w, d.Text)
		if len(d.Flags) > 0 {
			fmt.Fprintf(w, ".PP\nFlags:\n.RS\n")
			writeFlags(w, d.Flags)
			fmt.Fprintln(w, ".RE")
		}
		for _, s := range d.Subs {
			if s.Text == "" && len(s.Flags) == 0 {
				continue
			}
			fmt.Fprintf(w, ".PP\n\\fBwirespeed %s %s\\fR\n", roff(d.Name), roff(s.Sub))
			writeText(w, s.Text)
			if len(s.Flags) > 0 {
				fmt.Fprintf(w, ".PP\nFlags of %s:\n.RS\n", roff(d.Name+" "+s.Sub))
				writeFlags(w, s.Flags)
				fmt.Fprintln(w, ".RE")
			}
		}
	}
	fmt.Fprintf(w, `.SH EXIT STATUS
%d when the command did its work, %d when it failed, %d on a usage error
(the message says which flag or argument, and what it takes).
.SH FILES
.TP
.I /var/lib/wirespeed
the journal of \fBwirespeed tune\fR (\fB\-\-state\-dir\fR, \fB$WIRESPEED_STATE_DIR\fR)
.TP
.I /usr/share/wirespeed/prometheus/wirespeed.rules.yml
the Prometheus alert rules for the exporter's metrics
.TP
.I /usr/share/wirespeed/grafana
the Grafana dashboards: wirespeed\-datapath.json (one host) and wirespeed\-fleet.json (every host)
.TP
.I /lib/systemd/system/wirespeed\-exporter.service
the exporter as a service (not enabled when installed)
.SH SEE ALSO
.BR ethtool (8),
.BR ip (8),
.BR iperf3 (1),
.BR tc (8)
`, ExitOK, ExitFail, ExitUsage)
	return nil
}
