// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// FlentFormatVersion is the data file version flent 2.x reads and writes
// (resultset.py FILEFORMAT_VERSION).
const FlentFormatVersion = 4

// flentFile is flent's data file: metadata, a common x axis (seconds from
// the start of the test), one list per series aligned with it (null where
// the series has no value), and each series' raw points with absolute
// UNIX times.
type flentFile struct {
	Metadata  map[string]any         `json:"metadata"`
	Version   int                    `json:"version"`
	XValues   []float64              `json:"x_values"`
	Results   map[string][]*float64  `json:"results"`
	RawValues map[string][]flentRawV `json:"raw_values"`
}

type flentRawV struct {
	T   float64 `json:"t"`
	Val float64 `json:"val"`
}

// flentTime is how flent writes times (resultset.py, util.format_date with
// utc=True).
func flentTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// Flent exports one run of r as a gzip'd flent data file laid out as
// flent's own tcp_nup (load sent by the client) or tcp_ndown (received)
// test, so flent's plots for those tests apply: per-stream throughput
// "TCP upload::N" (from the iperf3 -J output kept in the result), their
// "TCP upload sum" and "avg", and "Ping (ms) ICMP" from the ICMP probe.
// The x axis starts with the probe's idle phase (flent's DELAY) so the
// load begins at x = idle seconds. variant "" is the first; rep 0 the first.
func Flent(r *bench.Result, variant string, rep int) ([]byte, *bench.Run, error) {
	run, err := pickRun(r, variant, rep)
	if err != nil {
		return nil, nil, err
	}
	lay, err := flentLayoutOf(r, run)
	if err != nil {
		return nil, nil, err
	}
	delay := r.Settings.IdleS
	step := r.Settings.ProbeInterval / 1000
	if step <= 0 {
		step = 0.1
	}
	// t0 is the start of the flent test: the idle phase before the load.
	t0 := run.Started
	if t0.IsZero() {
		t0 = r.Started
	}
	loadStart := t0.Add(time.Duration(delay * float64(time.Second)))
	abs := func(loadClock float64) float64 {
		return float64(loadStart.UnixNano())/1e9 + loadClock
	}
	streams := loadStreams(run)
	series, held, end := streamSeries(streams, lay.prefix(), abs)
	pingNote := ""
	if pts, ok := icmpSeries(run, abs); ok {
		series[flentPing] = pts
	} else {
		pingNote = "no ICMP probe in this run"
	}
	total := delay + end
	nx := int(math.Round(total/step)) + 1
	xs := make([]float64, nx)
	for i := range xs {
		xs[i] = math.Round(float64(i)*step*1e6) / 1e6
	}
	results := map[string][]*float64{}
	for k, sp := range held {
		results[k] = holdOnGrid(xs, sp, delay)
	}
	if pts, ok := series[flentPing]; ok {
		results[flentPing] = pingOnGrid(xs, pts, float64(t0.UnixNano())/1e9, step)
	}
	// The per-stream sum and average, as flent's own runners compute them.
	results["TCP "+lay.dirWord+" sum"], results["TCP "+lay.dirWord+" avg"] = sumAvg(results, lay.prefix(), nx)
	meta := flentMeta(r, run, lay, len(streams), pingNote)
	meta["TIME"], meta["T0"] = flentTime(t0), flentTime(t0)
	meta["TOTAL_LENGTH"], meta["DELAY"], meta["STEP_SIZE"] = total, delay, step
	b, err := gzipJSON(flentFile{Metadata: meta, Version: FlentFormatVersion, XValues: xs, Results: results, RawValues: series})
	if err != nil {
		return nil, nil, err
	}
	return b, run, nil
}

// flentPing is the series flent's tests name the ICMP ping.
const flentPing = "Ping (ms) ICMP"

// flentLayout is the flent test a run is laid out as: tcp_nup for load
// the client sent, tcp_ndown for load it received.
type flentLayout struct{ name, dirWord, param string }

// prefix begins the per-stream series' names ("TCP upload::1").
func (l flentLayout) prefix() string { return "TCP " + l.dirWord + "::" }

// flentLayoutOf picks the layout for run, or says why flent's TCP layouts
// do not fit it (both directions, a UDP load, no intervals).
func flentLayoutOf(r *bench.Result, run *bench.Run) (flentLayout, error) {
	var l flentLayout
	switch r.Settings.Direction {
	case bench.DirSend, "":
		l = flentLayout{"tcp_nup", "upload", "upload_streams"}
	case bench.DirReceive:
		l = flentLayout{"tcp_ndown", "download", "download_streams"}
	default:
		return l, fmt.Errorf("direction %q: flent's tcp_nup/tcp_ndown layouts take one direction; export a bench run with --direction send or receive", r.Settings.Direction)
	}
	if strings.EqualFold(r.Settings.Protocol, "udp") {
		return l, fmt.Errorf("a UDP load: flent's TCP test layouts would mislabel it")
	}
	if len(run.Intervals) == 0 {
		return l, fmt.Errorf("run %s #%d has no throughput intervals to export", run.Variant, run.Rep)
	}
	return l, nil
}

// loadStreams is each stream's throughput from the kept iperf3 output,
// or, when none was kept, the merged intervals as one stream.
func loadStreams(run *bench.Run) [][]span {
	if streams := perStream(run); len(streams) > 0 {
		return streams
	}
	var sp []span
	for _, iv := range run.Intervals {
		var sum float64
		for _, v := range iv.Mbit {
			sum += v
		}
		sp = append(sp, span{From: iv.LoadStart, To: iv.LoadEnd, Val: sum})
	}
	return [][]span{sp}
}

// streamSeries names the streams prefix1, prefix2, ... and returns their
// raw values at absolute times (abs of the load clock), their spans by
// name, and where the last one ends on the load clock.
func streamSeries(streams [][]span, prefix string, abs func(float64) float64) (map[string][]flentRawV, map[string][]span, float64) {
	series := map[string][]flentRawV{}
	held := map[string][]span{}
	end := 0.0
	for i, sp := range streams {
		name := fmt.Sprintf("%s%d", prefix, i+1)
		held[name] = sp
		out := make([]flentRawV, len(sp))
		for j, p := range sp {
			out[j] = flentRawV{T: abs(p.To), Val: p.Val}
			end = math.Max(end, p.To)
		}
		series[name] = out
	}
	return series, held, end
}

// icmpSeries is the answered replies of the run's (last) ICMP probe at
// absolute times; false when the run had no ICMP probe.
func icmpSeries(run *bench.Run, abs func(float64) float64) ([]flentRawV, bool) {
	var pts []flentRawV
	found := false
	for _, pr := range run.Probes {
		if pr.Kind != "icmp" {
			continue
		}
		found, pts = true, nil
		for _, rt := range pr.RTTs {
			if !rt.Lost && rt.Ms > 0 {
				pts = append(pts, flentRawV{T: abs(rt.T), Val: rt.Ms})
			}
		}
	}
	return pts, found
}

// sumAvg is the sum and average over the series named prefix... at each
// of the nx grid points that have a value (nil where none has).
func sumAvg(results map[string][]*float64, prefix string, nx int) (sum, avg []*float64) {
	sum, avg = make([]*float64, nx), make([]*float64, nx)
	for i := range nx {
		var s float64
		n := 0
		for k, v := range results {
			if strings.HasPrefix(k, prefix) && v[i] != nil {
				s += *v[i]
				n++
			}
		}
		if n > 0 {
			a, b := s, s/float64(n)
			sum[i], avg[i] = &a, &b
		}
	}
	return sum, avg
}

// flentMeta is the file's metadata but for its times (TIME, T0,
// TOTAL_LENGTH, DELAY, STEP_SIZE), which Flent adds.
func flentMeta(r *bench.Result, run *bench.Run, lay flentLayout, streams int, pingNote string) map[string]any {
	host := r.Settings.Peer
	if host == "" {
		host = "wirespeed-lab"
	}
	return map[string]any{
		"NAME":            lay.name,
		"TITLE":           fmt.Sprintf("wirespeed %s #%d", run.Variant, run.Rep),
		"NOTE":            strings.TrimSpace("exported by wirespeed report --flent from a wirespeed bench result; " + pingNote),
		"HOST":            host,
		"HOSTS":           []string{host},
		"LOCAL_HOST":      r.Host.Hostname,
		"LENGTH":          r.Settings.DurationS + r.Settings.OmitS,
		"IP_VERSION":      4,
		"TEST_PARAMETERS": map[string]string{lay.param: fmt.Sprint(streams)},
		"FLENT_VERSION":   "wirespeed-export",
		"KERNEL_RELEASE":  r.Host.Kernel,
		"SERIES_META":     map[string]any{},
	}
}

// gzipJSON is v as JSON, gzip'd.
func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func pickRun(r *bench.Result, variant string, rep int) (*bench.Run, error) {
	if variant == "" {
		names := variantNames(r)
		if len(names) == 0 {
			return nil, fmt.Errorf("the result has no runs")
		}
		variant = names[0]
	}
	var reps []string
	var found *bench.Run
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Variant != variant {
			continue
		}
		reps = append(reps, fmt.Sprint(run.Rep))
		if found == nil && (rep == 0 || run.Rep == rep) {
			found = run
		}
	}
	if len(reps) == 0 {
		return nil, fmt.Errorf("no runs of variant %q (variants: %s)", variant, strings.Join(variantNames(r), ", "))
	}
	if found == nil {
		return nil, fmt.Errorf("--rep %d: variant %q has no such repetition (it has %s): give one of those", rep, variant, strings.Join(reps, ", "))
	}
	return found, nil
}

// span is a value held over (From, To] on the load clock.
type span struct{ From, To, Val float64 }

// perStream extracts each iperf3 stream's Mbit/s per interval from the
// iperf3 -J output kept in the run, on the load clock: iperf3 restarts its
// clock when the omitted seconds end, so non-omitted intervals move by the
// omit time (as bench does for the merged intervals). Streams of all client
// processes are numbered in order.
func perStream(run *bench.Run) [][]span {
	var out [][]span
	for _, raw := range run.Iperf3Raw {
		var j struct {
			Start struct {
				TestStart struct {
					Omit float64 `json:"omit"`
				} `json:"test_start"`
			} `json:"start"`
			Intervals []struct {
				Streams []struct {
					Socket  int     `json:"socket"`
					Start   float64 `json:"start"`
					End     float64 `json:"end"`
					BPS     float64 `json:"bits_per_second"`
					Omitted bool    `json:"omitted"`
				} `json:"streams"`
			} `json:"intervals"`
		}
		if json.Unmarshal(raw, &j) != nil {
			continue
		}
		bySocket := map[int][]span{}
		var sockets []int
		for _, iv := range j.Intervals {
			for _, s := range iv.Streams {
				if s.End-s.Start < 0.1 {
					continue // iperf3's sliver at the end of the omitted period
				}
				shift := 0.0
				if !s.Omitted {
					shift = j.Start.TestStart.Omit
				}
				if _, ok := bySocket[s.Socket]; !ok {
					sockets = append(sockets, s.Socket)
				}
				bySocket[s.Socket] = append(bySocket[s.Socket], span{From: s.Start + shift, To: s.End + shift, Val: s.BPS / 1e6})
			}
		}
		sort.Ints(sockets)
		for _, s := range sockets {
			out = append(out, bySocket[s])
		}
	}
	return out
}

// holdOnGrid puts spans on the x grid (x = delay + load clock): each
// grid point gets the value of the span that covers it.
func holdOnGrid(xs []float64, spans []span, delay float64) []*float64 {
	out := make([]*float64, len(xs))
	for _, sp := range spans {
		for i, x := range xs {
			if x > delay+sp.From+1e-9 && x <= delay+sp.To+1e-9 {
				v := sp.Val
				out[i] = &v
			}
		}
	}
	return out
}

// pingOnGrid puts each reply (seconds from t0) on its nearest grid point.
func pingOnGrid(xs []float64, pts []flentRawV, t0, step float64) []*float64 {
	out := make([]*float64, len(xs))
	for _, p := range pts {
		i := int(math.Round((p.T - t0) / step))
		if i >= 0 && i < len(out) {
			v := p.Val
			out[i] = &v
		}
	}
	return out
}
