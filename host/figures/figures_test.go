package figures

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var recorded = map[*plot.Plot][]plot.Plotter{}

func init() {
	added = func(p *plot.Plot, pl plot.Plotter) { recorded[p] = append(recorded[p], pl) }
}

func plottersOf(p *plot.Plot) []plot.Plotter { return recorded[p] }

func wellFormed(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG not well-formed: %v", err)
		}
	}
}

// The histogram is a density: its bars' areas sum to 1 (gonum's
// Normalize), whatever the bin count; the samples' legend counts the
// values given, non-finite ones included, but bins only the finite ones.
func TestHistogramIsDensity(t *testing.T) {
	x := []float64{1, 2, 2, 3, 3, 3, 4, 4, 5, math.NaN()}
	p, err := Histogram("h", "x", x, 4, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var area float64
	n := 0
	for _, pl := range plottersOf(p) {
		if h, ok := pl.(*plotter.Histogram); ok {
			for _, b := range h.Bins {
				area += b.Weight * (b.Max - b.Min)
				n++
			}
		}
	}
	const tol = 1e-12
	if n != 4 || math.Abs(area-1) > tol {
		t.Errorf("%d bins, area %v, want 4 bins of area 1 ± %g", n, area, tol)
	}
	if _, err := Histogram("h", "x", []float64{math.NaN(), math.Inf(1)}, 0, nil, ""); err == nil {
		t.Error("no finite value: no error")
	}
	// One repeated value still draws (a bin around it).
	if _, err := Histogram("h", "x", []float64{2, 2, 2}, 0, nil, "", Mark{X: 2, Name: "truth"}); err != nil {
		t.Error(err)
	}
}

// The prior overlay is the density given, over the histogram's range
// widened by 10 %: the uniform(0, 10) density is 0.1 there.
func TestHistogramPriorOverlay(t *testing.T) {
	p, err := Histogram("h", "x", []float64{4, 5, 6}, 3, func(x float64) float64 {
		if x < 0 || x > 10 {
			return 0
		}
		return 0.1
	}, "prior", Mark{X: 5, Name: "best"}, Mark{X: math.NaN(), Name: "no truth"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, pl := range plottersOf(p) {
		if f, ok := pl.(*plotter.Function); ok {
			found = true
			if f.XMin != 3.8 || f.XMax != 6.2 || f.F(5) != 0.1 {
				t.Errorf("overlay over [%v, %v], f(5) = %v", f.XMin, f.XMax, f.F(5))
			}
		}
	}
	if !found {
		t.Error("no density overlay")
	}
}

// Lines: a band needs Lo and Hi; non-finite and (on a log axis)
// non-positive values are left out; nothing drawable is an error. The
// figure renders as well-formed SVG and as a PNG of the requested size.
func TestLinesRender(t *testing.T) {
	ss := []Series{
		{Name: "model", X: []float64{0, 1, 2, 3}, Y: []float64{1, 2, 4, 8}, Lo: []float64{0.5, 1, 2, 4}, Hi: []float64{2, 4, 8, 16}},
		{Name: "data", X: []float64{0, 1, 2, 3}, Y: []float64{1.1, math.NaN(), -1, 7}, Points: true},
	}
	p, err := Lines("t", "x", "y", true, ss)
	if err != nil {
		t.Fatal(err)
	}
	var poly, scat int
	for _, pl := range plottersOf(p) {
		switch v := pl.(type) {
		case *plotter.Polygon:
			poly++
		case *plotter.Scatter:
			scat++
			if len(v.XYs) != 2 { // NaN and −1 (log axis) left out
				t.Errorf("scatter has %d points, want 2", len(v.XYs))
			}
		}
	}
	if poly != 1 || scat != 1 {
		t.Errorf("%d bands, %d scatters", poly, scat)
	}
	f := Single("lines", p, 4*vg.Inch, 3*vg.Inch)
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
	if !strings.Contains(string(svg), ">model</text>") {
		t.Error("legend missing")
	}
	b, err := f.PNG(100)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 400 || img.Bounds().Dy() != 300 {
		t.Errorf("PNG %v, want 400×300 at 100 dpi", img.Bounds())
	}
	if _, err := Lines("t", "x", "y", true, []Series{{X: []float64{1}, Y: []float64{-1}}}); err == nil {
		t.Error("nothing drawable: no error")
	}
}

// The corner plot of d parameters has d(d+1)/2 panels (the upper
// triangle blank) and draws at most maxPoints rows.
func TestCorner(t *testing.T) {
	n := 5000
	cols := [][]float64{make([]float64, n), make([]float64, n), make([]float64, n)}
	for i := range n {
		cols[0][i], cols[1][i], cols[2][i] = float64(i), math.Sin(float64(i)), float64(i%7)
	}
	f, err := Corner("c", []string{"a", "b", "c"}, cols, 300, 1.5*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	panels := 0
	for i, row := range f.Panels {
		for j, p := range row {
			if (p != nil) != (j <= i) {
				t.Errorf("panel (%d, %d) present %v", i, j, p != nil)
			}
			if p == nil {
				continue
			}
			panels++
			for _, pl := range plottersOf(p) {
				if s, ok := pl.(*plotter.Scatter); ok && len(s.XYs) != 300 {
					t.Errorf("panel (%d, %d): %d points, want 300", i, j, len(s.XYs))
				}
			}
		}
	}
	if panels != 6 {
		t.Errorf("%d panels, want 6", panels)
	}
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
}

// Thin keeps the first row and spreads the others evenly, one in each of
// the blocks [0, 2), [2, 5), [5, 7), [7, 10) (the offsets frac(i·φ) of
// each block: 0, 0.618·3, 0.236·2, 0.854·3); Quantiles are type 7
// (numpy's default): for 1..5, p25 = 2, p90 = 4.6.
func TestThinQuantiles(t *testing.T) {
	if got := Thin(10, 4); len(got) != 4 || got[0] != 0 || got[1] != 3 || got[2] != 5 || got[3] != 9 {
		t.Errorf("Thin(10, 4) = %v", got)
	}
	if got := Thin(3, 10); len(got) != 3 {
		t.Errorf("Thin(3, 10) = %v", got)
	}
	q := Quantiles([]float64{5, 1, math.NaN(), 3, 2, 4}, 0.25, 0.9)
	if math.Abs(q[0]-2) > 1e-12 || math.Abs(q[1]-4.6) > 1e-12 {
		t.Errorf("quantiles %v, want [2 4.6]", q)
	}
}

// A log axis over a non-positive box is an error naming the figure, not
// a panic.
func TestBoxesLogRefusesNonPositive(t *testing.T) {
	if _, err := Boxes("b", "y", true, []Box{{Name: "A", Lo: 0, Q1: 1, Median: 2, Q3: 3, Hi: 4}}); err == nil {
		t.Error("no error")
	}
	p, err := Boxes("b", "y", false, []Box{{Name: "A", Lo: 0, Q1: 1, Median: 2, Q3: 3, Hi: 4}, {Name: "B", Lo: 1, Q1: 2, Median: 3, Q3: 4, Hi: 5}})
	if err != nil {
		t.Fatal(err)
	}
	svg, err := Single("b", p, 3*vg.Inch, 3*vg.Inch).SVG()
	if err != nil {
		t.Fatal(err)
	}
	wellFormed(t, svg)
}

// BenchmarkCornerSVG is the report's costliest figure: 8 parameters,
// 2000 points per panel.
func BenchmarkCornerSVG(b *testing.B) {
	d, n := 8, 2000
	cols := make([][]float64, d)
	names := make([]string, d)
	for j := range cols {
		names[j] = string(rune('a' + j))
		cols[j] = make([]float64, n)
		for i := range n {
			cols[j][i] = math.Sin(float64(i*(j+1))) + float64(j)
		}
	}
	for b.Loop() {
		f, err := Corner("c", names, cols, 2000, 1.4*vg.Inch)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.SVG(); err != nil {
			b.Fatal(err)
		}
	}
}

// A log axis over one value (one run's box, a flat loss) spans a decade
// around it instead of failing.
func TestLogAxisOneValue(t *testing.T) {
	p, err := Boxes("b", "y", true, []Box{{Name: "A", Lo: 0.5, Q1: 0.5, Median: 0.5, Q3: 0.5, Hi: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0.1 || p.Y.Max != 1 {
		t.Errorf("y axis [%v, %v], want [0.1, 1]", p.Y.Min, p.Y.Max)
	}
	if _, err := Single("b", p, 3*vg.Inch, 3*vg.Inch).SVG(); err != nil {
		t.Fatal(err)
	}
	l, err := Lines("l", "x", "y", true, []Series{{X: []float64{0, 1}, Y: []float64{100, 100}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Single("l", l, 3*vg.Inch, 3*vg.Inch).SVG(); err != nil || l.Y.Min != 100 || l.Y.Max != 1000 {
		t.Errorf("flat line on a log axis: [%v, %v], %v", l.Y.Min, l.Y.Max, err)
	}
}

// Thin of a count read from a record: negative (no rows, not a panic)
// or near 2^63 (indices within 0..n-1, increasing, the same as i·n/m in
// exact arithmetic).
func TestThinHostileCounts(t *testing.T) {
	if got := Thin(-5, 10); len(got) != 0 {
		t.Errorf("Thin(-5, 10) = %v", got)
	}
	n := 9_000_000_000_000_000_000
	got := Thin(n, 1000)
	if len(got) != 1000 || got[0] != 0 {
		t.Fatalf("Thin(9e18, 1000): %d indices from %d", len(got), got[0])
	}
	// Each pick within its block [i·n/m, (i+1)·n/m), computed exactly.
	block := func(i, n, m int) (int64, int64) {
		b := func(i int) int64 {
			return new(big.Int).Div(new(big.Int).Mul(big.NewInt(int64(i)), big.NewInt(int64(n))), big.NewInt(int64(m))).Int64()
		}
		return b(i), b(i + 1)
	}
	for i := 1; i < len(got); i++ {
		lo, hi := block(i, n, 1000)
		if got[i] <= got[i-1] || got[i] >= n || int64(got[i]) < lo || int64(got[i]) >= hi {
			t.Fatalf("index %d: %d (previous %d, want in [%d, %d))", i, got[i], got[i-1], lo, hi)
		}
	}
	for _, c := range [][2]int{{10, 3}, {7, 7}, {1000, 999}, {12345, 100}} {
		for i, v := range Thin(c[0], c[1]) {
			if lo, hi := block(i, c[0], min(c[1], c[0])); int64(v) < lo || int64(v) >= hi {
				t.Errorf("Thin(%d, %d)[%d] = %d, want in [%d, %d)", c[0], c[1], i, v, lo, hi)
			}
		}
	}
}

// One sample far from the rest (a stuck chain: −1e20 among values near 2),
// a constant column at −MaxFloat64 and a range spanning the float64 range
// once panicked in gonum's binning; every value lands in a bin.
func TestHistogramExtremeValues(t *testing.T) {
	near := make([]float64, 400)
	for i := range near {
		near[i] = 2 + 1e-3*math.Sin(float64(i))
	}
	for name, x := range map[string][]float64{
		"stuck chain":     append(append([]float64(nil), near...), -1e20),
		"-MaxFloat64":     {-math.MaxFloat64, -math.MaxFloat64},
		"half range":      {-math.MaxFloat64 / 2, 0, math.MaxFloat64 / 2},
		"one value":       {3},
		"rounding at top": {1, 1.0000000000000002, 1e16},
	} {
		p, err := Histogram(name, "x", x, 20, func(float64) float64 { return 1 }, "prior")
		if err != nil || p == nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		lo, hi := minMax(x)
		if !(hi > lo) {
			continue
		}
		h := histogram(x, 20, lo, hi)
		total := 0.0
		for _, b := range h.Bins {
			total += b.Weight
		}
		if total != float64(len(x)) {
			t.Errorf("%s: %g values in the bins, want %d", name, total, len(x))
		}
	}
}

// within fails the test when f takes longer than a generous bound: a
// figure over a range gonum/plot cannot label used to loop for ever.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still running after 30 s (a hang in gonum/plot's tick labelling)", what)
	}
}

// Samples whose span hi − lo overflows float64 (1e308 and −1e308, the
// full range −MaxFloat64…MaxFloat64) make an axis gonum/plot's tick
// labelling loops over for ever: every figure fed from samples or model
// outputs refuses it with an error naming the axis (the report turns it
// into a note), and a figure built by hand over such a range is refused
// by SVG and PNG instead of hanging. A span just inside float64 (±MaxFloat64/2)
// still draws.
func TestAxisSpanBeyondFloat64(t *testing.T) {
	const want = "wider than a float64 can hold"
	wide := []float64{1e308, 0, -1e308}
	full := []float64{-math.MaxFloat64, 0, math.MaxFloat64}
	for name, x := range map[string][]float64{"±1e308": wide, "full range": full} {
		if _, err := Histogram("h", "x", x, 0, nil, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("histogram over %s: %v, want %q", name, err, want)
		}
		// With a prior density (the report's marginals) and a truth mark
		// far from the samples.
		if _, err := Histogram("h", "x", []float64{-1e308, -1e307}, 0, func(float64) float64 { return 1 }, "prior", Mark{X: 1e308}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("histogram with a mark: %v, want %q", err, want)
		}
		if _, err := Lines("trace", "step", "k", false, []Series{{X: []float64{0, 1, 2}, Y: x}}); err == nil || !strings.Contains(err.Error(), "y axis") {
			t.Errorf("trace over %s: %v, want a refused y axis", name, err)
		}
		if _, err := Lines("fit", "x", "y", false, []Series{{X: x, Y: []float64{0, 1, 2}}}); err == nil || !strings.Contains(err.Error(), "x axis") {
			t.Errorf("fit over %s: %v, want a refused x axis", name, err)
		}
		if _, err := Corner("c", []string{"a", "b"}, [][]float64{{1, 2, 3}, x}, 0, vg.Inch); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("corner over %s: %v, want %q", name, err, want)
		}
		if _, err := Boxes("b", "y", false, []Box{{Name: "A", Lo: x[2], Q1: -1, Median: 0, Q3: 1, Hi: x[0]}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("boxes over %s: %v, want %q", name, err, want)
		}
	}
	// A figure assembled elsewhere: refused when drawn, not a hang.
	p := plot.New()
	sc, err := plotter.NewScatter(plotter.XYs{{X: -1e308, Y: 0}, {X: 1e308, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(sc)
	f := Single("wide", p, 3*vg.Inch, 3*vg.Inch)
	within(t, "SVG of a ±1e308 axis", func() {
		if _, err := f.SVG(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SVG: %v, want %q", err, want)
		}
		if _, err := f.PNG(0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PNG: %v, want %q", err, want)
		}
	})
	// Just inside: drawn. A log axis up to MaxFloat64 stays finite.
	within(t, "a histogram over ±MaxFloat64/2", func() {
		h, err := Histogram("h", "x", []float64{-math.MaxFloat64 / 2, 0, math.MaxFloat64 / 2}, 0, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Single("h", h, 3*vg.Inch, 3*vg.Inch).SVG(); err != nil {
			t.Error(err)
		}
		l, err := Lines("l", "x", "y", true, []Series{{X: []float64{0, 1}, Y: []float64{1e-5, 1.7e308}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Single("l", l, 3*vg.Inch, 3*vg.Inch).SVG(); err != nil || l.Y.Max != math.MaxFloat64 {
			t.Errorf("log axis to 1.7e308: max %v, %v", l.Y.Max, err)
		}
	})
}

// A prior truncated to the bounds [2000, 12000] is drawn inside them
// only: samples in [2000, 2300] widen to [1970, 2330] for the curve
// without bounds, to [2000, 2330] with them; the x axis starts at the bound.
func TestHistogramWithinBounds(t *testing.T) {
	x := []float64{2000, 2100, 2200, 2300}
	dens := func(float64) float64 { return 1e-3 }
	for _, c := range []struct {
		lower, upper, xmin, xmax float64
	}{
		{math.Inf(-1), math.Inf(1), 1970, 2330},
		{2000, 12000, 2000, 2330},
		{1990, 2310, 1990, 2310},
	} {
		p, err := HistogramWithin("h", "k", x, 3, dens, "prior", c.lower, c.upper)
		if err != nil {
			t.Fatal(err)
		}
		var f *plotter.Function
		for _, pl := range plottersOf(p) {
			if fn, ok := pl.(*plotter.Function); ok {
				f = fn
			}
		}
		const tol = 1e-9
		if f == nil || math.Abs(f.XMin-c.xmin) > tol || math.Abs(f.XMax-c.xmax) > tol {
			t.Errorf("bounds [%g, %g]: curve %v, want over [%g, %g]", c.lower, c.upper, f, c.xmin, c.xmax)
			continue
		}
		if math.Abs(p.X.Min-c.xmin) > tol || math.Abs(p.X.Max-c.xmax) > tol {
			t.Errorf("bounds [%g, %g]: x axis [%g, %g], want [%g, %g]", c.lower, c.upper, p.X.Min, p.X.Max, c.xmin, c.xmax)
		}
	}
}

// A histogram given as edges and counts (montecarlo's) is drawn as a
// density: each bar's height is count / (total · width), so the areas sum
// to 1 whatever the widths; malformed bins are refused.
func TestBinned(t *testing.T) {
	p, err := Binned("q", "y", []float64{0, 1, 3, 4}, []float64{2, 4, 2}, Mark{X: 2, Name: "p50"})
	if err != nil {
		t.Fatal(err)
	}
	var area float64
	var heights []float64
	for _, pl := range plottersOf(p) {
		if h, ok := pl.(*plotter.Histogram); ok {
			for _, b := range h.Bins {
				area += b.Weight * (b.Max - b.Min)
				heights = append(heights, b.Weight)
			}
		}
	}
	const tol = 1e-12
	if len(heights) != 3 || math.Abs(area-1) > tol || math.Abs(heights[0]-0.25) > tol || math.Abs(heights[1]-0.25) > tol {
		t.Errorf("heights %v, area %v: want [0.25 0.25 0.25], area 1", heights, area)
	}
	if _, err := Single("q", p, 3*vg.Inch, 3*vg.Inch).SVG(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string][2][]float64{
		"short":      {{0, 1}, {1, 2}},
		"descending": {{0, 2, 1}, {1, 1}},
		"nan edge":   {{0, math.NaN()}, {1}},
		"negative":   {{0, 1}, {-1}},
		"empty":      {{0, 1}, {0}},
		"too wide":   {{-1e308, 1e308}, {3}},
	} {
		if _, err := Binned("q", "y", c[0], c[1]); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Tick labels tell the ticks apart (audit 8: a posterior on 40.000–40.075
// had its ticks labelled "40", "40", "40" by gonum's DefaultTicks), and
// each reads back as its tick's value; gonum's labels are kept where they
// already do (ranges as gonum's own tests label them).
func TestTickLabels(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string // nil: only check
	}{
		{40.00001, 40.07, []string{"40.01", "40.04", "40.07"}},
		{40.00001, 40.0752, nil},
		{99999.6, 100000.8, []string{"99999.6", "100000.0", "100000.4", "100000.8"}},
		{0, 1, []string{"0.0", "0.5", "1.0"}},
		{2000, 12000, []string{"3000", "6000", "9000", "12000"}},
		{1e-7, 3e-7, []string{"1e-07", "2e-07", "3e-07"}},
		{1e9 + 0.001, 1e9 + 0.004, nil},
		{-1e-12, 1e-12, nil},
	} {
		var labels []string
		var values []float64
		for _, tk := range (Ticks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
				values = append(values, tk.Value)
			}
		}
		if c.want != nil && strings.Join(labels, " ") != strings.Join(c.want, " ") {
			t.Errorf("[%g, %g]: labels %q, want %q", c.lo, c.hi, labels, c.want)
		}
		seen := map[string]bool{}
		for i, l := range labels {
			x, err := strconv.ParseFloat(l, 64)
			if seen[l] || err != nil || i > 0 && math.Abs(x-values[i]) > 1e-3*(values[i]-values[i-1]) {
				t.Errorf("[%g, %g]: label %q of tick %.17g (labels %q)", c.lo, c.hi, l, values[i], labels)
			}
			seen[l] = true
		}
	}
}
