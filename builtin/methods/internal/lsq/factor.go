package lsq

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Factor is what a least-squares method keeps of one point: the QR
// factorisation of its column-scaled Jacobian with the residuals appended,
//
//	[J·D⁻¹ | r] = Q·⎡R  c⎤
//	              ⎣0  ρ⎦,
//
// (Householder QR; Golub & Van Loan 2013, Matrix Computations, 4th ed.,
// Sec. 5.2), so that for any step p̃ in scaled coordinates (p̃ = D·p),
// ‖r + J·p‖² = ‖c + R·p̃‖² + ρ². It also keeps the gradient Jᵀr and the
// column norms of J, which the convergence tests read. Everything is p or
// p×p: the n×p Jacobian itself is not kept. The fields are exported so
// that a checkpoint can save them as JSON.
type Factor struct {
	P       int       `json:"p"`
	N       int       `json:"n"`
	D       []float64 `json:"d"`        // the column scaling (all > 0)
	R       []float64 `json:"r"`        // p×p upper triangular, row-major
	C       []float64 `json:"c"`        // the first p entries of Qᵀr
	RNorm   float64   `json:"r_norm"`   // ‖r‖
	Grad    []float64 `json:"grad"`     // Jᵀr (unscaled)
	ColNorm []float64 `json:"col_norm"` // ‖J_j‖
}

// Factorize computes the Factor of the residuals r (length n ≥ 1) and
// their Jacobian jac (n×p row-major) with the scaling d (length p, all
// finite and > 0). It refuses non-finite input.
func Factorize(jac, r, d []float64, p int) (*Factor, error) {
	n := len(r)
	switch {
	case n == 0 || p == 0:
		return nil, errors.New("lsq: no residuals or no parameters")
	case len(jac) != n*p:
		return nil, fmt.Errorf("lsq: Jacobian has %d values, want %d×%d", len(jac), n, p)
	case len(d) != p:
		return nil, fmt.Errorf("lsq: scaling has %d values, want %d", len(d), p)
	}
	for _, v := range d {
		if !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("lsq: scaling %v is not finite and > 0", d)
		}
	}
	f := &Factor{P: p, N: n, D: append([]float64(nil), d...),
		Grad: make([]float64, p), ColNorm: make([]float64, p)}
	// Rows of [J·D⁻¹ | r], padded with zero rows to at least p+1 so that R
	// is p×p (a zero row changes neither R nor the least-squares problem).
	rows, cols := max(n, p+1), p+1
	a := make([]float64, rows*cols)
	ss := 0.0
	for i := range n {
		ri := r[i]
		if math.IsNaN(ri) || math.IsInf(ri, 0) {
			return nil, fmt.Errorf("lsq: residual %d is %v", i, ri)
		}
		ss += ri * ri
		row := jac[i*p : (i+1)*p]
		out := a[i*cols : (i+1)*cols]
		for k, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("lsq: Jacobian entry (%d, %d) is %v", i, k, v)
			}
			out[k] = v / d[k]
			f.Grad[k] += v * ri
			f.ColNorm[k] += v * v
		}
		out[p] = ri
	}
	f.RNorm = math.Sqrt(ss)
	for k := range f.ColNorm {
		f.ColNorm[k] = math.Sqrt(f.ColNorm[k])
	}
	if math.IsInf(f.RNorm, 1) {
		return nil, errors.New("lsq: the residual norm overflows")
	}
	g := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: a}
	tau := make([]float64, cols)
	work := make([]float64, 1)
	lapack64.Geqrf(g, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqrf(g, tau, work, len(work))
	f.R = make([]float64, p*p)
	f.C = make([]float64, p)
	for i := range p {
		copy(f.R[i*p+i:(i+1)*p], a[i*cols+i:i*cols+p])
		f.C[i] = a[i*cols+p]
	}
	return f, nil
}

// Sub is the SVD of the columns Free of R, R_F = U·diag(S)·Vᵀ (Golub &
// Van Loan 2013, Sec. 8.6), with B = Uᵀc: the least-squares subproblem in
// the free parameters, in scaled coordinates.
type Sub struct {
	Free []int
	S    []float64 // singular values, descending
	V    []float64 // m×m row-major, m = len(Free)
	B    []float64 // Uᵀc
}

// NewSub computes the Sub of f for the free parameters free (indices into
// 0…p−1, at least one).
func (f *Factor) NewSub(free []int) (*Sub, error) {
	m, p := len(free), f.P
	if m == 0 {
		return nil, errors.New("lsq: no free parameter")
	}
	a := mat.NewDense(p, m, nil)
	for i := range p {
		for k, j := range free {
			a.Set(i, k, f.R[i*p+j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("lsq: the SVD did not converge")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s := &Sub{Free: append([]int(nil), free...), S: svd.Values(nil), V: make([]float64, m*m), B: make([]float64, m)}
	for i := range m {
		for k := range m {
			s.V[i*m+k] = v.At(i, k)
		}
		b := 0.0
		for r := range p {
			b += u.At(r, i) * f.C[r]
		}
		s.B[i] = b
	}
	return s, nil
}

// cutoff is the smallest singular value a step with λ = 0 (a Gauss–Newton
// step) uses: rcond·S[0]. Components below it are dropped, which makes the
// λ = 0 step the minimum-norm (pseudo-inverse) solution of the truncated
// problem.
func (s *Sub) cutoff(rcond float64) float64 {
	if len(s.S) == 0 {
		return 0
	}
	return rcond * s.S[0]
}

// Step writes into pt (length m) the scaled Levenberg–Marquardt step for
// the damping λ ≥ 0 (Moré 1978, Eq. 2.2, in the scaled variables):
//
//	p̃(λ) = −Σ_i v_i·s_i·b_i/(s_i² + λ),
//
// the solution of (R_Fᵀ·R_F + λ·I)·p̃ = −R_Fᵀ·c, and returns ‖p̃‖. With
// λ = 0 it is the truncated pseudo-inverse step −R_F⁺·c (components with
// s_i ≤ rcond·s_1 dropped): the Gauss–Newton step of Gouveia et al., Eq. 13.
func (s *Sub) Step(lambda, rcond float64, pt []float64) float64 {
	m := len(s.Free)
	clear(pt[:m])
	cut := s.cutoff(rcond)
	for i, si := range s.S {
		if si == 0 || (lambda == 0 && si <= cut) {
			continue
		}
		w := -si * s.B[i] / (si*si + lambda)
		for k := range m {
			pt[k] += s.V[k*m+i] * w
		}
	}
	n := 0.0
	for _, v := range pt[:m] {
		n += v * v
	}
	return math.Sqrt(n)
}

// normAndSlope returns q = ‖p̃(λ)‖ and dq/dλ = −Σ s²b²/(s²+λ)³ / q.
func (s *Sub) normAndSlope(lambda, rcond float64) (q, dq float64) {
	cut := s.cutoff(rcond)
	q2, d := 0.0, 0.0
	for i, si := range s.S {
		if si == 0 || (lambda == 0 && si <= cut) {
			continue
		}
		den := si*si + lambda
		t := si * s.B[i] / den
		q2 += t * t
		d += t * t / den
	}
	q = math.Sqrt(q2)
	if q == 0 {
		return 0, 0
	}
	return q, -d / q
}

// Reduction returns, for a step p̃ in the free scaled coordinates (length
// m), the decrease of the linear model ‖r‖² − ‖r + J·p‖² = −2·cᵀR_F·p̃ −
// ‖R_F·p̃‖², and the directional term rᵀJ·p = cᵀR_F·p̃, both computed in
// the m-dimensional SVD basis (R_F·p̃ = U·S·w, w = Vᵀp̃), so that they do
// not cancel against ‖r‖².
func (s *Sub) Reduction(pt []float64) (prered, dir float64) {
	m := len(s.Free)
	sw2, bsw := 0.0, 0.0
	for i, si := range s.S {
		w := 0.0
		for k := range m {
			w += s.V[k*m+i] * pt[k]
		}
		sw := si * w
		sw2 += sw * sw
		bsw += s.B[i] * sw
	}
	return -2*bsw - sw2, bsw
}

// SolveTrustRegion returns the damping λ ≥ 0 for which the scaled step
// p̃(λ) has ‖p̃‖ ≈ delta (within 10 %), or λ = 0 when the Gauss–Newton
// step is already that short: the Levenberg–Marquardt parameter of Moré
// 1978 (Sec. 5, Algorithm 5.5; MINPACK's lmpar), found by safeguarded
// Newton iterations on 1/‖p̃(λ)‖ − 1/Δ, which is nearly linear in λ (Hebden
// 1973), starting from lambda0 (the previous iteration's λ). With the SVD,
// ‖p̃(λ)‖ and its derivative are closed-form sums, so no factorisation is
// repeated.
func (s *Sub) SolveTrustRegion(delta, lambda0, rcond float64) float64 {
	const tol = 0.1 // Moré 1978, Sec. 5: |‖p̃‖ − Δ| ≤ σΔ with σ = 0.1
	q0, dq0 := s.normAndSlope(0, rcond)
	if q0-delta <= tol*delta {
		return 0
	}
	// Upper bound u = ‖R_Fᵀc‖/Δ (Moré 1978, Eq. 5.6).
	g := 0.0
	for i, si := range s.S {
		g += (si * s.B[i]) * (si * s.B[i])
	}
	u := math.Sqrt(g) / delta
	if u == 0 {
		return 0
	}
	// Lower bound: the Newton step from λ = 0 when nothing is truncated
	// (then 1/‖p̃‖ is concave in λ and the step underestimates; Moré 1978,
	// Eq. 5.5). With truncated components it is 0.
	l := 0.0
	if dq0 < 0 && !s.truncated(rcond) {
		l = (q0 - delta) * q0 / (delta * -dq0)
	}
	lambda := math.Min(math.Max(lambda0, l), u)
	if lambda == 0 {
		lambda = math.Sqrt(g) / q0
	}
	prev := 0.0
	for range 30 {
		if !(lambda > 0) {
			lambda = math.Max(math.SmallestNonzeroFloat64, 0.001*u)
		}
		q, dq := s.normAndSlope(lambda, rcond)
		phi := q - delta
		// Moré's stopping rule, with his exception for a lower bound of 0
		// and a φ that is negative and no longer increasing.
		if math.Abs(phi) <= tol*delta || (l == 0 && phi <= prev && prev < 0) || q == 0 || dq == 0 {
			return lambda
		}
		prev = phi
		// Newton on 1/q − 1/Δ: λ ← λ − (q − Δ)·q/(Δ·q′).
		corr := -phi * q / (delta * dq)
		if phi > 0 {
			l = math.Max(l, lambda)
		} else {
			u = math.Min(u, lambda)
		}
		lambda = math.Max(l, lambda+corr)
	}
	return lambda
}

func (s *Sub) truncated(rcond float64) bool {
	cut := s.cutoff(rcond)
	for _, si := range s.S {
		if si <= cut {
			return true
		}
	}
	return false
}

// Unscale maps a step in the free scaled coordinates (pt, length m) to the
// full unscaled step p (length P): p_j = p̃_j/D_j for free j, 0 otherwise.
func (f *Factor) Unscale(s *Sub, pt, p []float64) {
	clear(p)
	for k, j := range s.Free {
		p[j] = pt[k] / f.D[j]
	}
}
