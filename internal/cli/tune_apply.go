// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/tune"
)

// 'wirespeed tune apply': every flag is checked, then (for --lab) the lab
// is built to run it inside, or the plan is read and checked, and only
// then is anything applied.

func runTuneApply(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	f := addTuneApplyFlags(fs, env)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	j, err := f.check(fs)
	if err != nil {
		return err
	}
	if *f.useLab {
		return runTuneApplyInLab(ctx, env, f, pos, args)
	}
	if err := tuneNeedRoot("apply"); err != nil {
		return err
	}
	acts, err := tuneApplyActions(ctx, f, pos)
	if err != nil {
		return err
	}
	return applyTune(ctx, env, f, acts, j)
}

// tuneApplyFlags are tune apply's flags; set holds the names given.
type tuneApplyFlags struct {
	c                                                tuneCommon
	only, goal, guard, peer, verify, dur, dir, extra *string
	labChild                                         *string
	useLab                                           *bool
	verifyTimeout                                    *time.Duration
	pairs, streams                                   *int
	knobs                                            *labFlags
	set                                              map[string]bool
}

func addTuneApplyFlags(fs *flag.FlagSet, env Env) *tuneApplyFlags {
	f := &tuneApplyFlags{c: addTuneCommon(fs)}
	f.only = fs.String("only", "", "apply only these action ids (comma-separated)")
	f.goal = fs.String("goal", "throughput", "what to improve: throughput, latency (loaded p99) or cpu (busy CPU-ms per Mbit, as bench reports it)")
	f.guard = fs.String("guard", "all", "metrics that must not get significantly worse: all, none, or a list of throughput, latency, cpu")
	f.peer = fs.String("peer", "", "measure against the iperf3 server at ADDR[:PORT] (with 'wirespeed bench')")
	f.useLab = fs.Bool("lab", false, "try it out in the host lab: build it, tune its receiver, remove it")
	f.verify = fs.String("verify-cmd", "", "measure with this shell command (prints the goal metric, or JSON)")
	f.verifyTimeout = fs.Duration("verify-timeout", 10*time.Minute, "--verify-cmd: kill one run (with everything it started) after this long")
	f.pairs = fs.Int("pairs", 3, "interleaved without/with pairs per action (>= 2)")
	f.dur = fs.String("duration", "5s", "length of one measurement (--peer, --lab)")
	f.dir = fs.String("direction", "send", "--peer: send (local -> peer) or receive (iperf3 -R)")
	f.streams = fs.Int("P", 4, "--peer, --lab: parallel TCP streams per measurement (iperf3 -P)")
	f.extra = fs.String("bench-args", "", "--peer, --lab: extra 'wirespeed bench' flags for every measurement, e.g. '--port 5202 --probe-interval 20ms'")
	f.knobs = addLabFlags(fs)
	f.labChild = fs.String(tune.LabSenderNSFlag, "", "internal: measure from this namespace (set by --lab)")
	hideFlags(fs, env, tune.LabSenderNSFlag)
	return f
}

// check refuses conflicting modes, empty values, flags the mode ignores
// and bad numbers, before anything is read or changed.
func (f *tuneApplyFlags) check(fs *flag.FlagSet) (tune.ApplyOptions, error) {
	var j tune.ApplyOptions
	n := 0
	for _, b := range []bool{*f.peer != "", *f.useLab, *f.verify != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		return j, usageErrorf("tune apply: give one of --peer, --lab and --verify-cmd")
	}
	// An empty value is not "no filter" or "no measurement": it is refused.
	for _, name := range []string{"verify-cmd", "only", "peer", "actions", "state-dir", "bench-args"} {
		if fl := fs.Lookup(name); f.set[name] && fl != nil && strings.TrimSpace(fl.Value.String()) == "" {
			return j, usageErrorf("tune apply: --%s is empty: give a value or leave the flag out; nothing was applied", name)
		}
	}
	if f.set["verify-timeout"] && *f.verify == "" {
		return j, usageErrorf("tune apply: --verify-timeout bounds --verify-cmd, which is not given")
	}
	if err := refuseUnused("tune apply", f.set, measuredBy(*f.peer, *f.useLab || *f.labChild != "", *f.verify)); err != nil {
		return j, err
	}
	d, err := parseDurationFlag("duration", *f.dur) // plain seconds too, as bench's -t
	if err != nil {
		return j, err
	}
	j = tune.ApplyOptions{Goal: *f.goal, Guard: *f.guard, Pairs: *f.pairs, Duration: d, Direction: *f.dir,
		Streams: *f.streams, VerifyTimeout: *f.verifyTimeout, BenchArgs: strings.Fields(*f.extra)}
	if err := j.Validate(); err != nil {
		return j, usageErrorf("tune apply: %v", err)
	}
	// bench's own flag set reads them now, for every way of measuring
	// (with --lab they went unread until the lab's first measurement)
	bfs := flag.NewFlagSet("bench", flag.ContinueOnError) // flagError: "see 'wirespeed bench -h'"
	bfs.SetOutput(io.Discard)
	bf := addBenchFlags(bfs)
	if err := bfs.Parse(j.BenchArgs); err != nil {
		return j, usageErrorf("tune apply: --bench-args (flags of 'wirespeed bench'): %v", flagError(bfs, err))
	}
	if bfs.NArg() > 0 {
		return j, usageErrorf("tune apply: --bench-args: %q is not a flag", bfs.Arg(0))
	}
	if err := bf.times(&bench.Options{}); err != nil {
		return j, usageErrorf("tune apply: --bench-args: %v", err)
	}
	return j, nil
}

// runTuneApplyInLab checks the lab knobs and re-runs tune apply with args
// inside a host lab built for it (tune.RunInLab), its receiver tuned.
func runTuneApplyInLab(ctx context.Context, env Env, f *tuneApplyFlags, pos, args []string) error {
	if len(pos) > 0 {
		return usageErrorf("tune apply --lab tunes the lab's receiver; do not name devices")
	}
	cfg, err := f.knobs.config()
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

// tuneApplyActions reads the plan (of this host's devices pos, or of
// --actions), keeps the --only ones and checks each: a bad one refuses
// the whole apply.
func tuneApplyActions(ctx context.Context, f *tuneApplyFlags, pos []string) ([]doctor.Action, error) {
	acts, err := planActions(ctx, pos, *f.c.actions)
	if err != nil {
		return nil, err
	}
	if *f.only != "" {
		var unknown []string
		if acts, unknown = tune.Select(acts, strings.Split(*f.only, ",")); len(unknown) > 0 {
			return nil, usageErrorf("tune apply: no action %s in the plan (see 'wirespeed tune plan'); nothing was applied", strings.Join(unknown, ", "))
		}
	}
	for _, a := range acts {
		if err := tune.Check(a); err != nil {
			return nil, fmt.Errorf("%w; nothing was applied", err)
		}
	}
	return acts, nil
}

// measurer is how each action is measured: --verify-cmd, --peer, or the
// lab's sender namespace; nil for a static apply.
func (f *tuneApplyFlags) measurer(j tune.ApplyOptions) tune.Measurer {
	switch {
	case *f.verify != "":
		return tune.VerifyMeasurer(*f.verify, j.Metric, *f.verifyTimeout)
	case *f.peer != "":
		return tune.Bench{Peer: *f.peer, Duration: *f.dur, Direction: *f.dir, Streams: *f.streams, Extra: j.BenchArgs}.Measurer()
	case *f.labChild != "":
		return tune.LabBench(*f.labChild, *f.dur, *f.streams, j.BenchArgs).Measurer()
	}
	return nil
}

// applyTune applies the actions, journaled: each kept if it measurably
// helps (or all kept, without a measurement), and prints what was done.
func applyTune(ctx context.Context, env Env, f *tuneApplyFlags, acts []doctor.Action, j tune.ApplyOptions) error {
	measure := f.measurer(j)
	asJSON := *f.c.asJSON
	t, err := tune.New(tune.StateDir(*f.c.stateDir), tune.Live())
	if err != nil {
		return err
	}
	defer t.Close()
	progress := func(s string) {
		if !asJSON {
			fmt.Fprintln(env.Stderr, s)
		}
	}
	// said also with --json (on stderr): a killed trial's value stays in
	// force whatever this run does
	for _, n := range t.LeftoverNotes(acts) {
		fmt.Fprintln(env.Stderr, "note: "+n)
	}
	if measure == nil {
		return tuneStatic(ctx, env, t, acts, asJSON, progress)
	}
	trials, lerr := t.Loop(ctx, acts, tune.LoopConfig{Goal: *f.goal, Pairs: *f.pairs, Guards: j.Guards, Measure: measure, Progress: progress})
	if asJSON {
		if err := writeJSON(env, map[string]any{"goal": *f.goal, "metric": j.Metric, "pairs": *f.pairs, "trials": trials}); err != nil {
			return err
		}
	} else {
		writeTrials(env, j.Metric, trials)
	}
	return lerr
}
