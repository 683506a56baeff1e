// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirespeed/wirespeed/internal/bench"
)

func init() {
	register(&Command{
		Name:    "compare",
		Summary: "compare two bench results per metric, with a Welch t-test",
		Usage: `wirespeed compare A.json B.json [--a VARIANT] [--b VARIANT] [--all] [--json]
wirespeed compare FILE.json            (each variant against the first)
wirespeed compare A1.json,A2.json,... B1.json,B2.json,...
                                       (separate runs, the i-th of each side paired)

Prints a headline per comparison: B's throughput as a ratio of A's with its
95% interval (paired over interleaved repetitions within one file, Welch
between two files), latency under load, CPU per Mbit, and a verdict that
says whether the data decide and, if not, how many repetitions would.

With --all, for every metric both results have (throughput per direction,
latency percentiles, CPU shares, ...) also prints mean A, mean B, the change, the
two-sided p-value of Welch's unequal-variance t-test over the repetitions,
and whether B is significantly better or worse (p < 0.05). Needs at least
two repetitions per side (bench --repeat 2 or more) for a test.

Comma-separated lists merge the runs of several files into each side; the
i-th files of A and B are taken as one interleaved repetition, so the
paired test applies (the VM lab's stock-vs-patched runs are compared so).`,
		Run: runCompare,
	})
}

func runCompare(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(commands["compare"], env)
	va := fs.String("a", "", "variant of A to use (default: all runs)")
	vb := fs.String("b", "", "variant of B to use (default: all runs)")
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "print every metric's test, not only the headline")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	out, err := comparisons(pos, *va, *vb)
	if err != nil {
		return err
	}
	return writeComparisons(env, out, *asJSON, *all)
}

// comparison is one A-against-B of compare, as --json prints it.
type comparison struct {
	A        string         `json:"a"`
	B        string         `json:"b"`
	Headline bench.Headline `json:"headline"`
	Deltas   []bench.Delta  `json:"deltas"`
}

// comparisons reads the results the arguments name and compares them: a
// file's variants against its first, two comma lists run by run, or two
// files (their variants va and vb when given).
func comparisons(pos []string, va, vb string) ([]comparison, error) {
	switch len(pos) {
	case 1:
		if va != "" || vb != "" {
			// one file compares every variant with its first: --a/--b pick
			// nothing there
			return nil, usageErrorf("compare: --a and --b pick the variants of two files; with one file every variant is compared with its first: leave them out")
		}
		return compareVariants(pos[0])
	case 2:
		if strings.Contains(pos[0], ",") || strings.Contains(pos[1], ",") {
			return compareLists(pos, va, vb)
		}
		return compareFiles(pos[0], pos[1], va, vb)
	}
	return nil, usageErrorf("compare: want A.json B.json, or one file with several variants")
}

// compareVariants compares each variant of one file with its first.
func compareVariants(file string) ([]comparison, error) {
	r, err := loadComplete(file)
	if err != nil {
		return nil, err
	}
	if len(r.Variants) < 2 {
		return nil, usageErrorf("compare: %s has one variant; give two files, or a file from bench --variant", file)
	}
	var out []comparison
	base := r.Variants[0].Name
	for _, v := range r.Variants[1:] {
		out = append(out, comparison{A: base, B: v.Name, Headline: bench.HeadlineOf(r, base, r, v.Name, true), Deltas: bench.Compare(r, base, r, v.Name)})
	}
	return out, nil
}

// compareLists merges the files of each comma list into one side, the
// i-th files of A and B taken as one interleaved repetition.
func compareLists(pos []string, va, vb string) ([]comparison, error) {
	na, nb := len(strings.Split(pos[0], ",")), len(strings.Split(pos[1], ","))
	if na != nb {
		// The i-th files of A and B are one interleaved repetition:
		// with unequal sides some would be paired with nothing.
		return nil, usageErrorf("compare: A has %d files and B %d: the i-th files of each side are paired, so give as many on each side", na, nb)
	}
	var sides [2][]*bench.Result
	for i, list := range pos {
		for _, f := range strings.Split(list, ",") {
			r, err := loadComplete(f)
			if err != nil {
				return nil, err
			}
			sides[i] = append(sides[i], r)
		}
	}
	m := bench.MergeSides(sides[0], sides[1], va, vb)
	return []comparison{{A: "A=" + pos[0], B: "B=" + pos[1], Headline: bench.HeadlineOf(m, "A", m, "B", true), Deltas: bench.Compare(m, "A", m, "B")}}, nil
}

// compareFiles compares two files, or the variants va and vb of them.
func compareFiles(fileA, fileB, va, vb string) ([]comparison, error) {
	a, err := loadComplete(fileA)
	if err != nil {
		return nil, err
	}
	b, err := loadComplete(fileB)
	if err != nil {
		return nil, err
	}
	for _, x := range []struct {
		r *bench.Result
		v string
	}{{a, va}, {b, vb}} {
		if x.v == "" {
			continue
		}
		found := false
		for _, v := range x.r.Variants {
			found = found || v.Name == x.v
		}
		if !found {
			return nil, usageErrorf("compare: no variant %q in one of the files (see them with 'wirespeed show FILE')", x.v)
		}
	}
	nameA, nameB := fileA, fileB
	if va != "" {
		nameA += ":" + va
	}
	if vb != "" {
		nameB += ":" + vb
	}
	return []comparison{{A: nameA, B: nameB, Headline: bench.HeadlineOf(a, va, b, vb, false), Deltas: bench.Compare(a, va, b, vb)}}, nil
}

// writeComparisons prints the comparisons (their JSON, or the headlines
// and with all every metric's test) and fails when one draws no verdict.
func writeComparisons(env Env, out []comparison, asJSON, all bool) error {
	// A side without throughput draws no verdict, and a script must not
	// read one into exit 0.
	var noVerdict error
	for _, c := range out {
		if !c.Headline.Measured() {
			noVerdict = fmt.Errorf("no verdict: %s or %s has no throughput figure: check it with 'wirespeed show', and run its bench again", c.A, c.B)
		}
	}
	if asJSON {
		if err := writeJSON(env, out); err != nil {
			return err
		}
		return noVerdict
	}
	var hs []bench.Headline
	for _, c := range out {
		h := c.Headline
		h.Rename(c.A, c.B)
		hs = append(hs, h)
	}
	bench.WriteHeadlines(env.Stdout, hs)
	if noVerdict != nil {
		return noVerdict
	}
	if !all {
		fmt.Fprintln(env.Stdout, "(every metric with its test: add --all)")
		return nil
	}
	for _, c := range out {
		fmt.Fprintln(env.Stdout)
		if len(c.Deltas) == 0 {
			fmt.Fprintf(env.Stdout, "%s vs %s: no metric in common\n", c.A, c.B)
			continue
		}
		bench.WriteCompare(env.Stdout, c.A, c.B, c.Deltas)
	}
	return nil
}

// loadComplete reads a result compare may draw a verdict from: one whose
// every run measured what it was meant to.
func loadComplete(path string) (*bench.Result, error) {
	r, err := bench.Load(path)
	if err != nil {
		return nil, err
	}
	if !r.Complete {
		why := r.Incomplete
		if why == "" {
			why = "not marked complete"
		}
		return nil, fmt.Errorf("%s is an incomplete result (%s): compare draws no verdict from a run whose load or lab broke; look at it with 'wirespeed show %s' and measure again", path, why, path)
	}
	return r, nil
}
