package nmse

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

const (
	handTol = 1e-14 // hand-computed values
	fdTol   = 1e-7  // relative, ∂logL/∂y vs central differences
)

func newL(t *testing.T, normalise, variance float64) Likelihood {
	t.Helper()
	l, err := New([]float64{normalise, variance})
	if err != nil {
		t.Fatal(err)
	}
	return l.(Likelihood)
}

// Two rows of two joints: obs = [[1, 3], [−1, 5]], mean 2, pooled variance
// (1 + 1 + 9 + 9)/4 = 5; y = [[2, 3], [−1, 3]] misses by 1 and −2, so
// L_FD = (1 + 4)/(2·5) = 0.5. Per joint: var = (1, 1), L = (1/1 + 4/1)/2 =
// 2.5.
func TestHandValue(t *testing.T) {
	obs := []float64{1, 3, -1, 5}
	y := []float64{2, 3, -1, 3}
	sig := []float64{1, 1, 1, 1}
	if ll, st := newL(t, Pooled, 0).LogLikelihood(2, y, obs, sig); st != abi.OK || math.Abs(ll+0.5) > handTol {
		t.Errorf("pooled: log L %g (%v), want −0.5", ll, st)
	}
	if ll, st := newL(t, PerDoF, 0).LogLikelihood(2, y, obs, sig); st != abi.OK || math.Abs(ll+2.5) > handTol {
		t.Errorf("per_dof: log L %g (%v), want −2.5", ll, st)
	}
	// a given variance replaces the data's: (1 + 4)/(2·10)
	if ll, _ := newL(t, Pooled, 10).LogLikelihood(2, y, obs, sig); math.Abs(ll+0.25) > handTol {
		t.Errorf("variance 10: log L %g, want −0.25", ll)
	}
	// sigma is ignored
	if ll, _ := newL(t, Pooled, 0).LogLikelihood(2, y, obs, []float64{7, 7, 7, 7}); math.Abs(ll+0.5) > handTol {
		t.Errorf("sigma changed log L to %g", ll)
	}
	// as m = 1, T = 4 and L = 5/(4·5)
	if ll, _ := newL(t, Pooled, 0).LogLikelihood(1, y, obs, sig); math.Abs(ll+0.25) > handTol {
		t.Errorf("columns 1: log L %g, want −0.25", ll)
	}
}

// Predicting every value's common mean gives L_FD = m with pooling (the
// numerator is T·m·var), and m with per_dof when predicting column means.
func TestMeanPredictor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const K, m = 300, 5
	obs := make([]float64, K*m)
	for i := range obs {
		obs[i] = float64(i%m)*3 + rng.NormFloat64()*float64(1+i%m)
	}
	mean := 0.0
	for _, o := range obs {
		mean += o
	}
	mean /= K * m
	y := make([]float64, K*m)
	for i := range y {
		y[i] = mean
	}
	if ll, _ := newL(t, Pooled, 0).LogLikelihood(m, y, obs, obs); math.Abs(ll+m) > 1e-12 {
		t.Errorf("pooled mean predictor: L_FD %g, want %d", -ll, m)
	}
	var cm [m]float64
	for i, o := range obs {
		cm[i%m] += o / K
	}
	for i := range y {
		y[i] = cm[i%m]
	}
	if ll, _ := newL(t, PerDoF, 0).LogLikelihood(m, y, obs, obs); math.Abs(ll+m) > 1e-12 {
		t.Errorf("per-dof mean predictor: L %g, want %d", -ll, m)
	}
}

// ∂log L/∂y against central differences, and log L = −½‖r‖².
func TestGradientAndResiduals(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const K, m = 40, 5
	obs, y := make([]float64, K*m), make([]float64, K*m)
	for i := range obs {
		obs[i] = 20 * rng.NormFloat64()
		y[i] = obs[i] + 3*rng.NormFloat64()
	}
	sig := make([]float64, K*m)
	for _, n := range []int{Pooled, PerDoF} {
		l := newL(t, float64(n), 0)
		gy := make([]float64, K*m)
		ll, st := l.LogLikelihoodGrad(m, y, obs, sig, gy)
		if st != abi.OK {
			t.Fatal(st)
		}
		if l0, _ := l.LogLikelihood(m, y, obs, sig); l0 != ll {
			t.Errorf("normalise %d: LogLikelihood %g, LogLikelihoodGrad %g", n, l0, ll)
		}
		for i := range y {
			h := 1e-5 * math.Max(1, math.Abs(y[i]))
			y0 := y[i]
			y[i] = y0 + h
			lp, _ := l.LogLikelihood(m, y, obs, sig)
			y[i] = y0 - h
			lm, _ := l.LogLikelihood(m, y, obs, sig)
			y[i] = y0
			fd := (lp - lm) / (2 * h)
			if math.Abs(fd-gy[i]) > fdTol*math.Max(math.Abs(gy[i]), 1e-6) {
				t.Errorf("normalise %d, value %d: gy %g, fd %g", n, i, gy[i], fd)
			}
		}
		r := make([]float64, K*m)
		if st := l.Residuals(m, y, obs, sig, r); st != abi.OK {
			t.Fatal(st)
		}
		ss := 0.0
		for _, v := range r {
			ss += v * v
		}
		if math.Abs(-0.5*ss-ll) > 1e-12*math.Abs(ll) {
			t.Errorf("normalise %d: −½‖r‖² = %g, log L = %g", n, -0.5*ss, ll)
		}
	}
}

func TestStatusesAndSettings(t *testing.T) {
	l := newL(t, Pooled, 0)
	obs := []float64{1, 2, 3, 4}
	if _, st := l.LogLikelihood(2, []float64{1, 2, 3}, obs[:3], obs[:3]); st != abi.Invalid {
		t.Errorf("3 values in 2 columns: %v", st)
	}
	if _, st := l.LogLikelihood(0, obs, obs, obs); st != abi.Invalid {
		t.Errorf("m = 0: %v", st)
	}
	if _, st := l.LogLikelihood(2, []float64{1, 2}, obs, obs); st != abi.Invalid {
		t.Errorf("length mismatch: %v", st)
	}
	if _, st := l.LogLikelihood(2, []float64{1, 2, 3, 4}, []float64{1, math.Inf(1), 3, 4}, obs); st != abi.Invalid {
		t.Errorf("infinite observation: %v", st)
	}
	if _, st := l.LogLikelihood(2, []float64{1, 2, 3, 4}, []float64{2, 2, 2, 2}, obs); st != abi.Invalid {
		t.Errorf("zero variance: %v", st)
	}
	nan := math.NaN()
	if _, st := newL(t, PerDoF, 0).LogLikelihood(2, obs, []float64{1, nan, 3, nan}, obs); st != abi.Invalid {
		t.Errorf("per_dof with an unobserved column: %v", st)
	}
	if ll, st := l.LogLikelihood(2, []float64{1, math.Inf(1), 3, 4}, obs, obs); st != abi.NonFinite || !math.IsInf(ll, -1) {
		t.Errorf("infinite y: %v %g", st, ll)
	}
	if _, st := l.LogLikelihoodGrad(2, obs, obs, obs, make([]float64, 3)); st != abi.Invalid {
		t.Errorf("short gy: %v", st)
	}
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	vals, err := abi.SettingValues(Spec.Settings, nil)
	if err != nil || vals[0] != Pooled || vals[1] != 0 {
		t.Fatalf("defaults %v %v", vals, err)
	}
	for _, s := range [][]float64{{2, 0}, {0.5, 0}, {0, -1}, {1, 3}, {0}, {0, math.Inf(1)}} {
		if _, err := New(s); err == nil {
			t.Errorf("settings %v accepted", s)
		}
	}
}

// A missing observation (NaN) is skipped: it adds nothing, its gy and r
// are 0, and the rest is normalised by the observed count. obs = [[1, 3],
// [−1, NaN]]: observed values 1, 3, −1 (mean 1, variance 8/3); y misses
// the first by 1, so L = m·1/(N·var) = 2/(3·8/3) = 0.25, whatever y is at
// the missing value.
func TestMissingObservations(t *testing.T) {
	obs := []float64{1, 3, -1, math.NaN()}
	y := []float64{2, 3, -1, 1e300}
	l := newL(t, Pooled, 0)
	gy, r := make([]float64, 4), make([]float64, 4)
	ll, st := l.LogLikelihoodGrad(2, y, obs, obs, gy)
	if st != abi.OK || math.Abs(ll+0.25) > handTol {
		t.Errorf("log L %g (%v), want −0.25", ll, st)
	}
	if st := l.Residuals(2, y, obs, obs, r); st != abi.OK || gy[3] != 0 || r[3] != 0 || math.Abs(-0.5*r[0]*r[0]-ll) > handTol {
		t.Errorf("gy %v r %v", gy, r)
	}
}

// A variance whose inverse overflows is refused at New (audit 16: 1e-320
// made every point non-finite, the run blaming the model).
func TestTinyVarianceRefused(t *testing.T) {
	if _, err := New([]float64{Pooled, 1e-320}); err == nil || !strings.Contains(err.Error(), "below 1e-290") {
		t.Errorf("variance 1e-320: %v", err)
	}
	if _, err := New([]float64{Pooled, 1e-200}); err != nil {
		t.Errorf("variance 1e-200: %v", err)
	}
}
