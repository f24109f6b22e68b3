package main

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/kinfer/kinfer/host/figures"
)

// The paper's figures, drawn with host/figures (gonum/plot): line plots
// with an optional shaded band (Fig. 3, 5, 6) and box plots (Fig. 4), as
// SVG text.

// Series is one line of a line plot; Lo and Hi, when set, bound a shaded
// band (the quartiles).
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	Color  color.Color
	Dash   []vg.Length // nil for solid
	Thin   bool
}

// Box is one box of a box plot: quartiles, median and whiskers.
type Box = figures.Box

// palette is the methods' colours (M1 … M5, M4I) and then the parameters'.
var palette = func() []color.Color {
	p := make([]color.Color, 10)
	for i := range p {
		p[i] = figures.Color(i)
	}
	return p
}()

// dashes are the line styles of the three members of a group (Fig. 5, 6):
// solid, dashed, dotted.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

const (
	plotW, plotH = 640 * vg.Inch / 96, 400 * vg.Inch / 96
	legendW      = 160 * vg.Inch / 96
)

// render draws p as an SVG document, beside its legend when legend; a
// figure that cannot be drawn returns "" and its error.
func render(name string, p *plot.Plot, err error, legend bool) (string, error) {
	if err != nil {
		return "", err
	}
	f := figures.Single(name, p, plotW, plotH)
	if legend {
		f.LegendBeside = legendW
	}
	b, err := f.SVG()
	return string(b), err
}

// LinePlot draws the series against a shared x axis; logY for C1.
func LinePlot(title, xlabel, ylabel string, logY bool, ss []Series) (string, error) {
	fs := make([]figures.Series, len(ss))
	for i, s := range ss {
		fs[i] = figures.Series{Name: s.Name, X: s.X, Y: s.Y, Lo: s.Lo, Hi: s.Hi, Color: s.Color, Dashes: s.Dash, Thin: s.Thin}
	}
	p, err := figures.Lines(title, xlabel, ylabel, logY, fs)
	if p != nil {
		p.Legend.TextStyle.Font.Size = vg.Points(7)
	}
	return render("lines", p, err, true)
}

// BoxPlot draws one box per group (whiskers at Lo and Hi).
func BoxPlot(title, ylabel string, logY bool, boxes []Box) (string, error) {
	p, err := figures.Boxes(title, ylabel, logY, boxes)
	return render("boxes", p, err, false)
}

// Whiskers is Tukey's box of x: quartiles, median, and whiskers at the
// most extreme values within 1.5 IQR of the box (the points beyond are
// left out, as in the paper's Fig. 4).
func Whiskers(name string, c color.Color, x []float64) Box {
	q1, med, q3 := Quantile(x, 0.25), Quantile(x, 0.5), Quantile(x, 0.75)
	lo, hi := q1, q3
	for _, v := range x {
		if v >= q1-1.5*(q3-q1) {
			lo = math.Min(lo, v)
		}
		if v <= q3+1.5*(q3-q1) {
			hi = math.Max(hi, v)
		}
	}
	return Box{Name: name, Lo: lo, Q1: q1, Median: med, Q3: q3, Hi: hi, Color: c}
}
