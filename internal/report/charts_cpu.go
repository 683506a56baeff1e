// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// Where the CPU went and the datapath's own counters: per-CPU stacks and
// NET_RX, napi kthreads, BQL, GRO.

// loadOf is a run's load summary, computed from its samples when the file
// has none (older results).
func loadOf(r *bench.Result, run *bench.Run) *bench.LoadSummary {
	if run.Load != nil {
		return run.Load
	}
	if len(run.Samples) < 2 {
		return nil
	}
	_, _, from, to := phaseWindows(r)
	if math.IsInf(to, 1) {
		to = run.Samples[len(run.Samples)-1].T
	}
	return bench.SummarizeLoad(run.Samples, from, to)
}

// meanCPUs averages the per-CPU shares over a series' runs.
func meanCPUs(s series) []bench.CPULoad {
	var loads []*bench.LoadSummary
	for _, run := range s.runs() {
		loads = append(loads, loadOf(s.in.R, run))
	}
	return bench.MeanCPULoads(loads)
}

// cpuSection: stacked usr/sys/irq/softirq/idle per CPU and variant, and
// NET_RX softirqs per CPU.
func cpuSection(in []Input, pal palette) Section {
	sec := Section{ID: "cpu", Title: "Where the CPUs went",
		Intro: "Each CPU's time during the load (mean over runs), per variant: a tall red softirq block on one CPU next to idle grey on the others is NET_RX processing stuck on one CPU. The second chart counts NET_RX softirqs per CPU."}
	var cats []cpuCat
	for _, s := range pal {
		for _, c := range meanCPUs(s) {
			cats = append(cats, cpuCat{s, c})
		}
	}
	if len(cats) == 0 {
		sec.Charts = append(sec.Charts, Chart{ID: "cpu-load", Title: "per-CPU load", Missing: "no CPU samples in these results"})
		return sec
	}
	sec.Charts = append(sec.Charts, cpuLoadChart(cats), netRXChart(cats, pal))
	return sec
}

// cpuCat is one bar of the CPU charts: a CPU's mean load in one series.
type cpuCat struct {
	s   series
	cpu bench.CPULoad
}

// cpuLoadChart stacks usr/sys/irq/softirq/idle per CPU and series.
func cpuLoadChart(cats []cpuCat) Chart {
	names := make([]string, len(cats))
	for i, c := range cats {
		names[i] = fmt.Sprintf("%s\ncpu%d", c.s.label, c.cpu.CPU)
	}
	width := vg.Points(math.Max(8, math.Min(40, 500/float64(len(cats)))))
	p := newPlot("per-CPU time during the load", "", "% of the CPU")
	var leg legend
	var below *plotter.BarChart
	for _, comp := range []struct {
		name string
		col  color.RGBA
		f    func(bench.CPULoad) float64
	}{
		{"usr", ColorUser, func(c bench.CPULoad) float64 { return c.UserPct }},
		{"sys", ColorSys, func(c bench.CPULoad) float64 { return c.SysPct }},
		{"irq", ColorIRQ, func(c bench.CPULoad) float64 { return c.IRQPct }},
		{"softirq", ColorSoftirq, func(c bench.CPULoad) float64 { return c.SoftPct }},
		{"idle", ColorIdle, func(c bench.CPULoad) float64 { return c.IdlePct }},
	} {
		vs := make(plotter.Values, len(cats))
		for i, c := range cats {
			vs[i] = math.Max(0, comp.f(c.cpu))
		}
		b, err := plotter.NewBarChart(vs, width)
		if err != nil {
			continue
		}
		b.Color, b.LineStyle.Width = comp.col, 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		leg = leg.box(comp.name, comp.col)
	}
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 0, 100
	w := vg.Length(math.Max(22, math.Min(40, 4+2.2*float64(len(cats))))) * vg.Centimeter
	return chartOf("cpu-load", "per-CPU time during the load", "", p, leg, w, 11*vg.Centimeter)
}

// netRXChart is NET_RX softirqs per second per CPU: bars grouped by CPU,
// one colour per series.
func netRXChart(cats []cpuCat, pal palette) Chart {
	cpus := map[int]bool{}
	for _, c := range cats {
		cpus[c.cpu.CPU] = true
	}
	var cpuList []int
	for c := range cpus {
		cpuList = append(cpuList, c)
	}
	sort.Ints(cpuList)
	q := newPlot("NET_RX softirqs per CPU during the load", "", "NET_RX softirqs per second")
	var qleg legend
	nser := 0
	for _, s := range pal {
		if len(meanCPUs(s)) > 0 {
			nser++
		}
	}
	bw := vg.Points(math.Max(6, math.Min(30, 300/float64(nser*len(cpuList)))))
	k := 0
	for _, s := range pal {
		m := meanCPUs(s)
		if len(m) == 0 {
			continue
		}
		vs := make(plotter.Values, len(cpuList))
		for i, cpu := range cpuList {
			for _, c := range m {
				if c.CPU == cpu {
					vs[i] = c.NetRXPerS
				}
			}
		}
		b, err := plotter.NewBarChart(vs, bw)
		if err != nil {
			continue
		}
		b.Color, b.LineStyle.Width = s.color, 0
		b.Offset = bw * vg.Length(float64(k)-float64(nser-1)/2)
		q.Add(b)
		qleg = qleg.box(s.label, s.color)
		k++
	}
	cpuNames := make([]string, len(cpuList))
	for i, c := range cpuList {
		cpuNames[i] = fmt.Sprintf("cpu%d", c)
	}
	q.NominalX(cpuNames...)
	q.Y.Min = 0
	return chartOf("net-rx", "NET_RX softirqs per CPU", "", q, qleg, 22*vg.Centimeter, 9*vg.Centimeter)
}

// napiSection: CPU used by napi/* kthreads (threaded NAPI) per variant.
func napiSection(in []Input, pal palette) Section {
	sec := Section{ID: "napi", Title: "NAPI kthreads",
		Intro: "CPU time of the napi/* kernel threads during the load, per run (% of one CPU). With threaded NAPI the receive work runs here, where the scheduler can place it, instead of in softirq context."}
	type bar struct {
		label string
		pct   float64
		col   color.RGBA
		cpus  string
	}
	var bars []bar
	// One bar per run and thread: every run builds a new lab, so its
	// threads have new names (napi/DEV-<napi id>).
	for _, s := range pal {
		for _, run := range s.runs() {
			ls := loadOf(s.in.R, run)
			if ls == nil {
				continue
			}
			for _, t := range ls.NAPI {
				var cs []string
				for _, c := range t.RanOn {
					cs = append(cs, fmt.Sprint(c))
				}
				bars = append(bars, bar{fmt.Sprintf("%s #%d\n%s", s.label, run.Rep, t.Comm), t.CPUPct, s.color, strings.Join(cs, ",")})
			}
		}
	}
	if len(bars) == 0 {
		sec.Charts = append(sec.Charts, Chart{ID: "napi-threads", Title: "napi kthreads",
			Missing: "no napi/* kthread ran in these runs: NAPI was polled in softirq context (threaded NAPI off), or the result has no samples"})
		return sec
	}
	p := newPlot("napi kthread CPU during the load", "", "% of one CPU")
	names := make([]string, len(bars))
	var caps []string
	w := vg.Points(math.Max(8, math.Min(40, 400/float64(len(bars)))))
	for i, b := range bars {
		names[i] = b.label
		vs := make(plotter.Values, len(bars))
		vs[i] = b.pct
		bc, err := plotter.NewBarChart(vs, w)
		if err != nil {
			continue
		}
		bc.Color, bc.LineStyle.Width = b.col, 0
		p.Add(bc)
		caps = append(caps, fmt.Sprintf("%s ran on CPU %s", strings.ReplaceAll(b.label, "\n", " "), b.cpus))
	}
	p.NominalX(names...)
	p.Y.Min = 0
	sec.Charts = append(sec.Charts, chartOf("napi-threads", "napi kthreads", strings.Join(caps, "; "), p, nil, 22*vg.Centimeter, 9*vg.Centimeter))
	return sec
}

// bqlSection: BQL inflight and limit per TX queue over time.
func bqlSection(in []Input, pal palette) Section {
	sec := Section{ID: "bql", Title: "BQL: bytes in flight and the limit",
		Intro: "Byte queue limits of the devices' TX queues as sampled during the runs: solid = bytes in flight, dashed = the limit BQL chose. A limit that stays low keeps the queue (and latency) short."}
	p := newPlot("BQL per TX queue", "seconds since load start", "bytes")
	var leg legend
	n := 0
	for _, s := range pal {
		for _, run := range s.runs() {
			type key struct{ dev, q string }
			infl, lim := map[key]plotter.XYs{}, map[key]plotter.XYs{}
			var keys []key
			for _, sm := range run.Samples {
				for dev, d := range sm.Devices {
					for _, b := range d.BQL {
						k := key{dev, b.Queue}
						if _, ok := infl[k]; !ok {
							keys = append(keys, k)
						}
						infl[k] = append(infl[k], plotter.XY{X: sm.T, Y: float64(b.Inflight)})
						lim[k] = append(lim[k], plotter.XY{X: sm.T, Y: float64(b.Limit)})
					}
				}
			}
			for _, k := range keys {
				for _, x := range []struct {
					xy   plotter.XYs
					what string
					dash []vg.Length
				}{{infl[k], "inflight", nil}, {lim[k], "limit", dashes[1]}} {
					l, err := plotter.NewLine(x.xy)
					if err != nil {
						continue
					}
					l.Color, l.Width, l.Dashes = s.color, vg.Points(1.2), x.dash
					p.Add(l)
					leg = leg.line(fmt.Sprintf("%s #%d %s %s %s", s.label, run.Rep, k.dev, k.q, x.what), l)
					n++
				}
			}
		}
	}
	if n == 0 {
		sec.Charts = append(sec.Charts, Chart{ID: "bql", Title: "BQL", Missing: "no BQL samples: the devices measured have no byte queue limits (veth and usbnet without the BQL patch have none), or the result has no device samples"})
		return sec
	}
	p.Y.Min = 0
	sec.Charts = append(sec.Charts, chartOf("bql", "BQL per TX queue", "", p, leg, 22*vg.Centimeter, 10*vg.Centimeter))
	return sec
}

// groSection: the GRO ratio (segments per delivered skb) per variant and
// device, from the runs' observation.
func groSection(in []Input, pal palette) Section {
	sec := Section{ID: "gro", Title: "GRO and the RX path",
		Intro: "What eBPF on the kernel's tracepoints saw during the runs (bench --observe): how many received segments GRO merged into each skb handed to the stack (1 = no coalescing), per device. The table below names each device's RX path."}
	type bar struct {
		label string
		ratio float64
		col   color.RGBA
	}
	var bars []bar
	for _, s := range pal {
		sum := map[string]float64{}
		cnt := map[string]float64{}
		var order []string
		for _, run := range s.runs() {
			if len(run.Observe) == 0 {
				continue
			}
			var o observe.Observation
			if json.Unmarshal(run.Observe, &o) != nil {
				continue
			}
			for _, d := range o.Devices {
				if d.GRORatio == nil || math.IsNaN(*d.GRORatio) {
					continue
				}
				if _, ok := sum[d.Name]; !ok {
					order = append(order, d.Name)
				}
				sum[d.Name] += *d.GRORatio
				cnt[d.Name]++
			}
		}
		for _, dev := range order {
			bars = append(bars, bar{s.label + "\n" + dev, sum[dev] / cnt[dev], s.color})
		}
	}
	if len(bars) == 0 {
		sec.Charts = append(sec.Charts, Chart{ID: "gro-ratio", Title: "GRO ratio", Missing: "no GRO ratio: the runs were not observed (bench --observe), or no device went through GRO"})
		return sec
	}
	p := newPlot("GRO: segments per delivered skb", "", "segments per skb")
	names := make([]string, len(bars))
	w := vg.Points(math.Max(8, math.Min(40, 400/float64(len(bars)))))
	for i, b := range bars {
		names[i] = b.label
		vs := make(plotter.Values, len(bars))
		vs[i] = b.ratio
		bc, err := plotter.NewBarChart(vs, w)
		if err != nil {
			continue
		}
		bc.Color, bc.LineStyle.Width = b.col, 0
		p.Add(bc)
	}
	p.NominalX(names...)
	p.Y.Min = 0
	sec.Charts = append(sec.Charts, chartOf("gro-ratio", "GRO ratio", "", p, nil, 22*vg.Centimeter, 9*vg.Centimeter))
	return sec
}
