package figures

import (
	"bytes"
	"fmt"
	"github.com/kinfer/kinfer/builtin/analysis"
	"image/color"
	"math"
	"sort"
	"strconv"

	"github.com/kinfer/kinfer/builtin/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one drawable figure: a single plot or a grid of panels, with
// its size.
type Figure struct {
	// Name is a file-name stem ("posterior-k"); Title a caption.
	Name, Title string
	W, H        vg.Length
	// Rows of panels (one row of one panel for a single plot); nil panels
	// are left blank.
	Panels [][]*plot.Plot
	// Pad is the space between panels.
	Pad vg.Length
	// LegendBeside, when > 0, draws a single plot's legend in a column of
	// this width right of the plot instead of inside it (for many
	// entries).
	LegendBeside vg.Length
}

// Single wraps one plot into a figure of size w×h.
func Single(name string, p *plot.Plot, w, h vg.Length) *Figure {
	return &Figure{Name: name, Title: p.Title.Text, W: w, H: h, Panels: [][]*plot.Plot{{p}}}
}

// Grid is a figure of rows×cols panels (row-major; nil entries blank).
func Grid(name, title string, panels [][]*plot.Plot, w, h vg.Length) *Figure {
	return &Figure{Name: name, Title: title, W: w, H: h, Panels: panels, Pad: vg.Points(4)}
}

func (f *Figure) draw(c vg.CanvasSizer) {
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if len(f.Panels) == 1 && len(f.Panels[0]) == 1 {
		p := f.Panels[0][0]
		if f.LegendBeside <= 0 {
			p.Draw(dc)
			return
		}
		leg := p.Legend
		p.Legend = plot.NewLegend()
		p.Draw(draw.Crop(dc, 0, -f.LegendBeside, 0, 0))
		p.Legend = leg
		lc := draw.Crop(dc, dc.Max.X-dc.Min.X-f.LegendBeside+vg.Points(6), 0, 0, -vg.Points(20))
		leg.Top, leg.Left = true, true
		leg.Draw(lc)
		return
	}
	cols := 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	rows := make([][]*plot.Plot, len(f.Panels))
	for i, r := range f.Panels {
		rows[i] = make([]*plot.Plot, cols)
		copy(rows[i], r)
	}
	t := draw.Tiles{Rows: len(rows), Cols: cols, PadX: f.Pad, PadY: f.Pad, PadTop: f.Pad, PadBottom: f.Pad, PadLeft: f.Pad, PadRight: f.Pad}
	cs := plot.Align(rows, t, dc)
	for i, r := range rows {
		for j, p := range r {
			if p != nil {
				p.Draw(cs[i][j])
			}
		}
	}
}

// SVG renders the figure as an SVG document.
func (f *Figure) SVG() ([]byte, error) {
	c := vgsvg.New(f.W, f.H)
	if err := f.safeDraw(c); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// PNG renders the figure as a PNG image at dpi dots per inch (96 if 0).
func (f *Figure) PNG(dpi int) ([]byte, error) {
	if dpi <= 0 {
		dpi = 96
	}
	c := vgimg.NewWith(vgimg.UseWH(f.W, f.H), vgimg.UseDPI(dpi))
	if err := f.safeDraw(c); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	return b.Bytes(), nil
}

// safeDraw turns a panic of gonum/plot (e.g. a log axis over a
// non-positive range) into an error naming the figure.
func (f *Figure) safeDraw(c vg.CanvasSizer) (err error) {
	for _, row := range f.Panels {
		for _, p := range row {
			if p == nil {
				continue
			}
			if err := checkAxes(p); err != nil {
				return fmt.Errorf("figure %s: %w", f.Name, err)
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("figure %s: %v", f.Name, r)
		}
	}()
	f.draw(c)
	return nil
}

// palette is the tab10 palette (matplotlib's default cycle).
var palette = []color.NRGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// Color is the i-th colour of the palette (cycling).
func Color(i int) color.NRGBA { return palette[((i%len(palette))+len(palette))%len(palette)] }

// Black is the colour of observations and reference lines.
var Black = color.NRGBA{A: 0xff}

func fade(c color.Color, a uint8) color.NRGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = a
	return n
}

// added, when set (by tests), sees every plotter added to a plot.
var added func(p *plot.Plot, pl plot.Plotter)

// add adds pl to p (gonum's plot keeps its plotters unexported).
func add(p *plot.Plot, pl plot.Plotter) {
	p.Add(pl)
	if added != nil {
		added(p, pl)
	}
}

// newPlot is a plot with the title and axis labels, and a light grid.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker, p.Y.Tick.Marker = Ticks{}, Ticks{}
	add(p, plotter.NewGrid())
	return p
}

// Series is one line of a line plot. Lo and Hi, when both set, bound a
// shaded band (quartiles, a 90 % predictive band). Points draws markers
// instead of a line (observations).
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	Color  color.Color // nil: the palette's by position
	Dashes []vg.Length // nil: solid
	Thin   bool
	Points bool
}

// Lines draws the series over a shared x axis, logY for a log10 y axis
// (non-positive values are left out there). Non-finite values are left
// out. The legend is drawn when any series has a name.
func Lines(title, xlabel, ylabel string, logY bool, ss []Series) (*plot.Plot, error) {
	p := newPlot(title, xlabel, ylabel)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: 3}
	}
	ok := func(y float64) bool { return !math.IsNaN(y) && !math.IsInf(y, 0) && (!logY || y > 0) }
	any := false
	for k, s := range ss {
		c := s.Color
		if c == nil {
			c = Color(k)
		}
		if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) && len(s.X) > 1 {
			var poly plotter.XYs
			for i := range s.X {
				if ok(s.Hi[i]) && ok(s.Lo[i]) && finite(s.X[i]) {
					poly = append(poly, plotter.XY{X: s.X[i], Y: s.Hi[i]})
				}
			}
			for i := len(s.X) - 1; i >= 0; i-- {
				if ok(s.Hi[i]) && ok(s.Lo[i]) && finite(s.X[i]) {
					poly = append(poly, plotter.XY{X: s.X[i], Y: s.Lo[i]})
				}
			}
			if len(poly) > 2 {
				pg, err := plotter.NewPolygon(poly)
				if err != nil {
					return nil, err
				}
				pg.Color = fade(c, 0x40)
				pg.LineStyle.Width = 0
				add(p, pg)
			}
		}
		var xy plotter.XYs
		for i := range s.X {
			if i < len(s.Y) && ok(s.Y[i]) && finite(s.X[i]) {
				xy = append(xy, plotter.XY{X: s.X[i], Y: s.Y[i]})
			}
		}
		if len(xy) == 0 {
			continue
		}
		any = true
		if s.Points {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle.Color = c
			sc.GlyphStyle.Radius = vg.Points(1.6)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			add(p, sc)
			if s.Name != "" {
				p.Legend.Add(s.Name, sc)
			}
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color = c
		l.Width = vg.Points(1.5)
		if s.Thin {
			l.Width = vg.Points(0.7)
		}
		l.Dashes = s.Dashes
		add(p, l)
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
		}
	}
	if !any {
		return nil, fmt.Errorf("%s: nothing to plot (no finite values)", title)
	}
	if logY {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range ss {
			for _, v := range [][]float64{s.Y, s.Lo, s.Hi} {
				for _, y := range v {
					if ok(y) {
						lo, hi = math.Min(lo, y), math.Max(hi, y)
					}
				}
			}
		}
		decades(&p.Y, lo, hi)
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return checked(p)
}

// decades sets a log axis to whole decades around [lo, hi] (lo > 0), at
// least one decade wide: gonum's own padding of a one-value range would
// reach below zero. The ends stay within (0, MaxFloat64]: the decade
// above 1.7e308 is +Inf, the one below 5e-324 is 0.
func decades(a *plot.Axis, lo, hi float64) {
	a.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	a.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
	if !(a.Max > a.Min) {
		a.Max = a.Min * 10
	}
	if a.Min <= 0 {
		a.Min = lo
	}
	a.Max = math.Min(a.Max, math.MaxFloat64)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkAxes refuses a plot whose x or y axis cannot be drawn: an end
// that is not finite, or a span hi − lo that overflows float64 (one
// sample at 1e308 and one at −1e308). gonum/plot's tick labelling
// (Talbot, Lin & Hanrahan) loops for ever over such a range — a hang,
// not a panic that safeDraw could recover — so every figure built from
// samples or model outputs is checked when it is built (Histogram,
// Lines, Corner, Boxes) and again before it is drawn. An axis with no
// data (gonum's +Inf/−Inf start) is fine: gonum draws it as [0, 1].
func checkAxes(p *plot.Plot) error {
	for _, a := range []struct {
		name string
		ax   *plot.Axis
	}{{"x", &p.X}, {"y", &p.Y}} {
		lo, hi := a.ax.Min, a.ax.Max
		if math.IsInf(lo, 1) && math.IsInf(hi, -1) {
			continue
		}
		if !finite(lo) || !finite(hi) || !finite(hi-lo) {
			return fmt.Errorf("the %s axis would span [%g, %g], wider than a float64 can hold (hi − lo = %g): not drawn", a.name, lo, hi, hi-lo)
		}
	}
	return nil
}

// checked is p unless its axes cannot be drawn (checkAxes), then the
// error, prefixed with the plot's title when it has one.
func checked(p *plot.Plot) (*plot.Plot, error) {
	if err := checkAxes(p); err != nil {
		if p.Title.Text != "" {
			return nil, fmt.Errorf("%s: %w", p.Title.Text, err)
		}
		return nil, err
	}
	return p, nil
}

// Mark is a vertical reference line of a histogram (a truth, the best
// point); nil Color: black. Dashed unless Solid.
type Mark struct {
	X     float64
	Name  string
	Color color.Color
	Solid bool
}

// Histogram draws x as a density histogram (area 1) with bins bins
// (0: the square-root rule, at most 40), and density, when not nil,
// drawn as a line over the histogram's range: a marginal posterior against
// its prior (Bartsoen et al. 2023, Fig. 5–6). Each mark with a finite X
// is a vertical line.
func Histogram(title, xlabel string, x []float64, bins int, density func(float64) float64, densityName string, marks ...Mark) (*plot.Plot, error) {
	return HistogramWithin(title, xlabel, x, bins, density, densityName, math.Inf(-1), math.Inf(1), marks...)
}

// HistogramWithin is Histogram with the density drawn only inside
// [lower, upper] (a prior truncated to the model's bounds, which is 0
// outside them): over the histogram's range widened by 10 %, cut to
// [lower, upper].
func HistogramWithin(title, xlabel string, x []float64, bins int, density func(float64) float64, densityName string, lower, upper float64, marks ...Mark) (*plot.Plot, error) {
	var v plotter.Values
	for _, e := range x {
		if finite(e) {
			v = append(v, e)
		}
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("%s: no finite values", title)
	}
	if bins <= 0 {
		bins = min(40, max(5, int(math.Sqrt(float64(len(v))))))
	}
	lo, hi := minMax(v)
	if !(hi > lo) { // one value: a bin around it, inside the float64 range
		w := math.Max(math.Abs(lo)*1e-6, 1e-12)
		lo, hi = math.Max(lo-w, -math.MaxFloat64), math.Min(hi+w, math.MaxFloat64)
	}
	p := newPlot(title, xlabel, "density")
	h := histogram(v, bins, lo, hi)
	h.Normalize(1)
	h.FillColor = fade(Color(0), 0x80)
	h.LineStyle.Width = vg.Points(0.5)
	add(p, h)
	p.Legend.Add(fmt.Sprintf("samples (%d)", len(x)), h)
	if density != nil {
		pad := 0.1 * (hi - lo)
		if !finite(lo-pad) || !finite(hi+pad) || !finite((hi+pad)-(lo-pad)) {
			pad = 0
		}
		f := plotter.NewFunction(func(t float64) float64 {
			d := density(t)
			if !finite(d) {
				return 0
			}
			return d
		})
		a, b := lo-pad, hi+pad
		if lower > a && lower < hi {
			a = lower
		}
		if upper < b && upper > lo {
			b = upper
		}
		f.XMin, f.XMax, f.Samples = a, b, 200
		f.Color = Color(3)
		f.Width = vg.Points(1.5)
		add(p, f)
		p.Legend.Add(densityName, f)
		p.X.Min, p.X.Max = math.Min(a, lo), math.Max(b, hi)
	}
	return finishMarked(p, marks)
}

// Binned draws a histogram already binned — counts[i] values in
// [edges[i], edges[i+1]] — as a density (area 1), e.g. montecarlo's
// histogram_edges and histogram_counts, with each mark of finite X as a
// vertical line. The edges must be finite and ascending, the counts finite
// and ≥ 0, not all 0, one fewer than the edges.
func Binned(title, xlabel string, edges, counts []float64, marks ...Mark) (*plot.Plot, error) {
	if len(edges) < 2 || len(counts) != len(edges)-1 {
		return nil, fmt.Errorf("%s: %d edges and %d counts, want n+1 edges for n ≥ 1 counts", title, len(edges), len(counts))
	}
	total := 0.0
	for i, e := range edges {
		if !finite(e) || i > 0 && !(e > edges[i-1]) {
			return nil, fmt.Errorf("%s: edge %d is %g: want finite edges in ascending order", title, i, e)
		}
	}
	for i, c := range counts {
		if !finite(c) || c < 0 {
			return nil, fmt.Errorf("%s: count %d is %g: want finite and ≥ 0", title, i, c)
		}
		total += c
	}
	if !(total > 0) || !finite(total) {
		return nil, fmt.Errorf("%s: no values in the bins", title)
	}
	// The density of each bin by its own width (gonum's Normalize takes
	// one width for all).
	bins := make([]plotter.HistogramBin, len(counts))
	for i, c := range counts {
		bins[i] = plotter.HistogramBin{Min: edges[i], Max: edges[i+1], Weight: c / total / (edges[i+1] - edges[i])}
	}
	h := &plotter.Histogram{Bins: bins, Width: edges[1] - edges[0], LineStyle: plotter.DefaultLineStyle}
	p := newPlot(title, xlabel, "density")
	h.FillColor = fade(Color(0), 0x80)
	h.LineStyle.Width = vg.Points(0.5)
	add(p, h)
	p.Legend.Add(fmt.Sprintf("values (%s)", strconv.FormatFloat(total, 'g', -1, 64)), h)
	return finishMarked(p, marks)
}

// finishMarked draws each mark of finite X as a vertical line, puts the
// legend on top and checks the plot's axes.
func finishMarked(p *plot.Plot, marks []Mark) (*plot.Plot, error) {
	for _, m := range marks {
		if finite(m.X) {
			c := m.Color
			if c == nil {
				c = Black
			}
			vline(p, m, c)
		}
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return checked(p)
}

// vline draws the mark as a vertical line across the plot area.
func vline(p *plot.Plot, m Mark, c color.Color) {
	l := &vertical{X: m.X}
	l.Color = c
	l.Width = vg.Points(1.2)
	if !m.Solid {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	add(p, l)
	if m.Name != "" {
		p.Legend.Add(m.Name, l)
	}
}

// vertical is a vertical line across the whole plot area at X.
type vertical struct {
	X float64
	draw.LineStyle
}

func (v *vertical) Plot(c draw.Canvas, p *plot.Plot) {
	x := c.X(p.X.Norm(v.X))
	c.StrokeLine2(v.LineStyle, x, c.Min.Y, x, c.Max.Y)
}

// DataRange covers X only (the y range is the other plotters').
func (v *vertical) DataRange() (xmin, xmax, ymin, ymax float64) {
	return v.X, v.X, math.Inf(1), math.Inf(-1)
}

func (v *vertical) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(v.LineStyle, c.Min.X, y, c.Max.X, y)
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, e := range v {
		lo, hi = math.Min(lo, e), math.Max(hi, e)
	}
	return lo, hi
}

// Corner is the corner plot of the columns cols (one per name): the
// marginal histograms on the diagonal and pairwise scatter below it, from
// at most maxPoints rows (evenly spaced, deterministic; 0: all). size is
// one panel's side.
func Corner(name string, names []string, cols [][]float64, maxPoints int, size vg.Length) (*Figure, error) {
	d := len(names)
	if d == 0 || len(cols) != d {
		return nil, fmt.Errorf("corner: %d names, %d columns", d, len(cols))
	}
	n := len(cols[0])
	idx := Thin(n, maxPoints)
	panels := make([][]*plot.Plot, d)
	for i := range d {
		panels[i] = make([]*plot.Plot, d)
		for j := 0; j <= i; j++ {
			var p *plot.Plot
			var err error
			xl, yl := "", ""
			if i == d-1 {
				xl = names[j]
			}
			if j == 0 && i > 0 {
				yl = names[i]
			}
			if i == j {
				if p, err = Histogram("", xl, cols[i], 0, nil, ""); err != nil {
					return nil, fmt.Errorf("%s: %w", names[i], err)
				}
				p.Legend = plot.NewLegend()
				p.Y.Label.Text = yl
				p.Y.Tick.Marker = plot.ConstantTicks{}
			} else {
				p = newPlot("", xl, yl)
				xy := make(plotter.XYs, 0, len(idx))
				for _, r := range idx {
					if finite(cols[j][r]) && finite(cols[i][r]) {
						xy = append(xy, plotter.XY{X: cols[j][r], Y: cols[i][r]})
					}
				}
				sc, err := plotter.NewScatter(xy)
				if err != nil {
					return nil, err
				}
				sc.GlyphStyle.Color = fade(Color(0), 0x60)
				sc.GlyphStyle.Radius = vg.Points(0.9)
				sc.GlyphStyle.Shape = draw.CircleGlyph{}
				add(p, sc)
				if _, err := checked(p); err != nil {
					return nil, fmt.Errorf("%s against %s: %w", names[i], names[j], err)
				}
			}
			small(p)
			panels[i][j] = p
		}
	}
	side := size * vg.Length(d)
	return Grid(name, fmt.Sprintf("corner plot (%d of %d samples)", len(idx), n), panels, side, side), nil
}

// small shrinks a panel's fonts for grids.
func small(p *plot.Plot) {
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(8)
		a.Tick.Label.Font.Size = vg.Points(6)
	}
	p.Title.TextStyle.Font.Size = vg.Points(9)
}

// Small shrinks the fonts of a plot that is a panel of a grid.
func Small(p *plot.Plot) { small(p) }

// Thin returns at most m indices of 0..n-1, evenly spaced (all if m ≤ 0
// or n ≤ m): the rows a plot draws of a long sample.
func Thin(n, m int) []int { return analysis.Thin(n, m) }

// Box is one box of a box plot: whiskers Lo and Hi, quartiles, median.
type Box struct {
	Name                   string
	Lo, Q1, Median, Q3, Hi float64
	Color                  color.Color
}

// Boxes draws one box per group, named on the x axis, logY for a log10 y
// axis. The box statistics are the caller's (e.g. Tukey's, with type-7
// quartiles).
func Boxes(title, ylabel string, logY bool, boxes []Box) (*plot.Plot, error) {
	p := newPlot(title, "", ylabel)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: 3}
	}
	var ticks []plot.Tick
	for k, b := range boxes {
		for _, v := range []float64{b.Lo, b.Q1, b.Median, b.Q3, b.Hi} {
			if !finite(v) || (logY && v <= 0) {
				return nil, fmt.Errorf("%s: box %s has a value %g that cannot be drawn", title, b.Name, v)
			}
		}
		c := b.Color
		if c == nil {
			c = Color(k)
		}
		x := float64(k)
		const w = 0.3
		rect, err := plotter.NewPolygon(plotter.XYs{{X: x - w, Y: b.Q1}, {X: x + w, Y: b.Q1}, {X: x + w, Y: b.Q3}, {X: x - w, Y: b.Q3}})
		if err != nil {
			return nil, err
		}
		rect.Color = fade(c, 0x80)
		rect.LineStyle.Width = vg.Points(0.8)
		add(p, rect)
		for _, seg := range []plotter.XYs{
			{{X: x, Y: b.Lo}, {X: x, Y: b.Q1}}, {{X: x, Y: b.Q3}, {X: x, Y: b.Hi}},
			{{X: x - w/2, Y: b.Lo}, {X: x + w/2, Y: b.Lo}}, {{X: x - w/2, Y: b.Hi}, {X: x + w/2, Y: b.Hi}},
			{{X: x - w, Y: b.Median}, {X: x + w, Y: b.Median}},
		} {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return nil, err
			}
			l.Width = vg.Points(0.8)
			if seg[0].Y == b.Median && seg[1].Y == b.Median {
				l.Width = vg.Points(2)
			}
			add(p, l)
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: b.Name})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.6, float64(len(boxes))-0.4
	if logY {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, b := range boxes {
			lo, hi = math.Min(lo, b.Lo), math.Max(hi, b.Hi)
		}
		decades(&p.Y, lo, hi)
	}
	return checked(p)
}

// Quantiles are the type-7 (linear interpolation, Hyndman & Fan)
// p-quantiles of the finite values of x, for each p (NaN when x has none),
// by builtin/stats.
func Quantiles(x []float64, ps ...float64) []float64 {
	v := make([]float64, 0, len(x))
	for _, e := range x {
		if finite(e) {
			v = append(v, e)
		}
	}
	sort.Float64s(v)
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = math.NaN()
		if len(v) > 0 {
			out[i] = stats.QuantileSorted(v, p)
		}
	}
	return out
}

// histogram bins v (finite, within [lo, hi], lo < hi) into n equal bins.
// gonum's plotter.NewHist panics when rounding puts a value past the last
// bin, which one sample far from the rest (a stuck chain 1e16 spreads
// away) or a range near ±MaxFloat64 does; here every index is clamped.
func histogram(v plotter.Values, n int, lo, hi float64) *plotter.Histogram {
	w := hi/float64(n) - lo/float64(n) // (hi − lo)/n without overflow
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i].Min = lo + float64(i)*w
		bins[i].Max = lo + float64(i+1)*w
	}
	bins[n-1].Max = hi
	for _, x := range v {
		t := (x/w - lo/w) // (x − lo)/w without overflow
		k := n - 1
		if t < float64(n-1) { // NaN goes to the last bin too
			k = max(0, int(t))
		}
		bins[k].Weight++
	}
	return &plotter.Histogram{Bins: bins, Width: w, LineStyle: plotter.DefaultLineStyle}
}
