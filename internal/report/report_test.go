// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/testfiles"
)

// fixture is a real host-lab result (testdata/README.md says how it was
// made): three variants, two repetitions, observed, with inspect snapshots.
const fixture = "testdata/lab-gro-threaded.json.gz"

func loadFixture(t *testing.T) *bench.Result {
	t.Helper()
	r, err := bench.Decode(testfiles.Read(t, fixture), fixture)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func chartByID(rep *Report, id string) *Chart {
	for i := range rep.Sections {
		for j := range rep.Sections[i].Charts {
			if rep.Sections[i].Charts[j].ID == id {
				return &rep.Sections[i].Charts[j]
			}
		}
	}
	return nil
}

func TestBuildFromRealResult(t *testing.T) {
	r := loadFixture(t)
	rep, err := Build([]Input{{Name: "lab.json", R: r}})
	if err != nil {
		t.Fatal(err)
	}
	// Every chart this result has data for is drawn; BQL is not (veth has
	// no byte queue limits) and says why.
	for _, id := range []string{"throughput-0", "latency-icmp", "latency-udp", "cpu-load", "net-rx", "napi-threads", "gro-ratio"} {
		c := chartByID(rep, id)
		if c == nil {
			t.Errorf("chart %s missing", id)
			continue
		}
		if c.Missing != "" || !strings.HasPrefix(c.SVG, "<svg") {
			t.Errorf("chart %s not drawn: %q", id, c.Missing)
		}
	}
	if c := chartByID(rep, "bql"); c == nil || c.Missing == "" || !strings.Contains(c.Missing, "veth") {
		t.Errorf("bql chart: %+v", c)
	}
	// One throughput line per run, labelled variant #rep, in the variant's
	// colour.
	tp := chartByID(rep, "throughput-0")
	if len(tp.Legend) != len(r.Runs) {
		t.Errorf("throughput legend has %d entries for %d runs", len(tp.Legend), len(r.Runs))
	}
	if tp.Legend[0].Label != "nogro #1" || tp.Legend[0].Color != hexColor(SeriesColors[0]) || tp.Legend[0].Dashed {
		t.Errorf("first throughput legend entry: %+v", tp.Legend[0])
	}
	// The CPU chart has one stacked bar per variant and CPU: 3 x 2.
	cpu := chartByID(rep, "cpu-load")
	if n := strings.Count(cpu.SVG, "cpu0") + strings.Count(cpu.SVG, "cpu1"); n != 6 {
		t.Errorf("cpu-load has %d CPU labels, want 6", n)
	}
	// Only the threaded variant has napi threads.
	napi := chartByID(rep, "napi-threads")
	if !strings.Contains(napi.Caption, "threaded #1 napi/ws-rcv") || !strings.Contains(napi.Caption, "threaded #2 napi/ws-rcv") || strings.Contains(napi.Caption, "nogro") {
		t.Errorf("napi caption: %q", napi.Caption)
	}
	if len(rep.Headlines) != 1 || len(rep.Headlines[0].Lines) != 3 {
		t.Fatalf("headlines: %+v", rep.Headlines)
	}
	if len(rep.Verdicts) != 2 || rep.Verdicts[0].A != "nogro" || rep.Verdicts[1].B != "threaded" {
		t.Errorf("verdict tables: %d", len(rep.Verdicts))
	}
	// observe saw GRO on the receiver for the GRO variants, not without.
	var groRcv, nogroRcv *RXPathRow
	for i, row := range rep.RXPaths {
		if row.Device == "ws-rcv" && row.Variant == "gro" {
			groRcv = &rep.RXPaths[i]
		}
		if row.Device == "ws-rcv" && row.Variant == "nogro" {
			nogroRcv = &rep.RXPaths[i]
		}
	}
	if groRcv == nil || !strings.Contains(groRcv.RXPath, "GRO") || groRcv.GRORatio == "-" {
		t.Errorf("gro receiver row: %+v", groRcv)
	}
	if nogroRcv == nil || strings.Contains(nogroRcv.RXPath, "+ GRO") {
		t.Errorf("nogro receiver row: %+v", nogroRcv)
	}
	if len(rep.Devices) == 0 || len(rep.Inspect) == 0 {
		t.Errorf("no inspect summary: %d rows, %d texts", len(rep.Devices), len(rep.Inspect))
	}
	for _, w := range rep.Warnings {
		t.Errorf("unexpected warning on a complete result: %s", w)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, buf.String())
	for _, id := range []string{"throughput-0", "latency-icmp", "cpu-load", "net-rx", "napi-threads", "gro-ratio"} {
		if !strings.Contains(buf.String(), `data-chart="`+id+`"`) {
			t.Errorf("page lacks chart %s", id)
		}
	}
}

// checkSelfContained fails on anything a browser would fetch.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	low := strings.ToLower(page)
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url(", `href="http`, "<iframe", "<object"} {
		if strings.Contains(low, bad) {
			t.Errorf("page is not self-contained: contains %q", bad)
		}
	}
	if !strings.Contains(page, "<svg") {
		t.Error("page has no inline SVG")
	}
}

// An interrupted, older result: the page shows what is there and names
// what is missing.
func TestIncompleteOldResult(t *testing.T) {
	r := loadFixture(t)
	r.Schema = "wirespeed.bench/v1-pre"
	r.Complete, r.Incomplete = false, "interrupted"
	r.Runs = r.Runs[:4] // threaded never ran
	for i := range r.Runs {
		r.Runs[i].Probes = nil
		r.Runs[i].Observe = nil
		if i == 3 {
			r.Runs[i].Intervals = nil
		}
		r.Runs[i].Load = nil // older files: computed from the samples
	}
	r.Inspect = nil
	rep, err := Build([]Input{{Name: "old.json", R: r}})
	if err != nil {
		t.Fatal(err)
	}
	warn := strings.Join(rep.Warnings, "\n")
	for _, want := range []string{"schema \"wirespeed.bench/v1-pre\"", "incomplete (interrupted)", "no run has latency probes", "no run was observed", "runs nogro #2 have no throughput intervals", "no inspect snapshot"} {
		if !strings.Contains(warn, want) {
			t.Errorf("warnings lack %q:\n%s", want, warn)
		}
	}
	if c := chartByID(rep, "latency"); c == nil || c.Missing == "" {
		t.Errorf("latency chart should be missing: %+v", c)
	}
	// CPU shares come from the raw samples when the summary is absent.
	if c := chartByID(rep, "cpu-load"); c == nil || c.Missing != "" {
		t.Errorf("cpu chart from samples: %+v", c)
	}
	if c := chartByID(rep, "throughput-0"); c == nil || c.Missing != "" || len(c.Legend) != 3 {
		t.Errorf("throughput chart of the runs that have intervals: %+v", c)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "incomplete (interrupted)") {
		t.Error("page does not say the result is incomplete")
	}
}

func TestDifferentHosts(t *testing.T) {
	a, b := loadFixture(t), loadFixture(t)
	b.Host.Hostname = "pi4"
	rep, err := Build([]Input{{Name: "a.json", R: a}, {Name: "b.json", R: b}})
	if err != nil {
		t.Fatal(err)
	}
	warn := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(warn, "different hosts") || !strings.Contains(warn, "pi4") {
		t.Errorf("no different-hosts warning:\n%s", warn)
	}
	// The second file is compared with the first, and series keep distinct
	// names.
	last := rep.Headlines[len(rep.Headlines)-1]
	if len(last.Lines) != 1 || last.Lines[0].Base != "a.json" || last.Lines[0].Variant != "b.json" {
		t.Errorf("cross-file headline: %+v", last)
	}
	if c := chartByID(rep, "throughput-1"); c == nil || c.Missing != "" {
		t.Errorf("second file's throughput: %+v", c)
	}
	same, _ := Build([]Input{{Name: "a.json", R: a}, {Name: "c.json", R: loadFixture(t)}})
	for _, w := range same.Warnings {
		if strings.Contains(w, "different hosts") {
			t.Errorf("same host flagged: %s", w)
		}
	}
}

func TestFlentExport(t *testing.T) {
	r := loadFixture(t)
	b, run, err := Flent(r, "gro", 2)
	if err != nil {
		t.Fatal(err)
	}
	if run.Variant != "gro" || run.Rep != 2 {
		t.Fatalf("exported %s #%d", run.Variant, run.Rep)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Metadata  map[string]any              `json:"metadata"`
		Version   int                         `json:"version"`
		XValues   []float64                   `json:"x_values"`
		Results   map[string][]*float64       `json:"results"`
		RawValues map[string][]map[string]any `json:"raw_values"`
	}
	if err := json.NewDecoder(zr).Decode(&f); err != nil {
		t.Fatal(err)
	}
	if f.Version != 4 || f.Metadata["NAME"] != "tcp_nup" {
		t.Errorf("version %d, name %v", f.Version, f.Metadata["NAME"])
	}
	for i := 1; i < len(f.XValues); i++ {
		if f.XValues[i] <= f.XValues[i-1] {
			t.Fatalf("x_values not increasing at %d", i)
		}
	}
	streams := 0
	for k, v := range f.Results {
		if len(v) != len(f.XValues) {
			t.Errorf("series %s has %d values for %d x", k, len(v), len(f.XValues))
		}
		if strings.HasPrefix(k, "TCP upload::") {
			streams++
		}
	}
	if streams != r.Settings.Streams {
		t.Errorf("%d stream series, the run had %d streams", streams, r.Settings.Streams)
	}
	if p := f.Metadata["TEST_PARAMETERS"].(map[string]any)["upload_streams"]; p != "4" {
		t.Errorf("upload_streams %v", p)
	}
	// The sum series carries what the run measured: over the measured
	// (not omitted) seconds its mean is the mean of the run's intervals,
	// which bench merged from the same iperf3 output in its own way.
	delay := r.Settings.IdleS
	sum := f.Results["TCP upload sum"]
	var fs, bs float64
	var fn, bn int
	for i, x := range f.XValues {
		if x > delay+r.Settings.OmitS+1e-9 && x <= delay+r.Settings.OmitS+r.Settings.DurationS && sum[i] != nil {
			fs += *sum[i]
			fn++
		}
	}
	for _, iv := range run.Intervals {
		if !iv.Omitted {
			bs += iv.Mbit["send"]
			bn++
		}
	}
	if fn == 0 || bn == 0 {
		t.Fatalf("nothing to compare: %d grid points, %d intervals", fn, bn)
	}
	if got, want := fs/float64(fn), bs/float64(bn); math.Abs(got-want) > 0.03*want {
		t.Errorf("flent sum averages %g Mbit/s over the measured seconds, the run's intervals %g", got, want)
	}
	// Every ICMP reply is a raw ping value.
	replies := 0
	for _, p := range run.Probes {
		if p.Kind == "icmp" {
			for _, rt := range p.RTTs {
				if !rt.Lost {
					replies++
				}
			}
		}
	}
	if got := len(f.RawValues["Ping (ms) ICMP"]); got != replies || replies == 0 {
		t.Errorf("%d raw ping values, %d replies", got, replies)
	}
	if _, _, err := Flent(r, "nope", 0); err == nil || !strings.Contains(err.Error(), "variants: nogro, gro, threaded") {
		t.Errorf("unknown variant: %v", err)
	}
	if _, _, err := Flent(r, "gro", 7); err == nil || !strings.Contains(err.Error(), "has 1, 2") {
		t.Errorf("unknown repetition: %v", err)
	}
	// A load the server sent is flent's download test.
	r.Settings.Direction = bench.DirReceive
	b, _, err = Flent(r, "gro", 1)
	if err != nil {
		t.Fatal(err)
	}
	zr, _ = gzip.NewReader(bytes.NewReader(b))
	var d struct {
		Metadata map[string]any        `json:"metadata"`
		Results  map[string][]*float64 `json:"results"`
	}
	if err := json.NewDecoder(zr).Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.Metadata["NAME"] != "tcp_ndown" || d.Results["TCP download sum"] == nil || d.Results["TCP upload sum"] != nil {
		t.Errorf("receive load exported as %v", d.Metadata["NAME"])
	}
	r.Settings.Direction = bench.DirBoth
	if _, _, err := Flent(r, "", 0); err == nil {
		t.Error("bidirectional run exported")
	}
}

// With many runs the throughput chart shows each variant's median (and the
// runs faintly), not a legend entry per run.
func TestThroughputMedianWithManyRuns(t *testing.T) {
	r := loadFixture(t)
	runs := r.Runs
	for k := 1; k <= 2; k++ {
		for _, run := range runs {
			run.Rep += 2 * k
			r.Runs = append(r.Runs, run)
		}
	}
	rep, err := Build([]Input{{Name: "many.json", R: r}})
	if err != nil {
		t.Fatal(err)
	}
	c := chartByID(rep, "throughput-0")
	if c == nil || len(c.Legend) != 3 || c.Legend[1].Label != "gro: median of 6 runs" {
		t.Fatalf("legend: %+v", c)
	}
	if !strings.Contains(c.SVG, "stroke-opacity") && !strings.Contains(c.SVG, "opacity") {
		t.Error("single runs not drawn faintly")
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median %g", got)
	}
}

// Names come from the result file; a crafted one must stay text.
func TestNamesAreEscaped(t *testing.T) {
	r := loadFixture(t)
	evil := `<script>alert(1)</script>`
	for i := range r.Variants {
		if r.Variants[i].Name == "gro" {
			r.Variants[i].Name = evil
		}
	}
	for i := range r.Runs {
		if r.Runs[i].Variant == "gro" {
			r.Runs[i].Variant = evil
		}
	}
	r.Host.Hostname = evil
	rep, err := Build([]Input{{Name: evil + ".json", R: r}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep); err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, buf.String())
	if !strings.Contains(buf.String(), "&lt;script&gt;") {
		t.Error("the name is not on the page at all")
	}
}
