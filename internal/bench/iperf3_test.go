// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

func load(t *testing.T, name string) *Iperf3Report {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseIperf3(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// The fixtures are real iperf3 3.12 -J output captured on this project's
// lab (veth between two namespaces), see testdata/README.
func TestParseIperf3Directions(t *testing.T) {
	for _, c := range []struct {
		file, dir     string
		send, receive float64 // Mbit/s from the receiver's end sums; 0 = absent
		retrans       int64   // of the send (or only) direction; -1 = UDP
		intervals     int
		omitted       int
	}{
		{"iperf3-3.12-tcp.json", DirSend, 29894.230138, 0, 70474, 4, 1},
		{"iperf3-3.12-tcp-reverse.json", DirReceive, 0, 30453.855458, 75011, 4, 0},
		{"iperf3-3.12-tcp-bidir.json", DirBoth, 3265.875353, 22156.685486, 2080, 4, 0},
		{"iperf3-3.12-udp.json", DirSend, 199.917449, 0, -1, 4, 0},
		{"iperf3-3.12-udp-bidir.json", DirBoth, 99.785906, 99.797470, -1, 4, 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := load(t, c.file)
			if got := r.Direction(); got != c.dir {
				t.Fatalf("direction = %s, want %s", got, c.dir)
			}
			s := r.Summaries()
			for d, want := range map[string]float64{DirSend: c.send, DirReceive: c.receive} {
				got, ok := s[d]
				if want == 0 {
					if ok {
						t.Errorf("%s: unexpected summary %+v", d, got)
					}
					continue
				}
				if !ok || !approx(got.Mbit, want) || got.Source != "end" {
					t.Errorf("%s: %+v, want %.6f Mbit/s from end", d, got, want)
				}
			}
			first := s[c.dir]
			if c.dir == DirBoth {
				first = s[DirSend]
			}
			if c.retrans >= 0 {
				if first.Retransmits == nil || *first.Retransmits != c.retrans {
					t.Errorf("retransmits = %v, want %d", first.Retransmits, c.retrans)
				}
			} else if first.LostPercent == nil || first.JitterMs == nil {
				t.Errorf("UDP: no loss/jitter in %+v", first)
			}
			ivs := r.Intervals()
			if len(ivs) != c.intervals {
				t.Fatalf("%d intervals, want %d", len(ivs), c.intervals)
			}
			om := 0
			for _, iv := range ivs {
				if iv.Omitted {
					om++
				}
				for d := range map[string]float64{DirSend: c.send, DirReceive: c.receive} {
					want := map[string]float64{DirSend: c.send, DirReceive: c.receive}[d]
					if want > 0 && !(iv.Mbit[d] > 0) {
						t.Errorf("interval %g-%g: %s = %g, want > 0", iv.Start, iv.End, d, iv.Mbit[d])
					}
					if want == 0 && iv.Mbit[d] != 0 {
						t.Errorf("interval %g-%g: %s = %g, want none", iv.Start, iv.End, d, iv.Mbit[d])
					}
				}
				if math.Abs(iv.End-iv.Start-0.5) > 0.05 {
					t.Errorf("interval %g-%g is not 0.5 s", iv.Start, iv.End)
				}
			}
			if last := ivs[len(ivs)-1]; !approx(last.LoadEnd, r.Start.TestStart.Duration+r.Start.TestStart.Omit) && !approx(last.LoadEnd-last.End, r.Start.TestStart.Omit) {
				t.Errorf("last interval ends at %g on the load clock", last.LoadEnd)
			}
			if om != c.omitted {
				t.Errorf("%d omitted intervals, want %d", om, c.omitted)
			}
		})
	}
}

func TestParseIperf3Interrupted(t *testing.T) {
	r := load(t, "iperf3-3.12-interrupted.json")
	if !strings.Contains(r.Error, "interrupt") {
		t.Errorf("error = %q", r.Error)
	}
	s := r.Summaries()[DirSend]
	// The end sums of an interrupted run are zero: the intervals stand in.
	var want float64
	for _, iv := range r.Intervals() {
		want += iv.Mbit[DirSend] * (iv.End - iv.Start)
	}
	want /= r.Intervals()[len(r.Intervals())-1].End
	if s.Source != "intervals" || !approx(s.Mbit, want) || s.Mbit < 1000 {
		t.Errorf("interrupted summary = %+v, want %.1f Mbit/s from intervals", s, want)
	}
}

func TestParseIperf3Errors(t *testing.T) {
	b, _ := os.ReadFile("testdata/iperf3-3.12-refused.json")
	_, err := ParseIperf3(b)
	if err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("refused: err = %v", err)
	}
	for _, bad := range []string{"", "iperf3: error - unable to connect", `{"start": 5}`} {
		if _, err := ParseIperf3([]byte(bad)); err == nil {
			t.Errorf("ParseIperf3(%q): no error", bad)
		}
	}
}

func TestIperf3Version(t *testing.T) {
	v, err := ParseIperf3Version("iperf 3.12 (cJSON 1.7.15)\nLinux vm 6.18 x86_64\n")
	if err != nil || v.Major != 3 || v.Minor != 12 || v.MultiThreaded() {
		t.Errorf("3.12: %+v %v", v, err)
	}
	v, _ = ParseIperf3Version("iperf 3.16 (cJSON 1.7.15)")
	if !v.MultiThreaded() {
		t.Error("3.16 is multithreaded")
	}
	v, _ = ParseIperf3Version("iperf 4.0")
	if !v.MultiThreaded() {
		t.Error("4.0 is multithreaded")
	}
	if _, err := ParseIperf3Version("command not found"); err == nil {
		t.Error("no error for garbage")
	}
}

func TestClientArgsAndSplit(t *testing.T) {
	pin := 1
	got := ClientArgs{Host: "198.18.0.2", Port: 5202, Streams: 2, Duration: 10, Omit: 1.5, Interval: 0.5,
		Direction: DirBoth, UDP: true, RateMbit: 100, Pin: &pin, TOS: 0xb8}.Argv()
	want := []string{"iperf3", "-c", "198.18.0.2", "-p", "5202", "-J", "-t", "10", "-i", "0.5", "-P", "2",
		"--connect-timeout", "3000", "-O", "1.5", "--bidir", "-u", "-b", "50000K", "-A", "1", "-S", "184"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("argv\n got %q\nwant %q", got, want)
	}
	rev := ClientArgs{Host: "h", Port: 1, Streams: 1, Duration: 1, Interval: 0.5, Direction: DirReceive}.Argv()
	if strings.Join(rev, " ") != "iperf3 -c h -p 1 -J -t 1 -i 0.5 -P 1 --connect-timeout 3000 -R" {
		t.Errorf("reverse argv = %q", rev)
	}
	if got := SplitStreams(10, 4); !reflect.DeepEqual(got, []int{3, 3, 2, 2}) {
		t.Errorf("SplitStreams(10,4) = %v", got)
	}
	if got := SplitStreams(2, 8); !reflect.DeepEqual(got, []int{1, 1}) {
		t.Errorf("SplitStreams(2,8) = %v", got)
	}
}

func TestMerge(t *testing.T) {
	a := load(t, "iperf3-3.12-tcp-bidir.json")
	b := load(t, "iperf3-3.12-tcp-reverse.json")
	m := MergeIntervals([][]Interval{a.Intervals(), b.Intervals()}, 0.5, 0)
	if len(m) != 4 {
		t.Fatalf("%d merged intervals", len(m))
	}
	// Both captures report ~0.5 s intervals from 0: the grid cells hold
	// about the sum of the two, and the bits over the whole run are kept.
	var gotBits, wantBits float64
	for i := range m {
		want := a.Intervals()[i].Mbit[DirReceive] + b.Intervals()[i].Mbit[DirReceive]
		if math.Abs(m[i].Mbit[DirReceive]-want) > 0.02*want {
			t.Errorf("cell %d receive = %g, want about %g", i, m[i].Mbit[DirReceive], want)
		}
		gotBits += m[i].Mbit[DirReceive] * 0.5
	}
	for _, r := range []*Iperf3Report{a, b} {
		for _, iv := range r.Intervals() {
			wantBits += iv.Mbit[DirReceive] * (iv.LoadEnd - iv.LoadStart)
		}
	}
	if !approx(gotBits, wantBits) {
		t.Errorf("merged %g Mbit, the intervals hold %g", gotBits, wantBits)
	}
	// An interval straddling two cells is split by overlap; omit marks cells.
	g := MergeIntervals([][]Interval{{{LoadStart: 0.25, LoadEnd: 1.25, Mbit: map[string]float64{DirSend: 100}, Retrans: map[string]int64{DirSend: 4}}}}, 0.5, 0.5)
	if len(g) != 3 || g[0].Mbit[DirSend] != 50 || g[1].Mbit[DirSend] != 100 || g[2].Mbit[DirSend] != 50 {
		t.Errorf("split = %+v", g)
	}
	if !g[0].Omitted || g[1].Omitted || g[1].Retrans[DirSend] != 2 {
		t.Errorf("omitted/retransmits = %+v", g)
	}
	s := MergeSummaries([]map[string]DirSummary{a.Summaries(), b.Summaries()})
	if !approx(s[DirReceive].Mbit, 22156.685486+30453.855458) || !approx(s[DirSend].Mbit, 3265.875353) {
		t.Errorf("merged = %+v", s)
	}
	if *s[DirReceive].Retransmits != 75370+75011 {
		t.Errorf("merged retransmits = %d", *s[DirReceive].Retransmits)
	}
}
