// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/wirespeed/wirespeed/internal/bench"
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
