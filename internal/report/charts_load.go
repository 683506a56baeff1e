// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// The load's charts: throughput per interval, probe RTT CDFs idle vs loaded.

// throughputSection: Mbit/s per iperf3 interval, one line per run.
func throughputSection(in []Input, pal palette) Section {
	sec := Section{ID: "throughput", Title: "Throughput over time",
		Intro: "Received Mbit/s per iperf3 interval (all directions added), one line per run; colour = variant, dash = repetition. With many runs, each run is a thin pale line and each variant's median per interval a thick one. Time is on the load clock (0 = load start); the first seconds are iperf3's omitted warm-up."}
	for fi, x := range in {
		p := newPlot(x.Name, "seconds since load start", "Mbit/s")
		var leg legend
		n, runs := 0, 0
		for _, s := range pal {
			if s.file == fi {
				runs += len(s.runs())
			}
		}
		many := runs > ManyRuns
		for _, s := range pal {
			if s.file != fi {
				continue
			}
			byX := map[float64][]float64{}
			for k, run := range s.runs() {
				var xy plotter.XYs
				for _, iv := range run.Intervals {
					var sum float64
					for _, v := range iv.Mbit {
						sum += v
					}
					xy = append(xy, plotter.XY{X: iv.LoadEnd, Y: sum})
					t := math.Round(iv.LoadEnd*100) / 100
					byX[t] = append(byX[t], sum)
				}
				if len(xy) == 0 {
					continue
				}
				l, err := plotter.NewLine(xy)
				if err != nil {
					continue
				}
				n++
				l.Color, l.Width = s.color, vg.Points(1.5)
				if many {
					l.Color, l.Width = color.NRGBA{s.color.R, s.color.G, s.color.B, 0x50}, vg.Points(0.8)
					p.Add(l)
					continue
				}
				l.Dashes = dashes[k%len(dashes)]
				p.Add(l)
				leg = leg.line(fmt.Sprintf("%s #%d", s.variant, run.Rep), l)
			}
			if !many || len(byX) == 0 {
				continue
			}
			var med plotter.XYs
			for t, ys := range byX {
				if 2*len(ys) >= len(s.runs()) { // not where most runs have ended
					med = append(med, plotter.XY{X: t, Y: median(ys)})
				}
			}
			sort.Slice(med, func(i, j int) bool { return med[i].X < med[j].X })
			l, err := plotter.NewLine(med)
			if err != nil {
				continue
			}
			l.Color, l.Width = s.color, vg.Points(3)
			p.Add(l)
			leg = leg.line(fmt.Sprintf("%s: median of %d runs", s.variant, len(s.runs())), l)
		}
		id := fmt.Sprintf("throughput-%d", fi)
		if n == 0 {
			sec.Charts = append(sec.Charts, Chart{ID: id, Title: x.Name, Missing: "no throughput intervals in this result"})
			continue
		}
		p.Y.Min = 0
		sec.Charts = append(sec.Charts, chartOf(id, x.Name, "", p, leg, 22*vg.Centimeter, 10*vg.Centimeter))
	}
	return sec
}

// ManyRuns is the number of runs in a file above which the throughput
// chart draws each variant's median and the single runs faintly.
const ManyRuns = 8

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// phaseWindows returns the idle and loaded windows on the probe clock.
func phaseWindows(r *bench.Result) (idleFrom, idleTo, loadFrom, loadTo float64) {
	s := r.Settings
	if s.DurationS <= 0 {
		return math.Inf(-1), 0, 0, math.Inf(1)
	}
	return -s.IdleS - 1, 0, s.OmitS, s.OmitS + s.DurationS
}

// latencySection: the CDF of probe RTTs, idle (dashed) and loaded (solid).
func latencySection(in []Input, pal palette) Section {
	sec := Section{ID: "latency", Title: "Latency: idle vs loaded (CDF)",
		Intro: "Share of probe round trips at or below a time (log scale): dashed before the load (idle), solid under load (after iperf3's omitted seconds). A line that moves right under load is latency the load adds."}
	kinds := map[string]bool{}
	for _, s := range pal {
		for _, run := range s.runs() {
			for _, pr := range run.Probes {
				kinds[pr.Kind] = true
			}
		}
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		sec.Charts = append(sec.Charts, Chart{ID: "latency", Title: "latency", Missing: "no latency probes in these results"})
		return sec
	}
	for _, kind := range ks {
		sec.Charts = append(sec.Charts, latencyChart(kind, pal))
	}
	return sec
}

// latencyChart is the CDF of one probe kind's RTTs, idle and loaded, per
// series, with the lost probes noted.
func latencyChart(kind string, pal palette) Chart {
	p := newPlot(strings.ToUpper(kind)+" probe", "round-trip time (ms, log scale)", "share of probes ≤ x")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1
	var leg legend
	var notes []string
	n := 0
	for _, s := range pal {
		idle, load, lostI, lostL := phaseRTTs(s, kind)
		for _, ph := range []struct {
			xs   []float64
			name string
			dash []vg.Length
		}{{idle, "idle", dashes[1]}, {load, "loaded", nil}} {
			if len(ph.xs) == 0 {
				continue
			}
			l, err := plotter.NewLine(cdf(ph.xs))
			if err != nil {
				continue
			}
			l.Color, l.Width, l.Dashes = s.color, vg.Points(1.5), ph.dash
			p.Add(l)
			leg = leg.line(fmt.Sprintf("%s %s (n=%d)", s.label, ph.name, len(ph.xs)), l)
			n++
		}
		if lostI+lostL > 0 {
			notes = append(notes, fmt.Sprintf("%s lost %d idle and %d loaded probes (not in the curves)", s.label, lostI, lostL))
		}
	}
	id := "latency-" + kind
	if n == 0 {
		return Chart{ID: id, Title: kind, Missing: "no " + kind + " round trips recorded"}
	}
	return chartOf(id, strings.ToUpper(kind)+" probe", strings.Join(notes, "; "), p, leg, 22*vg.Centimeter, 11*vg.Centimeter)
}

// phaseRTTs splits the series' round trips of one probe kind into the idle
// phase and the load (phaseWindows), answered ones as milliseconds, lost
// ones counted.
func phaseRTTs(s series, kind string) (idle, load []float64, lostIdle, lostLoad int) {
	i0, i1, l0, l1 := phaseWindows(s.in.R)
	for _, run := range s.runs() {
		for _, pr := range run.Probes {
			if pr.Kind != kind {
				continue
			}
			for _, rt := range pr.RTTs {
				switch {
				case rt.T >= i0 && rt.T < i1:
					if rt.Lost {
						lostIdle++
					} else if rt.Ms > 0 {
						idle = append(idle, rt.Ms)
					}
				case rt.T >= l0 && rt.T < l1:
					if rt.Lost {
						lostLoad++
					} else if rt.Ms > 0 {
						load = append(load, rt.Ms)
					}
				}
			}
		}
	}
	return idle, load, lostIdle, lostLoad
}

func cdf(xs []float64) plotter.XYs {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	out := make(plotter.XYs, 0, len(s)+1)
	for i, x := range s {
		if i == 0 {
			out = append(out, plotter.XY{X: x, Y: 0})
		}
		out = append(out, plotter.XY{X: x, Y: float64(i+1) / float64(len(s))})
	}
	return out
}
