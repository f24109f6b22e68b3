package hht

import (
	"errors"
	"math"
	"math/cmplx"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Named tolerances.
const (
	tolLinear   = 1e-12 // linear algebra of one step against the closed form
	tolSpectral = 1e-6  // spectral radius at ωh = 1e6 against (1+α)/(1−α): O((ωh)⁻²)
	tolEnergy   = 1e-11
	// tolSpectralDefective: a double eigenvalue moves by O(√ε) ≈ 1e-8·1e4.
	tolSpectralDefective = 2e-4 // trapezoidal rule energy drift on a linear oscillator (relative)
)

// sdof is m q̈ + k q = 0 (optionally with one trivial constraint on a
// second, massive dof fixed to zero).
type sdof struct {
	m, k    float64
	withFix bool
	nan     bool
}

func (s *sdof) Size() (int, int) {
	if s.withFix {
		return 2, 1
	}
	return 1, 0
}

func (s *sdof) Eval(t float64, q, v []float64, e *Eval) error {
	n, _ := s.Size()
	clear(e.M)
	clear(e.K)
	clear(e.C)
	e.M[0] = s.m
	e.K[0] = s.k
	e.F[0] = s.k * q[0]
	if s.nan && t > 0.5 {
		e.F[0] = math.NaN()
	}
	if s.withFix {
		e.M[n+1] = 1
		e.F[1] = 0
		e.B[0], e.B[1] = 0, 1
		e.Phi[0] = q[1]
		e.Gamma[0] = 0
	}
	return nil
}

// closedForm is one HHT step of m a + (1+α)k q₁ − α k q₀ = 0 from the
// Newmark relations, written out (Hilber, Hughes & Taylor 1977).
func closedForm(m, k, h, al float64, q0, v0, a0 float64) (q1, v1, a1 float64) {
	g := (1 - 2*al) / 2
	b := (1 - al) * (1 - al) / 4
	pred := q0 + h*v0 + h*h*(0.5-b)*a0
	a1 = (-(1+al)*k*pred + al*k*q0) / (m + (1+al)*k*b*h*h)
	q1 = pred + b*h*h*a1
	v1 = v0 + h*((1-g)*a0+g*a1)
	return
}

func amplification(t *testing.T, it *Integrator, n int) *mat.Dense {
	A := mat.NewDense(3, 3, nil)
	for j := 0; j < 3; j++ {
		s := make([]float64, 3)
		s[j] = 1
		q := make([]float64, n)
		v := make([]float64, n)
		a := make([]float64, n)
		q[0], v[0], a[0] = s[0], s[1], s[2]
		_, nc := it.sys.Size()
		if err := it.SetState(0, q, v, a, make([]float64, nc)); err != nil {
			t.Fatal(err)
		}
		if err := it.Step(); err != nil {
			t.Fatal(err)
		}
		A.Set(0, j, it.Q[0])
		A.Set(1, j, it.V[0])
		A.Set(2, j, it.A[0])
	}
	return A
}

func spectralRadius(A *mat.Dense) float64 {
	var e mat.Eigen
	if !e.Factorize(A, mat.EigenNone) {
		panic("eigen")
	}
	r := 0.0
	for _, v := range e.Values(nil) {
		r = math.Max(r, cmplx.Abs(v))
	}
	return r
}

func TestStepMatchesClosedForm(t *testing.T) {
	for _, al := range []float64{0, -0.05, -0.2, -1.0 / 3} {
		for _, fix := range []bool{false, true} {
			s := &sdof{m: 2, k: 50, withFix: fix}
			it, err := New(s, Options{Alpha: al, Step: 0.03})
			if err != nil {
				t.Fatal(err)
			}
			n, _ := s.Size()
			A := amplification(t, it, n)
			for j := 0; j < 3; j++ {
				st := [3]float64{}
				st[j] = 1
				q1, v1, a1 := closedForm(2, 50, 0.03, al, st[0], st[1], st[2])
				for i, want := range []float64{q1, v1, a1} {
					if got := A.At(i, j); math.Abs(got-want) > tolLinear*math.Max(1, math.Abs(want)) {
						t.Errorf("α=%g fix=%v: A[%d][%d] = %.15g, closed form %.15g", al, fix, i, j, got, want)
					}
				}
			}
		}
	}
}

// The spectral radius at infinite step is (1+α)/(1−α) (0.9048 at α = −0.05,
// ½ at α = −1/3); at α = 0 it is 1 at every step.
func TestSpectralRadius(t *testing.T) {
	for _, c := range []struct{ al, want float64 }{{0, 1}, {-0.05, 0.95 / 1.05}, {-0.1, 0.9 / 1.1}, {-1.0 / 3, 0.5}} {
		s := &sdof{m: 1, k: 1e12} // ω = 1e6, h = 1: ωh = 1e6
		it, err := New(s, Options{Alpha: c.al, Step: 1})
		if err != nil {
			t.Fatal(err)
		}
		rho := spectralRadius(amplification(t, it, 1))
		tol := tolSpectral
		if c.al == -1.0/3 {
			// α = −1/3 has a double eigenvalue at infinite step: rounding of
			// O(ε) moves a defective eigenvalue by O(√ε).
			tol = tolSpectralDefective
		}
		if math.Abs(rho-c.want) > tol {
			t.Errorf("α = %g: spectral radius %.8f, want %.8f", c.al, rho, c.want)
		}
	}
	if math.Abs(0.95/1.05-0.9048) > 5e-5 {
		t.Fatal("0.9048 at α = −0.05")
	}
}

// Trapezoidal rule (α = 0) conserves ½mv² + ½kq² of a linear oscillator.
func TestEnergyConservedAlphaZero(t *testing.T) {
	s := &sdof{m: 2, k: 50}
	it, _ := New(s, Options{Alpha: 0, Step: 0.05})
	if err := it.Init(0, []float64{0.3}, []float64{-1}); err != nil {
		t.Fatal(err)
	}
	E := func() float64 { return 0.5*s.m*it.V[0]*it.V[0] + 0.5*s.k*it.Q[0]*it.Q[0] }
	E0 := E()
	for i := 0; i < 2000; i++ {
		if err := it.Step(); err != nil {
			t.Fatal(err)
		}
		if math.Abs(E()-E0) > tolEnergy*E0 {
			t.Fatalf("step %d: energy %.15g, initial %.15g", i, E(), E0)
		}
	}
}

// For α < 0 the energy decays as |λ|^(2n), λ the principal eigenvalue of
// the amplification matrix (the algorithmic damping predicted by the
// method's spectral analysis).
func TestDissipationAsPredicted(t *testing.T) {
	// tolDecay bounds |ln(E_n/E_0) − ln|λ|^(2n)|: the discrete orbit is an
	// ellipse, so E_n/E_0 wobbles about |λ|^(2n) (measured 0.011 and 0.006).
	const tolDecay = 0.03
	for _, al := range []float64{-0.05, -0.2} {
		s := &sdof{m: 1, k: 400} // ω = 20
		h := 0.05                // ωh = 1
		it, _ := New(s, Options{Alpha: al, Step: h})
		var e mat.Eigen
		e.Factorize(amplification(t, it, 1), mat.EigenNone)
		lam := 0.0
		for _, v := range e.Values(nil) {
			lam = math.Max(lam, cmplx.Abs(v))
		}
		if err := it.Init(0, []float64{1}, []float64{0}); err != nil {
			t.Fatal(err)
		}
		E := func() float64 { return 0.5*s.m*it.V[0]*it.V[0] + 0.5*s.k*it.Q[0]*it.Q[0] }
		E0 := E()
		nsteps := 60
		for i := 0; i < nsteps; i++ {
			if err := it.Step(); err != nil {
				t.Fatal(err)
			}
		}
		ratio := E() / E0
		want := math.Pow(lam, 2*float64(nsteps))
		t.Logf("α = %g: E_n/E_0 = %.6f, |λ|^2n = %.6f", al, ratio, want)
		if math.Abs(math.Log(ratio)-math.Log(want)) > tolDecay {
			t.Errorf("α = %g: E_n/E_0 = %.5f, |λ|^2n = %.5f", al, ratio, want)
		}
		if ratio >= 1 {
			t.Errorf("α = %g: no dissipation (%g)", al, ratio)
		}
	}
}

func TestFailuresAreErrors(t *testing.T) {
	if _, err := New(&sdof{m: 1, k: 1}, Options{Alpha: 0.1, Step: 0.1}); err == nil {
		t.Error("α = 0.1 accepted")
	}
	if _, err := New(&sdof{m: 1, k: 1}, Options{Alpha: 0, Step: 0}); err == nil {
		t.Error("step 0 accepted")
	}
	s := &sdof{m: 1, k: 1, nan: true}
	it, _ := New(s, Options{Alpha: -0.05, Step: 0.1})
	if err := it.Init(0, []float64{1}, []float64{0}); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		err = it.Step()
	}
	if !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN force: %v", err)
	}
	// singular: zero mass and stiffness
	z := &sdof{m: 0, k: 0}
	it, _ = New(z, Options{Alpha: 0, Step: 0.1})
	if err := it.Init(0, []float64{1}, []float64{0}); !errors.Is(err, ErrSingular) {
		t.Errorf("zero mass: %v", err)
	}
}
