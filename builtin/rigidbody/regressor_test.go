package rigidbody

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The regressor is the RNEA made linear in the standard parameters: on
// random branched trees and states, Y(q, q̇, q̈)·φ (φ from Standard) equals
// InverseDynamics' τ, which builds each body's spatial inertia from mass,
// COM and I_C by SpatialInertia instead. Tolerance 1e-12 relative to |τ|:
// the two routes differ only in rounding.
func TestRegressorTimesStandardIsRNEA(t *testing.T) {
	const tol = 1e-12
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 50; trial++ {
		n := 1 + r.IntN(6)
		m := randTree(r, n)
		w := NewWorkspace(m)
		q, qd, qdd := randState(r, n, math.Pi), randState(r, n, 3), randState(r, n, 10)
		tau := make([]float64, n)
		w.InverseDynamics(q, qd, qdd, tau)
		y := make([]float64, n*n*StandardParams)
		w.Regressor(q, qd, qdd, y)
		var phi []float64
		for i := range m.Bodies {
			s := Standard(&m.Bodies[i])
			phi = append(phi, s[:]...)
		}
		scale := maxAbs(tau)
		for j := 0; j < n; j++ {
			got := 0.0
			for c, p := range phi {
				got += y[j*len(phi)+c] * p
			}
			if d := math.Abs(got - tau[j]); d > tol*scale {
				t.Fatalf("trial %d joint %d: Y·φ = %.15g, RNEA τ = %.15g (|Δ| %.2g > %.0e·%.3g)", trial, j, got, tau[j], d, tol, scale)
			}
		}
		// A body's columns are zero on joints that are not its own or an
		// ancestor's (it exerts no force there).
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				if isAncestorOrSelf(m, j, i) {
					continue
				}
				for k := 0; k < StandardParams; k++ {
					if v := y[j*len(phi)+i*StandardParams+k]; v != 0 {
						t.Fatalf("trial %d: Y[%d][body %d, %d] = %g, want 0 (not an ancestor)", trial, j, i, k, v)
					}
				}
			}
		}
	}
}

func isAncestorOrSelf(m *Model, j, i int) bool {
	for ; i >= 0; i = m.Bodies[i].Parent {
		if i == j {
			return true
		}
	}
	return false
}

// Standard's rotational inertia about the origin is the top-left block of
// SpatialInertia and its first moment the top-right block's axial vector
// (RBDA Eq. 2.63), checked on a hand example: m = 2, c = (0.1, 0.2, 0.3),
// I_C = diag(1, 2, 3) gives I_O = I_C + m(|c|²1 − ccᵀ), e.g.
// I_xx = 1 + 2(0.13) = 1.26, I_xy = −2(0.02) = −0.04.
func TestStandardByHand(t *testing.T) {
	b := Body{Mass: 2, COM: Vec3{0.1, 0.2, 0.3}, Inertia: Diag3(Vec3{1, 2, 3})}
	got := Standard(&b)
	want := [StandardParams]float64{2, 0.2, 0.4, 0.6, 1.26, 2.2, 3.1, -0.04, -0.06, -0.12}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-15 {
			t.Errorf("φ[%d] = %.17g, want %g", k, got[k], want[k])
		}
	}
	I := SpatialInertia(b.Mass, b.COM, b.Inertia)
	S := standardInertia(&got)
	for i := range I {
		for j := range I[i] {
			if math.Abs(I[i][j]-S[i][j]) > 1e-15 {
				t.Errorf("spatial inertia [%d][%d]: from (m, c, I_C) %g, from φ %g", i, j, I[i][j], S[i][j])
			}
		}
	}
}
