// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wirespeed/wirespeed/internal/doctor"
	"github.com/wirespeed/wirespeed/internal/tune"
)

// The tables and help text tune prints.

// hideFlags makes -h list every flag of fs but the named ones, which
// wirespeed passes to itself (the lab's re-run) and a user never gives.
func hideFlags(fs *flag.FlagSet, env Env, names ...string) {
	usage := commands["tune"].Usage
	if env.declared != nil {
		env.declared.hidden = names
	}
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

// tuneStatic applies every action without measuring, and prints.
func tuneStatic(ctx context.Context, env Env, t *tune.Tuner, acts []doctor.Action, asJSON bool, progress func(string)) error {
	outs, err := t.ApplyStatic(ctx, acts, progress)
	if asJSON {
		if jerr := writeJSON(env, map[string]any{"outcomes": outs}); jerr != nil {
			return jerr
		}
	} else {
		writeOutcomes(env, outs)
		fmt.Fprintln(env.Stdout, "\nNot measured (no --peer, --lab or --verify-cmd): applied changes are kept. Undo with 'wirespeed tune revert --all'.")
	}
	return err
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
