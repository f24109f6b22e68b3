package target

import (
	"context"
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

// Residuals, their Jacobian and the soft constraints.
//
// A point's residual vector r (abi.Result.Residuals) is every likelihood
// term's K·m residuals (abi.Residuals), terms in study order, then every
// soft constraint's (study.Constraint), in study order; log L = C − ½‖r‖²
// with C constant in θ. The constraints' −½‖r_c‖² is part of every
// point's log likelihood, whatever the method asks.
//
// The Jacobian ∂r/∂θ (R×d row-major, in the method's coordinates) is
//   - "analytic": the model's Jacobian ∂y/∂θ (abi.Jacobian, by row blocks
//     for a model whose rows are independent; for a row-independent model
//     with only a VJP, one-row VJPs, vjpJacobian) times each term's residual
//     slopes ∂r_i/∂y_i (abi.ResidualSlopes), the constraints' exact
//     derivatives, and, with transforms, (∂θ/∂x) on the right;
//   - "forward-difference" or "central-difference": differences of r over
//     x, every difference point of every point of the batch evaluated as one
//     batch on the workers (fdJacobians).

// wantResidualsOnly is an internal want bit of the difference points of a
// Jacobian: residuals, without the likelihood terms' log likelihood (the
// residuals' own statuses are the terms'), so that a difference point
// costs the model and the residuals only.
const wantResidualsOnly abi.Want = 1 << 30

// lsqLayout is where each term's and constraint's residuals start in r.
type lsqLayout struct {
	R       int   // total; 0 if a term cannot give residuals
	termOff []int // per term
	consOff []int // per constraint
	why     string
}

func newLSQLayout(s *study.Study) lsqLayout {
	var l lsqLayout
	off := 0
	for i, t := range s.Terms {
		if _, ok := t.Likelihood.(abi.Residuals); !ok && l.why == "" {
			l.why = fmt.Sprintf("likelihood term %d (%s on dataset %q) gives no residuals (capability %q)", i+1, t.Component.Ref, t.Data.Name, abi.CapResiduals)
		}
		l.termOff = append(l.termOff, off)
		off += t.Data.K * len(t.Outputs)
	}
	for _, c := range s.Constraints {
		l.consOff = append(l.consOff, off)
		off += c.Len()
	}
	if l.why == "" {
		l.R = off
	}
	return l
}

// jacobianMode resolves the study's jacobian key.
func (t *Target) jacobianMode() string {
	switch t.S.JacobianMode {
	case study.JacobianForward:
		return "forward-difference"
	case study.JacobianCentral:
		return "central-difference"
	}
	if t.S.NoAnalyticJacobian() == "" {
		return "analytic"
	}
	return "forward-difference"
}

// JacobianMode says how residual Jacobians are computed: "analytic",
// "forward-difference" or "central-difference".
func (t *Target) JacobianMode() string { return t.jacMode }

// Residuals is R, the length of a point's residual vector, or 0 when a
// likelihood term cannot give residuals.
func (t *Target) Residuals() int { return t.lsq.R }

// constraintLogLik is −½‖r_c‖² over the study's constraints at theta (the
// free parameters in θ) with model outputs ys (per dataset), summed in
// study order.
func (t *Target) constraintLogLik(sc *scratch, theta []float64, ys [][]float64) (float64, *study.Constraint) {
	m := len(t.S.ModelInfo.Spec.Outputs)
	ll := 0.0
	for _, c := range t.S.Constraints {
		n := c.Len()
		if cap(sc.rbuf) < n {
			sc.rbuf = make([]float64, n)
		}
		r := sc.rbuf[:n]
		if c.OnOutputs() {
			c.OutputResiduals(ys[c.DataIdx], m, r)
		} else {
			c.ThetaResiduals(theta, r)
		}
		for _, x := range r {
			ll -= 0.5 * x * x
		}
		// A soft constraint's term is finite; an overflowing one (a
		// weight or bound of 1e308) makes the point non-finite, named
		// (audit 16: the run blamed the model and the prior).
		if math.IsNaN(ll) || math.IsInf(ll, 0) {
			return ll, c
		}
	}
	return ll, nil
}

// constraintSource names a constraint in Counts.NonFiniteFrom.
func constraintSource(c *study.Constraint) string { return "constraint " + c.Name }

// constraintGradY adds ∂(−½‖r_c‖²)/∂y = −(∂r_c/∂y)ᵀ·r_c of the output
// constraints on dataset di into gy (K×m), y being its model outputs.
func (t *Target) constraintGradY(sc *scratch, di int, y, gy []float64) {
	m := len(t.S.ModelInfo.Spec.Outputs)
	for _, c := range t.S.Constraints {
		if !c.OnOutputs() || c.DataIdx != di {
			continue
		}
		n := c.Len()
		if cap(sc.rbuf) < n {
			sc.rbuf = make([]float64, n)
		}
		r := sc.rbuf[:n]
		c.OutputResiduals(y, m, r)
		c.OutputSlopes(y, m, func(i, yi int, s float64) { gy[yi] -= r[i] * s })
	}
}

// constraintGradTheta adds −(∂r_c/∂θ)ᵀ·r_c of the parameter constraints
// into g (over the free parameters).
func (t *Target) constraintGradTheta(theta, g []float64) {
	for _, c := range t.S.Constraints {
		if !c.OnOutputs() {
			c.ThetaPenaltyGrad(theta, make([]float64, c.Len()), g)
		}
	}
}

// residuals is the residual vector of a point whose model outputs are ys
// (per dataset), with a status: a term's non-OK status, or NonFinite for a
// non-finite residual. A term without residuals is an error.
func (t *Target) residuals(sc *scratch, theta []float64, ys [][]float64) ([]float64, abi.Status, error) {
	if t.lsq.R == 0 && t.lsq.why != "" {
		return nil, 0, fmt.Errorf("residuals asked for, but %s", t.lsq.why)
	}
	m := len(t.S.ModelInfo.Spec.Outputs)
	r := make([]float64, t.lsq.R)
	for k, term := range t.S.Terms {
		rl := term.Likelihood.(abi.Residuals)
		sc.yobs = t.termOutputs(term, ys[dataIndex(t.S, term.Data)], sc.yobs)
		off := t.lsq.termOff[k]
		rt := r[off : off+len(sc.yobs)]
		st := rl.Residuals(len(term.OutIdx), sc.yobs, term.Obs, term.Sigma, rt)
		if st == abi.Timeout || st == abi.Trap {
			return nil, st, fault(term.Likelihood, st)
		}
		if st == abi.OK && !finite(rt) {
			st = abi.NonFinite
		}
		if st != abi.OK {
			if st == abi.NonFinite {
				// Named, as on the log-likelihood path (audit 16: nmse's
				// variance of 1e-320 went unnamed).
				t.nonFinite(termSource(term), 1)
			}
			return nil, st, nil
		}
	}
	for k, c := range t.S.Constraints {
		rc := r[t.lsq.consOff[k] : t.lsq.consOff[k]+c.Len()]
		if c.OnOutputs() {
			c.OutputResiduals(ys[c.DataIdx], m, rc)
		} else {
			c.ThetaResiduals(theta, rc)
		}
		if !finite(rc) {
			t.nonFinite(constraintSource(c), 1)
			return nil, abi.NonFinite, nil
		}
	}
	return r, abi.OK, nil
}

// analyticJacobian is ∂r/∂θ over the free parameters (R×d row-major) at
// theta (free; full is the model's vector), by the chain rule: each
// dataset's model Jacobian ∂y/∂θ, times the terms' slopes ∂r_i/∂y_i and
// the output constraints' ∂r/∂y, plus the parameter constraints'
// derivatives. It returns nil when the model's Jacobian fails for the
// point (the point stays valid, without a Jacobian).
func (t *Target) analyticJacobian(sc *scratch, theta, full []float64, ys [][]float64) ([]float64, error) {
	spec := t.S.ModelInfo.Spec
	dFull, m, d := len(spec.Params), len(spec.Outputs), len(theta)
	J := make([]float64, t.lsq.R*d)
	free := t.S.FreeIdx
	for di, ds := range t.S.Data {
		if !t.datasetHasResiduals(di) {
			continue
		}
		jy := make([]float64, ds.K*m*dFull)
		yOut := make([]float64, ds.K*m)
		if st := t.modelJacobian(full, ds, yOut, jy); st != abi.OK {
			if st == abi.Timeout || st == abi.Trap {
				return nil, fault(t.S.Model, st)
			}
			return nil, nil
		}
		// row adds s·∂y_yi/∂θ (free columns) to residual row ri.
		row := func(ri, yi int, s float64) {
			dst := J[ri*d : (ri+1)*d]
			src := jy[yi*dFull : (yi+1)*dFull]
			for j, fi := range free {
				dst[j] += s * src[fi]
			}
		}
		for k, term := range t.S.Terms {
			if term.Data != ds {
				continue
			}
			mo := len(term.OutIdx)
			sc.yobs = t.termOutputs(term, ys[di], sc.yobs)
			n := len(sc.yobs)
			r, sl := make([]float64, n), make([]float64, n)
			st := term.Likelihood.(abi.ResidualSlopes).ResidualSlopes(mo, sc.yobs, term.Obs, term.Sigma, r, sl)
			if st != abi.OK {
				return nil, nil // the residuals were computed: not expected
			}
			off := t.lsq.termOff[k]
			for i, s := range sl {
				if s != 0 {
					row(off+i, (i/mo)*m+term.OutIdx[i%mo], s)
				}
			}
		}
		for k, c := range t.S.Constraints {
			if c.OnOutputs() && c.DataIdx == di {
				off := t.lsq.consOff[k]
				c.OutputSlopes(ys[di], m, func(i, yi int, s float64) { row(off+i, yi, s) })
			}
		}
	}
	for k, c := range t.S.Constraints {
		if !c.OnOutputs() {
			off := t.lsq.consOff[k]
			c.ThetaJacobian(theta, J[off*d:(off+c.Len())*d])
		}
	}
	if !finite(J) {
		return nil, nil
	}
	return J, nil
}

// datasetHasResiduals reports whether a term or an output constraint
// reads dataset di's outputs.
func (t *Target) datasetHasResiduals(di int) bool {
	for _, term := range t.S.Terms {
		if term.Data == t.S.Data[di] {
			return true
		}
	}
	for _, c := range t.S.Constraints {
		if c.OnOutputs() && c.DataIdx == di {
			return true
		}
	}
	return false
}

// modelJacobian is the model's Jacobian on one dataset (jac (K·m)×dFull),
// by row blocks in parallel for a model whose rows are independent (the
// rows of jac of a block are the block's own, so the result is the same).
func (t *Target) modelJacobian(full []float64, ds *study.Dataset, y, jac []float64) abi.Status {
	jm, ok := t.S.Model.(abi.Jacobian)
	if !ok {
		return t.vjpJacobian(full, ds, y, jac)
	}
	if !t.rowsIndependent() {
		var st abi.Status
		t.timed(func() { st = jm.Jacobian(full, ds.X, y, jac) })
		return st
	}
	c := len(t.S.ModelInfo.Spec.Conditions)
	m := len(t.S.ModelInfo.Spec.Outputs)
	dFull := len(full)
	nb := rowBlocks(ds.K)
	bst := make([]abi.Status, nb)
	t.forBlocks(nb, func(b int) {
		lo, hi := blockRows(ds.K, b)
		t.timed(func() {
			bst[b] = jm.Jacobian(full, ds.X[lo*c:hi*c], y[lo*m:hi*m], jac[lo*m*dFull:hi*m*dFull])
		})
	})
	return firstNotOK(bst)
}

// vjpJacobian is the Jacobian of a model that has a VJP but no Jacobian
// and declares its rows independent (study.NoAnalyticJacobian allows no
// other): row (k, j) of jac is the VJP of row k alone with the cotangent
// e_j, K·m one-row VJPs, by row blocks in parallel. Exact where the VJP is;
// it costs m VJPs of one row per row instead of d evaluations of all rows
// for forward differences.
func (t *Target) vjpJacobian(full []float64, ds *study.Dataset, y, jac []float64) abi.Status {
	vm := t.S.Model.(abi.VJP)
	c := len(t.S.ModelInfo.Spec.Conditions)
	m := len(t.S.ModelInfo.Spec.Outputs)
	dFull := len(full)
	nb := rowBlocks(ds.K)
	bst := make([]abi.Status, nb)
	t.forBlocks(nb, func(b int) {
		lo, hi := blockRows(ds.K, b)
		v := make([]float64, m)
		t.timed(func() {
			for k := lo; k < hi; k++ {
				for j := 0; j < m; j++ {
					v[j] = 1
					st := vm.VJP(full, ds.X[k*c:(k+1)*c], v, y[k*m:(k+1)*m], jac[(k*m+j)*dFull:(k*m+j+1)*dFull])
					v[j] = 0
					if st != abi.OK {
						bst[b] = st
						return
					}
				}
			}
		})
	})
	return firstNotOK(bst)
}

// pullBackRows replaces each row g of jac (R×d, ∂r/∂θ) by (∂θ/∂x)ᵀ·g, the
// row of ∂r/∂x.
func (t *Target) pullBackRows(x, jac []float64) {
	d := len(x)
	for i := 0; i < len(jac)/d; i++ {
		copy(jac[i*d:(i+1)*d], t.S.PullBack(x, jac[i*d:(i+1)*d]))
	}
}

// Finite-difference steps (Dennis & Schnabel 1996, Numerical Methods for
// Unconstrained Optimization and Nonlinear Equations, Sec. 5.4 and
// Algorithm A5.6.3; typical size as MATLAB's TypicalX = 1, capped by the
// parameter's range and by 100 times its prior's interquartile range, so
// that a parameter of size 1e-8 under a lognormal prior is not stepped by
// 1.5e-8 (audit 5: levmar stopped far from the optimum, standard errors
// 164× off), while the steps of a parameter whose prior spreads over more
// than 1/100 stay as they were): h_j = η·max(|x_j|, min(1, hi_j − lo_j,
// 100·iqr_j)), with
// η = √ε for forward and ∛ε for central differences (ε = 2⁻⁵², the error
// of the two being then about √ε and ε^⅔ of the derivative's scale), the
// step taken as (x_j + h_j) − x_j so that it is exact in floating point.
// iqrScale: the typical size is at most iqrScale prior interquartile
// ranges.
const iqrScale = 100

var (
	fdEtaForward = math.Sqrt(0x1p-52)
	fdEtaCentral = math.Cbrt(0x1p-52)
)

// fdMaxValues bounds the residual values of one group of difference
// points held at once (32 MiB), so that a batch of many points is
// differenced group by group. Groups are cut by points, so a point's
// Jacobian does not depend on them.
const fdMaxValues = 1 << 22

// fdCol is the stencil of one column j of point p's Jacobian: difference
// points x + h_k·e_j, k < n, at indices idx in their group.
type fdCol struct {
	p, j int
	n    int
	h    [2]float64
	idx  [2]int
}

// fdStep plans column j at x_j in [lo, hi]: the stencil's steps (one for
// forward differences; two for central differences, −h and +h, or 2h and
// h on one side near a bound). A step that would leave the bounds is taken
// on the other side; where both sides are too close the step shrinks to
// the larger room.
func fdStep(x, lo, hi, iqr float64, central bool) (h [2]float64, n int) {
	eta := fdEtaForward
	if central {
		eta = fdEtaCentral
	}
	typ := min(1.0, hi-lo)
	if iqr > 0 && iqrScale*iqr < typ {
		typ = iqrScale * iqr
	}
	step := eta * math.Max(math.Abs(x), typ)
	exact := func(s float64) float64 { return (x + s) - x }
	up, down := hi-x, x-lo // room on each side
	if !central {
		switch {
		case step <= up:
			return [2]float64{exact(step)}, 1
		case step <= down:
			return [2]float64{exact(-step)}, 1
		case up >= down:
			return [2]float64{exact(up)}, 1
		default:
			return [2]float64{exact(-down)}, 1
		}
	}
	switch {
	case step <= up && step <= down:
		return [2]float64{exact(-step), exact(step)}, 2
	case 2*step <= up:
		return [2]float64{exact(step), exact(2 * step)}, 2
	case 2*step <= down:
		return [2]float64{exact(-step), exact(-2 * step)}, 2
	case up >= down:
		return [2]float64{exact(up / 2), exact(up)}, 2
	default:
		return [2]float64{exact(-down / 2), exact(-down)}, 2
	}
}

// fdJacobians fills the Jacobian of every OK point of res (points xs, in
// the method's coordinates) by differences of the residuals, evaluating
// the difference points of a group of points as one batch. A column whose
// difference point fails is retried from the points that worked or once
// on the other side; a point with a column that cannot be differenced has
// no Jacobian. It returns the number of difference points evaluated.
func (t *Target) fdJacobians(ctx context.Context, xs [][]float64, res []abi.Result) (int, error) {
	evals := 0
	var group []int
	values := 0
	flush := func() error {
		n, err := t.fdGroup(ctx, xs, res, group)
		evals += n
		group, values = group[:0], 0
		return err
	}
	for p := range res {
		if res[p].Status != abi.OK || res[p].Residuals == nil {
			continue
		}
		group = append(group, p)
		values += 2 * len(xs[p]) * len(res[p].Residuals)
		if values >= fdMaxValues {
			if err := flush(); err != nil {
				return evals, err
			}
		}
	}
	if len(group) > 0 {
		if err := flush(); err != nil {
			return evals, err
		}
	}
	return evals, nil
}

// fdScales is the interquartile range of each method coordinate's prior
// (Quantile(0.75) − Quantile(0.25)), a typical size for fdStep; 0 (none)
// for a coordinate under [transform], whose prior is of θ, not of x.
func (t *Target) fdScales(d int) []float64 {
	t.fdOnce.Do(func() {
		t.fdIQR = make([]float64, d)
		for j := range d {
			if j >= len(t.S.Priors) || j >= len(t.S.Free) || len(t.S.XParams) == d && t.S.XParams[j] != t.S.Free[j] {
				continue
			}
			q := t.S.Priors[j]
			if r := q.Quantile(0.75) - q.Quantile(0.25); r > 0 && !math.IsInf(r, 0) {
				t.fdIQR[j] = r
			}
		}
	})
	return t.fdIQR
}

// fdGroup differences the points res[group].
func (t *Target) fdGroup(ctx context.Context, xs [][]float64, res []abi.Result, group []int) (int, error) {
	bounds := t.S.XParams
	if len(bounds) != len(t.S.Free) {
		bounds = t.S.Free
	}
	central := t.jacMode == "central-difference"
	iqr := t.fdScales(len(bounds))
	var cols []fdCol
	var pts [][]float64
	add := func(p, j int, h float64) int {
		x := append([]float64(nil), xs[p]...)
		x[j] += h
		pts = append(pts, x)
		return len(pts) - 1
	}
	for _, p := range group {
		for j, b := range bounds {
			h, n := fdStep(xs[p][j], b.Lower, b.Upper, iqr[j], central)
			c := fdCol{p: p, j: j, n: n, h: h}
			for k := 0; k < n; k++ {
				c.idx[k] = add(p, j, h[k])
			}
			cols = append(cols, c)
		}
	}
	out, err := t.evaluate(ctx, pts, abi.WantResiduals|wantResidualsOnly)
	if err != nil {
		return 0, err
	}
	evals := len(pts)
	ok := func(i int) bool { return out[i].Status == abi.OK && out[i].Residuals != nil }
	// Columns with a failed difference point: fall back to a two-point
	// difference with a stencil point that worked, else retry once on the
	// other side of the first step.
	var retry []int
	var rpts [][]float64
	for ci := range cols {
		c := &cols[ci]
		good := 0
		for k := 0; k < c.n; k++ {
			if ok(c.idx[k]) {
				c.h[good], c.idx[good] = c.h[k], c.idx[k]
				good++
			}
		}
		if good == c.n {
			continue
		}
		if good > 0 {
			c.n = 1
			continue
		}
		c.n = 0
		h := -c.h[0]
		if b := bounds[c.j]; xs[c.p][c.j]+h >= b.Lower && xs[c.p][c.j]+h <= b.Upper && h != 0 {
			x := append([]float64(nil), xs[c.p]...)
			x[c.j] += h
			c.h[0] = (xs[c.p][c.j] + h) - xs[c.p][c.j]
			rpts = append(rpts, x)
			retry = append(retry, ci)
		}
	}
	var rout []abi.Result
	if len(rpts) > 0 {
		if rout, err = t.evaluate(ctx, rpts, abi.WantResiduals|wantResidualsOnly); err != nil {
			return evals, err
		}
		evals += len(rpts)
	}
	retried := map[int]abi.Result{}
	for k, ci := range retry {
		if rout[k].Status == abi.OK && rout[k].Residuals != nil {
			retried[ci] = rout[k]
			cols[ci].n = 1
		}
	}
	// Assemble. A Jacobian belongs to its point; failed columns drop it.
	jacs := map[int][]float64{}
	dead := map[int]bool{}
	for ci, c := range cols {
		if dead[c.p] {
			continue
		}
		if c.n == 0 {
			dead[c.p] = true
			delete(jacs, c.p)
			continue
		}
		r0 := res[c.p].Residuals
		d := len(xs[c.p])
		J := jacs[c.p]
		if J == nil {
			J = make([]float64, len(r0)*d)
			jacs[c.p] = J
		}
		var r1, r2 []float64
		if rr, isRetry := retried[ci]; isRetry {
			r1 = rr.Residuals
		} else {
			r1 = out[c.idx[0]].Residuals
			if c.n == 2 {
				r2 = out[c.idx[1]].Residuals
			}
		}
		h1, h2 := c.h[0], c.h[1]
		if c.n == 1 {
			for i := range r0 {
				J[i*d+c.j] = (r1[i] - r0[i]) / h1
			}
			continue
		}
		// Three points 0, h1, h2 (central: h1 < 0 < h2; one-sided: same
		// sign): the derivative at 0 of the interpolating parabola,
		// weights L_k'(0) of the Lagrange basis.
		w0 := -(h1 + h2) / (h1 * h2)
		w1 := h2 / (h1 * (h2 - h1))
		w2 := -h1 / (h2 * (h2 - h1))
		for i := range r0 {
			J[i*d+c.j] = w0*r0[i] + w1*r1[i] + w2*r2[i]
		}
	}
	for p, J := range jacs {
		if finite(J) {
			res[p].Jacobian = J
		}
	}
	return evals, nil
}
