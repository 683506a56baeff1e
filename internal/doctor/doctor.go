// SPDX-License-Identifier: Apache-2.0

package doctor

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
)

// Rule is one check. Check is pure: it reads the Input and returns what it
// found and what it could not check.
//
// One name per thing: a rule's id is the id of the findings it emits -
// its one finding id, or, for a rule that emits several kinds, the prefix
// they share (rule softnet emits softnet-squeeze and softnet-drops) - and
// the rule lives in the file named after it (rule usbnet-no-gro in
// usbnet_no_gro.go, its cases in usbnet_no_gro_test.go). Findings lists
// every finding id Check can emit; the tests hold Check, the file names
// and the docs to it.
type Rule struct {
	ID       string
	Summary  string
	Findings []string
	Check    func(in *Input) ([]Finding, []Skipped)

	file string // the file that registered it
}

var rules []Rule

// register adds a rule; each rule file calls it from init().
func register(r Rule) {
	for _, o := range rules {
		if o.ID == r.ID {
			panic("doctor: rule registered twice: " + r.ID)
		}
	}
	if _, file, _, ok := runtime.Caller(1); ok {
		r.file = filepath.Base(file)
	}
	rules = append(rules, r)
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
}

// Rules lists the registered rules, by id.
func Rules() []RuleInfo {
	out := make([]RuleInfo, 0, len(rules))
	for _, r := range rules {
		out = append(out, RuleInfo{ID: r.ID, Summary: r.Summary})
	}
	return out
}

// Diagnose runs every rule over in and returns the findings ordered by
// severity, then impact, then id and device.
func Diagnose(in *Input) (*Report, error) {
	if in == nil || in.Snap == nil {
		return nil, fmt.Errorf("doctor: no snapshot to diagnose")
	}
	rep := &Report{
		Schema: SchemaVersion,
		Host:   in.Snap.Host.Hostname,
		Kernel: in.Snap.Host.Kernel,
		Source: Source{Snapshot: "live", AsRoot: in.Snap.Source.AsRoot, Before: in.Before != nil},
		Rules:  Rules(),
	}
	if in.Snap.Source.Kind == inspect.SourceSnapshot {
		rep.Source.Snapshot = in.Snap.Source.File
	}
	if in.Obs != nil {
		rep.Source.ObservedSec = in.Obs.DurationSec
		for _, c := range in.Obs.CPUs {
			rep.Source.NetRXShare = append(rep.Source.NetRXShare, c.NetRXShare)
		}
	}
	for _, r := range rules {
		fs, sk := r.Check(in)
		for i := range fs {
			if fs[i].ID == "" {
				fs[i].ID = r.ID
			}
			if fs[i].Evidence == nil {
				fs[i].Evidence = []Evidence{}
			}
		}
		rep.Findings = append(rep.Findings, fs...)
		for i := range sk {
			if sk[i].Rule == "" {
				sk[i].Rule = r.ID
			}
		}
		rep.Skipped = append(rep.Skipped, sk...)
	}
	resolveRefs(rep)
	rep.Skipped = append(rep.Skipped, unrecognisedPaths(in)...)
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.Impact != b.Impact {
			return a.Impact > b.Impact
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return strings.Join(a.Devices, ",") < strings.Join(b.Devices, ",")
	})
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	return rep, nil
}

// Worst is the highest severity among the findings ("" when none).
func (r *Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		if f.Severity.Rank() > w.Rank() {
			w = f.Severity
		}
	}
	return w
}

// devices returns the snapshot's devices the Input asks about.
func (in *Input) devices() []*inspect.Device {
	var out []*inspect.Device
	for i := range in.Snap.Devices {
		d := &in.Snap.Devices[i]
		if len(in.Ifaces) > 0 && !slices.Contains(in.Ifaces, d.Name) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// unrecognisedPaths says where an RX path is text this version does not
// know (a snapshot or observation from another version): the rules that
// branch on the path's class take it for no class at all, and say so
// rather than guess one from its words.
func unrecognisedPaths(in *Input) []Skipped {
	var out []Skipped
	why := func(src, field string, p datapath.Path) string {
		return fmt.Sprintf("%s %s %q is not an RX path this version knows: the rules that read it (rx-no-napi, usbnet-no-gro) take it for neither NAPI nor netif_rx", src, field, p)
	}
	for _, d := range in.devices() {
		if p := d.Datapath.RXPath; p.Class() == datapath.Unrecognised && !p.IsZero() {
			out = append(out, Skipped{Rule: "*", Device: d.Name, Reason: why("snapshot", "datapath.rx_path", p)})
		}
	}
	if in.Obs != nil {
		for _, od := range in.Obs.Devices {
			if len(in.Ifaces) > 0 && !slices.Contains(in.Ifaces, od.Name) {
				continue
			}
			if p := od.RXPath; p.Class() == datapath.Unrecognised && !p.IsZero() {
				out = append(out, Skipped{Rule: "*", Device: od.Name, Reason: why("observation", "rx_path", p)})
			}
		}
	}
	return out
}
