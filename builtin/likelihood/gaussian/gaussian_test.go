package gaussian

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

const (
	// exactTol: closed-form values, a few rounding errors.
	exactTol = 1e-14
	// fdTol: central difference with step fdStep on a quadratic, whose
	// truncation error is zero; what remains is rounding, ε·|logL|/h.
	fdTol  = 1e-6
	fdStep = 1e-5
)

var lik Likelihood

func TestHandValue(t *testing.T) {
	// Eq. 7 by hand: y = (1, 2), obs = (1.5, 2), σ = (0.5, 1):
	// [−log(0.5·√(2π)) − 0.5²/(2·0.25)] + [−log(√(2π)) − 0]
	// = ln 2 − ln(2π) − ½ = −ln π − ½.
	want := -math.Log(math.Pi) - 0.5
	y, obs, sigma := []float64{1, 2}, []float64{1.5, 2}, []float64{0.5, 1}
	got, st := lik.LogLikelihood(1, y, obs, sigma)
	if st != abi.OK || math.Abs(got-want) > exactTol {
		t.Fatalf("LogLikelihood = %v (%v), want %v", got, st, want)
	}
	// A missing observation (NaN) adds nothing, whatever its y and σ.
	got2, st := lik.LogLikelihood(1, append(y, math.NaN()), append(obs, math.NaN()), append(sigma, -1))
	if st != abi.OK || got2 != got {
		t.Errorf("with a missing value: %v (%v), want %v", got2, st, got)
	}
}

func randomCase(r *rand.Rand, n int) (y, obs, sigma []float64) {
	y, obs, sigma = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		y[i] = 10 * r.NormFloat64()
		obs[i] = y[i] + 2*r.NormFloat64()
		sigma[i] = 0.1 + 3*r.Float64()
	}
	obs[n/2] = math.NaN() // one missing value
	return
}

func TestGradientFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	y, obs, sigma := randomCase(r, 12)
	gy := make([]float64, len(y))
	ll, st := lik.LogLikelihoodGrad(1, y, obs, sigma, gy)
	ll0, _ := lik.LogLikelihood(1, y, obs, sigma)
	if st != abi.OK || ll != ll0 {
		t.Fatalf("LogLikelihoodGrad = %v (%v), LogLikelihood %v", ll, st, ll0)
	}
	for i := range y {
		yp, ym := append([]float64(nil), y...), append([]float64(nil), y...)
		h := fdStep * math.Max(1, math.Abs(y[i]))
		yp[i] += h
		ym[i] -= h
		lp, _ := lik.LogLikelihood(1, yp, obs, sigma)
		lm, _ := lik.LogLikelihood(1, ym, obs, sigma)
		fd := (lp - lm) / (2 * h)
		if math.Abs(gy[i]-fd) > fdTol*math.Max(1, math.Abs(fd)) {
			t.Errorf("gy[%d] = %v, central difference %v", i, gy[i], fd)
		}
	}
	if gy[len(y)/2] != 0 {
		t.Errorf("gradient at the missing value = %v, want 0", gy[len(y)/2])
	}
}

func TestResidualIdentity(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	y, obs, sigma := randomCase(r, 20)
	res := make([]float64, len(y))
	if st := lik.Residuals(1, y, obs, sigma, res); st != abi.OK {
		t.Fatal(st)
	}
	ss := 0.0
	for _, v := range res {
		ss += v * v
	}
	ll, _ := lik.LogLikelihood(1, y, obs, sigma)
	if want := LogNormConst(obs, sigma) - 0.5*ss; math.Abs(ll-want) > exactTol*math.Abs(ll) {
		t.Errorf("logL = %v, C − ½‖r‖² = %v", ll, want)
	}
	if res[len(y)/2] != 0 {
		t.Errorf("residual at the missing value = %v, want 0", res[len(y)/2])
	}
}

func TestStatuses(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name          string
		y, obs, sigma []float64
		want          abi.Status
	}{
		{"sigma 0", []float64{1, 2}, []float64{1, 2}, []float64{1, 0}, abi.Invalid},
		{"sigma < 0", []float64{1}, []float64{1}, []float64{-1}, abi.Invalid},
		{"sigma NaN", []float64{1}, []float64{1}, []float64{nan}, abi.Invalid},
		{"sigma Inf", []float64{1}, []float64{1}, []float64{inf}, abi.Invalid},
		{"y NaN", []float64{nan, 2}, []float64{1, 2}, []float64{1, 1}, abi.NonFinite},
		{"y Inf", []float64{1, -inf}, []float64{1, 2}, []float64{1, 1}, abi.NonFinite},
		{"length mismatch", []float64{1, 2}, []float64{1}, []float64{1, 1}, abi.Invalid},
		{"missing skips checks", []float64{nan}, []float64{nan}, []float64{0}, abi.OK},
	}
	for _, c := range cases {
		ll, st := lik.LogLikelihood(1, c.y, c.obs, c.sigma)
		if st != c.want {
			t.Errorf("%s: status %v, want %v", c.name, st, c.want)
		}
		if st != abi.OK && !math.IsInf(ll, -1) {
			t.Errorf("%s: logL %v with status %v, want -Inf", c.name, ll, st)
		}
		gy := make([]float64, len(c.y))
		if _, st := lik.LogLikelihoodGrad(1, c.y, c.obs, c.sigma, gy); st != c.want {
			t.Errorf("%s: grad status %v, want %v", c.name, st, c.want)
		}
		if st := lik.Residuals(1, c.y, c.obs, c.sigma, make([]float64, len(c.y))); st != c.want {
			t.Errorf("%s: residuals status %v, want %v", c.name, st, c.want)
		}
	}
}

func TestShape(t *testing.T) {
	y, obs, sigma := []float64{1, 2, 3, 4}, []float64{1, 2, 3, 5}, []float64{1, 1, 1, 1}
	one, st := lik.LogLikelihood(1, y, obs, sigma)
	if st != abi.OK {
		t.Fatal(st)
	}
	// The values are independent: m changes nothing but the shape check.
	if two, st := lik.LogLikelihood(2, y, obs, sigma); st != abi.OK || two != one {
		t.Errorf("m = 2: %v (%v), want %v", two, st, one)
	}
	for _, m := range []int{0, -1, 3} {
		if ll, st := lik.LogLikelihood(m, y, obs, sigma); st != abi.Invalid || !math.IsInf(ll, -1) {
			t.Errorf("m = %d with 4 values: %v (%v), want −Inf (invalid)", m, ll, st)
		}
		if st := lik.Residuals(m, y, obs, sigma, make([]float64, 4)); st != abi.Invalid {
			t.Errorf("m = %d: residuals %v, want invalid", m, st)
		}
	}
}

func TestSpecAndConstructor(t *testing.T) {
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if !Spec.Has(abi.CapGradY) || !Spec.Has(abi.CapResiduals) || len(Spec.Settings) != 0 {
		t.Errorf("spec capabilities/settings wrong: %+v", Spec)
	}
	l, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.(abi.GradY); !ok {
		t.Error("likelihood does not implement abi.GradY")
	}
	if _, ok := l.(abi.Residuals); !ok {
		t.Error("likelihood does not implement abi.Residuals")
	}
	if _, err := New([]float64{1}); err == nil {
		t.Error("New accepted a setting")
	}
}

func BenchmarkLogLikelihood(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	y, obs, sigma := randomCase(r, 1000)
	for b.Loop() {
		lik.LogLikelihood(1, y, obs, sigma)
	}
}

// sumLog equals the sum of logarithms (math.Log, the independent
// reference) to a relative 1e-13 over long runs of values spanning the
// whole float64 range, subnormals included. (For a subnormal x the
// reference is log(x·2¹⁰⁰) − 100·ln 2: math.Log's amd64 assembly returns
// about −709.09 for every subnormal, e.g. for 4e-320 whose log is
// −735.44.)
func TestSumLog(t *testing.T) {
	const tol = 1e-13
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := range 200 {
		var s sumLog
		want := 0.0
		n := 1 + rng.IntN(3000)
		for range n {
			x := math.Exp((rng.Float64()*2 - 1) * 700)
			if rng.IntN(50) == 0 {
				x = 4e-320 * (1 + rng.Float64()) // subnormal
			}
			s.add(x)
			if x < 0x1p-1022 {
				want += math.Log(x*0x1p100) - 100*math.Ln2
			} else {
				want += math.Log(x)
			}
		}
		if got := s.value(); math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
			t.Fatalf("trial %d (%d values): sumLog %v, Σ log %v", trial, n, got, want)
		}
	}
	var empty sumLog
	if empty.value() != 0 {
		t.Errorf("empty sum %v", empty.value())
	}
}
