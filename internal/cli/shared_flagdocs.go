// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// What the man page (man.go) and the shell completion (completion.go) are
// made from: every command's Usage and the flag sets it declares, read as
// flag.Flag values - the same ones -h prints - never the printed text.

// declared is where newFlagSet leaves the flag set a command declares, and
// hideFlags the names it keeps out of -h, when the generators ask for them
// (Env.declared set).
type declared struct {
	cmd    *Command
	fs     *flag.FlagSet
	hidden []string
}

// flagDoc is one flag as its declaration says it.
type flagDoc struct {
	Name  string // without dashes
	Value string // the value's name (FILE, int, string, ...); empty for a bool
	Usage string // with "(default X)" as -h adds it
}

// cmdDoc is one command, or one sub-command (Sub set), with its flags.
type cmdDoc struct {
	Name    string
	Sub     string
	Summary string
	Text    string // the usage text without the flags
	Flags   []flagDoc
	Subs    []*cmdDoc
}

// helpDocs asks every listed command (and every sub-command its usage
// names) for the flags it declares.
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
		text, flags, err := askFlags(c, nil)
		if err != nil {
			return nil, err
		}
		d := &cmdDoc{Name: n, Summary: c.Summary, Text: text, Flags: flags}
		for _, s := range subCommands(n, text) {
			st, sf, err := askFlags(c, []string{s})
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

// askFlags runs command c with PRE... -h and returns the usage text and
// the flags of the flag set it declared on the way. Every command parses
// its flags before it does anything (-h returns flag.ErrHelp); the context
// is cancelled anyway, so that a command that did not would stop at once.
func askFlags(c *Command, pre []string) (string, []flagDoc, error) {
	var got declared
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := Env{Stdout: io.Discard, Stderr: io.Discard, declared: &got}
	err := c.Run(ctx, env, append(append([]string{}, pre...), "-h"))
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return "", nil, fmt.Errorf("%s: -h: %w", strings.TrimSpace(c.Name+" "+strings.Join(pre, " ")), err)
	}
	if err == nil && len(pre) > 0 {
		return "", nil, fmt.Errorf("%s %s: -h did not answer with help", c.Name, strings.Join(pre, " "))
	}
	if got.fs == nil {
		return strings.TrimSpace(c.Usage), nil, nil
	}
	return strings.TrimSpace(got.cmd.Usage), flagDocs(got.fs, got.hidden), nil
}

// flagDocs lists fs's flags, by name, but the hidden ones.
func flagDocs(fs *flag.FlagSet, hidden []string) []flagDoc {
	var out []flagDoc
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(hidden, f.Name) {
			return
		}
		value, usage := flag.UnquoteUsage(f)
		out = append(out, flagDoc{Name: f.Name, Value: value, Usage: usage + defaultNote(f)})
	})
	return out
}

// defaultNote is what -h adds after a flag's usage: its default unless it
// is its type's zero value, quoted for a string.
func defaultNote(f *flag.Flag) string {
	if f.DefValue == zeroText(f.Value) {
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf(" (default %q)", f.DefValue)
		}
	}
	return " (default " + f.DefValue + ")"
}

// zeroText is how a new value of v's type prints ("" when it cannot).
func zeroText(v flag.Value) (s string) {
	t := reflect.TypeOf(v)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	zv, ok := z.Interface().(flag.Value)
	if !ok {
		return ""
	}
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return zv.String()
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
