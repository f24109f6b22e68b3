package kriging

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Predict returns the Kriging predictor ŷ(x) and its mean squared error
// at one point x (original units); see PredictGrad.
func (m *Model) Predict(x []float64) (yhat, mse float64, err error) {
	return m.PredictGrad(x, nil, nil)
}

// PredictGrad returns ŷ(x) and the MSE φ(x), and when grad (dmse) is not
// nil writes ∂ŷ/∂x (∂φ/∂x) into it. DACE's predictor (Lophaven et al.
// 2002, Eqs. 3.2–3.3 and 3.8–3.9, with the Cholesky and QR factors of
// Sec. 3: R = CCᵀ, C⁻¹F = QG):
//
//	ŷ(x) = f(x)ᵀβ + r(x)ᵀγ,                 γ = R⁻¹(Y − Fβ)
//	φ(x) = σ²(1 + ‖G⁻ᵀu‖² − ‖r̃‖²),         r̃ = C⁻¹r, u = F̃ᵀr̃ − f(x)
//
// and their gradients ∂ŷ = Jfᵀβ + Jrᵀγ, ∂φ = 2σ²(vᵀG⁻ᵀ∂u − r̃ᵀ∂r̃) with
// v = G⁻ᵀu, ∂r̃ = C⁻¹Jr, ∂u = F̃ᵀ∂r̃ − Jf. The nugget, if any, is on
// the diagonal of R only: φ is the MSE of the noise-free process. The MSE
// costs O(n²) per point (a triangular solve), the mean O(n·d).
func (m *Model) PredictGrad(x, grad, dmse []float64) (yhat, mse float64, err error) {
	d, n, p := m.d, m.n, m.p
	if len(x) != d {
		return 0, 0, fmt.Errorf("kriging: point has %d coordinates, model %d", len(x), d)
	}
	if grad != nil && len(grad) != d || dmse != nil && len(dmse) != d {
		return 0, 0, fmt.Errorf("kriging: gradient buffers must have %d entries", d)
	}
	xn := make([]float64, d)
	for j := range d {
		xn[j] = (x[j] - m.xMean[j]) / m.xStd[j]
	}
	st := m.st
	f := make([]float64, p)
	basis(m.order, xn, f)
	r := make([]float64, n)
	diff := make([]float64, d)
	for i := range n {
		xi := m.x[i*d : (i+1)*d]
		for k := range diff {
			diff[k] = xn[k] - xi[k]
		}
		r[i] = math.Exp(m.corr.logCorr(st.theta, diff))
	}
	gam := st.gamma.RawVector().Data
	yn := blas64.Dot(blas64.Vector{N: p, Inc: 1, Data: f}, blas64.Vector{N: p, Inc: 1, Data: st.beta}) +
		blas64.Dot(blas64.Vector{N: n, Inc: 1, Data: r}, blas64.Vector{N: n, Inc: 1, Data: gam})
	yhat = m.yMean + m.yStd*yn

	// Jr: ∂r_i/∂x̃_k = r_i · ∂ln c/∂d (d = x̃_k − x_ik), n×d row-major.
	var jr []float64
	if grad != nil || dmse != nil {
		jr = make([]float64, n*d)
		for i := range n {
			xi := m.x[i*d : (i+1)*d]
			for k := range d {
				jr[i*d+k] = r[i] * m.corr.dLogD(st.theta[k], xn[k]-xi[k])
			}
		}
	}
	jf := make([]float64, p)
	if grad != nil {
		for k := range d {
			basisGrad(m.order, xn, k, jf)
			var s float64
			for a := range p {
				s += jf[a] * st.beta[a]
			}
			for i := range n {
				s += jr[i*d+k] * gam[i]
			}
			grad[k] = s * m.yStd / m.xStd[k]
		}
	}

	// MSE.
	l := m.lChol.RawTriangular()
	rt := blas64.Vector{N: n, Inc: 1, Data: r} // overwritten by C⁻¹r
	blas64.Trsv(blas.NoTrans, l, rt)
	ftRaw := st.ft.RawMatrix()
	u := make([]float64, p)
	blas64.Gemv(blas.Trans, 1, ftRaw, rt, 0, blas64.Vector{N: p, Inc: 1, Data: u})
	for a := range p {
		u[a] -= f[a]
	}
	g := st.g.RawTriangular()
	v := blas64.Vector{N: p, Inc: 1, Data: u} // overwritten by G⁻ᵀu
	blas64.Trsv(blas.Trans, g, v)
	vv := blas64.Dot(v, v)
	rr := blas64.Dot(rt, rt)
	mn := 1 + vv - rr
	mse = max(0, st.sigma2*mn) * m.yStd * m.yStd
	if dmse != nil {
		// w = G⁻¹v so that vᵀG⁻ᵀ∂u = wᵀ∂u.
		w := blas64.Vector{N: p, Inc: 1, Data: append([]float64(nil), v.Data...)}
		blas64.Trsv(blas.NoTrans, g, w)
		drt := blas64.Vector{N: n, Inc: 1, Data: make([]float64, n)}
		du := make([]float64, p)
		for k := range d {
			for i := range n {
				drt.Data[i] = jr[i*d+k]
			}
			blas64.Trsv(blas.NoTrans, l, drt)
			blas64.Gemv(blas.Trans, 1, ftRaw, drt, 0, blas64.Vector{N: p, Inc: 1, Data: du})
			basisGrad(m.order, xn, k, jf)
			var s float64
			for a := range p {
				s += w.Data[a] * (du[a] - jf[a])
			}
			s -= blas64.Dot(rt, drt)
			dmse[k] = 2 * st.sigma2 * s * m.yStd * m.yStd / m.xStd[k]
		}
		if mn <= 0 { // clamped at zero: the clamp is flat
			clear(dmse)
		}
	}
	return yhat, mse, nil
}

// Mean returns the Kriging predictor ŷ(x) alone (Lophaven et al. 2002,
// Eq. 3.2: ŷ = f(x)ᵀβ + r(x)ᵀγ), Predict's ŷ up to rounding (the sums run in another order), without the
// MSE's O(n²) triangular solve: O(n·d) per point, no allocation for
// d ≤ 16 and order ≤ 1. For surrogates evaluated in a simulation loop.
func (m *Model) Mean(x []float64) (float64, error) {
	d, n, p := m.d, m.n, m.p
	if len(x) != d {
		return 0, fmt.Errorf("kriging: point has %d coordinates, model %d", len(x), d)
	}
	var xbuf, dbuf [16]float64
	var fbuf [17]float64
	var xn, diff, f []float64
	if d <= 16 && p <= 17 {
		xn, diff, f = xbuf[:d], dbuf[:d], fbuf[:p]
	} else {
		xn, diff, f = make([]float64, d), make([]float64, d), make([]float64, p)
	}
	for j := range d {
		xn[j] = (x[j] - m.xMean[j]) / m.xStd[j]
	}
	st := m.st
	basis(m.order, xn, f)
	gam := st.gamma.RawVector().Data
	var rg float64
	for i := range n {
		xi := m.x[i*d : (i+1)*d]
		for k := range diff {
			diff[k] = xn[k] - xi[k]
		}
		rg += math.Exp(m.corr.logCorr(st.theta, diff)) * gam[i]
	}
	var fb float64
	for a := range p {
		fb += f[a] * st.beta[a]
	}
	return m.yMean + m.yStd*(fb+rg), nil
}

// MeanGrad returns ŷ(x) (as Mean) and writes ∂ŷ/∂x into grad
// (len d): ∂ŷ = Jfᵀβ + Jrᵀγ (Lophaven et al. 2002, Eq. 3.8), O(n·d) per
// point, without the MSE.
func (m *Model) MeanGrad(x, grad []float64) (float64, error) {
	d, n, p := m.d, m.n, m.p
	if len(x) != d || len(grad) != d {
		return 0, fmt.Errorf("kriging: point and gradient have %d and %d entries, model %d", len(x), len(grad), d)
	}
	xn, diff, f, jf := make([]float64, d), make([]float64, d), make([]float64, p), make([]float64, p)
	for j := range d {
		xn[j] = (x[j] - m.xMean[j]) / m.xStd[j]
	}
	st := m.st
	basis(m.order, xn, f)
	gam := st.gamma.RawVector().Data
	var fb, rg float64
	for a := range p {
		fb += f[a] * st.beta[a]
	}
	clear(grad)
	for i := range n {
		xi := m.x[i*d : (i+1)*d]
		for k := range diff {
			diff[k] = xn[k] - xi[k]
		}
		ri := math.Exp(m.corr.logCorr(st.theta, diff)) * gam[i]
		rg += ri
		for k := range d {
			grad[k] += ri * m.corr.dLogD(st.theta[k], diff[k])
		}
	}
	for k := range d {
		basisGrad(m.order, xn, k, jf)
		var s float64
		for a := range p {
			s += jf[a] * st.beta[a]
		}
		grad[k] = (grad[k] + s) * m.yStd / m.xStd[k]
	}
	return m.yMean + m.yStd*(fb+rg), nil
}
