package bspline

import (
	"math"
	"testing"
)

const (
	tolExact = 1e-14 // values known in closed form, computed in a few flops
	tolFD    = 1e-6  // relative, central differences with h = 1e-5
)

func TestPartitionOfUnityAndSupport(t *testing.T) {
	for _, c := range []struct{ n, p int }{{25, 3}, {4, 3}, {7, 2}, {5, 1}, {3, 0}, {12, 5}} {
		s, err := New(c.n, c.p, -1, 2.5)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, c.n)
		for k := 0; k <= 1000; k++ {
			x := -1 + 3.5*float64(k)/1000
			first := s.Eval(x, out)
			sum := 0.0
			for i, v := range out {
				if v < -tolExact {
					t.Fatalf("n=%d p=%d x=%g: B_%d = %g < 0", c.n, c.p, x, i, v)
				}
				if v != 0 && (i < first || i > first+c.p) {
					t.Fatalf("n=%d p=%d x=%g: B_%d non-zero outside its span", c.n, c.p, x, i)
				}
				sum += v
			}
			if math.Abs(sum-1) > tolExact {
				t.Fatalf("n=%d p=%d x=%g: Σ B = %.17g", c.n, c.p, x, sum)
			}
			// Derivatives of a partition of unity sum to zero.
			for order := 1; order <= c.p; order++ {
				s.Deriv(x, order, out)
				d := 0.0
				for _, v := range out {
					d += v
				}
				if math.Abs(d) > 1e-9*math.Pow(float64(c.n), float64(order)) {
					t.Fatalf("n=%d p=%d x=%g: Σ B^(%d) = %g", c.n, c.p, x, order, d)
				}
			}
		}
	}
}

// The uniform cubic B-spline with unit knot spacing (de Boor 1978, Ch. IX;
// Farin, "Curves and Surfaces for CAGD", Ch. 8) takes the values 1/6, 2/3,
// 1/6 at a knot, 1/48, 23/48, 23/48, 1/48 at a span's midpoint; its first
// derivatives at a knot are −1/2, 0, 1/2 and its second 1, −2, 1.
func TestKnownUniformCubicValues(t *testing.T) {
	// n = 10, p = 3 on [0, 7]: unit interior spacing, knots 0 0 0 0 1 … 6 7 7 7 7.
	s, err := New(10, 3, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 10)
	check := func(what string, x float64, order, i0 int, want []float64) {
		t.Helper()
		s.Deriv(x, order, out)
		for j, w := range want {
			if math.Abs(out[i0+j]-w) > tolExact {
				t.Errorf("%s: B^(%d)_%d(%g) = %.17g, want %.17g", what, order, i0+j, x, out[i0+j], w)
			}
		}
	}
	// At knot x = 4 (= t_7) the interior functions B_4 (support [1,5]) .. B_6 are non-zero.
	check("values at a knot", 4, 0, 4, []float64{1.0 / 6, 2.0 / 3, 1.0 / 6})
	check("first derivatives at a knot", 4, 1, 4, []float64{-0.5, 0, 0.5})
	check("second derivatives at a knot", 4, 2, 4, []float64{1, -2, 1})
	check("values at a midpoint", 3.5, 0, 3, []float64{1.0 / 48, 23.0 / 48, 23.0 / 48, 1.0 / 48})
	// Clamped end: on [0, 1] the first function is (1 − x)³ (knots 0 0 0 0 1).
	for _, x := range []float64{0, 0.25, 0.6, 1} {
		check("clamped first function", x, 0, 0, []float64{math.Pow(1-x, 3)})
		check("its derivative", x, 1, 0, []float64{-3 * math.Pow(1-x, 2)})
	}
	// And the curve interpolates its end coefficients.
	c := []float64{3, -1, 2, 5, 0, 1, 4, -2, 6, 9}
	if v := s.Curve(c, 0, 0); v != 3 {
		t.Errorf("curve(a) = %g, want c_0 = 3", v)
	}
	if v := s.Curve(c, 7, 0); math.Abs(v-9) > tolExact {
		t.Errorf("curve(b) = %g, want c_n−1 = 9", v)
	}
}

// Linear precision: with Greville abscissae ξ_i = (t_{i+1}+…+t_{i+p})/p as
// coefficients a spline reproduces x exactly (de Boor 1978, Ch. XI).
func TestReproducesLinear(t *testing.T) {
	s, _ := New(25, 3, 0.2, 1.4)
	c := make([]float64, 25)
	for i := range c {
		for j := 1; j <= 3; j++ {
			c[i] += s.Knots[i+j] / 3
		}
	}
	for k := 0; k <= 100; k++ {
		x := 0.2 + 1.2*float64(k)/100
		if v := s.Curve(c, x, 0); math.Abs(v-x) > 1e-14 {
			t.Fatalf("x=%g: spline %.17g", x, v)
		}
		if d := s.Curve(c, x, 1); math.Abs(d-1) > 1e-12 {
			t.Fatalf("x=%g: derivative %.17g", x, d)
		}
	}
}

func TestDerivativesAgainstFiniteDifferences(t *testing.T) {
	s, _ := New(25, 3, 0, 1)
	lo, hi := make([]float64, 25), make([]float64, 25)
	an := make([]float64, 25)
	const h = 1e-5
	for order := 1; order <= 3; order++ {
		for k := 0; k < 200; k++ {
			x := 0.003 + 0.994*float64(k)/199
			// Stay off knots: a derivative of order p jumps there.
			if r := math.Mod(x*22, 1); r < 1e-3 || r > 1-1e-3 {
				continue
			}
			s.Deriv(x+h, order-1, hi)
			s.Deriv(x-h, order-1, lo)
			s.Deriv(x, order, an)
			for i := range an {
				fd := (hi[i] - lo[i]) / (2 * h)
				scale := math.Max(1, math.Abs(an[i]))
				if math.Abs(fd-an[i]) > tolFD*scale*math.Pow(22, float64(order)) {
					t.Fatalf("order %d x=%g B_%d: analytic %g, central difference %g", order, x, i, an[i], fd)
				}
			}
		}
	}
}

func TestMatrixAndErrors(t *testing.T) {
	s, _ := New(6, 3, 0, 1)
	m, err := s.Matrix([]float64{0, 0.5, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 3 || c != 6 || m.At(0, 0) != 1 || m.At(2, 5) != 1 {
		t.Fatalf("matrix %v", m)
	}
	if _, err := s.Matrix([]float64{math.NaN()}, 0); err == nil {
		t.Fatal("NaN point accepted")
	}
	for _, c := range []struct {
		n, p int
		a, b float64
	}{{3, 3, 0, 1}, {5, -1, 0, 1}, {5, 3, 1, 1}, {5, 3, 0, math.Inf(1)}} {
		if _, err := New(c.n, c.p, c.a, c.b); err == nil {
			t.Errorf("New(%d,%d,%g,%g) accepted", c.n, c.p, c.a, c.b)
		}
	}
}

func BenchmarkEval25Cubic(b *testing.B) {
	s, _ := New(25, 3, 0, 1)
	out := make([]float64, 25)
	for i := 0; i < b.N; i++ {
		s.Eval(float64(i%1000)/1000, out)
	}
}
