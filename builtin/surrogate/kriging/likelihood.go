package kriging

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// problem is the data of one fit in normalised coordinates: n sites
// (rows of x, n×d row-major), responses y, regression matrix F (n×p).
type problem struct {
	n, d, p  int
	x        []float64
	y        []float64
	f        *mat.Dense
	corr     Correlation
	estNug   bool    // the last parameter is ln λ
	nugget   float64 // fixed λ when !estNug
	diff     []float64
	lastPhi  []float64
	last     *fitState
	lastErr  error
	nEval    int
	nGradEv  int
	failures int
}

// fitState is everything the likelihood computes at one θ, reused for the
// gradient and, at the optimum, for prediction.
type fitState struct {
	theta  []float64
	nugget float64
	r      *mat.SymDense // R = C + λI
	chol   mat.Cholesky  // R = C·Cᵀ
	ft     *mat.Dense    // F̃ = C⁻¹F
	qr     mat.QR        // F̃ = Q·G
	g      *mat.TriDense // G (p×p upper)
	beta   []float64     // generalised least squares β
	rho    *mat.VecDense // ρ = C⁻¹(y − Fβ)
	gamma  *mat.VecDense // γ = R⁻¹(y − Fβ) = C⁻ᵀρ
	sigma2 float64       // σ² = ‖ρ‖²/n
	obj    float64       // ln ψ = ln|R|/n + ln σ²
}

var errNotPD = errors.New("correlation matrix not positive definite")

// params maps the optimisation variables φ (ln θ_1 … ln θ_d [, ln λ]) to
// θ and λ.
func (pb *problem) params(phi []float64) ([]float64, float64) {
	theta := make([]float64, pb.d)
	for j := range theta {
		theta[j] = math.Exp(phi[j])
	}
	nug := pb.nugget
	if pb.estNug {
		nug = math.Exp(phi[pb.d])
	}
	return theta, nug
}

// state evaluates the concentrated likelihood at φ (DACE, Lophaven et al.
// 2002, Sec. 3: β and σ² in closed form, Eqs. 2.24–2.25; the objective
// ψ(θ) = |R|^{1/n}·σ², Eq. 2.27, minimised here as ln ψ). It caches the
// last point.
func (pb *problem) state(phi []float64) (*fitState, error) {
	if pb.lastPhi != nil && equal(phi, pb.lastPhi) {
		return pb.last, pb.lastErr
	}
	pb.nEval++
	st, err := pb.compute(phi)
	if err != nil {
		pb.failures++
	}
	pb.lastPhi = append(pb.lastPhi[:0], phi...)
	pb.last, pb.lastErr = st, err
	return st, err
}

func (pb *problem) compute(phi []float64) (*fitState, error) {
	theta, nug := pb.params(phi)
	return pb.computeAt(theta, nug)
}

// computeAt is compute at θ and λ themselves.
func (pb *problem) computeAt(theta []float64, nug float64) (*fitState, error) {
	n, d, p := pb.n, pb.d, pb.p
	st := &fitState{theta: theta, nugget: nug}
	r := mat.NewSymDense(n, nil)
	raw := r.RawSymmetric()
	diff := pb.diff[:d]
	for i := range n {
		xi := pb.x[i*d : (i+1)*d]
		row := raw.Data[i*raw.Stride:]
		row[i] = 1 + nug
		for j := i + 1; j < n; j++ {
			xj := pb.x[j*d : (j+1)*d]
			for k := range diff {
				diff[k] = xi[k] - xj[k]
			}
			row[j] = math.Exp(pb.corr.logCorr(theta, diff))
		}
	}
	st.r = r
	if ok := st.chol.Factorize(r); !ok {
		return nil, errNotPD
	}
	// R = UᵀU: C = Uᵀ. Triangular solves on the raw factor (no copy).
	u := st.chol.RawU().(*mat.TriDense).RawTriangular()
	st.ft = mat.NewDense(n, p, nil)
	st.ft.Copy(pb.f)
	blas64.Trsm(blas.Left, blas.Trans, 1, u, st.ft.RawMatrix())
	yt := mat.NewVecDense(n, nil)
	yt.CopyVec(mat.NewVecDense(n, pb.y))
	blas64.Trsv(blas.Trans, u, yt.RawVector())
	st.qr.Factorize(st.ft)
	var rfull mat.Dense
	st.qr.RTo(&rfull)
	st.g = mat.NewTriDense(p, mat.Upper, nil)
	st.g.Copy(rfull.Slice(0, p, 0, p))
	if c := st.qr.Cond(); c > 1e12 || math.IsNaN(c) {
		return nil, errors.New("regression matrix F is rank deficient at these sites (too few points for the regression order?)")
	}
	b := mat.NewVecDense(p, nil)
	if err := st.qr.SolveVecTo(b, false, yt); err != nil {
		return nil, err
	}
	st.beta = b.RawVector().Data
	st.rho = mat.NewVecDense(n, nil)
	st.rho.MulVec(st.ft, b)
	st.rho.SubVec(yt, st.rho)
	st.sigma2 = mat.Dot(st.rho, st.rho) / float64(n)
	st.gamma = mat.NewVecDense(n, nil)
	st.gamma.CopyVec(st.rho)
	blas64.Trsv(blas.NoTrans, u, st.gamma.RawVector())
	if st.sigma2 <= 0 {
		st.sigma2 = 1e-300
	}
	st.obj = st.chol.LogDet()/float64(n) + math.Log(st.sigma2)
	return st, nil
}

// objective is ln ψ(φ), +Inf where R is not positive definite.
func (pb *problem) objective(phi []float64) float64 {
	st, err := pb.state(phi)
	if err != nil {
		return math.Inf(1)
	}
	return st.obj
}

// gradient of ln ψ with respect to φ: with W = R⁻¹ − γγᵀ/σ²,
// ∂ln ψ/∂φ_k = (1/n)·Σ_ij W_ij ∂R_ij/∂φ_k (the derivative of σ² through
// β vanishes because β is optimal), and ∂R_ij/∂ln θ_k =
// R_ij·θ_k·∂ln c/∂θ_k.
func (pb *problem) gradient(grad, phi []float64) {
	st, err := pb.state(phi)
	if err != nil {
		for k := range grad {
			grad[k] = math.NaN()
		}
		return
	}
	pb.nGradEv++
	n, d := pb.n, pb.d
	var rinv mat.SymDense
	if err := st.chol.InverseTo(&rinv); err != nil {
		for k := range grad {
			grad[k] = math.NaN()
		}
		return
	}
	ri := rinv.RawSymmetric()
	rr := st.r.RawSymmetric()
	gam := st.gamma.RawVector().Data
	is2 := 1 / st.sigma2
	clear(grad)
	g := grad[:d]
	for i := range n {
		xi := pb.x[i*d : (i+1)*d]
		for j := i + 1; j < n; j++ {
			w := ri.Data[i*ri.Stride+j] - gam[i]*gam[j]*is2
			wr := 2 * w * rr.Data[i*rr.Stride+j]
			xj := pb.x[j*d : (j+1)*d]
			for k := range g {
				g[k] += wr * pb.corr.dLogTheta(st.theta[k], xi[k]-xj[k])
			}
		}
	}
	if pb.estNug {
		var s float64
		for i := range n {
			s += ri.Data[i*ri.Stride+i] - gam[i]*gam[i]*is2
		}
		grad[d] = s * st.nugget
	}
	for k := range grad {
		grad[k] /= float64(n)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
