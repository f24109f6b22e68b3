package main

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/figures"
)

// Tukey's box of 1..9 and 100 (type-7 quartiles 3.25, 5.5, 7.75; IQR 4.5,
// so the upper fence is 14.5 and 100 is left out).
func TestWhiskers(t *testing.T) {
	x := []float64{100, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	c := figures.Color(3)
	b := Whiskers("M", c, x)
	want := Box{Name: "M", Lo: 1, Q1: 3.25, Median: 5.5, Q3: 7.75, Hi: 9, Color: c}
	if b != want {
		t.Errorf("box %+v, want %+v", b, want)
	}
}

// wellFormed fails unless svg is one well-formed XML document with an svg
// root.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
}

// A line plot is an SVG document with every series' legend entry (names
// escaped), on a log axis too; a plot with nothing finite to draw is an
// error, not an empty figure.
func TestLinePlot(t *testing.T) {
	ss := []Series{
		{Name: "A", X: []float64{0, 1, 2}, Y: []float64{1, 0.1, 0.01}, Lo: []float64{0.5, 0.05, 0.005}, Hi: []float64{2, 0.2, 0.02}, Color: palette[0]},
		{Name: "B<1>", X: []float64{0, 1, 2}, Y: []float64{3, 2, 1}, Color: palette[1], Dash: dashes[2]},
	}
	svg, err := LinePlot("t", "x", "y", true, ss)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	if !strings.Contains(svg, ">A</text>") || !strings.Contains(svg, ">B&lt;1&gt;</text>") {
		t.Error("legend entries missing or unescaped")
	}
	if _, err := LinePlot("t", "x", "y", true, []Series{{Name: "C", X: []float64{0, 1}, Y: []float64{-1, math.NaN()}}}); err == nil {
		t.Error("a series with nothing drawable on a log axis: no error")
	}
}

// Fig. 4's boxes: drawn on a log axis, refused with a value ≤ 0 there.
func TestBoxPlot(t *testing.T) {
	bs := []Box{Whiskers("M1", palette[0], []float64{1, 2, 3, 4}), Whiskers("M4", palette[3], []float64{0.01, 0.02, 0.05})}
	svg, err := BoxPlot("Fig. 4", "C3 [%]", true, bs)
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	if !strings.Contains(svg, ">M1</text>") || !strings.Contains(svg, ">M4</text>") {
		t.Error("box names missing")
	}
	if _, err := BoxPlot("Fig. 4", "C3", true, []Box{Whiskers("M", nil, []float64{0, 1, 2})}); err == nil {
		t.Error("a box reaching 0 on a log axis: no error")
	}
}
