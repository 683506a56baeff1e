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
	var name, dirWord, param string
	switch r.Settings.Direction {
	case bench.DirSend, "":
		name, dirWord, param = "tcp_nup", "upload", "upload_streams"
	case bench.DirReceive:
		name, dirWord, param = "tcp_ndown", "download", "download_streams"
	default:
		return nil, nil, fmt.Errorf("direction %q: flent's tcp_nup/tcp_ndown layouts take one direction; export a bench run with --direction send or receive", r.Settings.Direction)
	}
	if strings.EqualFold(r.Settings.Protocol, "udp") {
		return nil, nil, fmt.Errorf("a UDP load: flent's TCP test layouts would mislabel it")
	}
	if len(run.Intervals) == 0 {
		return nil, nil, fmt.Errorf("run %s #%d has no throughput intervals to export", run.Variant, run.Rep)
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
	series := map[string][]flentRawV{}
	prefix := "TCP " + dirWord + "::"
	streams := perStream(run)
	if len(streams) == 0 {
		// No iperf3 output kept: the merged intervals as one stream.
		var sp []span
		for _, iv := range run.Intervals {
			var sum float64
			for _, v := range iv.Mbit {
				sum += v
			}
			sp = append(sp, span{From: iv.LoadStart, To: iv.LoadEnd, Val: sum})
		}
		streams = [][]span{sp}
	}
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
	var pingNote string
	for _, pr := range run.Probes {
		if pr.Kind != "icmp" {
			continue
		}
		var pts []flentRawV
		for _, rt := range pr.RTTs {
			if !rt.Lost && rt.Ms > 0 {
				pts = append(pts, flentRawV{T: abs(rt.T), Val: rt.Ms})
			}
		}
		series["Ping (ms) ICMP"] = pts
	}
	if _, ok := series["Ping (ms) ICMP"]; !ok {
		pingNote = "no ICMP probe in this run"
	}
	total := delay + end
	nx := int(math.Round(total/step)) + 1
	xs := make([]float64, nx)
	for i := range xs {
		xs[i] = math.Round(float64(i)*step*1e6) / 1e6
	}
	t0s := float64(t0.UnixNano()) / 1e9
	results := map[string][]*float64{}
	for k, sp := range held {
		results[k] = holdOnGrid(xs, sp, delay)
	}
	if pts, ok := series["Ping (ms) ICMP"]; ok {
		results["Ping (ms) ICMP"] = pingOnGrid(xs, pts, t0s, step)
	}
	// The per-stream sum and average, as flent's own runners compute them.
	sum := make([]*float64, nx)
	avg := make([]*float64, nx)
	for i := range xs {
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
	results["TCP "+dirWord+" sum"] = sum
	results["TCP "+dirWord+" avg"] = avg
	host := r.Settings.Peer
	if host == "" {
		host = "wirespeed-lab"
	}
	title := fmt.Sprintf("wirespeed %s #%d", run.Variant, run.Rep)
	meta := map[string]any{
		"NAME":            name,
		"TITLE":           title,
		"NOTE":            strings.TrimSpace("exported by wirespeed report --flent from a wirespeed bench result; " + pingNote),
		"TIME":            flentTime(t0),
		"T0":              flentTime(t0),
		"HOST":            host,
		"HOSTS":           []string{host},
		"LOCAL_HOST":      r.Host.Hostname,
		"LENGTH":          r.Settings.DurationS + r.Settings.OmitS,
		"TOTAL_LENGTH":    total,
		"DELAY":           delay,
		"STEP_SIZE":       step,
		"IP_VERSION":      4,
		"TEST_PARAMETERS": map[string]string{param: fmt.Sprint(len(streams))},
		"FLENT_VERSION":   "wirespeed-export",
		"KERNEL_RELEASE":  r.Host.Kernel,
		"SERIES_META":     map[string]any{},
	}
	f := flentFile{Metadata: meta, Version: FlentFormatVersion, XValues: xs, Results: results, RawValues: series}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(f); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), run, nil
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
