// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report for people: findings by severity and
// impact, each with its evidence, why, fix and how to verify it.
func WriteText(w io.Writer, r *Report) error {
	src := "this host"
	if r.Source.Snapshot != "live" {
		src = "snapshot " + r.Source.Snapshot
	}
	fmt.Fprintf(w, "doctor: %s (%s, kernel %s)", src, r.Host, r.Kernel)
	if r.Source.Observation != "" {
		fmt.Fprintf(w, ", observed: %s", r.Source.Observation)
	}
	fmt.Fprintln(w)
	counts := map[Severity]int{}
	for _, f := range r.Findings {
		counts[f.Severity]++
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "no findings from %d rules\n", len(r.Rules))
	} else {
		fmt.Fprintf(w, "%d %s: %d crit, %d warn, %d info (most impact first)\n", len(r.Findings), plural(len(r.Findings), "finding", "findings"), counts[Crit], counts[Warn], counts[Info])
	}
	for i, f := range r.Findings {
		fmt.Fprintf(w, "\n%d. [%s] %s  (%s)\n", i+1, strings.ToUpper(string(f.Severity)), f.Title, f.ID)
		if len(f.Evidence) > 0 {
			fmt.Fprintln(w, "   evidence:")
			for _, e := range f.Evidence {
				fmt.Fprintf(w, "     %s = %s  [%s]\n", e.Field, e.Value, e.Source)
			}
		}
		wrap(w, "   why:    ", f.Why)
		if f.Fix != nil && len(f.Fix.Commands) > 0 {
			fmt.Fprintln(w, "   fix:")
			for _, c := range f.Fix.Commands {
				fmt.Fprintf(w, "     %s\n", c)
			}
			if f.Fix.Caveat != "" {
				wrap(w, "   note:   ", f.Fix.Caveat)
			}
			if len(f.Fix.Actions) > 0 {
				var ids []string
				for _, a := range f.Fix.Actions {
					ids = append(ids, a.ID)
				}
				fmt.Fprintf(w, "   tune:   wirespeed tune apply --only %s\n", strings.Join(ids, ","))
			}
		}
		if f.Verify != "" {
			wrap(w, "   verify: ", f.Verify)
		}
		for _, u := range f.Unchecked {
			wrap(w, "   not checked: ", u)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintln(w, "\nnot checked:")
		for _, s := range r.Skipped {
			dev := ""
			if s.Device != "" {
				dev = " (" + s.Device + ")"
			}
			fmt.Fprintf(w, "  %s%s: %s\n", s.Rule, dev, s.Reason)
		}
	}
	return nil
}

// wrap prints text after prefix, wrapped at ~100 columns with a hanging
// indent.
func wrap(w io.Writer, prefix, text string) {
	const width = 100
	indent := strings.Repeat(" ", len(prefix))
	line := prefix
	for _, word := range strings.Fields(text) {
		if len(line)+1+len(word) > width && strings.TrimSpace(line) != strings.TrimSpace(prefix) {
			fmt.Fprintln(w, line)
			line = indent + word
			continue
		}
		if line == prefix {
			line += word
		} else {
			line += " " + word
		}
	}
	fmt.Fprintln(w, line)
}
