// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/outfile"
	"github.com/wirespeed/wirespeed/internal/report"
)

func init() {
	register(&Command{
		Name:    "report",
		Summary: "one self-contained HTML page with plots of bench results; flent export",
		Usage: `wirespeed report RESULT.json... [-o report.html] [--flent OUT.flent.gz [--variant V] [--rep N]]

Writes one HTML file with everything inline (no network needed to view it):
throughput over time per run and variant, latency CDFs idle vs loaded per
probe, per-CPU usr/sys/softirq/idle and NET_RX per CPU, napi kthread CPU,
BQL inflight/limit over time, GRO ratio and RX path, the headline and the
per-metric verdicts of compare, and the inspect summary of the devices.
Several files go on one page; each further file is compared with the
first. A result with parts missing (interrupted, older) is shown as far as
it goes, and the page says what is missing.

--flent writes one run of one result in flent's data format (gzip JSON) for
flent's own plots ('flent -i OUT.flent.gz -p totals -o x.png'): the run is
--variant (default: the first) repetition --rep (default: the first).
Without -o, --flent writes only the flent file.`,
		Run: runReport,
	})
}

func runReport(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["report"], env)
	out := fs.String("o", "", "HTML file to write (default report.html, or none with --flent; - for standard output; a character device such as /dev/null is written through, never replaced)")
	flentOut := fs.String("flent", "", "also write one run as a flent data file (.flent.gz)")
	variant := fs.String("variant", "", "with --flent: the variant to export (default: the first)")
	rep := fs.Int("rep", 0, "with --flent: the repetition to export (default: the first)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErrorf("report: want one or more result files (from 'wirespeed bench --out FILE')")
	}
	if *flentOut != "" && len(pos) != 1 {
		return usageErrorf("report: --flent exports one run of one result file; give one file")
	}
	if *flentOut == "" && (*variant != "" || *rep != 0) {
		return usageErrorf("report: --variant and --rep choose the run --flent exports; give --flent too")
	}
	htmlOut := *out
	if htmlOut == "" && *flentOut == "" {
		htmlOut = "report.html"
	}
	// Refuse an unwritable destination before reading anything, and one
	// that is an input: the report would overwrite the result it reads.
	for _, p := range []string{htmlOut, *flentOut} {
		if p == "" || (p == "-" && p == htmlOut) {
			continue
		}
		for _, in := range pos {
			if p != "-" && sameFile(p, in) {
				return usageErrorf("report: the output %s is the input %s: it would overwrite the result; give another -o", p, in)
			}
		}
		if err := checkWritable(p); err != nil {
			return err
		}
	}
	var in []report.Input
	for _, p := range pos {
		r, err := bench.Load(p)
		if err != nil {
			return err
		}
		in = append(in, report.Input{Name: p, R: r})
	}
	// A page of nothing is not a report: refuse when no input has a run.
	if !slices.ContainsFunc(in, func(x report.Input) bool { return len(x.R.Runs) > 0 }) {
		return fmt.Errorf("%s: no run in it, nothing was measured: check it with 'wirespeed show', and run its bench again; nothing was written", strings.Join(pos, ", "))
	}
	if *flentOut != "" {
		b, run, err := report.Flent(in[0].R, *variant, *rep)
		if err != nil {
			return usageErrorf("report --flent: %v", err)
		}
		if err := outfile.Write(*flentOut, b); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "wrote %s (%s run %s #%d; flent -i %s -p totals -o plot.png)\n", *flentOut, pos[0], run.Variant, run.Rep, *flentOut)
	}
	if htmlOut == "" {
		return nil
	}
	return writeReport(env, in, htmlOut)
}

// writeReport builds the HTML page of in and writes it to htmlOut ("-":
// standard output, without the "wrote" line).
func writeReport(env Env, in []report.Input, htmlOut string) error {
	rp, err := report.Build(in)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, rp); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if htmlOut == "-" {
		_, err = env.Stdout.Write(buf.Bytes())
	} else {
		err = outfile.Write(htmlOut, buf.Bytes())
	}
	if err != nil {
		return err
	}
	for _, w := range rp.Warnings {
		fmt.Fprintf(env.Stderr, "note: %s\n", w)
	}
	if htmlOut != "-" {
		fmt.Fprintf(env.Stdout, "wrote %s (%d file(s), %d chart(s))\n", htmlOut, len(in), countCharts(rp))
	}
	return nil
}

func countCharts(rp *report.Report) int {
	n := 0
	for _, s := range rp.Sections {
		for _, c := range s.Charts {
			if c.Missing == "" {
				n++
			}
		}
	}
	return n
}

// checkWritable makes sure path can be written (a regular file created or
// replaced, or a character device written through), without writing it.
func checkWritable(path string) error {
	if err := outfile.Check(path); err != nil {
		return usageErrorf("report: %v", err)
	}
	return nil
}
