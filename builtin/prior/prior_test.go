package prior

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

const (
	// refTol is the relative tolerance against gonum's distuv (an
	// independent implementation of the same closed forms).
	refTol = 1e-12
	// mpTol is the relative tolerance against 20-digit mpmath references:
	// AS 241 is good to about 1e-16, and the log-space paths lose a few ulps.
	mpTol = 1e-13
	// fdTol is the relative tolerance of an analytic derivative against a
	// central difference with step fdStep·max(1, |x|): the truncation error
	// is O(h²) and rounding O(ε/h), both ≈ 1e-10 here.
	fdTol  = 1e-7
	fdStep = 1e-5
	// quadTol bounds the error of the midpoint/Simpson quadratures below
	// (grid sizes chosen so the discretisation error is far smaller).
	quadTol = 1e-7
	// gridTol bounds the midpoint rule ∫₀¹Q(u)du on 2·10⁵ cells, relative to
	// sd: with an unbounded side Q grows like √(−2 log(1−u)) in the last
	// cell, which costs ≈ 1e-7.
	gridTol = 1e-6
)

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(1e-300, math.Abs(want))
}

// uGrid is a set of probabilities covering both tails.
var uGrid = []float64{1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 0.001, 0.02, 0.075, 0.1, 0.25, 0.5, 0.6, 0.9, 0.925, 0.975, 0.999, 1 - 1e-9}

func TestAgainstGonum(t *testing.T) {
	type pair struct {
		d   Dist
		ref interface {
			LogProb(float64) float64
			Quantile(float64) float64
		}
		xs []float64
	}
	mk := func(d Dist, err error) Dist {
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	pairs := []pair{
		{mk(NewNormal(0, 1)), distuv.Normal{Mu: 0, Sigma: 1}, []float64{-30, -3, -0.5, 0, 1, 7}},
		{mk(NewNormal(-2.5, 0.3)), distuv.Normal{Mu: -2.5, Sigma: 0.3}, []float64{-4, -2.5, -2, 1}},
		{mk(NewLogNormal(0.5, 0.8)), distuv.LogNormal{Mu: 0.5, Sigma: 0.8}, []float64{1e-3, 0.3, 1, 1.6487, 10, 500}},
		{mk(NewUniform(2000, 9000)), distuv.Uniform{Min: 2000, Max: 9000}, []float64{2000, 2500, 8999.5, 9000}},
	}
	for _, p := range pairs {
		for _, x := range p.xs {
			if got, want := p.d.LogPdf(x), p.ref.LogProb(x); !relClose(got, want, refTol) {
				t.Errorf("%v LogPdf(%v) = %v, gonum %v", p.d, x, got, want)
			}
		}
		for _, u := range uGrid {
			if u < 1e-200 {
				continue // gonum's lognormal overflows exp there as well; see tail test
			}
			if got, want := p.d.Quantile(u), p.ref.Quantile(u); !relClose(got, want, refTol) {
				t.Errorf("%v Quantile(%v) = %v, gonum %v", p.d, u, got, want)
			}
		}
	}
}

func TestOutsideSupport(t *testing.T) {
	u, _ := NewUniform(-1, 2)
	ln, _ := NewLogNormal(0, 1)
	tn, _ := NewTruncNormal(0, 1, -1, 2)
	for _, c := range []struct {
		d Dist
		x float64
	}{{u, -1.0001}, {u, 2.5}, {ln, 0}, {ln, -1}, {tn, -1.5}, {tn, 2.01}, {u, math.NaN()}} {
		if got := c.d.LogPdf(c.x); !math.IsInf(got, -1) {
			t.Errorf("%v LogPdf(%v) = %v, want -Inf", c.d, c.x, got)
		}
		if got := c.d.DLogPdf(c.x); got != 0 {
			t.Errorf("%v DLogPdf(%v) = %v, want 0 outside the support", c.d, c.x, got)
		}
	}
	for _, d := range []Dist{u, ln, tn} {
		for _, bad := range []float64{-0.1, 1.1, math.NaN()} {
			if !math.IsNaN(d.Quantile(bad)) {
				t.Errorf("%v Quantile(%v) should be NaN", d, bad)
			}
		}
		lo, hi := d.Support()
		if d.Quantile(0) != lo || d.Quantile(1) != hi {
			t.Errorf("%v Quantile(0), Quantile(1) = %v, %v; want support %v, %v", d, d.Quantile(0), d.Quantile(1), lo, hi)
		}
	}
}

func TestStdNormalTails(t *testing.T) {
	// References: mpmath 1.3.0 at 40 digits, log(ncdf(z)) and findroot of
	// log(ncdf(x)) = log(p) or lp (root-finding on ncdf(x) − p itself stops
	// early for tiny p); printed to 20 digits.
	logCDF := []struct{ z, want float64 }{
		{-1, -1.8410216450092635058},
		{-5, -15.064998393988725736},
		{-20, -203.91715537109726394},
		{-36.9, -685.33288316535061216},
		{-37, -689.0305855768905936},
		{-37.1, -692.73828071562329266},
		{-38, -726.5572160188201301},
		{-40, -804.60844201375378817},
		{-100, -5005.5242086942050886},
		{-1e4, -50000010.129278915181},
		{0, -0.69314718055994530942},
		{3, -0.0013508099647481937988},
		{10, -7.6198530241605260704e-24},
	}
	for _, c := range logCDF {
		if got := StdNormalLogCDF(c.z); !relClose(got, c.want, mpTol) {
			t.Errorf("StdNormalLogCDF(%v) = %.17g, mpmath %.17g", c.z, got, c.want)
		}
	}
	quant := []struct{ p, want float64 }{
		{0.975, 1.9599639845400542355},
		{0.3, -0.52440051270804078404},
		{1e-3, -3.0902323061678135415},
		{0.02, -2.0537489106318230529},
		{0.08, -1.405071560309632556},
		{1e-10, -6.3613409024040562047},
		{1e-50, -14.933337534788488981},
		{1e-300, -37.047096299361199237},
		{0.999999, 4.7534243088228989482},
	}
	for _, c := range quant {
		// 0.999999 is itself rounded in float64 (1 − p carries a relative
		// error ~1e-11), so that point gets a looser tolerance.
		tol := mpTol
		if c.p > 0.99 {
			tol = 1e-10
		}
		if got := StdNormalQuantile(c.p); !relClose(got, c.want, tol) {
			t.Errorf("StdNormalQuantile(%v) = %.17g, mpmath %.17g", c.p, got, c.want)
		}
	}
	if got := StdNormalQuantile(0.5); got != 0 {
		t.Errorf("StdNormalQuantile(0.5) = %v, want 0", got)
	}
	quantLog := []struct{ lp, want float64 }{
		{-650, -35.93045235382607372},
		{-700, -37.295079632647416957},
		{-1000, -44.61574773196940302},
		{-1e4, -141.3798398731271637},
		{-1e6, -1414.207782991017327},
	}
	for _, c := range quantLog {
		if got := StdNormalQuantileLog(c.lp); !relClose(got, c.want, mpTol) {
			t.Errorf("StdNormalQuantileLog(%v) = %.17g, mpmath %.17g", c.lp, got, c.want)
		}
	}
}

func TestDLogPdfFiniteDifference(t *testing.T) {
	ds := []struct {
		d  Dist
		xs []float64
	}{
		{must(NewNormal(1, 2)), []float64{-3, 0, 1, 4.5}},
		{must(NewLogNormal(0.5, 0.8)), []float64{0.05, 0.7, 2, 30}},
		{must(NewUniform(-1, 3)), []float64{-0.5, 2}},
		{must(NewTruncNormal(0, 1, -1, 2)), []float64{-0.5, 0.3, 1.7}},
		{must(NewTruncNormal(0, 1, 40, 45)), []float64{40.5, 44}},
	}
	for _, c := range ds {
		for _, x := range c.xs {
			h := fdStep * math.Max(1, math.Abs(x))
			fd := (c.d.LogPdf(x+h) - c.d.LogPdf(x-h)) / (2 * h)
			got := c.d.DLogPdf(x)
			if math.Abs(got-fd) > fdTol*math.Max(1, math.Abs(fd)) {
				t.Errorf("%v DLogPdf(%v) = %v, central difference %v", c.d, x, got, fd)
			}
		}
	}
}

func must(d Dist, err error) Dist {
	if err != nil {
		panic(err)
	}
	return d
}

// simpson integrates f over [a, b] with n (even) intervals.
func simpson(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(a+float64(i)*h)
	}
	return s * h / 3
}

func TestTruncNormal(t *testing.T) {
	// Mean μ + σ(φ(α) − φ(β))/(Φ(β) − Φ(α)) (Johnson, Kotz & Balakrishnan
	// 1994, ch. 13, truncated normal) and log(Φ(β) − Φ(α)), both evaluated by
	// mpmath 1.3.0 at 50 digits (upper-tail intervals via Φ(−α) − Φ(−β)).
	inf := math.Inf(1)
	cases := []struct {
		mu, sd, lo, hi float64
		mean, logZ     float64
	}{
		{0, 1, -1, 2, 0.22963717909132896862, -0.20016629432446257995},
		{0, 1, 3, 5, 3.2826943799422984506, -6.6079385945968929281},
		{0, 1, 8, 9, 8.1211889929797971226, -35.013618593437148117},
		{0, 1, 40, 45, 40.024968847207263723, -804.60844201375378817},
		{0, 1, -45, -40, -40.024968847207263723, -804.60844201375378817},
		{1, 2, -1e-9, 1e-9, 8.333333333333333333e-20, -21.767204370151083898},
		{2, 0.5, 0, inf, 2.0000669172322342876, -0.00003167174337748926386},
		{0, 1, -50, 50, 0, 0},
		// either side of the narrow-interval switch, centre and tails
		{0, 1, 0.2, 0.9, 0.52795908758828701675, -1.4410455631253091661},
		{0, 1, 0.2, 0.8, 0.48520091737840963222, -1.565971934827686296},
		{0, 1, -3, -2.8, -2.89039977979073738, -6.7210829515336758525},
		{0, 1, 40, 40.01, 40.004667511950236313, -805.71746594536822591},
	}
	for _, c := range cases {
		d, err := NewTruncNormal(c.mu, c.sd, c.lo, c.hi)
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(d.logZ, c.logZ, mpTol) && math.Abs(d.logZ-c.logZ) > 1e-300 {
			t.Errorf("%v log mass = %.17g, mpmath %.17g", d, d.logZ, c.logZ)
		}
		// Mean by the midpoint rule on a u grid: E[x] = ∫₀¹ Q(u) du.
		const n = 200000
		sum := 0.0
		for i := range n {
			x := d.Quantile((float64(i) + 0.5) / n)
			if x < c.lo || x > c.hi {
				t.Fatalf("%v Quantile out of support: %v", d, x)
			}
			sum += x
		}
		mean := sum / n
		scale := c.sd
		if w := c.hi - c.lo; w < scale {
			scale = w // narrow interval: compare on its own scale
		}
		if math.Abs(mean-c.mean) > gridTol*scale {
			t.Errorf("%v mean of quantile grid = %.12g, analytic %.12g", d, mean, c.mean)
		}
		// The density integrates to one over the support, and its first
		// moment is the analytic mean.
		a, b := c.lo, c.hi
		if math.IsInf(b, 1) {
			b = c.mu + 40*c.sd
		}
		if mass := simpson(func(x float64) float64 { return math.Exp(d.LogPdf(x)) }, a, b, 20000); math.Abs(mass-1) > quadTol {
			t.Errorf("%v ∫pdf = %.12g, want 1", d, mass)
		}
		m1 := simpson(func(x float64) float64 { return x * math.Exp(d.LogPdf(x)) }, a, b, 20000)
		if math.Abs(m1-c.mean) > quadTol*scale {
			t.Errorf("%v ∫x·pdf = %.12g, analytic %.12g", d, m1, c.mean)
		}
		// Quantile is monotone over the whole u grid.
		prev := math.Inf(-1)
		for _, u := range uGrid {
			x := d.Quantile(u)
			if math.IsNaN(x) || x < prev {
				t.Errorf("%v Quantile(%v) = %v not monotone (previous %v)", d, u, x, prev)
			}
			prev = x
		}
	}
}

func TestTruncNormalMatchesNormalWhenWide(t *testing.T) {
	tn := must(NewTruncNormal(3, 2, math.Inf(-1), math.Inf(1)))
	n := must(NewNormal(3, 2))
	for _, u := range uGrid {
		if got, want := tn.Quantile(u), n.Quantile(u); !relClose(got, want, refTol) {
			t.Errorf("untruncated Quantile(%v) = %v, normal %v", u, got, want)
		}
	}
	for _, x := range []float64{-10, 0, 3, 8} {
		if got, want := tn.LogPdf(x), n.LogPdf(x); !relClose(got, want, refTol) {
			t.Errorf("untruncated LogPdf(%v) = %v, normal %v", x, got, want)
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	bad := []struct {
		kind string
		args []float64
		msg  string
	}{
		{"uniform", []float64{1, 1}, "lo < hi"},
		{"uniform", []float64{2, 1}, "lo < hi"},
		{"uniform", []float64{0, inf}, "finite"},
		{"normal", []float64{0, 0}, "sd > 0"},
		{"normal", []float64{0, -1}, "sd > 0"},
		{"normal", []float64{nan, 1}, "finite mu"},
		{"lognormal", []float64{0, 0}, "sigma > 0"},
		{"truncnormal", []float64{0, 1, 2, 1}, "lo < hi"},
		{"truncnormal", []float64{0, 0, -1, 1}, "sd > 0"},
		{"truncnormal", []float64{0, 1, 1e200, 2e200}, "no computable probability"},
		{"truncnormal", []float64{0, 1}, "truncnormal wants 4 numbers [mu, sd, lo, hi], got 2"},
		{"uniform", []float64{1}, "uniform wants 2 numbers [lo, hi], got 1"},
		{"gamma", []float64{1, 2}, `unknown prior kind "gamma" (known: uniform, normal, lognormal, truncnormal)`},
	}
	for _, c := range bad {
		d, err := FromTOML(c.kind, c.args)
		if err == nil {
			t.Errorf("FromTOML(%q, %v) = %v, want an error", c.kind, c.args, d)
			continue
		}
		if d != nil {
			t.Errorf("FromTOML(%q, %v) returned a Dist with its error", c.kind, c.args)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("FromTOML(%q, %v) error %q does not say %q", c.kind, c.args, err, c.msg)
		}
	}
	good := map[string][]float64{
		"uniform(2000, 9000)":        {2000, 9000},
		"normal(0, 1)":               {0, 1},
		"lognormal(1, 0.5)":          {1, 0.5},
		"truncnormal(0, 1, -1, 2)":   {0, 1, -1, 2},
		"truncnormal(0, 1, 0, +Inf)": {0, 1, 0, inf},
	}
	for want, args := range good {
		kind := want[:strings.IndexByte(want, '(')]
		d, err := FromTOML(kind, args)
		if err != nil {
			t.Errorf("FromTOML(%q, %v): %v", kind, args, err)
			continue
		}
		if d.String() != want {
			t.Errorf("String() = %q, want %q", d.String(), want)
		}
	}
}

func BenchmarkQuantile(b *testing.B) {
	for _, d := range []Dist{must(NewNormal(0, 1)), must(NewTruncNormal(0, 1, -1, 2)), must(NewTruncNormal(0, 1, 40, 45))} {
		b.Run(d.String(), func(b *testing.B) {
			s := 0.0
			for i := 0; b.Loop(); i++ {
				s += d.Quantile((float64(i%1000) + 0.5) / 1000)
			}
			_ = s
		})
	}
}

// Truncate draws a prior restricted to the model's bounds by inversion.
// Reference quantiles: scipy 1.x, scipy.stats.truncnorm.ppf(u, a, b, loc,
// scale) (and exp of it for the lognormal, on log-space bounds).
func TestTruncate(t *testing.T) {
	const tol = 1e-9          // relative; scipy's ndtri and the package's AS 241 agree to ~1e-15
	n, _ := NewNormal(0, 600) // 0.043 % of its mass in [2000, 12000]
	ln, _ := NewLogNormal(math.Log(5000), 0.5)
	for _, c := range []struct {
		d      Dist
		lo, hi float64
		want   [3]float64 // at u = 0.1, 0.5, 0.9
	}{
		{n, 2000, 12000, [3]float64{2017.519874156371, 2112.9194024999024, 2356.535916961196}},
		{ln, 2000, 3000, [3]float64{2146.9163032102147, 2584.529092763565, 2922.8711565916196}},
	} {
		q, mass, err := Truncate(c.d, c.lo, c.hi)
		if err != nil {
			t.Fatalf("%s on [%g, %g]: %v", c.d, c.lo, c.hi, err)
		}
		// scipy.stats.norm.sf(2000/600) − norm.sf(20).
		if c.d == n && math.Abs(mass-0.0004290603331968372) > tol*mass {
			t.Errorf("mass of %s on [%g, %g]: %.17g, scipy 0.0004290603331968372", c.d, c.lo, c.hi, mass)
		}
		for i, u := range []float64{0.1, 0.5, 0.9} {
			if got := q(u); math.Abs(got-c.want[i]) > tol*c.want[i] {
				t.Errorf("%s on [%g, %g] at u = %g: %.17g, scipy %.17g", c.d, c.lo, c.hi, u, got, c.want[i])
			}
		}
	}
	// A uniform's mass is the width ratio; a flat prior far wider than the
	// bounds (mass 1e-15) is a truncation a study may mean, drawn exactly.
	u, _ := NewUniform(0, 100)
	if _, m, err := Truncate(u, 0, 1); err != nil || math.Abs(m-0.01) > 1e-15 {
		t.Errorf("uniform(0, 100) on [0, 1]: mass %v, %v; want 0.01", m, err)
	}
	wide, _ := NewUniform(0, 1e12)
	if q, m, err := Truncate(wide, 0, 1e-3); err != nil || math.Abs(m/1e-15-1) > 1e-9 || q(0.5) != 5e-4 {
		t.Errorf("uniform(0, 1e12) on [0, 1e-3]: mass %v, %v", m, err)
	}
	// A vague normal centred inside the bounds is, cut to them, a uniform
	// (mass 0.9/(1e9·√(2π)) = 3.59e-10 < MinMass): accepted, and drawn as
	// a uniform (its density varies by a factor exp(−(0.5e-9)²/2) there).
	vague, _ := NewNormal(0, 1e9)
	if q, m, err := Truncate(vague, -0.5, 0.4); err != nil || math.Abs(m/(0.9/(1e9*math.Sqrt(2*math.Pi)))-1) > 1e-9 || math.Abs(q(0.5)+0.05) > 1e-12 || math.Abs(q(0.9)-0.31) > 1e-12 {
		t.Errorf("normal(0, 1e9) on [-0.5, 0.4]: mass %v, %v", m, err)
	} else if m >= MinMass {
		t.Errorf("the case does not test the rule: mass %g", m)
	}
	vagueLog, _ := NewLogNormal(0, 1e12) // mean of log x, 0, inside [log 0.1, log 10]
	if q, _, err := Truncate(vagueLog, 0.1, 10); err != nil || math.Abs(q(0.5)-1) > 1e-9 {
		t.Errorf("lognormal(0, 1e12) on [0.1, 10]: median %v, %v; want 1 (uniform in log x)", q(0.5), err)
	}
	// No mass: a lognormal given the mean and sd of x instead of log x
	// (all its mass is near e^5200), a normal 1e4 sd away.
	far, _ := NewNormal(1e7, 1)
	wrong, _ := NewLogNormal(5200, 500)
	for _, d := range []Dist{far, wrong} {
		if _, _, err := Truncate(d, 2000, 12000); err == nil {
			t.Errorf("%s on [2000, 12000]: no error", d)
		}
	}
	// The same on bounds reaching below 0 (the lognormal is cut to
	// [0, 1e6], log x to [−∞, 13.8]; audit 9: accepted as centred with
	// 3.8e-12 and 0 of its mass inside), and a normal cut one-sidedly;
	// a lognormal whose mean of log x lies inside is accepted.
	lnFar, _ := NewLogNormal(14.5, 0.1) // mass in [0, 1e6]: Φ((13.8155 − 14.5)/0.1) = 3.83e-12
	lnX, _ := NewLogNormal(1e6, 1)
	for _, c := range []struct {
		d      Dist
		lo, hi float64
	}{{lnFar, -1e6, 1e6}, {lnX, -1e6, 1e6}, {far, math.Inf(-1), 1e6}} {
		if _, m, err := Truncate(c.d, c.lo, c.hi); err == nil {
			t.Errorf("%s on [%g, %g]: mass %g, no error", c.d, c.lo, c.hi, m)
		}
	}
	inside, _ := NewLogNormal(1, 2)
	if _, m, err := Truncate(inside, -1e6, 1e6); err != nil || !(m > 0.999) {
		t.Errorf("lognormal(1, 2) on [-1e6, 1e6]: mass %g, %v", m, err)
	}
}

// A uniform wider than float64 holds (hi − lo overflows): finite density
// −log(2e308) = −(ln 1e308 + ln 2) and quantiles inside it, where each
// draw and density was NaN (audit 4).
func TestUniformWiderThanFloat64(t *testing.T) {
	const tol = 1e-12
	d, err := NewUniform(-1e308, 1e308)
	if err != nil {
		t.Fatal(err)
	}
	want := -(math.Log(1e308) + math.Ln2)
	if lp := d.LogPdf(0); math.Abs(lp-want) > tol*math.Abs(want) {
		t.Errorf("log pdf %v, want %v", lp, want)
	}
	for u, q := range map[float64]float64{0: -1e308, 0.5: 0, 1: 1e308, 0.75: 0.5e308} {
		if got := d.Quantile(u); math.Abs(got-q) > tol*1e308 {
			t.Errorf("Quantile(%v) = %v, want %v", u, got, q)
		}
	}
}
