// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ruleCase is one rule on a snapshot fixture, changed to fire or to stay
// silent. Each rule's cases live in its own test file (rule usbnet-no-gro's
// in usbnet_no_gro_test.go), which adds them to ruleCases; TestRuleNames
// runs every rule over all of them.
type ruleCase struct {
	name    string
	fixture string
	change  func(t *testing.T, in *Input)
	id      string // the finding id
	fire    bool
	sev     Severity
	actions []string // expected "ID=VALUE", in order (nil: not checked)
	text    string   // a substring of the fix or title
	skip    string   // a substring of what the rule says it could not check
}

// ruleCases are every rule's cases, by rule id.
var ruleCases = map[string][]ruleCase{}

// addCases adds a rule's cases to ruleCases and returns them.
func addCases(rule string, cs []ruleCase) []ruleCase {
	ruleCases[rule] = append(ruleCases[rule], cs...)
	return cs
}

// input is the case's fixture, changed.
func (c ruleCase) input(t *testing.T) *Input {
	in := &Input{Snap: fixture(t, c.fixture)}
	if c.change != nil {
		c.change(t, in)
	}
	return in
}

// runCases runs a rule's cases through Diagnose, as doctor does.
func runCases(t *testing.T, cases []ruleCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, rep := run(t, c.input(t), c.id)
			if c.skip != "" && !strings.Contains(fmt.Sprint(rep.Skipped), c.skip) {
				t.Errorf("want %q among what was not checked: %+v", c.skip, rep.Skipped)
			}
			if !c.fire {
				if len(got) > 0 {
					t.Fatalf("%s fired, should stay silent: %s", c.id, got[0].Title)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%s: %d findings, want 1", c.id, len(got))
			}
			f := got[0]
			if f.Severity != c.sev {
				t.Errorf("severity %s, want %s (%s)", f.Severity, c.sev, f.Title)
			}
			if len(f.Evidence) == 0 || f.Why == "" {
				t.Errorf("finding without evidence or why: %+v", f)
			}
			if c.actions != nil {
				if g := strings.Join(actionIDs(f), " "); g != strings.Join(c.actions, " ") {
					t.Errorf("actions\n got %s\nwant %s", g, strings.Join(c.actions, " "))
				}
			}
			if c.text != "" {
				all := f.Title + "\n" + f.Why
				if f.Fix != nil {
					all += "\n" + strings.Join(f.Fix.Commands, "\n") + "\n" + f.Fix.Caveat
				}
				if !strings.Contains(all, c.text) {
					t.Errorf("want %q in\n%s", c.text, all)
				}
			}
		})
	}
}

// goFile is the file a rule lives in: rule usbnet-no-gro in usbnet_no_gro.go.
func goFile(rule string) string { return strings.ReplaceAll(rule, "-", "_") + ".go" }

// TestRuleNames holds every rule to one name per thing: its id is its one
// finding id or the prefix of the several it declares; it lives in the
// file of that name, with its cases in the test file of that name; over
// every fixture and every rule case it emits only the findings it
// declares, and says so only for itself; each declared finding fires in a
// case of its own.
func TestRuleNames(t *testing.T) {
	owner := map[string]string{} // finding id -> rule
	for _, r := range rules {
		if len(r.Findings) == 0 {
			t.Errorf("rule %s declares no findings", r.ID)
		}
		for _, id := range r.Findings {
			if id != r.ID && !strings.HasPrefix(id, r.ID+"-") {
				t.Errorf("rule %s declares finding %s: a rule's id is its finding's, or the prefix its findings share", r.ID, id)
			}
			if o, ok := owner[id]; ok {
				t.Errorf("finding %s declared by rules %s and %s", id, o, r.ID)
			}
			owner[id] = r.ID
		}
		if r.file != goFile(r.ID) {
			t.Errorf("rule %s is registered in %s, want %s", r.ID, r.file, goFile(r.ID))
		}
		test := strings.TrimSuffix(goFile(r.ID), ".go") + "_test.go"
		if _, err := os.Stat(test); err != nil {
			t.Errorf("rule %s: its cases belong in %s (%v)", r.ID, test, err)
		}
		if len(ruleCases[r.ID]) == 0 {
			t.Errorf("rule %s has no cases (addCases in %s)", r.ID, test)
		}
	}
	fires := map[string]bool{}
	var inputs []func(t *testing.T) *Input
	for rule, cs := range ruleCases {
		if !slices.ContainsFunc(rules, func(r Rule) bool { return r.ID == rule }) {
			t.Errorf("cases for %s, which is no rule", rule)
		}
		for _, c := range cs {
			if owner[c.id] != rule {
				t.Errorf("rule %s's case %q is about %s, which %s declares", rule, c.name, c.id, cmp(owner[c.id], "no rule"))
			}
			if c.fire {
				fires[c.id] = true
			}
			inputs = append(inputs, c.input)
		}
	}
	for id := range owner {
		if !fires[id] {
			t.Errorf("no case makes %s fire", id)
		}
	}
	for _, name := range allFixtures(t) {
		inputs = append(inputs, func(t *testing.T) *Input { return &Input{Snap: fixture(t, name)} })
	}
	emitted := map[string]bool{}
	for _, in := range inputs {
		for _, r := range rules {
			fs, sk := r.Check(in(t))
			for _, f := range fs {
				id := cmp(f.ID, r.ID)
				if !slices.Contains(r.Findings, id) {
					t.Errorf("rule %s emitted %s, which it does not declare (%v)", r.ID, id, r.Findings)
				}
				emitted[id] = true
			}
			for _, s := range sk {
				if s.Rule != "" && s.Rule != r.ID {
					t.Errorf("rule %s says %q was not checked in the name of %s", r.ID, s.Reason, s.Rule)
				}
			}
		}
	}
	for id := range owner {
		if !emitted[id] {
			t.Errorf("%s is declared but no fixture or case made its rule emit it", id)
		}
	}
}

// cmp is a if set, else b.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var backticked = regexp.MustCompile("`([^`]+)`")

// TestRuleDocs: docs/doctor-schema.md lists exactly the declared finding
// ids, and docs/architecture.md's table of rules names every rule and its
// findings as declared.
func TestRuleDocs(t *testing.T) {
	var all []string
	for _, r := range rules {
		all = append(all, r.Findings...)
	}
	schema, err := os.ReadFile("../../docs/doctor-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `id` \\| stable: (.*) \\|$").FindSubmatch(schema)
	if row == nil {
		t.Fatal("docs/doctor-schema.md: no row | `id` | stable: ... |")
	}
	var listed []string
	for _, m := range backticked.FindAllStringSubmatch(string(row[1]), -1) {
		listed = append(listed, m[1])
	}
	if a, b := sorted(all), sorted(listed); !slices.Equal(a, b) {
		t.Errorf("docs/doctor-schema.md lists the finding ids\n%v\nthe rules declare\n%v", b, a)
	}

	arch, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(arch), "\n| rule | findings | what it weighs |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/architecture.md: no table | rule | findings | what it weighs |")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 3 {
			t.Errorf("docs/architecture.md: rule table row %q", line)
			continue
		}
		rule := strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")
		var fs []string
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			fs = append(fs, m[1])
		}
		i := slices.IndexFunc(rules, func(r Rule) bool { return r.ID == rule })
		if i < 0 {
			t.Errorf("docs/architecture.md names rule %s, which is no rule", rule)
			continue
		}
		documented[rule] = true
		if !slices.Equal(fs, rules[i].Findings) {
			t.Errorf("docs/architecture.md: rule %s emits %v, the rule declares %v", rule, fs, rules[i].Findings)
		}
	}
	for _, r := range rules {
		if !documented[r.ID] {
			t.Errorf("docs/architecture.md's table of rules lacks %s", r.ID)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
