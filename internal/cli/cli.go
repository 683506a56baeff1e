// SPDX-License-Identifier: Apache-2.0

// Package cli holds wirespeed's sub-commands. Each command lives in its own
// file and registers itself with register() from an init function, so adding
// a command never touches the others.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"io"
	"sort"
	"strings"
	"time"
)

// Exit codes shared by all commands.
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "dev"

// Env is what a command gets to run with.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer

	// declared, when set, receives the flag set the command declares
	// (the man page's and the completion's source, shared_flagdocs.go).
	declared *declared
}

// writeJSON prints v on env.Stdout as indented JSON: every command's
// --json output (watch's, one line an interval, excepted).
func writeJSON(env Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Command is one sub-command of wirespeed.
type Command struct {
	Name    string
	Summary string // one line for the command list
	Usage   string // "wirespeed NAME [flags] ARGS" plus a paragraph
	// Hidden commands are internal (run by wirespeed itself) and not listed.
	Hidden bool
	// Run parses args itself (usually with newFlagSet) and does the work.
	Run func(ctx context.Context, env Env, args []string) error
}

var commands = map[string]*Command{}

func register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// UsageError marks an error as a usage problem (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints the command's usage on -h.
func newFlagSet(c *Command, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	if env.declared != nil {
		env.declared.cmd, env.declared.fs = c, fs
	}
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "%s\n\nFlags:\n", strings.TrimSpace(c.Usage))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs, allowing flags after positional arguments
// (wirespeed inspect eth0 --json), and returns the positional arguments.
//
// A bad flag is an error that names the flag and says what it takes (the
// flag package's own "parse error" says neither); the usage text is
// printed only for -h.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				usage()
				return nil, err
			}
			return nil, &UsageError{Err: flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagError rewrites the flag package's errors: "flag provided but not
// defined: -x" and "invalid value "abc" for flag -n: parse error".
func flagError(fs *flag.FlagSet, err error) error {
	help := fmt.Sprintf("see 'wirespeed %s -h'", fs.Name())
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown flag %s: %s for the flags it takes", dashed(strings.TrimLeft(name, "-")), help)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("flag %s needs a value (%s)", dashed(strings.TrimLeft(name, "-")), help)
	}
	var value, name string
	if _, e := fmt.Sscanf(msg, "invalid boolean value %q for -%s", &value, &name); e == nil {
		return fmt.Errorf("%s %q: want true or false, or the flag alone (%s)", dashed(strings.TrimSuffix(name, ":")), value, help)
	}
	if _, e := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); e == nil {
		name = strings.TrimSuffix(name, ":")
		reason := msg[strings.Index(msg, ": ")+2:]
		want := reason
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case int, int64, uint, uint64:
					want = "want a whole number"
				case float64:
					want = "want a number"
				case bool:
					want = "want true or false (or leave the value out)"
				case time.Duration:
					want = "not a duration (use e.g. 10s, 500ms, 1m)"
				}
			}
		}
		if reason == "value out of range" {
			want = "out of range, " + want
		}
		return fmt.Errorf("%s %q: %s (%s)", dashed(name), value, want, help)
	}
	return fmt.Errorf("%s (%s)", msg, help)
}

// dashed writes a flag as its usage does: -P, --duration.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Main runs wirespeed with args (without the program name) and returns the
// process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	env := Env{Stdout: stdout, Stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprintln(stdout, strings.TrimSpace(c.Usage))
				return ExitOK
			}
		}
		printCommands(stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintf(stdout, "wirespeed %s\n", Version)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "wirespeed: unknown command %q: run 'wirespeed help' for the list (below)\n\n", args[0])
		printCommands(stderr)
		return ExitUsage
	}
	err := c.Run(ctx, env, args[1:])
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	}
	fmt.Fprintf(stderr, "wirespeed %s: %s\n", c.Name, inspect.Printable(err.Error()))
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFail
}

func printCommands(w io.Writer) {
	fmt.Fprintf(w, "wirespeed %s - see, measure and fix the Linux network datapath\n\n", Version)
	fmt.Fprintln(w, "Usage: wirespeed COMMAND [flags] [args]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.Hidden {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'wirespeed help COMMAND' or 'wirespeed COMMAND -h' for details.")
}
