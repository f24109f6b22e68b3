package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// exactTol is for values computed exactly up to a few rounding errors.
const exactTol = 1e-12

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestMeanVarSD(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	// By hand: mean 10/4; Σ(x−x̄)² = 2.25+0.25+0.25+2.25 = 5, /(n−1) = 5/3.
	if got := Mean(x); !near(got, 2.5, exactTol) {
		t.Errorf("Mean = %v, want 2.5", got)
	}
	if got := Var(x); !near(got, 5.0/3, exactTol) {
		t.Errorf("Var = %v, want 5/3", got)
	}
	if got := SD(x); !near(got, math.Sqrt(5.0/3), exactTol) {
		t.Errorf("SD = %v, want √(5/3)", got)
	}
	if !math.IsNaN(Mean(nil)) || !math.IsNaN(Var([]float64{1})) {
		t.Error("Mean(nil) and Var of one value must be NaN")
	}
}

func TestQuantileType7(t *testing.T) {
	// Hyndman & Fan definition 7, h = (n−1)p, worked by hand. These are the
	// values numpy.quantile (method="linear", its default) gives by the same
	// definition; the last block is the worked example of the percentile
	// article on Wikipedia ("linear interpolation between closest ranks",
	// C = 1 variant): 40th percentile of {15, 20, 35, 40, 50} is 29.
	cases := []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{3, 1, 4, 2}, 0, 1},
		{[]float64{3, 1, 4, 2}, 0.25, 1.75}, // h = 0.75: 1 + 0.75·(2−1)
		{[]float64{3, 1, 4, 2}, 0.5, 2.5},   // h = 1.5
		{[]float64{3, 1, 4, 2}, 0.9, 3.7},   // h = 2.7
		{[]float64{3, 1, 4, 2}, 1, 4},
		{[]float64{7}, 0.3, 7},
		{[]float64{15, 20, 35, 40, 50}, 0.4, 29}, // h = 1.6: 20 + 0.6·15
	}
	for _, c := range cases {
		if got := Quantile(c.x, c.p); !near(got, c.want, exactTol) {
			t.Errorf("Quantile(%v, %v) = %v, want %v", c.x, c.p, got, c.want)
		}
	}
	x := []float64{3, 1, 4, 2}
	Quantile(x, 0.5)
	if x[0] != 3 || x[1] != 1 {
		t.Error("Quantile modified its input")
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if !math.IsNaN(Quantile(x, p)) {
			t.Errorf("Quantile(p=%v) should be NaN", p)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile(nil) should be NaN")
	}
}

func TestSummarize(t *testing.T) {
	x := make([]float64, 101)
	for i := range x {
		x[i] = float64(100 - i) // 100 … 0: h = 100p lands on integers
	}
	s := Summarize(x)
	// By hand: Σ(i−50)² = 2·Σ_{k=1}^{50} k² = 2·50·51·101/6 = 85850, and
	// /(n−1) = 858.5 = 101·102/12; h = 100p is an integer for p = .05, .5, .95.
	want := Summary{Mean: 50, SD: math.Sqrt(101 * 102 / 12.0), P05: 5, P50: 50, P95: 95}
	for _, c := range [][3]any{{"Mean", s.Mean, want.Mean}, {"SD", s.SD, want.SD}, {"P05", s.P05, want.P05}, {"P50", s.P50, want.P50}, {"P95", s.P95, want.P95}} {
		if !near(c[1].(float64), c[2].(float64), exactTol) {
			t.Errorf("Summary.%s = %v, want %v", c[0], c[1], c[2])
		}
	}
}

func TestSplitRHatByHand(t *testing.T) {
	// One chain 1,2,3,4 → halves (1,2), (3,4): m = 2, n = 2, chain means
	// 1.5 and 3.5, sⱼ² = 0.5, W = 0.5, B = n·Var(means) = 2·2 = 4,
	// var⁺ = (1/2)·0.5 + 4/2 = 2.25, R̂ = √(2.25/0.5) = √4.5.
	if got := SplitRHat([][]float64{{1, 2, 3, 4}}); !near(got, math.Sqrt(4.5), exactTol) {
		t.Errorf("SplitRHat = %v, want √4.5", got)
	}
	// Identical halves: B = 0, var⁺ = (n−1)/n·W, R̂ = √(1/2).
	if got := SplitRHat([][]float64{{1, 2, 1, 2}, {1, 2, 1, 2}}); !near(got, math.Sqrt(0.5), exactTol) {
		t.Errorf("SplitRHat = %v, want √0.5", got)
	}
	for _, bad := range [][][]float64{nil, {{1, 2, 3}}, {{1, 2, 3, 4}, {1, 2, 3}}, {{1, 1, 1, 1}}} {
		if !math.IsNaN(SplitRHat(bad)) {
			t.Errorf("SplitRHat(%v) should be NaN", bad)
		}
	}
}

func TestESSByHand(t *testing.T) {
	// Same chain as above: var⁺ = 2.25; V₁ = ((2−1)² + (4−3)²)/(2·1) = 1,
	// ρ̂₁ = 1 − 1/4.5 = 7/9; P₀ = 1 + 7/9 = 16/9 and no further pair fits in
	// n = 2, so τ̂ = −1 + 2·16/9 = 23/9 (above the floor 1/log₁₀4 ≈ 1.66)
	// and ESS = mn/τ̂ = 4·9/23 = 36/23.
	if got := ESS([][]float64{{1, 2, 3, 4}}); !near(got, 36.0/23, exactTol) {
		t.Errorf("ESS = %v, want 36/23", got)
	}
}

// Statistical checks: stream-seeded, so deterministic. The tolerances are
// several standard errors of the estimators at these sizes.
const (
	// essRelTol bounds |ESS/ESS_true − 1|; the relative SE of an
	// autocorrelation-time estimate at these lengths is a few percent.
	essRelTol = 0.15
	// rhatIIDMax: for well-mixed chains split-R̂ − 1 is O(1/n).
	rhatIIDMax = 1.01
)

func TestESSIndependentAndAR1(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const m, n = 4, 20000
	iid := make([][]float64, m)
	ar := make([][]float64, m)
	const phi = 0.9
	for j := range m {
		iid[j] = make([]float64, n)
		ar[j] = make([]float64, n)
		x := r.NormFloat64() / math.Sqrt(1-phi*phi) // stationary start
		for i := range n {
			iid[j][i] = r.NormFloat64()
			x = phi*x + r.NormFloat64()
			ar[j][i] = x
		}
	}
	// Independent draws: ESS ≈ mn.
	if got := ESS(iid); math.Abs(got/(m*n)-1) > essRelTol {
		t.Errorf("ESS(iid) = %v, want ≈ %d", got, m*n)
	}
	if got := SplitRHat(iid); got > rhatIIDMax {
		t.Errorf("SplitRHat(iid) = %v, want < %v", got, rhatIIDMax)
	}
	// AR(1): integrated autocorrelation time τ = (1+φ)/(1−φ) = 19
	// (e.g. Geyer 1992, Sec. 1), so ESS ≈ mn/19.
	wantAR := m * n * (1 - phi) / (1 + phi)
	if got := ESS(ar); math.Abs(got/wantAR-1) > essRelTol {
		t.Errorf("ESS(AR1) = %v, want ≈ %v", got, wantAR)
	}
	if got := SplitRHat(ar); got > rhatIIDMax {
		t.Errorf("SplitRHat(AR1) = %v, want < %v", got, rhatIIDMax)
	}
	// Chains stuck at different places: R̂ well above 1.
	shifted := make([][]float64, m)
	for j := range m {
		shifted[j] = make([]float64, n)
		for i := range n {
			shifted[j][i] = iid[j][i] + 2*float64(j)
		}
	}
	if got := SplitRHat(shifted); got < 1.5 {
		t.Errorf("SplitRHat(shifted chains) = %v, want > 1.5", got)
	}
}

// variograms (FFT) against the lag-by-lag sum it replaced, on AR(1)
// chains of odd length far from zero (a mean of 5000, as a stiffness in N:
// the centring must keep the cancellation away): within 1e-9 of the
// largest sum at every lag.
func TestVariogramsMatchDirectSum(t *testing.T) {
	const tol = 1e-9
	r := rand.New(rand.NewPCG(3, 4))
	s := make([][]float64, 3)
	for j := range s {
		s[j] = make([]float64, 257)
		x := 0.0
		for i := range s[j] {
			x = 0.95*x + r.NormFloat64()
			s[j][i] = 5000 + x
		}
	}
	got := variograms(s)
	n := len(s[0])
	top := 0.0
	want := make([]float64, n)
	for tl := range n {
		for _, c := range s {
			for i := tl; i < n; i++ {
				d := c[i] - c[i-tl]
				want[tl] += d * d
			}
		}
		top = math.Max(top, want[tl])
	}
	for tl := range n {
		if math.Abs(got[tl]-want[tl]) > tol*top {
			t.Fatalf("lag %d: FFT %v, direct %v", tl, got[tl], want[tl])
		}
	}
}

// BenchmarkESSStuckChains: ESS of 8 split chains of 75 000 draws that
// barely move (Geyer's sum runs over many lags): the report of a
// 4 × 150 000 Metropolis run on a ridge, which took hours lag by lag.
func BenchmarkESSStuckChains(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	chains := make([][]float64, 4)
	for j := range chains {
		chains[j] = make([]float64, 150000)
		x := 0.0
		for i := range chains[j] {
			if r.Float64() < 0.0025 { // acceptance 0.25 %
				x += r.NormFloat64()
			}
			chains[j][i] = x
		}
	}
	for b.Loop() {
		ESS(chains)
	}
}

// Values whose squares or sums overflow float64 (audit 9: the sd of values
// near 1e160 and the mean of values near ±1.7e308 were NaN/null): the
// statistics of an arithmetic sequence, analytically, and results inside
// float64 unchanged bit for bit by the scaling.
func TestStatsBeyondOverflow(t *testing.T) {
	const tol = 1e-14 // relative
	// 5e159·(1 + i/10), i = 0…10: mean 7.5e159, sd = step·√(n(n+1)/12) = 5e158·√11.
	x := make([]float64, 11)
	for i := range x {
		x[i] = 5e159 * (1 + float64(i)/10)
	}
	m, sd := MeanSD(x)
	if math.Abs(m/7.5e159-1) > tol || math.Abs(sd/(5e158*math.Sqrt(11))-1) > tol {
		t.Errorf("MeanSD: %g, %g; want 7.5e159, %g", m, sd, 5e158*math.Sqrt(11))
	}
	if Mean(x) != m || SD(x) != sd {
		t.Errorf("Mean %g, SD %g differ from MeanSD's", Mean(x), SD(x))
	}
	if v := Var(x); !math.IsInf(v, 1) {
		t.Errorf("Var %g: the variance (2.75e318) is beyond float64", v)
	}
	// Near ±MaxFloat64: mean 0, sd 1.7e308 (√((2·1.7e308²)/2)).
	y := []float64{-1.7e308, 0, 1.7e308}
	if m, sd := MeanSD(y); m != 0 || math.Abs(sd/1.7e308-1) > tol {
		t.Errorf("MeanSD(±1.7e308, 0) = %g, %g; want 0, 1.7e308", m, sd)
	}
	// Ordinary values: gonum's numbers exactly.
	z := []float64{1.5, 2.25, -3.125, 1e10, 7}
	gm, gsd := stat.MeanStdDev(z, nil)
	if m, sd := MeanSD(z); m != gm || sd != gsd || Mean(z) != stat.Mean(z, nil) || SD(z) != math.Sqrt(stat.Variance(z, nil)) {
		t.Errorf("ordinary values changed: %v %v against %v %v", m, sd, gm, gsd)
	}
}
