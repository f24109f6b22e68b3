package main

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// Tukey's box of 1..9 and 100 (type-7 quartiles 3.25, 5.5, 7.75; IQR 4.5,
// so the upper fence is 14.5 and 100 is left out).
func TestWhiskers(t *testing.T) {
	x := []float64{100, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	b := Whiskers("M", "red", x)
	want := Box{Name: "M", Lo: 1, Q1: 3.25, Median: 5.5, Q3: 7.75, Hi: 9, Color: "red"}
	if b != want {
		t.Errorf("box %+v, want %+v", b, want)
	}
}

// Axes: the ends map to the pixel ends, log axes by decades, and the ticks
// are round values inside the range (decades on a log axis, including the
// lower end when it is a power of ten).
func TestAxis(t *testing.T) {
	lin := axis{lo: 0, hi: 10000, p0: 70, p1: 490}
	if lin.px(0) != 70 || lin.px(10000) != 490 || lin.px(5000) != 280 {
		t.Errorf("linear: %v %v %v", lin.px(0), lin.px(10000), lin.px(5000))
	}
	if got := lin.ticks(6); !reflect.DeepEqual(got, []float64{0, 2000, 4000, 6000, 8000, 10000}) {
		t.Errorf("linear ticks %v", got)
	}
	lg := axis{lo: 1e-4, hi: 1e2, log: true, p0: 350, p1: 30}
	if math.Abs(lg.px(1e-4)-350) > 1e-9 || math.Abs(lg.px(1e2)-30) > 1e-9 || math.Abs(lg.px(1e-1)-190) > 1e-9 {
		t.Errorf("log: %v %v %v", lg.px(1e-4), lg.px(1e2), lg.px(1e-1))
	}
	got := lg.ticks(6)
	if len(got) != 7 || math.Abs(got[0]-1e-4) > 1e-18 || math.Abs(got[6]-100) > 1e-12 {
		t.Errorf("log ticks %v", got)
	}
}

// A line plot has one polyline per series with one point per x, a band
// polygon per series with quartiles, and a legend entry per series.
func TestLinePlot(t *testing.T) {
	ss := []Series{
		{Name: "A", X: []float64{0, 1, 2}, Y: []float64{1, 0.1, 0.01}, Lo: []float64{0.5, 0.05, 0.005}, Hi: []float64{2, 0.2, 0.02}, Color: "#111"},
		{Name: "B<1>", X: []float64{0, 1, 2}, Y: []float64{3, 2, 1}, Color: "#222", Dash: "2,2"},
	}
	svg := LinePlot("t", "x", "y", true, ss)
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d polylines", n)
	}
	if n := strings.Count(svg, "<polygon"); n != 1 {
		t.Errorf("%d bands", n)
	}
	i := strings.Index(svg, `<polyline points="`)
	pts := strings.Fields(strings.SplitN(svg[i+len(`<polyline points="`):], `"`, 2)[0])
	if len(pts) != 3 {
		t.Errorf("first polyline has %d points", len(pts))
	}
	if !strings.Contains(svg, ">A</text>") || !strings.Contains(svg, ">B&lt;1&gt;</text>") || !strings.Contains(svg, `stroke-dasharray="2,2"`) {
		t.Error("legend, escaping or dashes missing")
	}
}

// The legend stays beside the plot area, above the x axis and its tick
// labels, however many entries (Fig. 5 has up to 30, Fig. 6 23).
func TestLegendAboveXAxis(t *testing.T) {
	for _, n := range []int{1, 6, 23, 30, 54} {
		if last := marginT + 10 + legendStep(n)*(n-1); last > plotH-marginB {
			t.Errorf("%d entries: last legend line at y = %d, below the x axis at %d", n, last, plotH-marginB)
		}
	}
}
