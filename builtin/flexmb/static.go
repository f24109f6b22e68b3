package flexmb

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/kinfer/kinfer/builtin/flexmb/hht"
)

// Static solves the static equilibrium f_int(q) + Bᵀλ = f_ext + g,
// Φ(q) = 0 by Newton–Raphson with the loads applied in `steps` equal
// increments of the load factor (Crisfield 1991, Vol. 1), starting from
// q0 (nil: the reference coordinates). It returns q and λ, or an error
// when an increment does not converge within maxIter iterations (0: 50).
func (s *System) Static(q0 []float64, steps, maxIter int, tol float64) (q, lam []float64, err error) {
	if !s.prepared {
		return nil, nil, ErrNotPrepared
	}
	if steps < 1 {
		return nil, nil, fmt.Errorf("flexmb: static: steps = %d, want >= 1", steps)
	}
	if maxIter == 0 {
		maxIter = 50
	}
	if tol == 0 {
		tol = 1e-10
	}
	n, nc := s.Size()
	N := n + nc
	q = make([]float64, n)
	if q0 != nil {
		copy(q, q0)
	} else {
		copy(q, s.X0)
	}
	lam = make([]float64, nc)
	v := make([]float64, n)
	e := hht.Eval{M: make([]float64, n*n), F: make([]float64, n), K: make([]float64, n*n), C: make([]float64, n*n),
		Phi: make([]float64, nc), B: make([]float64, nc*n), Gamma: make([]float64, nc)}
	jac := make([]float64, N*N)
	r := make([]float64, N)
	ipiv := make([]int, N)
	defer func() { s.LoadFactor = 1 }()
	for k := 1; k <= steps; k++ {
		s.LoadFactor = float64(k) / float64(steps)
		converged := false
		for it := 0; it < maxIter; it++ {
			if err := s.Eval(0, q, v, &e); err != nil {
				return nil, nil, err
			}
			var fs float64
			for i := 0; i < n; i++ {
				var bl float64
				for c := 0; c < nc; c++ {
					bl += e.B[c*n+i] * lam[c]
				}
				r[i] = -(e.F[i] + bl)
				fs = math.Max(fs, math.Abs(e.F[i]))
			}
			for c := 0; c < nc; c++ {
				r[n+c] = -e.Phi[c]
			}
			clear(jac)
			for i := 0; i < n; i++ {
				copy(jac[i*N:i*N+n], e.K[i*n:(i+1)*n])
				for c := 0; c < nc; c++ {
					jac[i*N+n+c] = e.B[c*n+i]
					jac[(n+c)*N+i] = e.B[c*n+i]
				}
			}
			a := blas64.General{Rows: N, Cols: N, Stride: N, Data: jac}
			if !lapack64.Getrf(a, ipiv) {
				return nil, nil, fmt.Errorf("flexmb: static increment %d: %w", k, hht.ErrSingular)
			}
			lapack64.Getrs(blas.NoTrans, a, blas64.General{Rows: N, Cols: 1, Stride: 1, Data: r}, ipiv)
			var dq float64
			for i := 0; i < n; i++ {
				q[i] += r[i]
				dq = math.Max(dq, math.Abs(r[i]))
			}
			for c := 0; c < nc; c++ {
				lam[c] += r[n+c]
			}
			if math.IsNaN(dq) || math.IsInf(dq, 0) {
				return nil, nil, fmt.Errorf("flexmb: static increment %d: %w", k, hht.ErrNonFinite)
			}
			if dq <= tol*math.Max(1, normInf(q)) {
				converged = true
				break
			}
		}
		if !converged {
			return nil, nil, fmt.Errorf("flexmb: static increment %d of %d did not converge in %d iterations", k, steps, maxIter)
		}
	}
	return q, lam, nil
}

// normInf is ‖v‖∞ (gonum's floats.Norm): NaN when v holds a NaN, so a
// non-finite residual never passes a convergence test.
func normInf(v []float64) float64 { return floats.Norm(v, math.Inf(1)) }
