// SPDX-License-Identifier: Apache-2.0

// Package report turns bench results into one self-contained HTML page:
// plots (gonum/plot rendered to inline SVG) where a picture says more than
// a table, the headlines and compare verdicts, and the devices' inspect
// summary. Everything here is a pure function of the results, so fixtures
// drive the tests; the command is internal/cli/report.go.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/datapath"
	"github.com/wirespeed/wirespeed/internal/inspect"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Input is one result file.
type Input struct {
	Name string // as given on the command line
	R    *bench.Result
}

// Report is the page's content, built by Build and written by WriteHTML.
type Report struct {
	Title     string
	Generated time.Time
	Files     []FileInfo
	// Warnings say what the page cannot show or should not be trusted for:
	// missing parts of a result, results from different hosts.
	Warnings  []string
	Headlines []HeadlineGroup
	Verdicts  []VerdictTable
	Sections  []Section
	Devices   []DeviceRow
	RXPaths   []RXPathRow
	Inspect   []InspectText
}

// FileInfo describes one input.
type FileInfo struct {
	Name, Host, Kernel, Started, Status, Command, Load string
	CPUs                                               int
	Variants                                           []VariantInfo
}

// VariantInfo is one variant and its lab knobs.
type VariantInfo struct{ Name, Knobs string }

// HeadlineGroup holds one file's (or one cross-file) headlines.
type HeadlineGroup struct {
	Title string
	Lines []bench.Headline
}

// VerdictTable is compare's per-metric table for one pair.
type VerdictTable struct {
	A, B   string
	Paired bool
	Rows   []bench.Delta
}

// Section groups charts under a heading.
type Section struct {
	ID, Title, Intro string
	Charts           []Chart
}

// Chart is one plot, or the reason it is missing.
type Chart struct {
	ID      string // stable, for tests and links: "throughput-0", "cpu-load"
	Title   string
	Caption string
	SVG     string // inline <svg>...</svg>; empty when Missing is set
	Legend  []LegendItem
	Missing string
}

// DeviceRow is a line of the devices table (from the inspect snapshots).
type DeviceRow struct {
	Key, Name, Driver, Bus, RXPath, GRO, Threaded, NAPIs, Qdisc, BQL string
}

// RXPathRow is what observe saw per device and variant.
type RXPathRow struct {
	File, Variant, Device, RXPath, GRORatio, GROFrom, Note string
	Runs                                                   int
}

// InspectText is an inspect snapshot rendered as inspect prints it.
type InspectText struct{ Key, Text string }

// Build assembles the report. It never fails on a result that has parts
// missing: it shows what is there and says what is not.
func Build(in []Input) (*Report, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("report: no result given")
	}
	rep := &Report{Title: "wirespeed report", Generated: time.Now().UTC()}
	hosts := map[string][]string{}
	for _, x := range in {
		rep.Files = append(rep.Files, fileInfo(x))
		h := x.R.Host.Hostname + " (" + x.R.Host.Kernel + ")"
		hosts[h] = append(hosts[h], x.Name)
		rep.Warnings = append(rep.Warnings, missing(x)...)
	}
	if len(hosts) > 1 {
		var parts []string
		for h, files := range hosts {
			parts = append(parts, fmt.Sprintf("%s: %s", h, strings.Join(files, ", ")))
		}
		sort.Strings(parts)
		rep.Warnings = append(rep.Warnings, "these results come from different hosts or kernels - compare them as such, not as one experiment: "+strings.Join(parts, "; "))
	}
	multi := len(in) > 1
	for _, x := range in {
		title := x.Name
		hs := bench.Headlines(x.R)
		if len(hs) > 0 {
			rep.Headlines = append(rep.Headlines, HeadlineGroup{Title: title, Lines: hs})
		}
		if len(x.R.Variants) > 1 {
			base := x.R.Variants[0].Name
			for _, v := range x.R.Variants[1:] {
				if ds := bench.Compare(x.R, base, x.R, v.Name); len(ds) > 0 {
					rep.Verdicts = append(rep.Verdicts, VerdictTable{A: label(x.Name, base, multi), B: label(x.Name, v.Name, multi), Paired: true, Rows: ds})
				}
			}
		}
	}
	if multi {
		// Each further file against the first, all runs of each.
		var hs []bench.Headline
		for _, x := range in[1:] {
			h := bench.HeadlineOf(in[0].R, "", x.R, "", false)
			h.Rename(in[0].Name, x.Name)
			hs = append(hs, h)
			if ds := bench.Compare(in[0].R, "", x.R, ""); len(ds) > 0 {
				rep.Verdicts = append(rep.Verdicts, VerdictTable{A: in[0].Name, B: x.Name, Rows: ds})
			}
		}
		rep.Headlines = append(rep.Headlines, HeadlineGroup{Title: "each file against " + in[0].Name + " (all runs, Welch)", Lines: hs})
	}
	pal := newPalette(in)
	rep.Sections = []Section{
		throughputSection(in, pal),
		latencySection(in, pal),
		cpuSection(in, pal),
		napiSection(in, pal),
		bqlSection(in, pal),
		groSection(in, pal),
	}
	for _, x := range in {
		rep.RXPaths = append(rep.RXPaths, rxPaths(x, multi)...)
		rows, texts, warns := inspectSummary(x, multi)
		rep.Devices = append(rep.Devices, rows...)
		rep.Inspect = append(rep.Inspect, texts...)
		rep.Warnings = append(rep.Warnings, warns...)
	}
	return rep, nil
}

// label names a variant, with its file when there are several.
func label(file, variant string, multi bool) string {
	if !multi {
		return variant
	}
	return file + ":" + variant
}

func fileInfo(x Input) FileInfo {
	r := x.R
	fi := FileInfo{Name: x.Name, Host: r.Host.Hostname, Kernel: r.Host.Kernel, CPUs: r.Host.CPUs,
		Command: strings.Join(r.Command, " ")}
	if !r.Started.IsZero() {
		fi.Started = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	fi.Status = "complete"
	if !r.Complete {
		fi.Status = "incomplete"
		if r.Incomplete != "" {
			fi.Status += ": " + r.Incomplete
		}
	}
	s := r.Settings
	where := "host lab"
	if s.Peer != "" {
		where = "peer " + s.Peer
	}
	fi.Load = fmt.Sprintf("%s; iperf3 %s %s, %d streams, %gs, direction %s, %d repetition(s)",
		where, r.Iperf3.Version, strings.ToUpper(s.Protocol), s.Streams, s.DurationS, s.Direction, s.Repeat)
	for _, v := range r.Variants {
		fi.Variants = append(fi.Variants, VariantInfo{Name: v.Name, Knobs: bench.LabString(v)})
	}
	return fi
}

// missing lists what a result lacks that the page would show.
func missing(x Input) []string {
	r := x.R
	var out []string
	if r.Schema != bench.Schema {
		out = append(out, fmt.Sprintf("%s: schema %q (this wirespeed writes %q): shown as far as its fields are known", x.Name, r.Schema, bench.Schema))
	}
	if !r.Complete {
		why := r.Incomplete
		if why == "" {
			why = "no reason recorded"
		}
		out = append(out, fmt.Sprintf("%s is incomplete (%s): the page shows the runs it has", x.Name, why))
	}
	if len(r.Runs) == 0 {
		out = append(out, fmt.Sprintf("%s has no runs: nothing measured to show", x.Name))
		return out
	}
	var noIv, noProbe, noSamples, noObserve, failed []string
	for _, run := range r.Runs {
		id := fmt.Sprintf("%s #%d", run.Variant, run.Rep)
		if run.Error != "" || !run.Complete {
			failed = append(failed, id)
		}
		if len(run.Intervals) == 0 {
			noIv = append(noIv, id)
		}
		if len(run.Probes) == 0 {
			noProbe = append(noProbe, id)
		}
		if len(run.Samples) == 0 && run.Load == nil {
			noSamples = append(noSamples, id)
		}
		if len(run.Observe) == 0 {
			noObserve = append(noObserve, id)
		}
	}
	say := func(ids []string, what string) {
		if len(ids) == 0 {
			return
		}
		which := "runs " + strings.Join(ids, ", ")
		if len(ids) == len(r.Runs) {
			which = "no run"
		}
		out = append(out, fmt.Sprintf("%s: %s %s", x.Name, which, what))
	}
	say(failed, "did not complete (see the file's errors)")
	if len(noIv) == len(r.Runs) {
		say(noIv, "has throughput intervals: no throughput-over-time plot")
	} else {
		say(noIv, "have no throughput intervals")
	}
	if len(noProbe) == len(r.Runs) {
		say(noProbe, "has latency probes: no latency plot")
	} else {
		say(noProbe, "have no latency probes")
	}
	if len(noSamples) == len(r.Runs) {
		say(noSamples, "has CPU samples: no per-CPU plots")
	} else {
		say(noSamples, "have no CPU samples")
	}
	if len(noObserve) == len(r.Runs) {
		say(noObserve, "was observed (bench --observe): no RX path or GRO ratio")
	}
	if len(r.Inspect) == 0 {
		out = append(out, fmt.Sprintf("%s: no inspect snapshot of the devices", x.Name))
	}
	return out
}

// rxPaths collects what observe saw per variant and device (mean GRO ratio
// over the runs that measured one).
func rxPaths(x Input, multi bool) []RXPathRow {
	type key struct{ variant, dev string }
	rows := map[key]*RXPathRow{}
	ratios := map[key][]float64{}
	paths := map[key][]datapath.Path{} // the distinct paths seen, first seen first
	var order []key
	for _, run := range x.R.Runs {
		if len(run.Observe) == 0 {
			continue
		}
		var o observe.Observation
		if err := json.Unmarshal(run.Observe, &o); err != nil {
			continue
		}
		for _, d := range o.Devices {
			if d.Name == observe.BacklogDev {
				continue
			}
			k := key{run.Variant, d.Name}
			row := rows[k]
			if row == nil {
				row = &RXPathRow{File: x.Name, Variant: label(x.Name, run.Variant, multi), Device: d.Name, Note: d.RXPathNote, GROFrom: d.GROFrom}
				rows[k] = row
				order = append(order, k)
			}
			row.Runs++
			if !slices.Contains(paths[k], d.RXPath) {
				paths[k] = append(paths[k], d.RXPath)
			}
			if d.GRORatio != nil && !math.IsNaN(*d.GRORatio) {
				ratios[k] = append(ratios[k], *d.GRORatio)
			}
		}
	}
	var out []RXPathRow
	for _, k := range order {
		row := rows[k]
		var texts []string
		for _, p := range paths[k] {
			texts = append(texts, p.String())
		}
		row.RXPath = strings.Join(texts, " / ")
		if xs := ratios[k]; len(xs) > 0 {
			var s float64
			for _, v := range xs {
				s += v
			}
			row.GRORatio = fmt.Sprintf("%.1f", s/float64(len(xs)))
		} else {
			row.GRORatio = "-"
		}
		out = append(out, *row)
	}
	return out
}

// inspectSummary turns the result's inspect snapshots into table rows and
// the text inspect prints.
func inspectSummary(x Input, multi bool) ([]DeviceRow, []InspectText, []string) {
	var keys []string
	for k := range x.R.Inspect {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rows []DeviceRow
	var texts []InspectText
	var warns []string
	for _, k := range keys {
		raw := x.R.Inspect[k]
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			warns = append(warns, fmt.Sprintf("%s: inspect %s failed during the bench: %s", x.Name, k, e.Error))
			continue
		}
		var s inspect.Snapshot
		if err := json.Unmarshal(raw, &s); err != nil {
			warns = append(warns, fmt.Sprintf("%s: inspect %s cannot be read: %v", x.Name, k, err))
			continue
		}
		key := label(x.Name, k, multi)
		for _, d := range s.Devices {
			rows = append(rows, deviceRow(key, &d))
		}
		var sb strings.Builder
		if err := inspect.WriteText(&sb, &s); err == nil {
			texts = append(texts, InspectText{Key: key, Text: sb.String()})
		}
	}
	return rows, texts, warns
}

func deviceRow(key string, d *inspect.Device) DeviceRow {
	row := DeviceRow{Key: key, Name: d.Name, Driver: d.Driver, Bus: d.Bus, RXPath: d.Datapath.RXPath.String(),
		Threaded: d.NAPISysfs.Threaded, Qdisc: d.Link.Qdisc, GRO: "-", BQL: "-"}
	if row.Threaded == "" {
		row.Threaded = "-"
	}
	for _, o := range d.Offloads {
		if o.Name == "rx-gro" {
			row.GRO = "off"
			if o.Active != nil && *o.Active {
				row.GRO = "on"
			}
		}
	}
	row.NAPIs = fmt.Sprint(len(d.NAPIs))
	if !d.NAPIsKnown {
		row.NAPIs += " (napi-get unavailable)"
	}
	var bql []string
	for _, q := range d.TXQueues {
		if q.BQL != nil && q.BQL.Limit != nil {
			bql = append(bql, fmt.Sprintf("%s limit %d", q.Name, *q.BQL.Limit))
		}
	}
	if len(bql) > 0 {
		row.BQL = strings.Join(bql, ", ")
	}
	return row
}
