// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"

	"github.com/wirespeed/wirespeed/internal/bench"
)

func init() {
	register(&Command{
		Name:    "show",
		Summary: "print the summary of a bench result file",
		Usage: `wirespeed show FILE [--all] [--json]

Prints the run's settings and a headline per variant: throughput and its
ratio to the first variant with a 95% interval, latency under load, CPU per
Mbit, and whether the repetitions decide. --all adds every metric (throughput
per direction, idle and loaded latency, CPU shares) per variant with ratios,
the per-CPU load and the napi threads. --json prints the summary block and
the headlines as JSON.`,
		Run: runShow,
	})
}

func runShow(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["show"], env)
	asJSON := fs.Bool("json", false, "print the per-variant summary as JSON")
	all := fs.Bool("all", false, "print every metric, the per-CPU load and the napi threads")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("show: want one result file (from 'wirespeed bench --out FILE')")
	}
	r, err := bench.Load(pos[0])
	if err != nil {
		return err
	}
	if r.Summary == nil {
		r.Summarize()
	}
	if *asJSON {
		return writeJSON(env, map[string]any{
			"file": pos[0], "schema": r.Schema, "complete": r.Complete, "incomplete": r.Incomplete,
			"settings": r.Settings, "iperf3": r.Iperf3, "variants": r.Variants, "summary": r.Summary,
			"headlines": bench.Headlines(r),
		})
	}
	fmt.Fprintf(env.Stdout, "%s (%s, started %s)\n", pos[0], r.Schema, r.Started.Format("2006-01-02 15:04:05 MST"))
	bench.WriteText(env.Stdout, r, *all)
	if !*all {
		fmt.Fprintf(env.Stdout, "(every metric, per-CPU load: wirespeed show --all %s)\n", pos[0])
	}
	for _, h := range bench.Headlines(r) {
		if h.Runs > 0 {
			return nil
		}
	}
	return fmt.Errorf("%s holds no throughput figure in any run: nothing was measured, or the file is damaged", pos[0])
}
