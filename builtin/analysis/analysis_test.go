package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// exactTol: closed-form values, a few rounding errors.
const exactTol = 1e-12

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestPercentileSpread(t *testing.T) {
	// 0, 1, …, 100 in shuffled order: definition-7 percentiles are
	// h = 100·p exactly, P05 = 5, P95 = 95.
	x := make([]float64, 101)
	for i := range x {
		x[i] = float64((37 * i) % 101)
	}
	sp, err := PercentileSpread(x, 0, 200)
	if err != nil {
		t.Fatal(err)
	}
	want := Spread{P05: 5, P95: 95, Absolute: 90, Range: 200, Relative: 0.45}
	if !near(sp.P05, want.P05, exactTol) || !near(sp.P95, want.P95, exactTol) || !near(sp.Absolute, want.Absolute, exactTol) ||
		sp.Range != want.Range || !near(sp.Relative, want.Relative, exactTol) {
		t.Errorf("spread %+v, want %+v", sp, want)
	}
	if x[1] != 37 {
		t.Error("PercentileSpread modified its input")
	}
	// Interpolation: 0, 10 → P05 = 0.5, P95 = 9.5.
	if sp, _ := PercentileSpread([]float64{10, 0}, -10, 10); !near(sp.Absolute, 9, exactTol) || !near(sp.Relative, 0.45, exactTol) {
		t.Errorf("two points: %+v", sp)
	}
	if sp, _ := PercentileSpread([]float64{1, 2}, 0, math.Inf(1)); !math.IsNaN(sp.Relative) {
		t.Errorf("infinite range: relative %v, want NaN", sp.Relative)
	}
	for name, c := range map[string]struct {
		x      []float64
		lo, hi float64
	}{
		"empty": {nil, 0, 1}, "NaN": {[]float64{math.NaN()}, 0, 1}, "range": {[]float64{1}, 1, 1},
	} {
		if _, err := PercentileSpread(c.x, c.lo, c.hi); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRegressHandComputed(t *testing.T) {
	// x = (1, 2, 3, 4), y = (2, 3, 5, 4): x̄ = 2.5, ȳ = 3.5, Sxy = 4, Sxx = 5,
	// Syy = 5: slope 0.8, intercept 3.5 − 0.8·2.5 = 1.5,
	// R² = Sxy²/(Sxx·Syy) = 0.64.
	f, err := Regress([]float64{2, 3, 5, 4}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !near(f.Coef[0], 0.8, exactTol) || !near(f.Intercept, 1.5, exactTol) || !near(f.R2, 0.64, exactTol) || f.N != 4 {
		t.Errorf("fit %+v, want slope 0.8, intercept 1.5, R² 0.64", f)
	}
}

func TestRegressExactLinear(t *testing.T) {
	// Eq. 9's shape without noise: y = 1.81·x₁ − 0.82·x₂ − 0.05·x₃ + 0.3·x₄ + 1.96
	// is recovered exactly, R² = 1.
	r := rand.New(rand.NewPCG(1, 9))
	const n = 50
	coef := []float64{1.81, -0.82, -0.05, 0.3}
	x := make([][]float64, 4)
	for j := range x {
		x[j] = make([]float64, n)
		for i := range n {
			x[j][i] = 10*float64(j) + r.NormFloat64()*float64(j+1)
		}
	}
	y := make([]float64, n)
	for i := range n {
		y[i] = 1.96
		for j := range coef {
			y[i] += coef[j] * x[j][i]
		}
	}
	f, err := Regress(y, x...)
	if err != nil {
		t.Fatal(err)
	}
	for j := range coef {
		if !near(f.Coef[j], coef[j], 1e-10) {
			t.Errorf("coef[%d] = %v, want %v", j, f.Coef[j], coef[j])
		}
	}
	if !near(f.Intercept, 1.96, 1e-10) || !near(f.R2, 1, 1e-12) {
		t.Errorf("intercept %v, R² %v; want 1.96, 1", f.Intercept, f.R2)
	}
}

func TestRegressNormalEquations(t *testing.T) {
	// With noise: the OLS solution is characterised by residuals orthogonal
	// to the constant and to every predictor (the normal equations), and R²
	// equals the squared correlation of y and ŷ.
	r := rand.New(rand.NewPCG(2, 9))
	const n = 200
	x1, x2, y := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		x1[i] = r.NormFloat64()
		x2[i] = 0.7*x1[i] + 0.3*r.NormFloat64() // correlated predictors
		y[i] = 2 - x1[i] + 3*x2[i] + 2*r.NormFloat64()
	}
	f, err := Regress(y, x1, x2)
	if err != nil {
		t.Fatal(err)
	}
	res, yhat := make([]float64, n), make([]float64, n)
	for i := range n {
		yhat[i] = f.Intercept + f.Coef[0]*x1[i] + f.Coef[1]*x2[i]
		res[i] = y[i] - yhat[i]
	}
	dot := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	scale := math.Sqrt(dot(y, y))
	for name, v := range map[string][]float64{"1": ones, "x1": x1, "x2": x2} {
		if g := dot(res, v) / (scale * math.Sqrt(dot(v, v))); math.Abs(g) > 1e-12 {
			t.Errorf("residuals not orthogonal to %s: cos %v", name, g)
		}
	}
	my, mh := mean(y), mean(yhat)
	var syh, syy, shh float64
	for i := range n {
		syh += (y[i] - my) * (yhat[i] - mh)
		syy += (y[i] - my) * (y[i] - my)
		shh += (yhat[i] - mh) * (yhat[i] - mh)
	}
	if corr2 := syh * syh / (syy * shh); !near(f.R2, corr2, 1e-12) {
		t.Errorf("R² %v, squared correlation of y and ŷ %v", f.R2, corr2)
	}
	// Population R²: the signal −x₁ + 3x₂ = 1.1·x₁ + 0.9·z has variance
	// 1.21 + 0.81 = 2.02, the noise 4: R² = 2.02/6.02 ≈ 0.34, to within
	// sampling error (sd ≈ 0.05 for n = 200).
	if !(f.R2 > 0.2 && f.R2 < 0.5) {
		t.Errorf("R² %v far from the population value 0.34", f.R2)
	}
}

func TestRegressRefuses(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	for want, c := range map[string]struct {
		y []float64
		x [][]float64
	}{
		"without predictors": {x, nil},
		"at least 3 samples": {[]float64{1, 2}, [][]float64{{1, 2}, {3, 1}}},
		"has 3 values":       {x, [][]float64{{1, 2, 3}}},
		"constant":           {x, [][]float64{{2, 2, 2, 2}}},
		"collinear":          {x, [][]float64{x, {2, 4, 6, 8}}},
		"NaN":                {[]float64{1, math.NaN(), 3, 4}, [][]float64{x}},
	} {
		if _, err := Regress(c.y, c.x...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v", want, err)
		}
	}
	if f, err := Regress([]float64{5, 5, 5, 5}, x); err != nil || !math.IsNaN(f.R2) || f.Coef[0] != 0 {
		t.Errorf("constant response: %+v, %v; want R² NaN, slope 0", f, err)
	}
}

func TestMidpointGrid(t *testing.T) {
	g, err := MidpointGrid(0, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{0.25, 0.75, 1.25, 1.75} {
		if g[i] != w {
			t.Errorf("grid %v, want [0.25 0.75 1.25 1.75]", g)
		}
	}
	for _, c := range [][2]float64{{1, 1}, {0, math.Inf(1)}, {math.NaN(), 1}} {
		if _, err := MidpointGrid(c[0], c[1], 4); err == nil {
			t.Errorf("range %v accepted", c)
		}
	}
	if _, err := MidpointGrid(0, 1, 0); err == nil {
		t.Error("0 points accepted")
	}
}

func TestECDF(t *testing.T) {
	f, err := ECDF([]float64{3, 1, 2, 2}, []float64{0, 1, 1.5, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{0, 0.25, 0.25, 0.75, 1, 1} { // right-continuous: F(x) counts ≤ x
		if f[i] != w {
			t.Errorf("ECDF %v, want [0 0.25 0.25 0.75 1 1]", f)
			break
		}
	}
}

func TestCDFRMSE(t *testing.T) {
	g, _ := MidpointGrid(0, 2, 4)
	// Point masses at 0 and 1: the CDFs differ by 1 on [0, 1), two of the
	// four midpoints: RMSE = √(2/4).
	if r, err := CDFRMSE([]float64{0}, []float64{1}, g); err != nil || !near(r, math.Sqrt(0.5), exactTol) {
		t.Errorf("point masses: %v, %v; want √½", r, err)
	}
	if r, _ := CDFRMSE([]float64{0.3, 1.2}, []float64{1.2, 0.3}, g); r != 0 {
		t.Errorf("same sample: %v", r)
	}
	// The continuum limit: U(0, 1) and U(0.5, 1.5) on [0, 1.5] differ by
	// x, ½, 1.5 − x on the three thirds: ∫(F_a − F_b)² = 1/24 + 1/8 + 1/24
	// = 5/24, normalised by the range 1.5: RMSE → √(5/36) = √5/6.
	const n = 20000
	a, b := make([]float64, n), make([]float64, n)
	for i := range n {
		a[i] = (float64(i) + 0.5) / n // the uniform's quantiles
		b[i] = a[i] + 0.5
	}
	g, _ = MidpointGrid(0, 1.5, 3000)
	// Tolerance: ECDF steps of 1/n and the midpoint rule's error on a
	// piecewise quadratic with kinks, O(1/G²).
	if r, _ := CDFRMSE(a, b, g); !near(r, math.Sqrt(5)/6, 1e-4) {
		t.Errorf("uniforms: %v, want √5/6 = %v", r, math.Sqrt(5)/6)
	}
	if _, err := CDFRMSE(nil, b, g); err == nil {
		t.Error("empty sample accepted")
	}
	if _, err := CDFRMSE(a, b, nil); err == nil {
		t.Error("empty grid accepted")
	}
}

func TestSuccessiveCDFRMSE(t *testing.T) {
	g, _ := MidpointGrid(0, 2, 4)
	out, err := SuccessiveCDFRMSE([][]float64{{0}, {1}, {1}, {0}}, g)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Sqrt(0.5), 0, math.Sqrt(0.5)}
	for j := range want {
		if !near(out[j], want[j], exactTol) {
			t.Errorf("out %v, want %v", out, want)
			break
		}
	}
	if _, err := SuccessiveCDFRMSE([][]float64{{0}}, g); err == nil {
		t.Error("one stage accepted")
	}
	if _, err := SuccessiveCDFRMSE([][]float64{{0}, {}}, g); err == nil || !strings.Contains(err.Error(), "stages 0 and 1") {
		t.Errorf("empty stage: %v", err)
	}
}

// Thin spreads its pick over every chain of interleaved samples (row r is
// chain r mod c): 20 000 rows of 4 chains thinned to 2 000 or 1 000 take
// each chain about equally (the first row of each block took chains 0 and
// 2, or chain 0 only); a pick stays within its block, so it is still
// evenly spread.
func TestThinDoesNotAliasChains(t *testing.T) {
	for _, m := range []int{2000, 1000, 100} {
		count := make([]int, 4)
		idx := Thin(20000, m)
		for i, r := range idx {
			count[r%4]++
			if lo, hi := i*20000/m, (i+1)*20000/m; r < lo || r >= hi {
				t.Fatalf("m = %d: pick %d is row %d, outside its block [%d, %d)", m, i, r, lo, hi)
			}
		}
		for c, k := range count {
			// ±10 %: the offsets are equidistributed, not exactly balanced.
			if d := k - m/4; d*10 > m/4 || -d*10 > m/4 {
				t.Errorf("m = %d: chain %d has %d rows, want %d ± 10 %% (counts %v)", m, c, k, m/4, count)
			}
		}
	}
	if got := Thin(3, 10); len(got) != 3 || got[2] != 2 {
		t.Errorf("Thin(3, 10) = %v, want every row", got)
	}
}
