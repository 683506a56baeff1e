// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// What the man page (man.go) and the shell completion (completion.go) are
// made from: every command's Usage and the flags its -h prints.

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
