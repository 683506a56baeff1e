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

// labFlags are the lab knobs shared by 'lab up', 'bench' and --variant.
type labFlags struct {
	gro, senderOffloads string
	threaded            bool
	rps, rate, qdisc    string
	pinSender, pinRecv  int
}

func addLabFlags(fs *flag.FlagSet) *labFlags {
	return addLabFlagsFrom(fs, labFlags{gro: "off", senderOffloads: "on", pinSender: -1, pinRecv: -1})
}

// addLabFlagsFrom registers the lab flags with def's values as defaults.
func addLabFlagsFrom(fs *flag.FlagSet, def labFlags) *labFlags {
	f := &labFlags{}
	fs.StringVar(&f.gro, "gro", def.gro, "receiver GRO: on (veth gets a NAPI + GRO) or off (netif_rx backlog path)")
	fs.BoolVar(&f.threaded, "threaded", def.threaded, "threaded NAPI on the receiver (needs --gro on)")
	fs.StringVar(&f.senderOffloads, "sender-offloads", def.senderOffloads, "sender TSO/GSO/GRO: on, or off for wire-sized segments as from a real NIC")
	fs.StringVar(&f.rps, "rps", def.rps, "receiver RPS CPU mask (hex, e.g. 3)")
	fs.StringVar(&f.rate, "rate", def.rate, "shape the lab link (sender egress, tbf) to RATE, e.g. 100M, 2.5G, 500k (bits/s)")
	fs.StringVar(&f.qdisc, "qdisc", def.qdisc, "sender root qdisc: noqueue (veth default: a full receive ring drops) or pfifo_fast (the kernel default on NICs), pfifo, fq_codel, fq, sfq (if this kernel has them): a queue backpressure can fill, as on a real NIC")
	fs.IntVar(&f.pinSender, "pin-sender", def.pinSender, "pin the iperf3 client(s) to CPU")
	fs.IntVar(&f.pinRecv, "pin-receiver", def.pinRecv, "pin the iperf3 server(s) to CPU")
	return f
}

// parseOnOff reads an on/off knob (on, off, 1, 0, true, false, yes, no).
func parseOnOff(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "1", "true", "yes":
		return true, nil
	case "off", "0", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("--%s %q: want on or off", name, v)
}

func (f *labFlags) config() (lab.Config, error) {
	var c lab.Config
	var err error
	if c.GRO, err = parseOnOff("gro", f.gro); err != nil {
		return c, err
	}
	on, err := parseOnOff("sender-offloads", f.senderOffloads)
	if err != nil {
		return c, err
	}
	c.SenderOffloadsOff = !on
	c.Threaded = f.threaded
	c.RPSMask = f.rps
	c.SenderQdisc = f.qdisc
	if f.rate != "" {
		if c.RateMbit, err = parseRate(f.rate); err != nil {
			return c, fmt.Errorf("--rate: %w", err)
		}
		if c.RateMbit == 0 {
			return c, fmt.Errorf("--rate 0: leave --rate out for an unshaped link")
		}
	}
	if f.pinSender >= 0 {
		v := f.pinSender
		c.PinSender = &v
	} else if f.pinSender != -1 {
		return c, fmt.Errorf("--pin-sender %d: want a CPU number", f.pinSender)
	}
	if f.pinRecv >= 0 {
		v := f.pinRecv
		c.PinReceiver = &v
	} else if f.pinRecv != -1 {
		return c, fmt.Errorf("--pin-receiver %d: want a CPU number", f.pinRecv)
	}
	return c, c.Validate()
}

// parseRate parses "100M", "2.5G", "500k", "100Mbit", "1e9" (bits/s) into Mbit/s.
func parseRate(s string) (float64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "/s"), "bit")
	t = strings.TrimSuffix(t, "bps")
	mult := 1e-6 // plain number: bits/s
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e-3, strings.TrimSuffix(t, "k")
	case strings.HasSuffix(t, "m"):
		mult, t = 1, strings.TrimSuffix(t, "m")
	case strings.HasSuffix(t, "g"):
		mult, t = 1e3, strings.TrimSuffix(t, "g")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v != v {
		return 0, fmt.Errorf("%q is not a rate: use e.g. 100M, 2.5G or 500k (bits per second)", s)
	}
	r := v * mult
	if r > 1e6 {
		return 0, fmt.Errorf("%q: more than 1 Tbit/s", s)
	}
	if r > 0 && r < 0.008 {
		return 0, fmt.Errorf("%q: less than 8 kbit/s", s)
	}
	return r, nil
}

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
	case "up":
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
	case "down":
		all := fs.Bool("all", false, "remove every wirespeed lab (ws-lab-* and ws-PID-*), also those of running benches")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if err := lab.Check(); err != nil {
			return err
		}
		if *all {
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
		name := "0"
		if len(pos) > 0 {
			name = pos[0]
		}
		if err := lab.DownNamed(name); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "lab %s removed\n", name)
		return nil
	case "status":
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
	case "reap":
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
	return usageErrorf("lab %q: want up, down, status, reap or vm", sub)
}
