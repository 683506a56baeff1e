package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/wirespeed/wirespeed/internal/bench"
	"github.com/wirespeed/wirespeed/internal/observe"
)

// SeriesColors are the colours of the variants, in order of appearance.
var SeriesColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
	{0xbc, 0xbd, 0x22, 0xff}, // olive
}

// CPU share colours of the stacked per-CPU bars.
var (
	ColorUser    = color.RGBA{0x4e, 0x79, 0xa7, 0xff}
	ColorSys     = color.RGBA{0xf2, 0x8e, 0x2b, 0xff}
	ColorIRQ     = color.RGBA{0x76, 0xb7, 0xb2, 0xff}
	ColorSoftirq = color.RGBA{0xe1, 0x57, 0x59, 0xff}
	ColorIdle    = color.RGBA{0xd9, 0xd9, 0xd9, 0xff}
)

// series is one (file, variant) pair; it keeps its colour on every chart.
type series struct {
	file    int
	in      Input
	variant string
	label   string
	color   color.RGBA
}

type palette []series

func newPalette(in []Input) palette {
	var p palette
	multi := len(in) > 1
	for i, x := range in {
		names := variantNames(x.R)
		for _, v := range names {
			p = append(p, series{file: i, in: x, variant: v, label: label(x.Name, v, multi),
				color: SeriesColors[len(p)%len(SeriesColors)]})
		}
	}
	return p
}

// variantNames lists the variants in the file's order, plus any that only
// runs name (a result cut short before its variants were written).
func variantNames(r *bench.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range r.Variants {
		if !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, v.Name)
		}
	}
	for _, run := range r.Runs {
		if !seen[run.Variant] {
			seen[run.Variant] = true
			out = append(out, run.Variant)
		}
	}
	return out
}

func (s series) runs() []*bench.Run {
	var out []*bench.Run
	for i := range s.in.R.Runs {
		if s.in.R.Runs[i].Variant == s.variant {
			out = append(out, &s.in.R.Runs[i])
		}
	}
	return out
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// svgOf renders p as an inline SVG element (no XML prolog).
func svgOf(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(w, h))
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
}

func chartOf(id, title, caption string, p *plot.Plot, leg legend, w, h vg.Length) Chart {
	c := Chart{ID: id, Title: title, Caption: caption, Legend: leg}
	svg, err := svgOf(p, w, h)
	if err != nil {
		c.Missing = "could not draw: " + err.Error()
		return c
	}
	c.SVG = svg
	return c
}

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

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
		p := newPlot(strings.ToUpper(kind)+" probe", "round-trip time (ms, log scale)", "share of probes ≤ x")
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Min, p.Y.Max = 0, 1
		var leg legend
		var notes []string
		n := 0
		for _, s := range pal {
			i0, i1, l0, l1 := phaseWindows(s.in.R)
			var idle, load []float64
			lostI, lostL := 0, 0
			for _, run := range s.runs() {
				for _, pr := range run.Probes {
					if pr.Kind != kind {
						continue
					}
					for _, rt := range pr.RTTs {
						switch {
						case rt.T >= i0 && rt.T < i1:
							if rt.Lost {
								lostI++
							} else if rt.Ms > 0 {
								idle = append(idle, rt.Ms)
							}
						case rt.T >= l0 && rt.T < l1:
							if rt.Lost {
								lostL++
							} else if rt.Ms > 0 {
								load = append(load, rt.Ms)
							}
						}
					}
				}
			}
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
			sec.Charts = append(sec.Charts, Chart{ID: id, Title: kind, Missing: "no " + kind + " round trips recorded"})
			continue
		}
		sec.Charts = append(sec.Charts, chartOf(id, strings.ToUpper(kind)+" probe", strings.Join(notes, "; "), p, leg, 22*vg.Centimeter, 11*vg.Centimeter))
	}
	return sec
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
	type cat struct {
		s   series
		cpu bench.CPULoad
	}
	var cats []cat
	for _, s := range pal {
		for _, c := range meanCPUs(s) {
			cats = append(cats, cat{s, c})
		}
	}
	if len(cats) == 0 {
		sec.Charts = append(sec.Charts, Chart{ID: "cpu-load", Title: "per-CPU load", Missing: "no CPU samples in these results"})
		return sec
	}
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
	sec.Charts = append(sec.Charts, chartOf("cpu-load", "per-CPU time during the load", "", p, leg, w, 11*vg.Centimeter))

	// NET_RX per CPU: bars grouped by CPU, one colour per variant.
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
	sec.Charts = append(sec.Charts, chartOf("net-rx", "NET_RX softirqs per CPU", "", q, qleg, 22*vg.Centimeter, 9*vg.Centimeter))
	return sec
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

// LegendItem is one entry of a chart's legend. Legends are HTML next to
// the SVG, not drawn by gonum/plot: a browser measures its own fonts, so a
// legend drawn with another font's metrics would overflow its box.
type LegendItem struct {
	Label  string
	Color  string // #rrggbb
	Dashed bool
	Box    bool // a filled box (bars) rather than a line
}

type legend []LegendItem

func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

func (l legend) line(label string, ln *plotter.Line) legend {
	return append(l, LegendItem{Label: label, Color: hexColor(ln.Color), Dashed: len(ln.Dashes) > 0})
}

func (l legend) box(label string, c color.Color) legend {
	return append(l, LegendItem{Label: label, Color: hexColor(c), Box: true})
}
