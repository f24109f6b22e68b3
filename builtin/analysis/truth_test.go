package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Hand-computed: 1…5, definition 7 gives P05 = 1 + 4·0.05 = 1.2 and
// P95 = 4.8; the truth 3 has 2 samples below and 1 equal, percentile
// (2 + ½)/5 = 0.5; 1.1 is below the band (percentile 1/5: the sample 1 is
// below it), 5 above it (4.5/5 = 0.9).
func TestCheckTruthHandComputed(t *testing.T) {
	x := []float64{4, 2, 5, 1, 3}
	for _, c := range []struct {
		truth, pct float64
		inside     bool
	}{{3, 0.5, true}, {1.1, 0.2, false}, {5, 0.9, false}, {4.7, 0.8, true}, {0, 0, false}, {9, 1, false}} {
		r, err := CheckTruth(x, nil, c.truth)
		if err != nil {
			t.Fatal(err)
		}
		if !near(r.P05, 1.2, exactTol) || !near(r.P95, 4.8, exactTol) || !near(r.Percentile, c.pct, exactTol) || r.Inside != c.inside {
			t.Errorf("truth %g: %+v; want band [1.2, 4.8], percentile %g, inside %v", c.truth, r, c.pct, c.inside)
		}
	}
	if x[0] != 4 || x[4] != 3 {
		t.Fatal("CheckTruth sorted its input")
	}
}

// Hand-computed weighted quantiles (midpoint rule). 1…5 with equal weights
// sit at c_k = (k − ½)/5, Hyndman & Fan's definition 5: Q(0.05) = 1
// (below c_1), Q(0.2) = 1.5, Q(0.5) = 3, Q(0.95) = 5. With weights
// 100, 1, 1 on 1, 2, 3 the midpoints are 50/102, 100.5/102, 101.5/102 and
// the median 1 + (51 − 50)/(100.5 − 50) = 1 + 1/50.5 (definition 7's
// position rule would give 1.5, ignoring that 98 % of the mass is at 1).
func TestWeightedQuantileHandComputed(t *testing.T) {
	eq := []float64{1, 1, 1, 1, 1}
	x := []float64{3, 1, 5, 2, 4}
	for p, want := range map[float64]float64{0.05: 1, 0.1: 1, 0.2: 1.5, 0.5: 3, 0.8: 4.5, 0.95: 5, 0: 1, 1: 5} {
		if got, err := WeightedQuantile(x, eq, p); err != nil || !near(got, want, exactTol) {
			t.Errorf("Q(%g) = %g, %v; want %g", p, got, err, want)
		}
	}
	if got, _ := WeightedQuantile([]float64{3, 1, 2}, []float64{1, 100, 1}, 0.5); !near(got, 1+1/50.5, exactTol) {
		t.Errorf("dominated median %g, want %g", got, 1+1/50.5)
	}
	// Only ratios matter: weights near the largest float (whose sum
	// overflows) give the quantiles of equal weights.
	huge := []float64{1e308, 1e308, 1e308, 1e308, 1e308}
	if got, err := WeightedQuantile(x, huge, 0.2); err != nil || !near(got, 1.5, exactTol) {
		t.Errorf("weights of 1e308: Q(0.2) = %g, %v; want 1.5", got, err)
	}
	// A zero weight drops its sample: the median of {1, 3} with 9 at weight 0.
	if got, _ := WeightedQuantile([]float64{1, 9, 3}, []float64{1, 0, 1}, 0.5); !near(got, 2, exactTol) {
		t.Errorf("median with a zero weight %g, want 2", got)
	}
	// Percentile with weights: 2 of weight 2 equal to the truth counts half.
	r, err := CheckTruth([]float64{1, 2, 3}, []float64{1, 2, 1}, 2)
	if err != nil || !near(r.Percentile, 0.5, exactTol) || !r.Inside {
		t.Errorf("%+v %v; want percentile 0.5, inside", r, err)
	}
}

// The midpoint rule is symmetric: Q(x, w, p) = −Q(−x, w, 1 − p).
func TestWeightedQuantileSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, neg, w := make([]float64, 37), make([]float64, 37), make([]float64, 37)
	for i := range x {
		x[i], w[i] = rng.NormFloat64(), rng.ExpFloat64()
		neg[i] = -x[i]
	}
	for _, p := range []float64{0, 0.01, 0.05, 0.3, 0.5, 0.77, 0.95, 1} {
		a, _ := WeightedQuantile(x, w, p)
		b, _ := WeightedQuantile(neg, w, 1-p)
		if !near(a, -b, exactTol) {
			t.Errorf("p %g: %g vs %g", p, a, -b)
		}
	}
}

// Samples of N(0, 1): the percentile of a truth t is Φ(t) and the band is
// ±z₀.₉₅ = ±1.6449 (gonum's distuv), up to Monte Carlo error. With n
// independent samples the percentile's sd is √(Φ(1 − Φ)/n) and the
// 5 % quantile's √(0.05·0.95/n)/φ(z₀.₀₅); the tolerance is 4 sd. A truth at
// 2 (Φ = 0.977) or −1.8 (Φ = 0.036) lies outside the band, one at 1 inside.
func TestCheckTruthKnownNormal(t *testing.T) {
	const n = 20000
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	z := distuv.UnitNormal.Quantile(0.95)
	qTol := 4 * math.Sqrt(0.05*0.95/n) / distuv.UnitNormal.Prob(z)
	for _, c := range []struct {
		truth  float64
		inside bool
	}{{1, true}, {0, true}, {-1.5, true}, {2, false}, {-1.8, false}} {
		r, err := CheckTruth(x, nil, c.truth)
		if err != nil {
			t.Fatal(err)
		}
		phi := distuv.UnitNormal.CDF(c.truth)
		pTol := 4 * math.Sqrt(phi*(1-phi)/n)
		if math.Abs(r.Percentile-phi) > pTol || math.Abs(r.P05+z) > qTol || math.Abs(r.P95-z) > qTol || r.Inside != c.inside {
			t.Errorf("truth %g: %+v; want percentile %.4f ± %.4f, band ±%.4f ± %.4f, inside %v", c.truth, r, phi, pTol, z, qTol, c.inside)
		}
	}
}

// Importance weights: samples of N(0, 1) weighted by the density ratio
// N(a, 1)/N(0, 1) = exp(a·x − a²/2) represent N(a, 1), so the weighted
// percentile of t is Φ(t − a) and the band a ± 1.6449. The tolerance is
// 4 sd with Kish's effective sample size n·e^(−a²) in place of n. The
// weights matter: 1.8 is outside the unweighted band (Φ(1.8) = 0.964) and
// inside the weighted one (Φ(1.3) = 0.903); −1.3 the other way round
// (Φ(−1.3) = 0.097, Φ(−1.8) = 0.036).
func TestCheckTruthImportanceWeights(t *testing.T) {
	const n, a = 40000, 0.5
	rng := rand.New(rand.NewPCG(13, 14))
	x, w := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		w[i] = math.Exp(a*x[i] - a*a/2)
	}
	ess := n * math.Exp(-a*a)
	z := distuv.UnitNormal.Quantile(0.95)
	qTol := 4 * math.Sqrt(0.05*0.95/ess) / distuv.UnitNormal.Prob(z)
	for _, c := range []struct {
		truth  float64
		inside bool
	}{{1, true}, {a, true}, {a - 1.4, true}, {a + 1.75, false}, {a - 1.9, false}} {
		r, err := CheckTruth(x, w, c.truth)
		if err != nil {
			t.Fatal(err)
		}
		phi := distuv.UnitNormal.CDF(c.truth - a)
		pTol := 4 * math.Sqrt(phi*(1-phi)/ess)
		if math.Abs(r.Percentile-phi) > pTol || math.Abs(r.P05-(a-z)) > qTol || math.Abs(r.P95-(a+z)) > qTol || r.Inside != c.inside {
			t.Errorf("truth %g: %+v; want percentile %.4f ± %.4f, band %.4f…%.4f ± %.4f, inside %v", c.truth, r, phi, pTol, a-z, a+z, qTol, c.inside)
		}
	}
	if r, _ := CheckTruth(x, nil, -1.3); !r.Inside {
		t.Errorf("unweighted: −1.3 should be inside the N(0, 1) band: %+v", r)
	}
	if r, _ := CheckTruth(x, w, -1.3); r.Inside {
		t.Errorf("weighted: −1.3 should be outside the N(%g, 1) band: %+v", a, r)
	}
	if r, _ := CheckTruth(x, nil, 1.8); r.Inside {
		t.Errorf("unweighted: 1.8 should be outside the N(0, 1) band: %+v", r)
	}
	if r, _ := CheckTruth(x, w, 1.8); !r.Inside {
		t.Errorf("weighted: 1.8 should be inside the N(%g, 1) band: %+v", a, r)
	}
}

func TestCheckTruthRefuses(t *testing.T) {
	x := []float64{1, 2, 3}
	for name, f := range map[string]func() error{
		"NaN truth":      func() error { _, err := CheckTruth(x, nil, math.NaN()); return err },
		"infinite truth": func() error { _, err := CheckTruth(x, nil, math.Inf(1)); return err },
		"no samples":     func() error { _, err := CheckTruth(nil, nil, 1); return err },
		"NaN sample":     func() error { _, err := CheckTruth([]float64{1, math.NaN()}, nil, 1); return err },
		"negative w":     func() error { _, err := CheckTruth(x, []float64{1, -1, 1}, 1); return err },
		"zero weights":   func() error { _, err := CheckTruth(x, []float64{0, 0, 0}, 1); return err },
		"length":         func() error { _, err := CheckTruth(x, []float64{1, 1}, 1); return err },
		"p outside":      func() error { _, err := WeightedQuantile(x, []float64{1, 1, 1}, 1.5); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
