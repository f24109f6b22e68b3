package lsq

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
)

// Factor is what a least-squares method keeps of one point: the QR
// factorisation of its Jacobian with the residuals appended,
//
//	[J | r] = Q·⎡R  c⎤
//	            ⎣0  ρ⎦,
//
// (Householder QR; Golub & Van Loan 2013, Matrix Computations, 4th ed.,
// Sec. 5.2), so that for any step p, ‖r + J·p‖² = ‖c + R·p‖² + ρ², and a
// column scaling D (SetScale): the scaled problem J·D⁻¹ has the triangular
// factor R·D⁻¹ with the same Q, so scaling costs nothing after the fact.
// It also keeps the gradient Jᵀr and the column norms of J, which the
// convergence tests and the scaling read. Everything is p or p×p: the n×p
// Jacobian itself is not kept. The fields are exported so that a
// checkpoint can save them as JSON.
type Factor struct {
	P       int       `json:"p"`
	N       int       `json:"n"`
	D       []float64 `json:"d"`        // the column scaling (all > 0; SetScale)
	R       []float64 `json:"r"`        // p×p upper triangular, row-major, of the unscaled J
	C       []float64 `json:"c"`        // the first p entries of Qᵀr
	RNorm   float64   `json:"r_norm"`   // ‖r‖
	Grad    []float64 `json:"grad"`     // Jᵀr (unscaled)
	ColNorm []float64 `json:"col_norm"` // ‖J_j‖
}

// Factorize computes the Factor of the residuals r (length n ≥ 1) and
// their Jacobian jac (n×p row-major), with the scaling D = I. It refuses
// non-finite input.
func Factorize(jac, r []float64, p int) (*Factor, error) {
	f := new(Factor)
	if err := f.Refactorize(jac, r, p); err != nil {
		return nil, err
	}
	return f, nil
}

// Refactorize is Factorize into f, reusing f's slices when they are large
// enough (a method keeps one spare Factor per run and swaps it with the
// current one on acceptance, so that an iteration allocates nothing). On
// error f is left in an unspecified state. The result is the same, to the
// last bit, as Factorize's.
func (f *Factor) Refactorize(jac, r []float64, p int) error {
	n := len(r)
	switch {
	case n == 0 || p == 0:
		return errors.New("lsq: no residuals or no parameters")
	case len(jac) != n*p:
		return fmt.Errorf("lsq: Jacobian has %d values, want %d×%d", len(jac), n, p)
	}
	f.P, f.N = p, n
	f.D = resize(f.D, p)
	f.Grad = resize(f.Grad, p)
	f.ColNorm = resize(f.ColNorm, p)
	f.R = resize(f.R, p*p)
	f.C = resize(f.C, p)
	for j := range f.D {
		f.D[j] = 1
	}
	// [J | r] column-major (columns contiguous, for the Householder
	// updates), padded with zero rows to at least p+1 so that R is p×p (a
	// zero row changes neither R nor the least-squares problem).
	rows := max(n, p+1)
	buf := scratch.Get().(*[]float64)
	defer scratch.Put(buf)
	if cap(*buf) < rows*(p+1) {
		*buf = make([]float64, rows*(p+1))
	}
	a := (*buf)[:rows*(p+1)]
	col := func(j int) []float64 { return a[j*rows : (j+1)*rows] }
	rc := col(p)
	copy(rc, r)
	clear(rc[n:])
	// ‖r‖², Jᵀr and the column norms, each summed over the rows in order
	// (as the row-by-row accumulation it replaces, so to the same bits),
	// in the pass that copies J's column. Their finiteness stands for that
	// of the entries: a NaN or ±Inf entry makes its column's sum of
	// squares NaN or +Inf; only when a sum is not finite are the entries
	// searched, for the error (or found finite: the squares overflowed,
	// which is not an error in J).
	ss := 0.0
	for _, ri := range rc[:n] {
		ss += ri * ri
	}
	finite := !math.IsNaN(ss) && !math.IsInf(ss, 0)
	// J into the columns, with Jᵀr and the squared column norms. A J of
	// up to 8 columns is copied a column at a time, its sums taken in the
	// same pass (a row is at most one or two cache lines); a wider one by
	// blocks of 8 columns, each row's 8 values one cache line of J read
	// once (a column at a time would read every line of a large J once per
	// column), and the sums then taken over the contiguous columns.
	const blk = 8
	rn := rc[:n]
	if p > blk {
		for k0 := 0; k0 < p; k0 += blk {
			kb := min(blk, p-k0)
			for i := range n {
				for t, v := range jac[i*p+k0 : i*p+k0+kb] {
					a[(k0+t)*rows+i] = v
				}
			}
		}
	}
	for k := range p {
		ck := col(k)
		clear(ck[n:])
		ck = ck[:len(rn)]
		g, cn := 0.0, 0.0
		if p > blk {
			for i, v := range ck {
				g += v * rn[i]
				cn += v * v
			}
		} else {
			for i, ri := range rn {
				v := jac[i*p+k]
				ck[i] = v
				g += v * ri
				cn += v * v
			}
		}
		f.Grad[k], f.ColNorm[k] = g, cn
		finite = finite && !math.IsNaN(cn) && !math.IsInf(cn, 0)
	}
	if !finite {
		if err := firstNonFinite(jac, r, p); err != nil {
			return err
		}
	}
	f.RNorm = math.Sqrt(ss)
	for k := range f.ColNorm {
		f.ColNorm[k] = math.Sqrt(f.ColNorm[k])
	}
	if math.IsInf(f.RNorm, 1) {
		return errors.New("lsq: the residual norm overflows")
	}
	householder(a, rows, p+1, p)
	for i := range p {
		clear(f.R[i*p : i*p+i])
		for j := i; j < p; j++ {
			f.R[i*p+j] = a[j*rows+i]
		}
		f.C[i] = rc[i]
	}
	return nil
}

// firstNonFinite reports the first non-finite value in row order (the
// residual of a row before its Jacobian entries), or nil.
func firstNonFinite(jac, r []float64, p int) error {
	for i, ri := range r {
		if math.IsNaN(ri) || math.IsInf(ri, 0) {
			return fmt.Errorf("lsq: residual %d is %v", i, ri)
		}
		for k, v := range jac[i*p : (i+1)*p] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("lsq: Jacobian entry (%d, %d) is %v", i, k, v)
			}
		}
	}
	return nil
}

// resize returns s with length n, reusing its storage when it can (the
// contents are not kept).
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// SetScale sets the column scaling D (length P, every entry finite and
// > 0): the subproblems (NewSub) are then in the scaled variables D·p.
func (f *Factor) SetScale(d []float64) error {
	if len(d) != f.P {
		return fmt.Errorf("lsq: scaling has %d values, want %d", len(d), f.P)
	}
	for _, v := range d {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("lsq: scaling %v is not finite and > 0", d)
		}
	}
	copy(f.D, d)
	return nil
}

// scratch holds the work matrices of Factorize, which are as large as the
// Jacobian: reusing them spares the collector a Jacobian-sized allocation
// per evaluation.
var scratch = sync.Pool{New: func() any { return new([]float64) }}

// householder overwrites the column-major rows×cols matrix a with the R of
// its Householder QR factorisation (Golub & Van Loan 2013, Algorithm 5.2.1,
// with LAPACK dlarfg's reflectors), reducing its first k columns and
// applying each reflector to the columns after it; the reflectors
// themselves are not kept (only R and Qᵀ applied to the later columns are
// needed). Dot products and updates run over contiguous columns
// (gonum/floats, assembly kernels), so the cost is the 2·rows·k·cols flops
// of the factorisation.
func householder(a []float64, rows, cols, k int) {
	for c := range k {
		x := a[c*rows+c : (c+1)*rows]
		alpha := x[0]
		xnorm := norm2(x[1:])
		if xnorm == 0 {
			continue // H = I: the column is already reduced
		}
		beta := -math.Copysign(math.Hypot(alpha, xnorm), alpha)
		tau := (beta - alpha) / beta
		floats.Scale(1/(alpha-beta), x[1:])
		x[0] = beta
		v := x[1:]
		for j := c + 1; j < cols; j++ {
			y := a[j*rows+c : (j+1)*rows]
			w := tau * (y[0] + floats.Dot(v, y[1:]))
			y[0] -= w
			floats.AddScaled(y[1:], -w, v)
		}
	}
}

// Sub is the SVD of the columns Free of the scaled R·D⁻¹, R_F = U·diag(S)·Vᵀ (Golub &
// Van Loan 2013, Sec. 8.6), with B = Uᵀc: the least-squares subproblem in
// the free parameters, in scaled coordinates.
type Sub struct {
	Free []int
	S    []float64 // singular values, descending
	V    []float64 // m×m row-major, m = len(Free)
	B    []float64 // Uᵀc

	// work and idx are jacobiSub's scratch, kept for the next SubInto.
	work []float64
	idx  []int
}

// NewSub computes the Sub of f for the free parameters free (indices into
// 0…p−1, at least one).
func (f *Factor) NewSub(free []int) (*Sub, error) {
	return f.SubInto(nil, free)
}

// SubInto is NewSub into s (a new Sub when s is nil), reusing its storage:
// a method keeps one Sub per run, recomputed once per accepted Jacobian,
// so that an iteration allocates nothing. The result is the same, to the
// last bit, as NewSub's.
func (f *Factor) SubInto(s *Sub, free []int) (*Sub, error) {
	m, p := len(free), f.P
	if m == 0 {
		return nil, errors.New("lsq: no free parameter")
	}
	if s == nil {
		s = new(Sub)
	}
	s.Free = append(s.Free[:0], free...)
	if m <= jacobiMax {
		f.jacobiSub(s)
		return s, nil
	}
	a := mat.NewDense(p, m, nil)
	for i := range p {
		for k, j := range free {
			a.Set(i, k, f.R[i*p+j]/f.D[j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, errors.New("lsq: the SVD did not converge")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s.S = svd.Values(resize(s.S, m))
	s.V, s.B = resize(s.V, m*m), resize(s.B, m)
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

// jacobiMax is the largest number of free parameters whose SVD is computed
// by one-sided Jacobi (jacobiSub); larger ones use gonum's Golub–Kahan
// SVD (LAPACK dgesvd), whose O(m³) constant is smaller.
const jacobiMax = 48

// jacobiSub computes the Sub of the free columns s.Free into s by the
// one-sided Jacobi SVD of Hestenes (1958; Golub & Van Loan 2013, Sec.
// 8.6.3; Demmel & Veselić 1992 for its relative accuracy): plane rotations
// V make the columns of A = R_F·V mutually orthogonal; then s_i = ‖a_i‖ and
// b_i = u_iᵀc = a_iᵀc/s_i. It is accurate to the last digits for the
// small, badly scaled problems least squares meets (the NIST StRD set), and
// allocates nothing once s has held a Sub of the same size.
func (f *Factor) jacobiSub(s *Sub) {
	free := s.Free
	p, m := f.P, len(free)
	// The work (a: p×m, v: m×m, both column-major; sq, sv: m).
	s.work = resize(s.work, p*m+m*m+2*m)
	work := s.work
	clear(work)
	a, v := work[:p*m], work[p*m:p*m+m*m]
	sq, sv := work[p*m+m*m:p*m+m*m+m], work[p*m+m*m+m:]
	for k, j := range free {
		for i := 0; i <= j && i < p; i++ {
			a[k*p+i] = f.R[i*p+j] / f.D[j]
		}
	}
	for k := range m {
		v[k*m+k] = 1
	}
	// ext[k] is the number of leading rows of column k that may be
	// nonzero: R is triangular, so column k starts with free[k]+1 of them,
	// and a rotation gives both its columns the longer extent. The rows
	// past it are (+0) zeros that add nothing to a dot product and that a
	// rotation leaves +0, so skipping them changes no bit of the result;
	// it spares about half the work of the first sweep. (Only for columns
	// shorter than dotShort, whose dot is the plain loop: floats.Dot's
	// summation order depends on the length.)
	if cap(s.idx) < 2*m {
		s.idx = make([]int, 2*m)
	}
	idx, ext := s.idx[:m], s.idx[m:2*m]
	for k, j := range free {
		ext[k] = p
		if p < dotShort {
			ext[k] = min(j+1, p)
		}
	}
	const eps = 2.220446049250313e-16
	// sq holds the squared column norms, recomputed every sweep and updated
	// within it by α ← α − t·γ, β ← β + t·γ (the rotation's exact effect),
	// which saves two of the three dot products a pair needs.
	for sweep := 0; sweep < 60; sweep++ {
		for k := range m {
			col := a[k*p : k*p+ext[k]]
			sq[k] = dot(col, col)
		}
		rotated := false
		// The pairs of the row-cyclic sweep, (0,1), (0,2), …, (0,m−1),
		// (1,2), …, taken by anti-diagonals j + k = d instead. A rotation
		// (j, k) reads the columns j and k as the rotations before it in
		// the row-cyclic order left them, and those are exactly the
		// rotations on j or k with a smaller j + k; so each rotation gets
		// the same inputs and the sweep the same bits (Luk & Park 1989, "On
		// parallel Jacobi orderings", SIAM J. Sci. Stat. Comput. 10(1):
		// 18–26: orderings equivalent up to commuting rotations). The pairs
		// of one anti-diagonal share no column, so the processor overlaps
		// one rotation's chain of square roots and divisions with the next
		// pair's work, where row-cyclic pairs each wait for the last.
		for d := 1; d <= 2*m-3; d++ {
			for j := max(0, d-(m-1)); j < d-j; j++ {
				k := d - j
				alpha, beta := sq[j], sq[k]
				var gamma float64
				if p < dotShort {
					// dot's short loop, inlined (the same sums), over
					// the rows where both columns may be nonzero.
					e := min(ext[j], ext[k])
					aj := a[j*p : j*p+e]
					ak := a[k*p : k*p+e][:len(aj)]
					for i, x := range aj {
						gamma += x * ak[i]
					}
				} else {
					gamma = floats.Dot(a[j*p:(j+1)*p], a[k*p:(k+1)*p])
				}
				if gamma == 0 || math.Abs(gamma) <= eps*math.Sqrt(alpha*beta) {
					continue
				}
				rotated = true
				zeta := (beta - alpha) / (2 * gamma)
				t := math.Copysign(1, zeta) / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
				c := 1 / math.Sqrt(1+t*t)
				sn := c * t
				e := max(ext[j], ext[k])
				ext[j], ext[k] = e, e
				rot(a[j*p:j*p+e], a[k*p:k*p+e], c, sn)
				rot(v[j*m:(j+1)*m], v[k*m:(k+1)*m], c, sn)
				sq[j], sq[k] = alpha-t*gamma, beta+t*gamma
			}
		}
		if !rotated {
			break
		}
	}
	// Singular values and b, sorted descending.
	for k := range m {
		idx[k] = k
		sv[k] = norm2(a[k*p : (k+1)*p])
	}
	// Insertion sort, descending (m is small; stable, so ties keep their
	// column order).
	for i := 1; i < m; i++ {
		for j := i; j > 0 && sv[idx[j]] > sv[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	s.S, s.B, s.V = resize(s.S, m), resize(s.B, m), resize(s.V, m*m)
	for out, k := range idx {
		s.S[out] = sv[k]
		s.B[out] = 0
		if sv[k] > 0 {
			s.B[out] = dot(a[k*p:(k+1)*p], f.C) / sv[k]
		}
		for i := range m {
			s.V[i*m+out] = v[k*m+i]
		}
	}
}

// rot applies the plane rotation [c s; −s c] to the columns x, y:
// x ← c·x − s·y, y ← s·x + c·y.
func rot(x, y []float64, c, s float64) {
	y = y[:len(x)]
	for i, xi := range x {
		yi := y[i]
		x[i] = c*xi - s*yi
		y[i] = s*xi + c*yi
	}
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

// dotShort is the length from which dot calls floats.Dot.
const dotShort = 32

// dot is xᵀy: a plain loop for short vectors, gonum's floats.Dot (SSE2
// assembly on amd64, two running sums) for long ones. Below 32 values the
// loop costs at most a few nanoseconds more (BenchmarkDot), and its single
// running sum rounds as the C Gauss–Newton plugin (plugins/c/gaussnewton)
// does: with floats.Dot there, the builtin stopped Misra1a one iteration
// apart from the C twin and their cross-check (TestGaussNewtonPluginMatchesBuiltin,
// 1e-10) failed at 5e-10.
func dot(x, y []float64) float64 {
	if len(x) >= dotShort {
		return floats.Dot(x, y)
	}
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// norm2 is ‖x‖₂: √(xᵀx) while xᵀx is far from overflow and underflow, else
// gonum's scaled norm (floats.Norm, which never squares a value out of
// range). A zero xᵀx is not taken for a zero vector: the squares of
// values below 1e-162 underflow to 0.
func norm2(x []float64) float64 {
	s := dot(x, x)
	if s > 1e-290 && s < 1e290 {
		return math.Sqrt(s)
	}
	return floats.Norm(x, 2)
}

// AllFinite reports whether every value of x is finite: it sums x_i·0,
// which is NaN exactly when some x_i is NaN or ±Inf, in four running sums
// (one multiply-add per value, without a branch; about a third of the time
// of testing each value with math.IsNaN and math.IsInf).
func AllFinite(x []float64) bool {
	var s0, s1, s2, s3 float64
	for len(x) >= 4 {
		s0 += x[0] * 0
		s1 += x[1] * 0
		s2 += x[2] * 0
		s3 += x[3] * 0
		x = x[4:]
	}
	for _, v := range x {
		s0 += v * 0
	}
	return s0+s1+s2+s3 == 0
}

// Free appends to out the parameters a step from x may move: all but those
// on a bound whose gradient points out of the box (the active set of the
// projected-gradient method; Bertsekas 1982, "Projected Newton methods for
// optimization problems with simple constraints", SIAM J. Control Optim.
// 20(2):221–246, Eq. 8). f is the factorisation at x.
func (f *Factor) Free(x []float64, b mcmc.Bounds, out []int) []int {
	for j, xj := range x {
		g := f.Grad[j] // ∂(½‖r‖²)/∂θ_j; descent moves by −g
		if (xj <= b.Lower[j] && g > 0) || (xj >= b.Upper[j] && g < 0) {
			continue
		}
		out = append(out, j)
	}
	return out
}

// MaxCosine is MINPACK's gnorm over the parameters free: the largest
// cosine max_j |J_jᵀr|/(‖J_j‖·‖r‖) between the residuals and a column of J
// (0 at a stationary point, and for r = 0).
func (f *Factor) MaxCosine(free []int) float64 {
	g := 0.0
	for _, j := range free {
		if f.ColNorm[j] > 0 && f.RNorm > 0 {
			g = math.Max(g, math.Abs(f.Grad[j])/(f.ColNorm[j]*f.RNorm))
		}
	}
	return g
}
