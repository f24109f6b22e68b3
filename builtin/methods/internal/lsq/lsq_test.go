package lsq

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// tol: the factorisations are backward stable, so on these moderately
// conditioned random problems (cond ≲ 1e3) identities hold to ~1e-13
// relative; 1e-10 leaves room without hiding a wrong formula (which is off
// by O(1)).
const tol = 1e-10

func allFree(p int) []int {
	f := make([]int, p)
	for j := range f {
		f[j] = j
	}
	return f
}

// RᵀR = JᵀJ, Rᵀc = Jᵀr and ‖c‖² ≤ ‖r‖² (the rest is ρ²): the QR of [J | r]
// is a QR of J with Qᵀr alongside.
func TestFactorizeIdentities(t *testing.T) {
	for _, sz := range [][2]int{{14, 2}, {3, 5}, {250, 8}, {40, 40}} {
		n, p := sz[0], sz[1]
		jac, r, _ := randProblem(n, p, uint64(n*p))
		f, err := Factorize(jac, r, p)
		if err != nil {
			t.Fatal(err)
		}
		for a := range p {
			for b := range p {
				rr, jj := 0.0, 0.0
				for k := 0; k <= min(a, b); k++ {
					rr += f.R[k*p+a] * f.R[k*p+b]
				}
				for i := range n {
					jj += jac[i*p+a] * jac[i*p+b]
				}
				if math.Abs(rr-jj) > tol*(1+math.Abs(jj)) {
					t.Errorf("n=%d p=%d: (RᵀR)[%d][%d] = %g, (JᵀJ) = %g", n, p, a, b, rr, jj)
				}
			}
			rc := 0.0
			for k := 0; k <= a; k++ {
				rc += f.R[k*p+a] * f.C[k]
			}
			if math.Abs(rc-f.Grad[a]) > tol*(1+math.Abs(f.Grad[a])) {
				t.Errorf("n=%d p=%d: (Rᵀc)[%d] = %g, Jᵀr = %g", n, p, a, rc, f.Grad[a])
			}
		}
		cc := 0.0
		for _, v := range f.C {
			cc += v * v
		}
		if cc > f.RNorm*f.RNorm*(1+tol) {
			t.Errorf("n=%d p=%d: ‖c‖² %g > ‖r‖² %g", n, p, cc, f.RNorm*f.RNorm)
		}
	}
	if _, err := Factorize([]float64{math.NaN()}, []float64{1}, 1); err == nil {
		t.Error("a NaN Jacobian was factorised")
	}
	if _, err := Factorize([]float64{1, 2}, []float64{1}, 1); err == nil {
		t.Error("a Jacobian of the wrong size was factorised")
	}
}

// The one-sided Jacobi SVD agrees with gonum's Golub–Kahan SVD, also on a
// graded matrix (columns scaled over 12 orders of magnitude) where the
// small singular values are the test.
func TestJacobiMatchesGonum(t *testing.T) {
	for _, graded := range []bool{false, true} {
		const n, p = 30, 7
		jac, r, _ := randProblem(n, p, 9)
		if graded {
			for i := range n {
				for j := range p {
					jac[i*p+j] *= math.Pow(10, -2*float64(j))
				}
			}
		}
		f, _ := Factorize(jac, r, p)
		sub := &Sub{Free: allFree(p)}
		f.jacobiSub(sub)
		a := mat.NewDense(p, p, nil)
		for i := range p {
			for j := i; j < p; j++ {
				a.Set(i, j, f.R[i*p+j])
			}
		}
		var svd mat.SVD
		svd.Factorize(a, mat.SVDNone)
		want := svd.Values(nil)
		// gonum's dgesvd is accurate relative to s₁ only; Jacobi relative
		// to each s_i. Compare relative to s₁ at 1e-13, and the graded
		// case's smallest against the product of the column scales.
		for i, s := range sub.S {
			if math.Abs(s-want[i]) > 1e-13*want[0] {
				t.Errorf("graded=%v: s%d Jacobi %g, gonum %g", graded, i, s, want[i])
			}
		}
		// V is orthogonal and R·v_i·/s_i has norm 1.
		for i := range p {
			for k := range p {
				d := 0.0
				for j := range p {
					d += sub.V[j*p+i] * sub.V[j*p+k]
				}
				if w := b2f(i == k); math.Abs(d-w) > tol {
					t.Errorf("graded=%v: (VᵀV)[%d][%d] = %g", graded, i, k, d)
				}
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// The step for λ solves (R_FᵀR_F + λI)·p̃ = −R_Fᵀc, on both SVD paths
// (Jacobi for small subproblems, gonum for large ones), and
// SolveTrustRegion finds a λ whose step has length Δ within 10 %.
func TestStepAndTrustRegion(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{20, 4}, {200, 60}} {
		n, p := sz[0], sz[1]
		jac, r, _ := randProblem(n, p, uint64(p))
		f, _ := Factorize(jac, r, p)
		d := make([]float64, p)
		for j := range d {
			d[j] = 0.1 + rng.Float64()*10
		}
		if err := f.SetScale(d); err != nil {
			t.Fatal(err)
		}
		sub, err := f.NewSub(allFree(p))
		if err != nil {
			t.Fatal(err)
		}
		pt := make([]float64, p)
		for _, lambda := range []float64{0, 0.3, 30} {
			sub.Step(lambda, 0, pt)
			// Residual of the normal equations in the scaled variables.
			for a := range p {
				lhs := lambda * pt[a]
				for b := range p {
					g := 0.0
					for k := range p {
						g += f.R[k*p+a] / d[a] * f.R[k*p+b] / d[b]
					}
					lhs += g * pt[b]
				}
				rhs := 0.0
				for k := range p {
					rhs -= f.R[k*p+a] / d[a] * f.C[k]
				}
				if math.Abs(lhs-rhs) > 1e-8*(1+math.Abs(rhs)) {
					t.Fatalf("n=%d p=%d λ=%g: row %d of the normal equations %g ≠ %g", n, p, lambda, a, lhs, rhs)
				}
			}
		}
		full := sub.Step(0, 0, pt)
		for _, frac := range []float64{0.9, 0.5, 0.1, 1e-3, 1e-6} {
			delta := frac * full
			lambda := sub.SolveTrustRegion(delta, 0, 0)
			got := sub.Step(lambda, 0, pt)
			if frac < 0.9 && math.Abs(got-delta) > 0.1*delta {
				t.Errorf("n=%d p=%d: Δ = %g: ‖p̃‖ = %g (λ = %g)", n, p, delta, got, lambda)
			}
			if frac >= 0.9 && got > 1.1*delta {
				t.Errorf("n=%d p=%d: Δ = %g: ‖p̃‖ = %g > 1.1Δ", n, p, delta, got)
			}
			// The predicted reduction of a step toward the minimum is
			// positive and at most ‖c‖².
			pred, _ := sub.Reduction(pt)
			cc := 0.0
			for _, v := range f.C {
				cc += v * v
			}
			if !(pred > 0) || pred > cc*(1+tol) {
				t.Errorf("n=%d p=%d: predicted reduction %g outside (0, ‖c‖² = %g]", n, p, pred, cc)
			}
		}
	}
}
