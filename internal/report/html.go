// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html/template"
	"io"

	"github.com/wirespeed/wirespeed/internal/bench"
)

// WriteHTML writes the report as one HTML page with everything inline (no
// scripts, no external fonts, styles or images): it opens from a mail
// attachment on a machine without network.
func WriteHTML(w io.Writer, rep *Report) error {
	return page.Execute(w, rep)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"svg": func(s string) template.HTML { return template.HTML(s) }, // produced by gonum/plot, not from input text
	"num": fmtNum,
	"css": func(s string) template.CSS { return template.CSS(s) }, // #rrggbb from hexColor
	"ratio": func(h bench.Headline) string {
		if h.Base == "" || h.Ratio <= 0 {
			return "-"
		}
		s := fmt.Sprintf("%.2fx", h.Ratio)
		if h.RatioHigh > 0 {
			s += fmt.Sprintf(" [%.2f-%.2f]", h.RatioLow, h.RatioHigh)
		}
		return s
	},
	"ms": func(x float64) string {
		if x <= 0 {
			return "-"
		}
		return fmtNum(x)
	},
	"cpu": func(x float64) string {
		if x <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", x)
	},
	"p": func(d bench.Delta) string {
		switch {
		case d.Paired != nil:
			return fmt.Sprintf("%.3g (paired)", d.Paired.P)
		case d.Welch != nil:
			return fmt.Sprintf("%.3g", d.Welch.P)
		}
		return "-"
	},
	"verdict": func(d bench.Delta) string {
		switch {
		case d.Welch == nil:
			return d.Note
		case !d.Significant:
			return "no significant difference"
		case d.Better == "b":
			return "B better"
		case d.Better == "a":
			return "B worse"
		}
		return ""
	},
	"vclass": func(d bench.Delta) string {
		switch {
		case d.Significant && d.Better == "b":
			return "better"
		case d.Significant && d.Better == "a":
			return "worse"
		}
		return ""
	},
	"diff": func(d bench.Delta) string {
		if d.A.Mean == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", d.DiffPct)
	},
	"summary": func(n int, mean, lo, hi float64) string {
		if n < 2 {
			return fmtNum(mean)
		}
		return fmt.Sprintf("%s ±%s", fmtNum(mean), fmtNum((hi-lo)/2))
	},
}).Parse(pageHTML))

var fmtNum = bench.FormatNum

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="wirespeed report">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; background: #fff; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.warn { background: #fff4d6; border-left: 4px solid #e0a800; padding: 0.5em 0.8em; margin: 0.4em 0; }
.chart { margin: 0.8em 0 1.4em; }
.chart svg { max-width: 100%; height: auto; overflow: visible; }
.missing { color: #666; font-style: italic; border: 1px dashed #bbb; padding: 0.8em; }
.legend { font-size: 0.85em; margin: 0.2em 0 0 3em; max-width: 60em; }
.legend .item { display: inline-block; margin: 0.1em 1.2em 0.1em 0; white-space: nowrap; }
.legend .line { display: inline-block; width: 2.2em; height: 0; vertical-align: middle; margin-right: 0.4em; }
.legend .box { display: inline-block; width: 1em; height: 1em; vertical-align: middle; margin-right: 0.4em; }
.caption { color: #555; font-size: 0.9em; }
.verdict { font-weight: bold; }
.better { color: #1a7f37; font-weight: bold; }
.worse { color: #c62828; font-weight: bold; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.8em; }
nav a { margin-right: 1em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="caption">generated {{.Generated.Format "2006-01-02 15:04:05 UTC"}} by <code>wirespeed report</code></p>
<nav>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}<a href="#verdicts">Verdicts</a><a href="#devices">Devices</a></nav>
{{range .Warnings}}<div class="warn">{{.}}</div>
{{end}}
<h2 id="files">What was measured</h2>
{{range .Files}}<table>
<tr><th>file</th><td>{{.Name}}</td></tr>
<tr><th>host</th><td>{{.Host}}, kernel {{.Kernel}}, {{.CPUs}} CPUs</td></tr>
<tr><th>started</th><td>{{.Started}} ({{.Status}})</td></tr>
<tr><th>load</th><td>{{.Load}}</td></tr>
{{range .Variants}}<tr><th>variant {{.Name}}</th><td>{{.Knobs}}</td></tr>
{{end}}{{if .Command}}<tr><th>command</th><td><code>{{.Command}}</code></td></tr>{{end}}
</table>
{{end}}
<h2 id="headline">Headline</h2>
{{range .Headlines}}<h3>{{.Title}}</h3>
<table>
<tr><th>variant</th><th>Mbit/s</th><th>throughput vs base (95% interval)</th><th>RTT under load p50 / p99 (ms)</th><th>CPU ms per Mbit</th><th>verdict</th></tr>
{{range .Lines}}<tr><td>{{.Variant}}</td><td class="num">{{num .Mbit}}</td><td class="num">{{ratio .}}</td><td class="num">{{if .Probe}}{{.Probe}} {{ms .LoadP50Ms}} / {{ms .LoadP99Ms}}{{else}}-{{end}}</td><td class="num">{{cpu .CPUMsPerMbit}}</td><td class="verdict">{{.Verdict}}</td></tr>
{{end}}</table>
{{end}}<p class="caption">Throughput ratio: geometric mean of the per-run ratios with its 95% interval (paired over interleaved repetitions within a file). CPU: busy time of all CPUs per Mbit moved.</p>
{{range .Sections}}<h2 id="{{.ID}}">{{.Title}}</h2>
<p class="caption">{{.Intro}}</p>
{{range .Charts}}<div class="chart" id="chart-{{.ID}}" data-chart="{{.ID}}">
{{if .Missing}}<div class="missing" data-missing="{{.ID}}">{{.Title}}: {{.Missing}}</div>{{else}}{{svg .SVG}}
{{if .Legend}}<div class="legend">{{range .Legend}}<span class="item"><span class="{{if .Box}}box{{else}}line{{end}}" style="{{if .Box}}background:{{.Color | css}}{{else}}border-top:3px {{if .Dashed}}dashed{{else}}solid{{end}} {{.Color | css}}{{end}}"></span>{{.Label}}</span>
{{end}}</div>{{end}}{{end}}
{{if .Caption}}<p class="caption">{{.Caption}}</p>{{end}}
</div>
{{end}}{{if eq .ID "gro"}}{{if $.RXPaths}}<table>
<tr><th>variant</th><th>device</th><th>RX path</th><th>GRO ratio</th><th>runs observed</th><th>note</th></tr>
{{range $.RXPaths}}<tr><td>{{.Variant}}</td><td>{{.Device}}</td><td>{{.RXPath}}</td><td class="num">{{.GRORatio}}</td><td class="num">{{.Runs}}</td><td>{{.Note}}{{if and .GROFrom (not .Note)}}GRO from {{.GROFrom}}{{end}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{end}}
<h2 id="verdicts">Verdicts per metric</h2>
{{if not .Verdicts}}<p class="missing">no comparison: one variant and one file (bench --variant, or give several files)</p>{{end}}
{{range .Verdicts}}<h3>A: {{.A}} &nbsp; B: {{.B}}</h3>
<table>
<tr><th>metric</th><th>A</th><th>B</th><th>B-A</th><th>p</th><th>verdict</th></tr>
{{range .Rows}}<tr><td>{{.Metric}}</td><td class="num">{{summary .A.N .A.Mean .A.CILow .A.CIHigh}}</td><td class="num">{{summary .B.N .B.Mean .B.CILow .B.CIHigh}}</td><td class="num">{{diff .}}</td><td class="num">{{p .}}</td><td class="{{vclass .}}">{{verdict .}}</td></tr>
{{end}}</table>
{{end}}<p class="caption">Mean ±95% CI half-width; significant when p &lt; 0.05 (the paired test over interleaved repetitions where there are pairs, else Welch).</p>
<h2 id="devices">Devices (inspect)</h2>
{{if .Devices}}<table>
<tr><th>snapshot</th><th>device</th><th>driver</th><th>bus</th><th>RX path</th><th>GRO</th><th>threaded</th><th>NAPIs</th><th>qdisc</th><th>BQL</th></tr>
{{range .Devices}}<tr><td>{{.Key}}</td><td>{{.Name}}</td><td>{{.Driver}}</td><td>{{.Bus}}</td><td>{{.RXPath}}</td><td>{{.GRO}}</td><td>{{.Threaded}}</td><td>{{.NAPIs}}</td><td>{{.Qdisc}}</td><td>{{.BQL}}</td></tr>
{{end}}</table>{{else}}<p class="missing">no inspect snapshot in these results</p>{{end}}
{{range .Inspect}}<details><summary>inspect {{.Key}}</summary><pre>{{.Text}}</pre></details>
{{end}}
</body>
</html>
`
