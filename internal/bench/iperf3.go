// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Directions of the load, from the local host's (the iperf3 client's) view.
const (
	DirSend    = "send"    // client -> server (iperf3 default)
	DirReceive = "receive" // server -> client (-R)
	DirBoth    = "both"    // both at once (--bidir, iperf3 3.7+)
)

// Iperf3Version is an iperf3 version, e.g. 3.12.
type Iperf3Version struct {
	Major, Minor int
	Text         string // "iperf 3.12 (cJSON 1.7.15)"
}

func (v Iperf3Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// AtLeast reports whether v >= major.minor.
func (v Iperf3Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// MultiThreaded reports whether -P runs one thread per stream (3.16+).
func (v Iperf3Version) MultiThreaded() bool { return v.AtLeast(3, 16) }

var versionRE = regexp.MustCompile(`iperf (\d+)\.(\d+)`)

// ParseIperf3Version parses the first line of `iperf3 --version`.
func ParseIperf3Version(s string) (Iperf3Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Iperf3Version{}, fmt.Errorf("cannot read the iperf3 version from %q", strings.TrimSpace(s))
	}
	maj, _ := strconv.Atoi(m[1])
	min, _ := strconv.Atoi(m[2])
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return Iperf3Version{Major: maj, Minor: min, Text: line}, nil
}

// ErrNoIperf3 is returned when iperf3 is not installed.
var ErrNoIperf3 = errors.New("iperf3 is not installed: apt-get install iperf3 (or your distribution's iperf3 package)")

// DetectIperf3 finds iperf3 and its version.
func DetectIperf3(ctx context.Context) (Iperf3Version, error) {
	path, err := exec.LookPath("iperf3")
	if err != nil {
		return Iperf3Version{}, ErrNoIperf3
	}
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil && len(out) == 0 {
		return Iperf3Version{}, fmt.Errorf("%s --version: %w", path, err)
	}
	return ParseIperf3Version(string(out))
}

// Iperf3Report is the part of iperf3's -J output wirespeed uses.
type Iperf3Report struct {
	Start struct {
		Version   string `json:"version"`
		Timestamp struct {
			TimeSecs int64 `json:"timesecs"`
		} `json:"timestamp"`
		ConnectingTo struct {
			Host string `json:"host"`
			Port int    `json:"port"`
		} `json:"connecting_to"`
		TestStart struct {
			Protocol      string  `json:"protocol"`
			NumStreams    int     `json:"num_streams"`
			Omit          float64 `json:"omit"`
			Duration      float64 `json:"duration"`
			Reverse       int     `json:"reverse"`
			TOS           int     `json:"tos"`
			TargetBitrate float64 `json:"target_bitrate"`
		} `json:"test_start"`
	} `json:"start"`
	RawIntervals []struct {
		Sum             *iperfSum `json:"sum"`
		SumBidirReverse *iperfSum `json:"sum_bidir_reverse"`
	} `json:"intervals"`
	End struct {
		Sum                     *iperfSum `json:"sum"`
		SumSent                 *iperfSum `json:"sum_sent"`
		SumReceived             *iperfSum `json:"sum_received"`
		SumBidirReverse         *iperfSum `json:"sum_bidir_reverse"`
		SumSentBidirReverse     *iperfSum `json:"sum_sent_bidir_reverse"`
		SumReceivedBidirReverse *iperfSum `json:"sum_received_bidir_reverse"`
		CPU                     *struct {
			HostTotal   float64 `json:"host_total"`
			RemoteTotal float64 `json:"remote_total"`
		} `json:"cpu_utilization_percent"`
		SenderCongestion   string `json:"sender_tcp_congestion"`
		ReceiverCongestion string `json:"receiver_tcp_congestion"`
	} `json:"end"`
	Error string `json:"error"`
}

type iperfSum struct {
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Seconds       float64  `json:"seconds"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	Omitted       bool     `json:"omitted"`
	Sender        bool     `json:"sender"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *int64   `json:"lost_packets"`
	Packets       *int64   `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
}

// ParseIperf3 decodes iperf3 -J output. A report with an "error" and no
// intervals is returned together with an error naming it.
func ParseIperf3(b []byte) (*Iperf3Report, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("iperf3 printed no JSON")
	}
	var r Iperf3Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("iperf3 JSON: %w", err)
	}
	if r.Error != "" && len(r.RawIntervals) == 0 {
		return &r, fmt.Errorf("iperf3: %s", r.Error)
	}
	return &r, nil
}

// Bidir reports whether the run was --bidir.
func (r *Iperf3Report) Bidir() bool {
	return r.End.SumSentBidirReverse != nil || (len(r.RawIntervals) > 0 && r.RawIntervals[0].SumBidirReverse != nil)
}

// Direction is "send", "receive" or "both".
func (r *Iperf3Report) Direction() string {
	switch {
	case r.Bidir():
		return DirBoth
	case r.Start.TestStart.Reverse != 0:
		return DirReceive
	}
	return DirSend
}

// Interval is one reporting interval, per direction (send/receive), in Mbit/s.
// iperf3 restarts its clock when the omitted seconds end, so Start and End
// of the measured intervals count from there; LoadStart and LoadEnd count
// from the load start (the clock of the samples and probes).
type Interval struct {
	Start     float64            `json:"start"`
	End       float64            `json:"end"`
	LoadStart float64            `json:"load_start"`
	LoadEnd   float64            `json:"load_end"`
	Omitted   bool               `json:"omitted,omitempty"`
	Mbit      map[string]float64 `json:"mbit"`
	Retrans   map[string]int64   `json:"retransmits,omitempty"`
	// SoftirqPct is each CPU's softirq share in this interval, from the
	// samples nearest its ends (filled by the bench, not by iperf3).
	SoftirqPct []float64 `json:"cpu_softirq_pct,omitempty"`
}

// DirSummary is one direction's end result.
type DirSummary struct {
	Mbit        float64  `json:"mbit"`                   // as received (goodput)
	SentMbit    float64  `json:"sent_mbit"`              // as sent
	Bytes       float64  `json:"bytes"`                  // received
	Retransmits *int64   `json:"retransmits,omitempty"`  // TCP
	LostPercent *float64 `json:"lost_percent,omitempty"` // UDP
	JitterMs    *float64 `json:"jitter_ms,omitempty"`    // UDP
	Source      string   `json:"source"`                 // "end" or "intervals" (interrupted run)
}

// Summaries returns each direction's totals. When iperf3 was interrupted its
// end sums are zero; then the non-omitted intervals are averaged instead.
func (r *Iperf3Report) Summaries() map[string]DirSummary {
	out := map[string]DirSummary{}
	add := func(dir string, sent, recv *iperfSum, ivDir string) {
		var s DirSummary
		if sent != nil {
			s.SentMbit = sent.BitsPerSecond / 1e6
			s.Retransmits = sent.Retransmits
		}
		if recv != nil {
			s.Mbit = recv.BitsPerSecond / 1e6
			s.Bytes = recv.Bytes
			s.LostPercent = recv.LostPercent
			s.JitterMs = recv.JitterMs
		}
		s.Source = "end"
		if s.Mbit == 0 {
			// Interrupted: the server's counts never arrived.
			var bits, secs float64
			for _, iv := range r.Intervals() {
				if iv.Omitted {
					continue
				}
				bits += iv.Mbit[ivDir] * (iv.End - iv.Start)
				secs += iv.End - iv.Start
			}
			if secs > 0 {
				s.Mbit = bits / secs
				s.Bytes = bits * 1e6 / 8
				s.Source = "intervals"
			}
		}
		out[dir] = s
	}
	e := r.End
	switch r.Direction() {
	case DirBoth:
		add(DirSend, e.SumSent, e.SumReceived, DirSend)
		add(DirReceive, e.SumSentBidirReverse, e.SumReceivedBidirReverse, DirReceive)
	case DirReceive:
		add(DirReceive, e.SumSent, e.SumReceived, DirReceive)
	default:
		add(DirSend, e.SumSent, e.SumReceived, DirSend)
	}
	return out
}

// Intervals returns the per-interval throughput per direction. iperf3 3.12
// reports a sliver of an interval (about 1 ms) when the omitted period
// ends; intervals shorter than 0.1 s are dropped.
func (r *Iperf3Report) Intervals() []Interval {
	dir := r.Direction()
	omit := r.Start.TestStart.Omit
	var out []Interval
	for _, iv := range r.RawIntervals {
		if iv.Sum == nil || iv.Sum.End-iv.Sum.Start < 0.1 {
			continue
		}
		o := Interval{Start: iv.Sum.Start, End: iv.Sum.End, LoadStart: iv.Sum.Start, LoadEnd: iv.Sum.End,
			Omitted: iv.Sum.Omitted, Mbit: map[string]float64{}}
		if !o.Omitted {
			o.LoadStart += omit
			o.LoadEnd += omit
		}
		put := func(d string, s *iperfSum) {
			o.Mbit[d] = s.BitsPerSecond / 1e6
			if s.Retransmits != nil {
				if o.Retrans == nil {
					o.Retrans = map[string]int64{}
				}
				o.Retrans[d] = *s.Retransmits
			}
		}
		switch dir {
		case DirBoth:
			put(DirSend, iv.Sum)
			if iv.SumBidirReverse != nil {
				put(DirReceive, iv.SumBidirReverse)
			}
		case DirReceive:
			put(DirReceive, iv.Sum)
		default:
			put(DirSend, iv.Sum)
		}
		out = append(out, o)
	}
	return out
}

// MergeIntervals puts the intervals of one or more parallel iperf3
// processes on one grid of step seconds on the load clock (cell k covers
// [k*step, (k+1)*step), the same grid the sampler uses), spreading each
// interval's bits and retransmits over the cells it overlaps. Parallel
// processes start a few milliseconds apart and iperf3 3.12's intervals
// around the omitted period are irregular, so adding them index by index
// would mix different times. Cells that end by omit are marked omitted.
func MergeIntervals(sets [][]Interval, step, omit float64) []Interval {
	if step <= 0 {
		step = 0.5
	}
	var out []Interval
	cell := func(k int) *Interval {
		for len(out) <= k {
			n := len(out)
			c := Interval{Start: float64(n) * step, End: float64(n+1) * step, Mbit: map[string]float64{}}
			c.LoadStart, c.LoadEnd = c.Start, c.End
			c.Omitted = c.End <= omit+1e-9
			out = append(out, c)
		}
		return &out[k]
	}
	retr := map[int]map[string]float64{}
	cover := map[int]float64{} // seconds of intervals (of the first process) in each cell
	for si, set := range sets {
		for _, iv := range set {
			dur := iv.LoadEnd - iv.LoadStart
			if dur <= 0 {
				continue
			}
			for k := int(math.Floor(iv.LoadStart/step + 1e-9)); float64(k)*step < iv.LoadEnd-1e-9; k++ {
				if k < 0 {
					continue
				}
				lo := math.Max(iv.LoadStart, float64(k)*step)
				hi := math.Min(iv.LoadEnd, float64(k+1)*step)
				if hi <= lo {
					continue
				}
				share := (hi - lo) / dur
				if si == 0 {
					cover[k] += hi - lo
				}
				c := cell(k)
				for d, mbit := range iv.Mbit {
					// mbit*dur megabits in the interval; share of them in this cell.
					c.Mbit[d] += mbit * dur * share / step
				}
				for d, n := range iv.Retrans {
					if retr[k] == nil {
						retr[k] = map[string]float64{}
					}
					retr[k][d] += float64(n) * share
				}
			}
		}
	}
	// The run ends a few ms after the last full cell: fold such a sliver
	// into the cell before it instead of reporting a cell of almost nothing.
	if n := len(out); n >= 2 && cover[n-1] < 0.2*step {
		last := out[n-1]
		for d, v := range last.Mbit {
			out[n-2].Mbit[d] += v
		}
		if r := retr[n-1]; r != nil {
			if retr[n-2] == nil {
				retr[n-2] = map[string]float64{}
			}
			for d, v := range r {
				retr[n-2][d] += v
			}
			delete(retr, n-1)
		}
		out = out[:n-1]
	}
	for k, m := range retr {
		if k < len(out) {
			out[k].Retrans = map[string]int64{}
			for d, v := range m {
				out[k].Retrans[d] = int64(math.Round(v))
			}
		}
	}
	return out
}

// MergeSummaries adds the per-direction summaries of parallel processes.
// Jitter is averaged, loss weighted by bytes.
func MergeSummaries(sets []map[string]DirSummary) map[string]DirSummary {
	out := map[string]DirSummary{}
	n := map[string]int{}
	for _, set := range sets {
		for d, s := range set {
			o := out[d]
			o.Mbit += s.Mbit
			o.SentMbit += s.SentMbit
			if s.Retransmits != nil {
				v := *s.Retransmits
				if o.Retransmits != nil {
					v += *o.Retransmits
				}
				o.Retransmits = &v
			}
			if s.LostPercent != nil {
				v := *s.LostPercent * s.Bytes
				if o.LostPercent != nil {
					v += *o.LostPercent * o.Bytes
				}
				if tot := o.Bytes + s.Bytes; tot > 0 {
					v /= tot
				}
				o.LostPercent = &v
			}
			if s.JitterMs != nil {
				v := *s.JitterMs
				if o.JitterMs != nil {
					v += *o.JitterMs
				}
				o.JitterMs = &v
			}
			o.Bytes += s.Bytes
			if o.Source == "" || s.Source == "intervals" {
				o.Source = s.Source
			}
			out[d] = o
			n[d]++
		}
	}
	for d, o := range out {
		if o.JitterMs != nil && n[d] > 1 {
			v := *o.JitterMs / float64(n[d])
			o.JitterMs = &v
			out[d] = o
		}
	}
	return out
}

// ClientArgs builds the iperf3 client command line for one process.
type ClientArgs struct {
	Host      string
	Port      int
	Streams   int
	Duration  float64 // seconds
	Omit      float64 // seconds
	Interval  float64 // seconds
	Direction string
	UDP       bool
	RateMbit  float64 // per process, 0 = unlimited (TCP) / iperf3 default (UDP: 1 Mbit/s)
	Pin       *int
	Bind      string
	TOS       int
}

// Argv returns the iperf3 arguments.
func (a ClientArgs) Argv() []string {
	argv := []string{"iperf3", "-c", a.Host, "-p", strconv.Itoa(a.Port), "-J",
		"-t", fmtSec(a.Duration), "-i", fmtSec(a.Interval), "-P", strconv.Itoa(a.Streams),
		"--connect-timeout", "3000"}
	if a.Omit > 0 {
		argv = append(argv, "-O", fmtSec(a.Omit))
	}
	switch a.Direction {
	case DirReceive:
		argv = append(argv, "-R")
	case DirBoth:
		argv = append(argv, "--bidir")
	}
	if a.UDP {
		argv = append(argv, "-u")
	}
	if a.RateMbit > 0 || a.UDP {
		rate := a.RateMbit
		if rate == 0 {
			rate = 1000
		}
		// -b is per stream.
		argv = append(argv, "-b", fmt.Sprintf("%dK", int(rate*1000/float64(max(a.Streams, 1)))))
	}
	if a.Pin != nil {
		argv = append(argv, "-A", strconv.Itoa(*a.Pin))
	}
	if a.Bind != "" {
		argv = append(argv, "-B", a.Bind)
	}
	if a.TOS != 0 {
		argv = append(argv, "-S", strconv.Itoa(a.TOS))
	}
	return argv
}

func fmtSec(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

// SplitStreams distributes streams over procs processes.
func SplitStreams(streams, procs int) []int {
	if procs < 1 {
		procs = 1
	}
	if procs > streams {
		procs = streams
	}
	out := make([]int, procs)
	for i := 0; i < streams; i++ {
		out[i%procs]++
	}
	return out
}
