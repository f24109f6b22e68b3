package main

import (
	"fmt"
	"math"
	"strings"
)

// Minimal SVG plots of the paper's figures (stdlib only): line plots with
// an optional shaded band (Fig. 3, 5) and box plots (Fig. 4).

// Series is one line of a line plot; Lo and Hi, when set, bound a shaded
// band (the quartiles).
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	Color  string
	Dash   string // SVG stroke-dasharray, "" for solid
	Thin   bool
}

// Box is one box of a box plot: quartiles, median and whiskers.
type Box struct {
	Name                   string
	Lo, Q1, Median, Q3, Hi float64
	Color                  string
}

// palette is the methods' colours (M1 … M5, M4I) and then the parameters'.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

const (
	plotW, plotH                       = 640, 400
	marginL, marginR, marginT, marginB = 70, 160, 30, 50
)

// axis maps data to pixels on one axis, linearly or in log10.
type axis struct {
	lo, hi float64
	log    bool
	p0, p1 float64 // pixel positions of lo and hi
}

func (a axis) px(v float64) float64 {
	lo, hi := a.lo, a.hi
	if a.log {
		v, lo, hi = math.Log10(math.Max(v, 1e-300)), math.Log10(lo), math.Log10(hi)
	}
	return a.p0 + (v-lo)/(hi-lo)*(a.p1-a.p0)
}

// ticks are about n round values in [lo, hi] (decades on a log axis).
func (a axis) ticks(n int) []float64 {
	var t []float64
	if a.log {
		step := math.Max(1, math.Ceil((math.Log10(a.hi)-math.Log10(a.lo))/float64(n)))
		for e := math.Ceil(math.Log10(a.lo) - 1e-9); e <= math.Log10(a.hi)+1e-9; e += step {
			t = append(t, math.Pow(10, e))
		}
		return t
	}
	raw := (a.hi - a.lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	for v := math.Ceil(a.lo/step) * step; v <= a.hi+1e-9*step; v += step {
		t = append(t, v)
	}
	return t
}

func tickLabel(v float64, log bool) string {
	if log {
		return fmt.Sprintf("1e%d", int(math.Round(math.Log10(v))))
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// frame draws the title, the axes with ticks and labels.
func frame(b *strings.Builder, title, xlabel, ylabel string, xa, ya axis) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(b, `<text x="%d" y="18" font-size="14">%s</text>`+"\n", marginL, esc(title))
	x0, x1, y0, y1 := xa.p0, xa.p1, ya.p0, ya.p1
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="black"/>`+"\n", x0, y1, x1-x0, y0-y1)
	if xa.hi > xa.lo {
		for _, v := range xa.ticks(6) {
			p := xa.px(v)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="black"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n",
				p, y0, p, y0+5, p, y0+18, tickLabel(v, xa.log))
		}
	}
	for _, v := range ya.ticks(6) {
		p := ya.px(v)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n",
			x0, p, x1, p, x0-6, p+4, tickLabel(v, ya.log))
	}
	fmt.Fprintf(b, `<text x="%g" y="%d" text-anchor="middle">%s</text>`+"\n", (x0+x1)/2, plotH-10, esc(xlabel))
	fmt.Fprintf(b, `<text transform="translate(16 %g) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (y0+y1)/2, esc(ylabel))
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// LinePlot draws the series against a shared x axis; logY for C1.
func LinePlot(title, xlabel, ylabel string, logY bool, ss []Series) string {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for i, x := range s.X {
			xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
			for _, y := range []float64{s.Y[i], get(s.Lo, i, s.Y[i]), get(s.Hi, i, s.Y[i])} {
				if logY && !(y > 0) {
					continue
				}
				ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
			}
		}
	}
	if logY {
		ylo, yhi = math.Pow(10, math.Floor(math.Log10(ylo))), math.Pow(10, math.Ceil(math.Log10(yhi)))
	} else {
		ylo = math.Min(ylo, 0)
		yhi += 0.05 * (yhi - ylo)
	}
	if !(yhi > ylo) {
		yhi = ylo + 1
	}
	if !(xhi > xlo) {
		xhi = xlo + 1
	}
	xa := axis{lo: xlo, hi: xhi, p0: marginL, p1: plotW - marginR}
	ya := axis{lo: ylo, hi: yhi, log: logY, p0: plotH - marginB, p1: marginT}
	var b strings.Builder
	frame(&b, title, xlabel, ylabel, xa, ya)
	for k, s := range ss {
		if s.Lo != nil && s.Hi != nil {
			var pts []string
			for i := range s.X {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xa.px(s.X[i]), ya.px(s.Hi[i])))
			}
			for i := len(s.X) - 1; i >= 0; i-- {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xa.px(s.X[i]), ya.px(s.Lo[i])))
			}
			fmt.Fprintf(&b, `<polygon points="%s" fill="%s" fill-opacity="0.2" stroke="none"/>`+"\n", strings.Join(pts, " "), s.Color)
		}
		var pts []string
		for i := range s.X {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xa.px(s.X[i]), ya.px(s.Y[i])))
		}
		width := 2.0
		if s.Thin {
			width = 1
		}
		dash := ""
		if s.Dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.Dash)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%g"%s/>`+"\n", strings.Join(pts, " "), s.Color, width, dash)
		ly := marginT + 10 + legendStep(len(ss))*k
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%d" y="%d" font-size="10">%s</text>`+"\n",
			plotW-marginR+18, ly, plotW-marginR+38, ly, s.Color, dash, plotW-marginR+42, ly+4, esc(s.Name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// legendStep is the legend's line spacing for n entries: 15 px, less when
// they would not fit beside the plot area (above the x axis, so that the
// last x tick label stays clear).
func legendStep(n int) int { return min(15, (plotH-marginB-marginT-10)/max(n, 1)) }

func get(v []float64, i int, def float64) float64 {
	if v == nil {
		return def
	}
	return v[i]
}

// BoxPlot draws one box per group (whiskers at Lo and Hi).
func BoxPlot(title, ylabel string, logY bool, boxes []Box) string {
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, bx := range boxes {
		ylo, yhi = math.Min(ylo, bx.Lo), math.Max(yhi, bx.Hi)
	}
	if logY {
		ylo, yhi = math.Pow(10, math.Floor(math.Log10(ylo))), math.Pow(10, math.Ceil(math.Log10(yhi)))
	} else {
		ylo = math.Min(ylo, 0)
		yhi += 0.05 * (yhi - ylo)
	}
	xa := axis{lo: 0, hi: 0, p0: marginL, p1: plotW - marginR}
	ya := axis{lo: ylo, hi: yhi, log: logY, p0: plotH - marginB, p1: marginT}
	var b strings.Builder
	frame(&b, title, "", ylabel, xa, ya)
	slot := (xa.p1 - xa.p0) / float64(len(boxes))
	for k, bx := range boxes {
		c := xa.p0 + slot*(float64(k)+0.5)
		w := slot * 0.3
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", c, ya.px(bx.Lo), c, ya.px(bx.Hi))
		for _, v := range []float64{bx.Lo, bx.Hi} {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", c-w/2, ya.px(v), c+w/2, ya.px(v))
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.5" stroke="black"/>`+"\n",
			c-w, ya.px(bx.Q3), 2*w, ya.px(bx.Q1)-ya.px(bx.Q3), bx.Color)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="2"/>`+"\n", c-w, ya.px(bx.Median), c+w, ya.px(bx.Median))
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", c, ya.p0+18, esc(bx.Name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// Whiskers is Tukey's box of x: quartiles, median, and whiskers at the
// most extreme values within 1.5 IQR of the box (the points beyond are
// left out, as in the paper's Fig. 4).
func Whiskers(name, color string, x []float64) Box {
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
	return Box{Name: name, Lo: lo, Q1: q1, Median: med, Q3: q3, Hi: hi, Color: color}
}
