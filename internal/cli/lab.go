// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/lab"
)

func init() {
	register(&Command{
		Name:    "lab",
		Summary: "host lab: two namespaces joined by a veth pair (up, down, status, reap)",
		Usage: `wirespeed lab up [--name NAME] [knobs] | down [NAME] | status [--json] | reap
wirespeed lab vm ...   (the QEMU lab with real drivers: wirespeed lab vm -h)
wirespeed lab usbdev --socket PATH --tap NAME [--model ncm] ...
                       (a USB network adapter for QEMU's usb-redir: wirespeed lab usbdev -h)

The host lab is two network namespaces joined by a veth pair: the sender
ws-lab-NAME-s (ws-snd, 198.18.0.1/30) and the receiver ws-lab-NAME-r
(ws-rcv, 198.18.0.2/30) with an iperf3 server on port 5201.
'lab up' leaves it running for manual work, for example:
  ip netns exec ws-lab-0-s iperf3 -c 198.18.0.2 -P 4
'lab down NAME' removes it. 'lab status' lists every wirespeed lab namespace
(bench runs name theirs ws-PID-N and remove them when they end; 'lab reap'
removes those whose process died). Needs root.

Knobs (as for bench):
  --gro on|off, --threaded, --sender-offloads on|off, --rps MASK,
  --rate RATE (tbf shaping of the sender's egress), --qdisc NAME (sender qdisc),
  --pin-sender CPU, --pin-receiver CPU`,
		Run: runLab,
	})
}

// runLab dispatches to the sub-command; each parses its own flags.
func runLab(ctx context.Context, env Env, args []string) error {
	c := commands["lab"]
	if len(args) == 0 {
		return usageErrorf("lab: want up, down, status, reap or vm")
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprintln(env.Stdout, strings.TrimSpace(c.Usage))
		return nil
	}
	fs := newFlagSet(c, env)
	switch sub {
	case "vm":
		return runLabVM(ctx, env, args) // labvm.go: the QEMU lab
	case "usbdev":
		return runLabUSBDev(ctx, env, fs, args) // lab_usbdev.go: the device lab's USB adapter
	case "up":
		return runLabUp(ctx, env, fs, args)
	case "down":
		return runLabDown(env, fs, args)
	case "status":
		return runLabStatus(env, fs, args)
	case "reap":
		return runLabReap(env, fs, args)
	}
	return usageErrorf("lab %q: want up, down, status, reap or vm", sub)
}

// runLabUp checks the knobs and the name (before anything is created),
// builds a persistent lab and says how to use and remove it.
func runLabUp(ctx context.Context, env Env, fs *flag.FlagSet, args []string) error {
	name := fs.String("name", "0", "lab name (namespaces ws-lab-NAME-s and -r)")
	knobs := addLabFlags(fs)
	asJSON := fs.Bool("json", false, "print the lab as JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("lab up: unexpected argument %q", pos[0])
	}
	cfg, err := knobs.config()
	if err != nil {
		return &UsageError{Err: err}
	}
	if *name == "" {
		return usageErrorf("lab up: --name is empty: give a name (letters, digits, '-') or leave the flag out for lab 0")
	}
	cfg.Name, cfg.Persistent = *name, true
	if err := cfg.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if err := lab.Check(); err != nil {
		return err
	}
	l, err := lab.Up(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env, l)
	}
	fmt.Fprintf(env.Stdout, "lab %s up: %s (%s %s) <-> %s (%s %s), iperf3 server on %s:%d\n",
		*name, l.SenderNS, l.SenderIf, l.SenderAddr, l.ReceiverNS, l.ReceiverIf, l.ReceiverAddr, l.ReceiverAddr, l.ServerPorts[0])
	fmt.Fprintf(env.Stdout, "try:    ip netns exec %s iperf3 -c %s -P 4\nremove: wirespeed lab down %s\n", l.SenderNS, l.ReceiverAddr, *name)
	return nil
}

// runLabDown removes the lab NAME (default 0), or with --all every
// wirespeed lab.
func runLabDown(env Env, fs *flag.FlagSet, args []string) error {
	all := fs.Bool("all", false, "remove every wirespeed lab (ws-lab-* and ws-PID-*), also those of running benches")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 || (*all && len(pos) > 0) {
		return usageErrorf("lab down takes one lab's name, or --all alone (got %q)", strings.Join(pos, " "))
	}
	if err := lab.Check(); err != nil {
		return err
	}
	if *all {
		return removeAllLabs(env)
	}
	name := "0"
	if len(pos) > 0 {
		name = pos[0]
	}
	if err := lab.DownNamed(name); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "lab %s removed\n", name)
	return nil
}

// removeAllLabs removes every namespace a wirespeed lab made ('lab down
// --all'), going on past one that fails.
func removeAllLabs(env Env) error {
	labs, err := lab.List()
	if err != nil {
		return err
	}
	var errs []error
	for _, in := range labs {
		if in.Kind == "other" {
			continue
		}
		if err := lab.RemoveNamespace(in.Namespace); err != nil {
			errs = append(errs, err)
		} else {
			fmt.Fprintf(env.Stdout, "removed %s\n", in.Namespace)
		}
	}
	return errors.Join(errs...)
}

// runLabStatus lists every wirespeed lab namespace, as JSON or a table.
func runLabStatus(env Env, fs *flag.FlagSet, args []string) error {
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("lab status takes no arguments (got %q): it lists every lab; remove one with 'wirespeed lab down NAME'", pos[0])
	}
	labs, err := lab.List()
	if err != nil {
		return err
	}
	if *asJSON {
		if labs == nil {
			labs = []lab.Info{}
		}
		return writeJSON(env, labs)
	}
	if len(labs) == 0 {
		fmt.Fprintln(env.Stdout, "no wirespeed lab namespaces")
		return nil
	}
	return writeLabTable(env, labs)
}

// writeLabTable prints 'lab status': each namespace with its owner and
// whether that owner still runs.
func writeLabTable(env Env, labs []lab.Info) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tOWNER\tSTATE\tPROCESSES")
	for _, in := range labs {
		owner, state := "lab up", "persistent"
		if in.Kind == "other" {
			owner, state = "-", "not made by wirespeed lab (left alone)"
		}
		if in.Kind == "bench" {
			owner = strconv.Itoa(in.Owner)
			state = "running"
			if !in.Alive {
				state = "dead owner (wirespeed lab reap)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", in.Namespace, owner, state, in.Pids)
	}
	return tw.Flush()
}

// runLabReap removes the labs whose owning process died.
func runLabReap(env Env, fs *flag.FlagSet, args []string) error {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("lab reap takes no arguments (got %q): it removes every lab whose owner died", pos[0])
	}
	if err := lab.Check(); err != nil {
		return err
	}
	gone, err := lab.Reap()
	for _, g := range gone {
		fmt.Fprintf(env.Stdout, "reaped %s\n", g)
	}
	if len(gone) == 0 && err == nil {
		fmt.Fprintln(env.Stdout, "nothing to reap")
	}
	return err
}
