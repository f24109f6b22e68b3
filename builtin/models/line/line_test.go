package line

import (
	"math"
	"testing"
	"time"
)

// Known answer: y = 2 − 3x at x = 0, 1, 2.5 (exact in float64).
func TestEval(t *testing.T) {
	m, err := New([]float64{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0, 1, 2.5}
	y := make([]float64, 3)
	m.Eval([]float64{2, -3}, x, y)
	for i, want := range []float64{2, -1, -5.5} {
		if y[i] != want {
			t.Errorf("y[%d] = %g, want %g", i, y[i], want)
		}
	}
}

// The Jacobian against central differences (step 1e-6, tolerance 1e-8:
// y is linear, so only rounding remains).
func TestJacobianFD(t *testing.T) {
	const h, tol = 1e-6, 1e-8
	m := Model{}
	x := []float64{-1, 0.5, 3}
	th := []float64{0.7, -1.3}
	y := make([]float64, 3)
	jac := make([]float64, 6)
	m.Jacobian(th, x, y, jac)
	for j := range th {
		p, q := append([]float64(nil), th...), append([]float64(nil), th...)
		p[j] += h
		q[j] -= h
		yp, yq := make([]float64, 3), make([]float64, 3)
		m.Eval(p, x, yp)
		m.Eval(q, x, yq)
		for i := range x {
			if fd := (yp[i] - yq[i]) / (2 * h); math.Abs(fd-jac[2*i+j]) > tol {
				t.Errorf("∂y%d/∂θ%d = %g, differences %g", i, j, jac[2*i+j], fd)
			}
		}
	}
}

// An evaluation takes at least cost_ms, spinning or sleeping, and the
// outputs do not depend on the cost.
func TestCost(t *testing.T) {
	for _, wait := range []float64{0, 1} {
		m, err := New([]float64{20, wait})
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, 1)
		start := time.Now()
		m.Eval([]float64{1, 2}, []float64{3}, y)
		if el := time.Since(start); el < 20*time.Millisecond || y[0] != 7 {
			t.Errorf("wait %g: %v, y %g", wait, el, y[0])
		}
	}
	if _, err := New([]float64{-1, 0}); err == nil {
		t.Error("negative cost accepted")
	}
}
