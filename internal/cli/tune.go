package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/inspect"
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

func tuneStateDir(flagVal string) string {
	if flagVal != "" {
		return flagVal
	}
	if d := os.Getenv("WIRESPEED_STATE_DIR"); d != "" {
		return d
	}
	return tune.DefaultDir
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

// loadActions reads --actions FILE: a doctor report, {"actions": [...]}, or [...].
func loadActions(path string) ([]doctor.Action, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--actions %s: %v; give a 'wirespeed doctor --json' report or a JSON list of actions", path, unwrapPathErr(err))
	}
	var list []doctor.Action
	if err := json.Unmarshal(b, &list); err == nil {
		return list, nil
	}
	want := "want a 'wirespeed doctor --json' report or a JSON list of actions"
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, usageErrorf("--actions %s: %s: %v", path, want, err)
	}
	_, hasF := keys["findings"]
	_, hasA := keys["actions"]
	if !hasF && !hasA {
		// An object of another kind is not an empty plan.
		var kind struct {
			Schema string `json:"schema"`
		}
		_ = json.Unmarshal(b, &kind)
		if kind.Schema != "" {
			return nil, usageErrorf("--actions %s is a %s file, not a doctor report: %s; nothing was done", path, kind.Schema, want)
		}
		return nil, usageErrorf("--actions %s has neither \"findings\" nor \"actions\": %s; nothing was done", path, want)
	}
	var obj struct {
		Findings []doctor.Finding `json:"findings"`
		Actions  []doctor.Action  `json:"actions"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, usageErrorf("--actions %s: %s: %v", path, want, err)
	}
	list = obj.Actions
	for _, f := range obj.Findings {
		if f.Fix != nil {
			list = append(list, f.Fix.Actions...)
		}
	}
	return list, nil
}

// planActions returns the actions to try, in order: doctor's for this host
// (or FILE's), only for the named devices when some are named, each id once.
func planActions(ctx context.Context, ifaces []string, file string) ([]doctor.Action, error) {
	var acts []doctor.Action
	if file != "" {
		var err error
		if acts, err = loadActions(file); err != nil {
			return nil, err
		}
	} else {
		snap, err := inspect.Collect(ctx, inspect.Options{Ifaces: ifaces})
		if err != nil {
			if errors.Is(err, inspect.ErrUnknownInterface) {
				return nil, usageErrorf("%v; name one of those (tune's sub-commands are plan, apply, status, revert and persist)", err)
			}
			return nil, err
		}
		rep, err := doctor.Diagnose(&doctor.Input{Snap: snap, Ifaces: ifaces})
		if err != nil {
			return nil, err
		}
		for _, f := range rep.Findings {
			if f.Fix != nil {
				acts = append(acts, f.Fix.Actions...)
			}
		}
	}
	seen := map[string]bool{}
	var out []doctor.Action
	for _, a := range acts {
		if len(ifaces) > 0 && a.Device != "" && !slices.Contains(ifaces, a.Device) {
			continue // never a device the user did not name
		}
		if seen[a.ID] {
			continue
		}
		seen[a.ID] = true
		out = append(out, a)
	}
	return out, nil
}

type planRow struct {
	N       int           `json:"n"`
	Action  doctor.Action `json:"action"`
	Now     string        `json:"now,omitempty"`
	Invalid string        `json:"invalid,omitempty"`
}

func runTunePlan(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	acts, err := planActions(ctx, pos, *c.actions)
	if err != nil {
		return err
	}
	rows := []planRow{}
	for i, a := range acts {
		r := planRow{N: i + 1, Action: a}
		if err := tune.Check(a); err != nil {
			r.Invalid = err.Error()
		} else if now, err := tune.Read(ctx, tune.Live(), a); err == nil {
			r.Now = strings.TrimSpace(now)
		}
		rows = append(rows, r)
	}
	if *c.asJSON {
		return benchWriteJSON(env, map[string]any{"actions": rows})
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
	fmt.Fprintln(env.Stdout, "\nNothing was changed. 'sudo wirespeed tune apply' tries these in this order.")
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
		measure = tune.VerifyMeasurer(*verify, metric)
	case *peer != "":
		measure = tune.Bench{Peer: *peer, Duration: *dur, Direction: *dir, Streams: *streams, Extra: extra}.Measurer()
	case *labChild != "":
		measure = tune.LabBench(*labChild, *dur, *streams, extra).Measurer()
	}
	t, err := tune.New(tuneStateDir(*c.stateDir), tune.Live())
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
		if err := benchWriteJSON(env, map[string]any{"goal": *goal, "metric": metric, "pairs": *pairs, "trials": trials}); err != nil {
			return err
		}
	} else {
		writeTrials(env, metric, trials)
	}
	return lerr
}

// hideFlags makes -h list every flag of fs but the named ones, which
// wirespeed passes to itself (the lab's re-run) and a user never gives.
func hideFlags(fs *flag.FlagSet, env Env, names ...string) {
	usage := commands["tune"].Usage
	fs.Usage = func() {
		shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		shown.SetOutput(env.Stderr)
		fs.VisitAll(func(f *flag.Flag) {
			if !slices.Contains(names, f.Name) {
				shown.Var(f.Value, f.Name, f.Usage)
				shown.Lookup(f.Name).DefValue = f.DefValue
			}
		})
		fmt.Fprintf(env.Stderr, "%s\n\nFlags:\n", strings.TrimSpace(usage))
		shown.PrintDefaults()
	}
}

// tuneStatic applies every action without measuring.
func tuneStatic(ctx context.Context, env Env, t *tune.Tuner, acts []doctor.Action, asJSON bool, progress func(string)) error {
	outs := []tune.Outcome{}
	var errs []error
	for i, a := range acts {
		progress(fmt.Sprintf("[%d/%d] %s", i+1, len(acts), a.ID))
		left := t.Leftover(a)
		var leftSeq int
		if left >= 0 {
			leftSeq = t.Store.J.Entries[left].Seq
		}
		o, err := t.Apply(ctx, a)
		if err == nil && (o.State == tune.StateApplied || o.State == "already") {
			// A static run keeps what it applies: mark it so, or a later
			// run would take it for the leftover of an interrupted one.
			if left >= 0 && o.State == "already" {
				o.Note = fmt.Sprintf("left in force by an interrupted tune (journal entry %d); kept now", leftSeq)
			}
			if kerr := t.Keep(a.ID); kerr != nil {
				err = kerr
			}
		}
		if err != nil {
			errs = append(errs, err)
			if o.State == "" {
				o.State, o.Note = "failed", err.Error()
			}
		} else if o.State == tune.StateRefused {
			errs = append(errs, fmt.Errorf("%s: the kernel refused %s: %s", a.ID, a.Value, o.Note))
		}
		outs = append(outs, o)
	}
	if asJSON {
		if err := benchWriteJSON(env, map[string]any{"outcomes": outs}); err != nil {
			return err
		}
	} else {
		writeOutcomes(env, outs)
		fmt.Fprintln(env.Stdout, "\nNot measured (no --peer, --lab or --verify-cmd): applied changes are kept. Undo with 'wirespeed tune revert --all'.")
	}
	return errors.Join(errs...)
}

func writeOutcomes(env Env, outs []tune.Outcome) {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTARGET\tOLD\tNEW\tNOW\tSTATE\tNOTE")
	for _, o := range outs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.ID, o.Target, oneLine(o.Old), oneLine(o.Want), oneLine(o.Got), o.State, o.Note)
	}
	tw.Flush()
}

func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " | ") }

func writeTrials(env Env, metric string, trials []tune.Trial) {
	fmt.Fprintf(env.Stdout, "\nGoal %s; each action measured without/with it in interleaved pairs.\n", metric)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tBEFORE\tAFTER\tRATIO\tMEDIAN PAIR RATIO\tP\tVERDICT\tWHY")
	for _, tr := range trials {
		if tr.Goal == nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%s\t%s\n", tr.Action.ID, tr.Verdict, tr.Reason)
			continue
		}
		g := tr.Goal
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%.3f\t%.3f\t%.3g\t%s\t%s\n", tr.Action.ID, g.MeanBefore, g.MeanAfter, g.Ratio, g.MedianRatio, g.P, tr.Verdict, tr.Reason)
	}
	tw.Flush()
	for _, tr := range trials {
		if tr.Leftover != "" {
			fmt.Fprintf(env.Stdout, "Leftover: %s: %s.\n", tr.Action.ID, tr.Leftover)
		}
	}
}

func runTuneStatus(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("tune status takes no arguments (got %q): it shows every change in the journal", pos[0])
	}
	j, err := tune.Load(tuneStateDir(*c.stateDir))
	if err != nil {
		return err
	}
	st := tune.StatusOf(ctx, tune.Live(), j)
	if st == nil {
		st = []tune.Status{}
	}
	if *c.asJSON {
		return benchWriteJSON(env, map[string]any{"journal_version": j.Version, "changes": st})
	}
	if len(st) == 0 {
		fmt.Fprintln(env.Stdout, "wirespeed has no change in force (journal: "+tuneStateDir(*c.stateDir)+").")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTARGET\tWAS\tSET\tNOW\tKEPT\tSINCE\tPROBLEM")
	for _, s := range st {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\n", s.Action.ID, s.Action.Target, oneLine(s.Old), s.Action.Value, oneLine(s.Now), s.Kept, s.Time, s.Problem)
	}
	tw.Flush()
	return nil
}

func runTuneRevert(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	all := fs.Bool("all", false, "revert every change in the journal")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *all == (len(pos) > 0) {
		return usageErrorf("tune revert: give action ids or --all")
	}
	if err := tuneNeedRoot("revert"); err != nil {
		return err
	}
	// Unknown ids are refused before the state directory is touched.
	if j, err := tune.Load(tuneStateDir(*c.stateDir)); err != nil {
		return err
	} else if unknown := unknownIDs(j, pos); len(unknown) > 0 {
		return &UsageError{Err: fmt.Errorf("%w; nothing was reverted", &tune.UnknownIDError{IDs: unknown})}
	}
	t, err := tune.New(tuneStateDir(*c.stateDir), tune.Live())
	if err != nil {
		return err
	}
	defer t.Close()
	outs, err := t.Revert(ctx, pos, *all)
	var ue *tune.UnknownIDError
	if errors.As(err, &ue) {
		return &UsageError{Err: fmt.Errorf("%w; nothing was reverted", err)}
	}
	if outs == nil {
		outs = []tune.Outcome{}
	}
	if *c.asJSON {
		if jerr := benchWriteJSON(env, map[string]any{"outcomes": outs}); jerr != nil {
			return jerr
		}
	} else if len(outs) == 0 && err == nil {
		fmt.Fprintln(env.Stdout, "Nothing to revert.")
	} else {
		writeOutcomes(env, outs)
	}
	return err
}

// unknownIDs lists the ids no entry of j has.
func unknownIDs(j *tune.Journal, ids []string) []string {
	var out []string
	for _, id := range ids {
		found := false
		for _, e := range j.Entries {
			found = found || e.Action.ID == id
		}
		if !found {
			out = append(out, id)
		}
	}
	return out
}

func runTunePersist(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["tune"], env)
	c := addTuneCommon(fs)
	remove := fs.Bool("remove", false, "remove every file an earlier persist wrote")
	root := fs.String("root", "/", "write the files below this directory instead of / (for a test or an image)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("tune persist takes no arguments (got %q): it makes every kept change permanent", pos[0])
	}
	if *root == "/" {
		if err := tuneNeedRoot("persist"); err != nil {
			return err
		}
	}
	dir := tuneStateDir(*c.stateDir)
	if *remove {
		removed, err := tune.RemovePersist(*root, dir)
		if removed == nil {
			removed = []string{}
		}
		if *c.asJSON {
			if jerr := benchWriteJSON(env, map[string]any{"removed": removed}); jerr != nil {
				return jerr
			}
		} else {
			for _, f := range removed {
				fmt.Fprintln(env.Stdout, "removed "+f)
			}
			if len(removed) == 0 && err == nil {
				fmt.Fprintln(env.Stdout, "Nothing to remove.")
			}
		}
		return err
	}
	st, err := tune.Open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	netns, _ := os.Readlink("/proc/self/ns/net")
	plan := tune.PlanPersist(st.J, netns)
	if len(plan.Files) == 0 {
		if len(plan.Skipped) > 0 {
			return fmt.Errorf("nothing to make permanent here, nothing was written: %s", strings.Join(plan.Skipped, "; "))
		}
		return fmt.Errorf("no applied change in the journal to make permanent ('wirespeed tune status')")
	}
	files, err := tune.WritePersist(*root, dir, plan)
	if err != nil {
		return err
	}
	if *c.asJSON {
		return benchWriteJSON(env, map[string]any{"root": *root, "files": files, "skipped": plan.Skipped})
	}
	for _, f := range files {
		// Name the file where it is: --root may have sent it elsewhere.
		fmt.Fprintln(env.Stdout, "wrote "+filepath.Join(*root, f))
	}
	for _, s := range plan.Skipped {
		fmt.Fprintln(env.Stdout, "skipped "+s)
	}
	fmt.Fprintln(env.Stdout, "\nThey take effect at the next boot or re-plug; now: udevadm control --reload; systemctl daemon-reload; sysctl --system.")
	return nil
}
