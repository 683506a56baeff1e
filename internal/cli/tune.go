// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/shellquote"
	"github.com/wirespeed/wirespeed/internal/tune"
)

func init() {
	register(&Command{
		Name:    "tune",
		Summary: "apply doctor's fixes, keep what measurably helps, revert the rest",
		Usage: `wirespeed tune [plan] [IFACE...]       the actions doctor proposes, in order (changes nothing)
wirespeed tune apply [IFACE...] [--only ID,...] [--goal throughput|latency|cpu] [--guard all|none|LIST]
                     [--peer ADDR | --lab [lab knobs] | --verify-cmd 'CMD'] [--pairs N]
                     [--duration D] [--direction send|receive] [-P N] [--bench-args 'FLAGS']
wirespeed tune status                 what wirespeed changed that is still in force
wirespeed tune revert ID... | --all   put back exactly what was there before
wirespeed tune persist [--remove]     make kept changes survive reboot and re-plug

apply tries each action in doctor's order. With a measurement (--peer: an
iperf3 server, measured with 'wirespeed bench'; --lab: the host lab, built
in the state the lab knobs give, the actions applied to its receiver;
--verify-cmd: your own load, run with sh -c, printing a number - the goal
metric - or a JSON object with throughput_mbit, latency_p99_ms,
cpu_per_mbit) it measures without and with the action, --pairs times
interleaved, keeps it only if the goal metric improved significantly
(one-sided paired t-test on the logs, p < 0.05) and nothing else got
significantly worse (--guard names what may not: all by default; none
judges by the goal alone), and reverts it at once otherwise; it ends
with a table. Without a measurement it applies every action and keeps it
(a static profile).

Every write is read back: a value the kernel silently refused is reported
as refused and put back. The old values are journaled in the state
directory (default /var/lib/wirespeed, or $WIRESPEED_STATE_DIR) before
anything is written, so 'tune revert --all' restores them even after a
crash. --actions FILE takes the actions from a doctor --json report (or a
JSON list of actions) instead of diagnosing this host.

apply, revert and persist need root; plan and status do not.`,
		Run: runTune,
	})
}

type tuneCommon struct {
	asJSON   *bool
	stateDir *string
	actions  *string
}

func addTuneCommon(fs *flag.FlagSet) tuneCommon {
	return tuneCommon{
		asJSON:   fs.Bool("json", false, "print JSON"),
		stateDir: fs.String("state-dir", "", "journal directory (default $WIRESPEED_STATE_DIR or "+tune.DefaultDir+")"),
		actions:  fs.String("actions", "", "take the actions from FILE (doctor --json report, or a JSON list of actions)"),
	}
}

func runTune(ctx context.Context, env Env, args []string) error {
	sub := "plan"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "plan", "apply", "status", "revert", "persist":
			sub, args = args[0], args[1:]
		}
	}
	switch sub {
	case "apply":
		return runTuneApply(ctx, env, args)
	case "status":
		return runTuneStatus(ctx, env, args)
	case "revert":
		return runTuneRevert(ctx, env, args)
	case "persist":
		return runTunePersist(ctx, env, args)
	}
	return runTunePlan(ctx, env, args)
}

func tuneNeedRoot(what string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("tune %s changes kernel settings and needs root: run it with sudo (see what it would do with 'wirespeed tune plan', which needs no root)", what)
	}
	return nil
}

// planActions is tune.PlanActions with its input errors made usage errors.
func planActions(ctx context.Context, ifaces []string, file string) ([]doctor.Action, error) {
	if file != "" && len(ifaces) > 0 {
		// the file's actions name their own devices: the names given
		// would be silently ignored
		return nil, usageErrorf("--actions %s names its own devices; %s would be ignored: give the devices (doctor plans for them) or --actions, not both; nothing was done", file, strings.Join(quoteAll(ifaces), ", "))
	}
	acts, err := tune.PlanActions(ctx, ifaces, file)
	var fe *tune.ActionsFileError
	switch {
	case errors.As(err, &fe):
		return nil, &UsageError{Err: err}
	case errors.Is(err, inspect.ErrUnknownInterface):
		return nil, usageErrorf("%v; name one of those (tune's sub-commands are plan, apply, status, revert and persist)", err)
	case err != nil:
		return nil, err
	}
	return acts, nil
}

func runTunePlan(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := refuseEmpty(fs, "tune plan"); err != nil {
		return err
	}
	acts, err := planActions(ctx, pos, *c.actions)
	if err != nil {
		return err
	}
	rows := tune.Preview(ctx, tune.Live(), acts)
	if *c.asJSON {
		return writeJSON(env, map[string]any{"actions": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "Nothing to tune: doctor proposes no action for this host.")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tID\tKIND\tTARGET\tNOW\tNEW\tCOMMAND")
	for _, r := range rows {
		now := r.Now
		if r.Invalid != "" {
			now = "invalid: " + r.Invalid
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.N, r.Action.ID, r.Action.Kind, r.Action.Target, now, r.Action.Value, r.Action.Command)
	}
	tw.Flush()
	next := "sudo wirespeed tune apply"
	if *c.actions != "" {
		next += " --actions " + shellquote.QuoteIfNeeded(*c.actions)
	}
	for _, p := range pos {
		next += " " + shellquote.QuoteIfNeeded(p)
	}
	fmt.Fprintf(env.Stdout, "\nNothing was changed. '%s' tries these in this order.\n", next)
	return nil
}
