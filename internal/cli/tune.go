// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
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

func runTuneApply(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	only := fs.String("only", "", "apply only these action ids (comma-separated)")
	goal := fs.String("goal", "throughput", "what to improve: throughput, latency (loaded p99) or cpu (busy CPU-ms per Mbit, as bench reports it)")
	guard := fs.String("guard", "all", "metrics that must not get significantly worse: all, none, or a list of throughput, latency, cpu")
	peer := fs.String("peer", "", "measure against the iperf3 server at ADDR[:PORT] (with 'wirespeed bench')")
	useLab := fs.Bool("lab", false, "try it out in the host lab: build it, tune its receiver, remove it")
	verify := fs.String("verify-cmd", "", "measure with this shell command (prints the goal metric, or JSON)")
	verifyTimeout := fs.Duration("verify-timeout", 10*time.Minute, "--verify-cmd: kill one run (with everything it started) after this long")
	pairs := fs.Int("pairs", 3, "interleaved without/with pairs per action (>= 2)")
	dur := fs.String("duration", "5s", "length of one measurement (--peer, --lab)")
	dir := fs.String("direction", "send", "--peer: send (local -> peer) or receive (iperf3 -R)")
	streams := fs.Int("P", 4, "--peer, --lab: parallel TCP streams per measurement (iperf3 -P)")
	benchArgs := fs.String("bench-args", "", "--peer, --lab: extra 'wirespeed bench' flags for every measurement, e.g. '--port 5202 --probe-interval 20ms'")
	knobs := addLabFlags(fs)
	labChild := fs.String(tune.LabSenderNSFlag, "", "internal: measure from this namespace (set by --lab)")
	hideFlags(fs, env, tune.LabSenderNSFlag)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	n := 0
	for _, b := range []bool{*peer != "", *useLab, *verify != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usageErrorf("tune apply: give one of --peer, --lab and --verify-cmd")
	}
	// An empty value is not "no filter" or "no measurement": it is refused.
	for _, name := range []string{"verify-cmd", "only", "peer", "actions", "state-dir", "bench-args"} {
		if f := fs.Lookup(name); set[name] && f != nil && strings.TrimSpace(f.Value.String()) == "" {
			return usageErrorf("tune apply: --%s is empty: give a value or leave the flag out; nothing was applied", name)
		}
	}
	if set["verify-timeout"] && *verify == "" {
		return usageErrorf("tune apply: --verify-timeout bounds --verify-cmd, which is not given")
	}
	if err := refuseUnused("tune apply", set, measuredBy(*peer, *useLab || *labChild != "", *verify)); err != nil {
		return err
	}
	if *verifyTimeout < time.Second {
		return usageErrorf("tune apply: --verify-timeout %s: want 1s or more", *verifyTimeout)
	}
	metric, err := tune.GoalMetric(*goal)
	if err != nil {
		return usageErrorf("tune apply: %v", err)
	}
	guards, err := tune.ParseGuards(*guard)
	if err != nil {
		return usageErrorf("tune apply: --guard: %v", err)
	}
	if *pairs < 2 || *pairs > 100 {
		return usageErrorf("tune apply: --pairs %d: want 2-100 (the paired test needs two pairs)", *pairs)
	}
	d, err := time.ParseDuration(*dur)
	if err != nil || d < time.Second {
		return usageErrorf("tune apply: --duration %q: want 1s or more", *dur)
	}
	if *dir != bench.DirSend && *dir != bench.DirReceive {
		return usageErrorf("tune apply: --direction %q: want send or receive", *dir)
	}
	if *streams < 1 || *streams > 128 {
		return usageErrorf("tune apply: -P %d: want 1-128 streams", *streams)
	}
	extra := strings.Fields(*benchArgs)
	if err := tune.CheckBenchArgs(extra); err != nil {
		return usageErrorf("tune apply: --bench-args: %v", err)
	}
	if *useLab {
		if len(pos) > 0 {
			return usageErrorf("tune apply --lab tunes the lab's receiver; do not name devices")
		}
		cfg, err := knobs.config()
		if err != nil {
			return usageErrorf("tune apply --lab: %v", err)
		}
		if err := tuneNeedRoot("apply"); err != nil {
			return err
		}
		err = tune.RunInLab(ctx, cfg, args, env.Stdout, env.Stderr)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == ExitUsage {
			return usageErrorf("tune apply in the lab: usage error (above)")
		}
		return err
	}
	if err := tuneNeedRoot("apply"); err != nil {
		return err
	}
	acts, err := planActions(ctx, pos, *c.actions)
	if err != nil {
		return err
	}
	if *only != "" {
		var unknown []string
		if acts, unknown = tune.Select(acts, strings.Split(*only, ",")); len(unknown) > 0 {
			return usageErrorf("tune apply: no action %s in the plan (see 'wirespeed tune plan'); nothing was applied", strings.Join(unknown, ", "))
		}
	}
	for _, a := range acts {
		if err := tune.Check(a); err != nil {
			return fmt.Errorf("%w; nothing was applied", err)
		}
	}
	var measure tune.Measurer
	switch {
	case *verify != "":
		measure = tune.VerifyMeasurer(*verify, metric, *verifyTimeout)
	case *peer != "":
		measure = tune.Bench{Peer: *peer, Duration: *dur, Direction: *dir, Streams: *streams, Extra: extra}.Measurer()
	case *labChild != "":
		measure = tune.LabBench(*labChild, *dur, *streams, extra).Measurer()
	}
	t, err := tune.New(tune.StateDir(*c.stateDir), tune.Live())
	if err != nil {
		return err
	}
	defer t.Close()
	progress := func(s string) {
		if !*c.asJSON {
			fmt.Fprintln(env.Stderr, s)
		}
	}
	if measure == nil {
		return tuneStatic(ctx, env, t, acts, *c.asJSON, progress)
	}
	trials, lerr := t.Loop(ctx, acts, tune.LoopConfig{Goal: *goal, Pairs: *pairs, Guards: guards, Measure: measure, Progress: progress})
	if *c.asJSON {
		if err := writeJSON(env, map[string]any{"goal": *goal, "metric": metric, "pairs": *pairs, "trials": trials}); err != nil {
			return err
		}
	} else {
		writeTrials(env, metric, trials)
	}
	return lerr
}
