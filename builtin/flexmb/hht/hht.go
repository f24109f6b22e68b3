package hht

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Eval is what a system returns at (t, q, q̇). All matrices are row-major.
type Eval struct {
	M     []float64 // n×n mass matrix M(q)
	F     []float64 // n: every force but M q̈ and Bᵀλ (inertial velocity terms, internal, minus gravity and loads)
	K     []float64 // n×n ≈ ∂F/∂q (the Newton tangent)
	C     []float64 // n×n ≈ ∂F/∂q̇ (zero if not given)
	Phi   []float64 // nc constraint values Φ(q)
	B     []float64 // nc×n constraint Jacobian ∂Φ/∂q
	Gamma []float64 // nc: −(d/dt B)q̇, the right side of B q̈ = γ (zero for linear constraints)
}

// System is a constrained mechanical system. Eval must overwrite every
// field of e (they are reused between calls).
type System interface {
	Size() (n, nc int)
	Eval(t float64, q, v []float64, e *Eval) error
}

// Options of the integrator.
type Options struct {
	Alpha   float64 // in [−1/3, 0]
	Step    float64 // h > 0
	Tol     float64 // relative Newton tolerance; 0: 1e-10
	MaxIter int     // Newton iterations per step; 0: 25
}

// Errors the integrator returns (wrapped with the time).
var (
	ErrNewton    = errors.New("hht: Newton iterations did not converge")
	ErrSingular  = errors.New("hht: singular iteration matrix")
	ErrNonFinite = errors.New("hht: non-finite value")
)

// Integrator holds the state (t, q, q̇, q̈, λ) and the work arrays.
type Integrator struct {
	sys       System
	n, nc     int
	opt       Options
	gamma, bt float64

	T              float64
	Q, V, A, Lam   []float64
	Iterations     int // Newton iterations of the last step
	TotalIter      int
	e0, e1         Eval
	q1, v1, a1, l1 []float64
	old            []float64 // F₀ + B₀ᵀλ₀
	r, jac         []float64
	ipiv           []int
}

func newEval(n, nc int) Eval {
	return Eval{M: make([]float64, n*n), F: make([]float64, n), K: make([]float64, n*n), C: make([]float64, n*n),
		Phi: make([]float64, nc), B: make([]float64, nc*n), Gamma: make([]float64, nc)}
}

// New checks the options and allocates an integrator for sys.
func New(sys System, opt Options) (*Integrator, error) {
	if !(opt.Alpha >= -1.0/3-1e-15 && opt.Alpha <= 0) {
		return nil, fmt.Errorf("hht: alpha = %g, want it in [-1/3, 0]", opt.Alpha)
	}
	if !(opt.Step > 0) || math.IsInf(opt.Step, 0) {
		return nil, fmt.Errorf("hht: step = %g, want a finite step > 0", opt.Step)
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-10
	}
	if !(opt.Tol > 0) {
		return nil, fmt.Errorf("hht: tolerance %g, want > 0", opt.Tol)
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 25
	}
	if opt.MaxIter < 1 {
		return nil, fmt.Errorf("hht: max iterations %d, want >= 1", opt.MaxIter)
	}
	n, nc := sys.Size()
	it := &Integrator{sys: sys, n: n, nc: nc, opt: opt}
	it.gamma = (1 - 2*opt.Alpha) / 2
	it.bt = (1 - opt.Alpha) * (1 - opt.Alpha) / 4
	mk := func(k int) []float64 { return make([]float64, k) }
	it.Q, it.V, it.A, it.Lam = mk(n), mk(n), mk(n), mk(nc)
	it.q1, it.v1, it.a1, it.l1 = mk(n), mk(n), mk(n), mk(nc)
	it.old, it.r = mk(n), mk(n+nc)
	it.jac = mk((n + nc) * (n + nc))
	it.ipiv = make([]int, n+nc)
	it.e0, it.e1 = newEval(n, nc), newEval(n, nc)
	return it, nil
}

// Gamma and Beta return the Newmark parameters γ and β of the method.
func (it *Integrator) Gamma() float64 { return it.gamma }
func (it *Integrator) Beta() float64  { return it.bt }

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// solve factors the (n+nc)² matrix in it.jac and solves for it.r in place.
func (it *Integrator) solve() error {
	N := it.n + it.nc
	a := blas64.General{Rows: N, Cols: N, Stride: N, Data: it.jac}
	if !lapack64.Getrf(a, it.ipiv) {
		return ErrSingular
	}
	b := blas64.General{Rows: N, Cols: 1, Stride: 1, Data: it.r}
	lapack64.Getrs(blas.NoTrans, a, b, it.ipiv)
	if !finite(it.r) {
		return ErrNonFinite
	}
	return nil
}

// Init sets the state at t0 to (q0, v0), which must satisfy the
// constraints, and computes consistent q̈0 and λ0 from
// [M Bᵀ; B 0][q̈; λ] = [−F; γ].
func (it *Integrator) Init(t0 float64, q0, v0 []float64) error {
	n, nc := it.n, it.nc
	if len(q0) != n || len(v0) != n {
		return fmt.Errorf("hht: initial state of length %d, %d; want %d", len(q0), len(v0), n)
	}
	copy(it.Q, q0)
	copy(it.V, v0)
	it.T = t0
	e := &it.e0
	if err := it.sys.Eval(t0, it.Q, it.V, e); err != nil {
		return fmt.Errorf("t = %g: %w", t0, err)
	}
	N := n + nc
	clear(it.jac)
	for i := 0; i < n; i++ {
		copy(it.jac[i*N:i*N+n], e.M[i*n:(i+1)*n])
		it.r[i] = -e.F[i]
	}
	for c := 0; c < nc; c++ {
		for j := 0; j < n; j++ {
			it.jac[(n+c)*N+j] = e.B[c*n+j]
			it.jac[j*N+n+c] = e.B[c*n+j]
		}
		it.r[n+c] = e.Gamma[c]
	}
	if err := it.solve(); err != nil {
		return fmt.Errorf("hht: initial accelerations at t = %g: %w", t0, err)
	}
	copy(it.A, it.r[:n])
	copy(it.Lam, it.r[n:])
	it.setOld()
	return nil
}

// setOld stores F₀ + B₀ᵀλ₀ from it.e0 and it.Lam.
func (it *Integrator) setOld() {
	n := it.n
	copy(it.old, it.e0.F)
	for c := 0; c < it.nc; c++ {
		for j := 0; j < n; j++ {
			it.old[j] += it.e0.B[c*n+j] * it.Lam[c]
		}
	}
}

// normInf is ‖v‖∞ (gonum's floats.Norm): NaN when v holds a NaN, so a
// non-finite residual never passes a convergence test.
func normInf(v []float64) float64 { return floats.Norm(v, math.Inf(1)) }

// Step advances the state by one step h. On error the state is left at
// the start of the step.
func (it *Integrator) Step() error {
	n, nc := it.n, it.nc
	h, al, g, bt := it.opt.Step, it.opt.Alpha, it.gamma, it.bt
	t1 := it.T + h
	// Predictor: constant acceleration, consistent with the Newmark relations.
	for i := 0; i < n; i++ {
		it.a1[i] = it.A[i]
		it.q1[i] = it.Q[i] + h*it.V[i] + 0.5*h*h*it.A[i]
		it.v1[i] = it.V[i] + h*it.A[i]
	}
	copy(it.l1, it.Lam)
	sc := 1 / (bt * h * h)
	N := n + nc
	e := &it.e1
	var dqNorm float64
	it.Iterations = 0
	for iter := 0; ; iter++ {
		if err := it.sys.Eval(t1, it.q1, it.v1, e); err != nil {
			return fmt.Errorf("t = %g: %w", t1, err)
		}
		// Residual (Gouveia Eq. 4, 5).
		var fscale float64
		for i := 0; i < n; i++ {
			var ma, bl float64
			for j := 0; j < n; j++ {
				ma += e.M[i*n+j] * it.a1[j]
			}
			for c := 0; c < nc; c++ {
				bl += e.B[c*n+i] * it.l1[c]
			}
			it.r[i] = -(ma + (1+al)*(e.F[i]+bl) - al*it.old[i])
			fscale = math.Max(fscale, math.Max(math.Abs(ma), math.Max(math.Abs(e.F[i]), math.Abs(bl))))
		}
		for c := 0; c < nc; c++ {
			it.r[n+c] = -sc * e.Phi[c]
		}
		if !finite(it.r) {
			return fmt.Errorf("t = %g: %w", t1, ErrNonFinite)
		}
		qs := math.Max(1, normInf(it.q1))
		if iter > 0 && dqNorm <= it.opt.Tol*qs && normInf(it.r[:n]) <= it.opt.Tol*math.Max(fscale, 1e-300)*1e2 &&
			normInf(it.r[n:]) <= it.opt.Tol*sc*qs {
			break
		}
		if iter >= it.opt.MaxIter {
			return fmt.Errorf("t = %g: %w after %d iterations (|dq| = %.3g)", t1, ErrNewton, iter, dqNorm)
		}
		// Iteration matrix (Gouveia Eq. 9), scaled constraint block.
		cg := g / (bt * h)
		for i := 0; i < n; i++ {
			row := it.jac[i*N : (i+1)*N]
			for j := 0; j < n; j++ {
				row[j] = sc*e.M[i*n+j] + (1+al)*(e.K[i*n+j]+cg*e.C[i*n+j])
			}
			for c := 0; c < nc; c++ {
				row[n+c] = sc * e.B[c*n+i]
			}
		}
		for c := 0; c < nc; c++ {
			row := it.jac[(n+c)*N : (n+c+1)*N]
			for j := 0; j < n; j++ {
				row[j] = sc * e.B[c*n+j]
			}
			clear(row[n:])
		}
		if err := it.solve(); err != nil {
			return fmt.Errorf("t = %g: %w", t1, err)
		}
		// Update (Gouveia Eq. 10): the unknown is Δq; Δλ = μ·sc/(1+α).
		dqNorm = normInf(it.r[:n])
		for i := 0; i < n; i++ {
			d := it.r[i]
			it.q1[i] += d
			it.v1[i] += cg * d
			it.a1[i] += sc * d
		}
		for c := 0; c < nc; c++ {
			it.l1[c] += it.r[n+c] * sc / (1 + al)
		}
		it.Iterations++
	}
	it.TotalIter += it.Iterations
	it.T = t1
	copy(it.Q, it.q1)
	copy(it.V, it.v1)
	copy(it.A, it.a1)
	copy(it.Lam, it.l1)
	it.e0, it.e1 = it.e1, it.e0
	it.setOld()
	return nil
}

// SetState sets the full state (t, q, q̇, q̈, λ) without making it
// consistent: the amplification matrix of the method acts on (q, q̇, q̈).
func (it *Integrator) SetState(t float64, q, v, a, lam []float64) error {
	if len(q) != it.n || len(v) != it.n || len(a) != it.n || len(lam) != it.nc {
		return fmt.Errorf("hht: state lengths %d, %d, %d, %d; want %d, %d", len(q), len(v), len(a), len(lam), it.n, it.nc)
	}
	it.T = t
	copy(it.Q, q)
	copy(it.V, v)
	copy(it.A, a)
	copy(it.Lam, lam)
	if err := it.sys.Eval(t, it.Q, it.V, &it.e0); err != nil {
		return fmt.Errorf("t = %g: %w", t, err)
	}
	it.setOld()
	return nil
}
