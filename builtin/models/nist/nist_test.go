package nist

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// LoadAll reads every testdata/*.dat file, in Problems order.
func loadAll(tb testing.TB) []*Dataset {
	tb.Helper()
	var out []*Dataset
	for _, p := range Problems {
		f, err := os.Open(filepath.Join("testdata", p.Name+".dat"))
		if err != nil {
			tb.Fatal(err)
		}
		d, err := ParseStRD(f)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", p.Name, err)
		}
		out = append(out, d)
	}
	return out
}

func TestSpec(t *testing.T) {
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(Problems) != 27 || len(Spec.Settings[0].Choices) != 27 {
		t.Fatalf("%d problems, want the 27 StRD nonlinear regression datasets", len(Problems))
	}
	for i, bad := range []float64{-1, 27, 0.5, math.NaN()} {
		if _, err := New([]float64{bad}); err == nil || !strings.Contains(err.Error(), "problem") {
			t.Errorf("case %d: problem = %v accepted (%v)", i, bad, err)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("no settings accepted")
	}
	m, _ := New([]float64{0})
	if st := m.Eval(make([]float64, 3), make([]float64, 4), make([]float64, 2)); st != abi.Invalid {
		t.Errorf("short θ: status %v, want invalid", st)
	}
}

// Every file parses, states as many parameters as its problem has, and
// matches its header (ParseStRD checks rows = observations and
// DOF = n − P).
func TestParseAll(t *testing.T) {
	for i, d := range loadAll(t) {
		p := Problems[i]
		if d.Name != p.Name {
			t.Errorf("file %s.dat names dataset %q", p.Name, d.Name)
		}
		if len(d.Certified) != p.P || len(d.Starts[0]) != p.P || len(d.Starts[1]) != p.P {
			t.Errorf("%s: %d certified values, want %d", p.Name, len(d.Certified), p.P)
		}
		wantCols := 2
		if p.Name == "Nelson" {
			wantCols = 3
		}
		// NIST's Rat43 file states 9 degrees of freedom; n − P = 11, and
		// its residual standard deviation √(RSS/11) uses 11.
		if dof := d.N - p.P; d.DOF != dof && p.Name != "Rat43" {
			t.Errorf("%s: %d degrees of freedom, n − P = %d", p.Name, d.DOF, dof)
		}
		if rsd := math.Sqrt(d.RSS / float64(d.N-p.P)); LRE(rsd, d.ResidualSD) < 9 {
			t.Errorf("%s: residual SD %.10e, √(RSS/(n−P)) = %.10e", p.Name, d.ResidualSD, rsd)
		}
		if len(d.Columns) != wantCols {
			t.Errorf("%s: columns %v", p.Name, d.Columns)
		}
	}
}

// A damaged file is refused with the line named, never a panic.
func TestParseRefusals(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "Misra1a.dat"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for name, bad := range map[string]string{
		"missing row":  s[:strings.LastIndex(strings.TrimRight(s, "\n"), "\n")],
		"extra column": strings.Replace(s, "10.07E0      77.6E0", "10.07E0 77.6E0 1", 1),
		"not a number": strings.Replace(s, "10.07E0", "ten", 1),
		"no name":      strings.Replace(s, "Dataset Name:", "Dataset:", 1),
		"empty":        "",
		"long line":    strings.Repeat("x", 10000),
	} {
		if _, err := ParseStRD(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// secondSource holds values of each dataset as a second, independent copy
// prints them: the number of observations, the first and last data rows
// (y, x), where given a middle row (mid: its index, y), and where the
// source prints them the first certified parameter and the certified RSS.
// Sources: Eigen's unsupported/test/NonLinearOptimization.cpp (NIST test
// functors: Misra1a, Chwirut2, Hahn1, Misra1d, Lanczos1, Rat42, MGH10,
// BoxBOD, MGH17, MGH09, Bennett5, Thurber, Rat43, Eckerle4; Misra1a–d
// share one dataset), JuliaSmoothOptimizers' OptimizationProblems.jl
// (src/ADNLPProblems: Chwirut1, DanWood, Kirby2, Nelson, Lanczos3,
// Gauss1, Gauss2), lmfit-py's NIST_STRD/Roszman1.dat, fityk's
// samples/enso.dat (ENSO's y; x = 1…168), J. C. Nash's NISTnls problem
// files (Lanczos2), and a Gauss3.dat in a public fitting repository (its
// row 224 tells Gauss3 from Gauss2, which share most of their noise).
var secondSource = map[string]struct {
	n                    int
	y0, x0, yLast, xLast float64
	mid                  int // 0: no middle row checked
	yMid                 float64
	b1                   float64 // 0: not printed by that source
	rss                  float64 // 0: not printed by that source
}{
	"Misra1a":  {14, 10.07, 77.6, 81.78, 760.0, 0, 0, 2.3894212918e+02, 1.2455138894e-01},
	"Misra1b":  {14, 10.07, 77.6, 81.78, 760.0, 0, 0, 0, 0},
	"Misra1c":  {14, 10.07, 77.6, 81.78, 760.0, 0, 0, 0, 0},
	"Misra1d":  {14, 10.07, 77.6, 81.78, 760.0, 0, 0, 4.3736970754e+02, 5.6419295283e-02},
	"Chwirut2": {54, 92.9, 0.5, 28.9, 1.75, 0, 0, 1.6657666537e-01, 5.1304802941e+02},
	"Chwirut1": {214, 92.9, 0.5, 28.95, 1.75, 0, 0, 0, 0},
	"DanWood":  {6, 2.138, 1.309, 5.660, 1.680, 0, 0, 0, 0},
	"Kirby2":   {151, 0.0082, 9.65, 92.2, 371.30, 0, 0, 0, 0},
	"Nelson":   {128, 15.00, 1, 1.20, 64, 0, 0, 0, 0},
	"Hahn1":    {236, 0.591, 24.41, 20.935, 848.23, 0, 0, 1.0776351733e+00, 1.5324382854e+00},
	"Lanczos1": {24, 2.5134, 0, 6.239312536719e-02, 1.15, 0, 0, 0, 0},
	"Lanczos2": {24, 2.51340, 0, 6.23931e-02, 1.15, 0, 0, 9.6251029939e-02, 2.2299428125e-11},
	"Lanczos3": {24, 2.5134, 0, 0.0624, 1.15, 0, 0, 0, 0},
	"Gauss1":   {250, 97.62227, 1, 4.875359, 250, 0, 0, 0, 0},
	"Gauss2":   {250, 97.58776, 1, 4.875312, 250, 223, 9.367410, 0, 0},
	"Gauss3":   {250, 97.58776, 1, 4.875312, 250, 223, 9.367358, 0, 0},
	"Roszman1": {25, 0.252429, -4868.68, 0.624169, -464.17, 0, 0, 2.0196866396e-01, 4.9484847331e-04},
	"ENSO":     {168, 12.9, 1, 14.8, 168, 0, 0, 0, 0},
	"Rat42":    {9, 8.93, 9, 67.08, 79, 0, 0, 7.2462237576e+01, 8.0565229338e+00},
	"Rat43":    {15, 16.08, 1, 717.41, 15, 0, 0, 6.9964151270e+02, 8.7864049080e+03},
	"MGH10":    {16, 3.478e+04, 50, 2.872e+03, 125, 0, 0, 5.6096364710e-03, 8.7945855171e+01},
	"BoxBOD":   {6, 109, 1, 224, 10, 0, 0, 2.1380940889e+02, 1.1680088766e+03},
	"MGH17":    {33, 0.844, 0, 0.406, 320, 0, 0, 3.7541005211e-01, 5.4648946975e-05},
	"MGH09":    {11, 0.1957, 4, 0.0246, 0.0625, 0, 0, 0, 3.0750560385e-04},
	"Thurber":  {37, 80.574, -3.067, 1457.628, 2.200, 0, 0, 1.2881396800e+03, 5.6427082397e+03},
	"Eckerle4": {35, 0.0001575, 400, 0.0000710, 500, 0, 0, 1.5543827178, 1.4635887487e-03},
	"Bennett5": {154, -34.834702, 7.447168, -31.786800, 12.272240, 0, 0, -2.5235058043e+03, 5.2404744073e-04},
}

func TestSecondSource(t *testing.T) {
	byName := map[string]*Dataset{}
	for _, d := range loadAll(t) {
		byName[d.Name] = d
	}
	if len(secondSource) != len(Problems) {
		t.Errorf("a second source for %d of the %d datasets", len(secondSource), len(Problems))
	}
	for name, w := range secondSource {
		d := byName[name]
		if d == nil {
			t.Fatalf("no dataset %s", name)
		}
		first, last := d.Rows[0], d.Rows[len(d.Rows)-1]
		if d.N != w.n || first[0] != w.y0 || first[1] != w.x0 || last[0] != w.yLast || last[1] != w.xLast {
			t.Errorf("%s: n %d, first (%g, %g), last (%g, %g); second source: %d, (%g, %g), (%g, %g)",
				name, d.N, first[0], first[1], last[0], last[1], w.n, w.y0, w.x0, w.yLast, w.xLast)
		}
		if w.mid > 0 && d.Rows[w.mid][0] != w.yMid {
			t.Errorf("%s: row %d has y %g, second source %g", name, w.mid+1, d.Rows[w.mid][0], w.yMid)
		}
		if w.b1 != 0 && d.Certified[0] != w.b1 {
			t.Errorf("%s: certified b1 %g, second source %g", name, d.Certified[0], w.b1)
		}
		if w.rss != 0 && d.RSS != w.rss {
			t.Errorf("%s: certified RSS %g, second source %g", name, d.RSS, w.rss)
		}
	}
}

// LRE is the log relative error −log10(|est − cert|/|cert|), capped at 11
// (NIST's certified values have 11 significant digits).
func LRE(est, cert float64) float64 {
	if est == cert {
		return 11
	}
	if cert == 0 {
		return math.Min(11, -math.Log10(math.Abs(est)))
	}
	return math.Min(11, -math.Log10(math.Abs(est-cert)/math.Abs(cert)))
}

func rss(m Model, d *Dataset, b []float64) float64 {
	x, obs := d.Conditions(), d.Response()
	y := make([]float64, len(obs))
	m.Eval(Theta(b), x, y)
	s := 0.0
	for k := range y {
		s += (y[k] - obs[k]) * (y[k] - obs[k])
	}
	return s
}

// The model at the certified parameters reproduces the certified residual
// sum of squares: the formulas and the data agree with NIST's. rssLRE: the
// parameters are printed to 11 digits, which perturbs the RSS at its
// minimum only to second order, so 9 digits is a lenient bound.
func TestCertifiedRSS(t *testing.T) {
	const rssLRE = 9
	for i, d := range loadAll(t) {
		m := Model{Problem: Problems[i]}
		got := rss(m, d, d.Certified)
		if d.Name == "Lanczos1" {
			// Lanczos1's data are an exact model to 13 digits: its certified
			// RSS (1.4e-25) is rounding noise, which parameters printed to
			// 11 digits cannot reproduce; they must still fit to ~1e-20.
			if got > 1e-19 {
				t.Errorf("Lanczos1: RSS at the certified values %g, want < 1e-19", got)
			}
			continue
		}
		if l := LRE(got, d.RSS); l < rssLRE {
			t.Errorf("%s: RSS at the certified values %.10e, certified %.10e (LRE %.1f)", d.Name, got, d.RSS, l)
		}
		// Off the minimum the RSS grows: a wrong formula could still fit.
		if off := rss(m, d, d.Starts[1]); !(off > d.RSS) {
			t.Errorf("%s: RSS at start 2 %g not above the certified minimum %g", d.Name, off, d.RSS)
		}
	}
}

// The analytic Jacobian agrees with central differences at both starts and
// at the certified values. fdTol: central differences with a relative step
// h = 1e-6 are accurate to O(h²) ≈ 1e-12 relative plus rounding
// ε·|f|/h ≈ 1e-10 relative to the row's scale.
func TestJacobianMatchesFiniteDifferences(t *testing.T) {
	const fdTol = 1e-6
	for i, d := range loadAll(t) {
		m := Model{Problem: Problems[i]}
		x := d.Conditions()
		n := len(d.Rows)
		for _, b := range [][]float64{d.Starts[0], d.Starts[1], d.Certified} {
			theta := Theta(b)
			y := make([]float64, n)
			jac := make([]float64, n*MaxParams)
			if st := m.Jacobian(theta, x, y, jac); st != abi.OK {
				t.Fatalf("%s: status %v", d.Name, st)
			}
			y0 := make([]float64, n)
			m.Eval(theta, x, y0)
			for k := range y {
				if math.Float64bits(y[k]) != math.Float64bits(y0[k]) {
					t.Fatalf("%s: Jacobian's y[%d] = %v, Eval's %v", d.Name, k, y[k], y0[k])
				}
			}
			yp, ym := make([]float64, n), make([]float64, n)
			for j := range MaxParams {
				h := 1e-6 * math.Abs(theta[j])
				if h == 0 {
					h = 1e-6
				}
				tp := append([]float64(nil), theta...)
				tm := append([]float64(nil), theta...)
				tp[j] += h
				tm[j] -= h
				m.Eval(tp, x, yp)
				m.Eval(tm, x, ym)
				scale := 0.0
				for k := range n {
					scale = math.Max(scale, math.Abs(jac[k*MaxParams+j]))
				}
				for k := range n {
					fd := (yp[k] - ym[k]) / (2 * h)
					an := jac[k*MaxParams+j]
					if j >= Problems[i].P {
						if an != 0 || fd != 0 {
							t.Fatalf("%s: unused b%d has derivative %g (fd %g)", d.Name, j+1, an, fd)
						}
						continue
					}
					if math.Abs(fd-an) > fdTol*(scale+math.Abs(y[k])/math.Abs(theta[j]+h)) {
						t.Errorf("%s at %v: ∂y%d/∂b%d = %.10g, central difference %.10g", d.Name, b, k, j+1, an, fd)
					}
				}
			}
		}
	}
}
