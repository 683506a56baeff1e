// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/inputfile"
	"github.com/wirespeed/wirespeed/internal/lab"
	"github.com/wirespeed/wirespeed/internal/outfile"
	"github.com/wirespeed/wirespeed/internal/stats"
)

// Schema names the result file layout. Readers accept any "wirespeed.bench/v1*".
const Schema = "wirespeed.bench/v1"

// Result is what a bench run saves.
type Result struct {
	Schema     string     `json:"schema"`
	Wirespeed  string     `json:"wirespeed,omitempty"` // tool version
	Complete   bool       `json:"complete"`
	Incomplete string     `json:"incomplete,omitempty"` // why not complete
	Started    time.Time  `json:"started"`
	Finished   time.Time  `json:"finished"`
	Host       HostInfo   `json:"host"`
	Command    []string   `json:"command,omitempty"`
	Settings   Settings   `json:"settings"`
	Iperf3     Iperf3Info `json:"iperf3"`
	Variants   []Variant  `json:"variants"`
	// Inspect holds inspect snapshots of the devices involved, keyed
	// "VARIANT/sender", "VARIANT/receiver" (lab) or "local" (peer).
	Inspect map[string]json.RawMessage `json:"inspect,omitempty"`
	Runs    []Run                      `json:"runs"`
	Summary []VariantSummary           `json:"summary"`
	Notes   []string                   `json:"notes,omitempty"`
}

// HostInfo identifies the machine.
type HostInfo struct {
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"`
	CPUs     int    `json:"cpus"`
}

// Settings are the load, probe and sampling settings of the whole run.
type Settings struct {
	Peer           string  `json:"peer,omitempty"` // "" = host lab
	Port           int     `json:"port"`
	Streams        int     `json:"streams"`
	DurationS      float64 `json:"duration_s"`
	OmitS          float64 `json:"omit_s"`
	Direction      string  `json:"direction"`
	Protocol       string  `json:"protocol"`
	RateMbit       float64 `json:"rate_mbit,omitempty"`
	Repeat         int     `json:"repeat"`
	ProbeInterval  float64 `json:"probe_interval_ms"`
	ProbeTOS       int     `json:"probe_tos"`
	ProbePriority  int     `json:"probe_priority"`
	IdleS          float64 `json:"idle_s"`
	SampleInterval float64 `json:"sample_interval_s"`
	Iface          string  `json:"iface,omitempty"` // local device (peer mode)
}

// Iperf3Info says which iperf3 ran and how.
type Iperf3Info struct {
	Version       string `json:"version"`
	MultiThreaded bool   `json:"multithreaded"` // -P uses threads (3.16+)
	Processes     int    `json:"processes"`     // parallel iperf3 clients per run
	Note          string `json:"note,omitempty"`
}

// Variant is one lab configuration (or "peer").
type Variant struct {
	Name string      `json:"name"`
	Lab  *lab.Config `json:"lab,omitempty"`
}

// Run is one measurement: one variant, one repetition.
type Run struct {
	Variant    string                `json:"variant"`
	Rep        int                   `json:"rep"`
	Started    time.Time             `json:"started"`
	Complete   bool                  `json:"complete"`
	Error      string                `json:"error,omitempty"`
	Namespaces map[string]string     `json:"namespaces,omitempty"` // role -> netns
	Devices    []string              `json:"devices,omitempty"`    // "ns/dev" or "dev"
	Throughput map[string]DirSummary `json:"throughput"`
	Intervals  []Interval            `json:"intervals"`
	Probes     []ProbeSeries         `json:"probes"`
	Samples    []Sample              `json:"samples"`
	Load       *LoadSummary          `json:"load,omitempty"`
	Metrics    map[string]float64    `json:"metrics"`
	Observe    json.RawMessage       `json:"observe,omitempty"`
	ObserveErr string                `json:"observe_error,omitempty"`
	Iperf3Raw  []json.RawMessage     `json:"iperf3_raw,omitempty"`
}

// ProbeSeries is one latency probe's record.
type ProbeSeries struct {
	Kind     string     `json:"kind"`
	Target   string     `json:"target"`
	TOS      int        `json:"tos"`
	Priority int        `json:"priority"`
	RxTime   string     `json:"rx_time,omitempty"` // "kernel" (SO_TIMESTAMPNS) or "user"
	Idle     PhaseStats `json:"idle"`
	Loaded   PhaseStats `json:"loaded"`
	RTTs     []RTT      `json:"rtts"`
}

// VariantSummary aggregates a variant's runs per metric.
type VariantSummary struct {
	Variant string                   `json:"variant"`
	Runs    int                      `json:"runs"`
	Metrics map[string]stats.Summary `json:"metrics"`
}

// Summarize fills r.Summary from the runs' metrics.
func (r *Result) Summarize() {
	r.Summary = nil
	for _, v := range r.Variants {
		vs := VariantSummary{Variant: v.Name, Metrics: map[string]stats.Summary{}}
		vals := map[string][]float64{}
		for _, run := range r.Runs {
			if run.Variant != v.Name || len(run.Metrics) == 0 {
				continue
			}
			vs.Runs++
			for k, x := range run.Metrics {
				vals[k] = append(vals[k], x)
			}
		}
		for k, xs := range vals {
			vs.Metrics[k] = stats.Summarize(xs)
		}
		r.Summary = append(r.Summary, vs)
	}
}

// MetricValues returns the per-run values of a metric for a variant
// ("" = all runs).
func (r *Result) MetricValues(variant, metric string) []float64 {
	var out []float64
	for _, run := range r.Runs {
		if variant != "" && run.Variant != variant {
			continue
		}
		if x, ok := run.Metrics[metric]; ok && !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// HigherIsBetter says which way a metric improves.
func HigherIsBetter(metric string) bool {
	return strings.HasSuffix(metric, "_mbit") || strings.HasSuffix(metric, "idle_pct")
}

// MetricNames returns all metric names in the result, sorted for display:
// throughput first, then latency, then CPU.
func (r *Result) MetricNames() []string {
	set := map[string]bool{}
	for _, run := range r.Runs {
		for k := range run.Metrics {
			set[k] = true
		}
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, rj := metricRank(out[i]), metricRank(out[j])
		if ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

func metricRank(m string) int {
	switch {
	case strings.HasSuffix(m, "_mbit"):
		return 0
	case strings.Contains(m, "retrans"), strings.Contains(m, "lost"):
		return 1
	case strings.HasPrefix(m, "icmp_"), strings.HasPrefix(m, "udp_"):
		return 2
	}
	return 3
}

// jsonFloat marshals NaN and Inf as null (encoding/json refuses them).
func sanitize(r *Result) {
	clean := func(m map[string]float64) {
		for k, v := range m {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				delete(m, k)
			}
		}
	}
	fix := func(p *PhaseStats) {
		for _, f := range []*float64{&p.MinMs, &p.MeanMs, &p.P50Ms, &p.P90Ms, &p.P99Ms, &p.MaxMs} {
			if math.IsNaN(*f) || math.IsInf(*f, 0) {
				*f = 0
			}
		}
	}
	for i := range r.Runs {
		clean(r.Runs[i].Metrics)
		for j := range r.Runs[i].Probes {
			fix(&r.Runs[i].Probes[j].Idle)
			fix(&r.Runs[i].Probes[j].Loaded)
		}
	}
	for i := range r.Summary {
		for k, s := range r.Summary[i].Metrics {
			for _, f := range []*float64{&s.Mean, &s.Stdev, &s.CILow, &s.CIHigh, &s.Min, &s.Max} {
				if math.IsNaN(*f) || math.IsInf(*f, 0) {
					*f = 0
				}
			}
			r.Summary[i].Metrics[k] = s
		}
	}
}

// Marshal renders the result as indented JSON.
func (r *Result) Marshal() ([]byte, error) {
	sanitize(r)
	return json.MarshalIndent(r, "", " ")
}

// Save writes the result to path: a regular file by a temporary file
// renamed over it, so a crash never leaves half a file; a character
// device or FIFO written through, never replaced (outfile).
func (r *Result) Save(path string) error {
	b, err := r.Marshal()
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	if err := outfile.Write(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// Load reads a result file.
func Load(path string) (*Result, error) {
	b, err := inputfile.Read(path, "result", inputfile.ResultLimit)
	var ie *inputfile.Error
	if errors.As(err, &ie) {
		return nil, fmt.Errorf("%v (give a file that 'wirespeed bench --out' wrote)", ie)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the result %s: %w (give a file that 'wirespeed bench --out' wrote)", path, unwrapPath(err))
	}
	return Decode(b, path)
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// otherKinds names the files of wirespeed's other commands by schema
// prefix, for an error that says what a file is instead of how its JSON
// failed to fit a Result.
var otherKinds = map[string]string{
	"wirespeed.doctor/":  "a 'wirespeed doctor --json' report",
	"wirespeed.inspect/": "a 'wirespeed inspect --json' snapshot",
	"wirespeed.observe/": "a 'wirespeed observe --json' observation",
}

// Decode parses a result file's bytes.
func Decode(b []byte, name string) (*Result, error) {
	want := "give a file that 'wirespeed bench --out' wrote"
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s is not a wirespeed bench result (not a JSON object: %v): %s", name, err, want)
	}
	var schema string
	_ = json.Unmarshal(probe["schema"], &schema)
	for prefix, kind := range otherKinds {
		if strings.HasPrefix(schema, prefix) {
			return nil, fmt.Errorf("%s is %s (%s), not a bench result: %s", name, kind, schema, want)
		}
	}
	if _, ok := probe["intervals"]; ok && schema == "" {
		return nil, fmt.Errorf("%s is iperf3's own -J output, not a wirespeed bench result: %s (it runs iperf3 itself)", name, want)
	}
	if schema != "" && !strings.HasPrefix(schema, "wirespeed.bench/v1") {
		return nil, fmt.Errorf("%s: schema %q, want %s: %s", name, schema, Schema, want)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s is not a wirespeed bench result (%v): %s", name, err, want)
	}
	if !strings.HasPrefix(r.Schema, "wirespeed.bench/v1") {
		return nil, fmt.Errorf("%s: schema %q, want %s (a file from 'wirespeed bench --out')", name, r.Schema, Schema)
	}
	return &r, nil
}
