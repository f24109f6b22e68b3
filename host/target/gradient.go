package target

import (
	"math"

	"github.com/kinfer/kinfer/abi"
)

// gradient is ∇θ of the log target at theta, whose model outputs on each
// dataset (K×m) are ys (computed by the caller: the analytic path does not
// evaluate the model again).
func (t *Target) gradient(sc *scratch, theta []float64, ys [][]float64) ([]float64, error) {
	if t.gradMode == "analytic" {
		return t.analytic(sc, theta, ys)
	}
	return t.finiteDifference(sc, theta)
}

// analytic chains ∂logL/∂y through the model: ∇θ = Σ_datasets Jᵀ·gy
// (or the model's VJP), plus the prior's d log p/dθ. ys[d] holds the model
// outputs at theta on dataset d.
func (t *Target) analytic(sc *scratch, theta []float64, ys [][]float64) ([]float64, error) {
	spec := t.S.ModelInfo.Spec
	d, m := len(spec.Params), len(spec.Outputs)
	full := t.Full(theta)
	gFull := make([]float64, d)
	for di, ds := range t.S.Data {
		y := ys[di]
		yOut := make([]float64, ds.K*m) // the VJP/Jacobian's own copy of y
		gy := make([]float64, ds.K*m)
		for _, term := range t.S.Terms {
			if term.Data != ds {
				continue
			}
			if _, st, err := t.termLogLik(sc, term, y, gy); err != nil || st != abi.OK {
				return nil, firstErr(err, t.statusErr(st))
			}
		}
		t.constraintGradY(sc, di, y, gy)
		if v, ok := t.S.Model.(abi.VJP); ok {
			g := make([]float64, d)
			st := abi.OK
			if t.rowsIndependent() {
				st = t.vjpRows(full, ds, gy, yOut, g)
			} else {
				st = v.VJP(full, ds.X, gy, yOut, g)
			}
			if st != abi.OK {
				return nil, t.statusErr(st)
			}
			for i := range g {
				gFull[i] += g[i]
			}
			continue
		}
		jac := make([]float64, ds.K*m*d)
		if st := t.S.Model.(abi.Jacobian).Jacobian(full, ds.X, yOut, jac); st != abi.OK {
			return nil, t.statusErr(st)
		}
		for r, gr := range gy {
			if gr == 0 {
				continue
			}
			row := jac[r*d : (r+1)*d]
			for i := range row {
				gFull[i] += gr * row[i]
			}
		}
	}
	g := make([]float64, len(theta))
	for j, i := range t.S.FreeIdx {
		g[j] = gFull[i] + t.S.Priors[j].DLogPdf(theta[j])
	}
	t.constraintGradTheta(theta, g)
	return g, nil
}

// finiteDifference is the central difference of the log target with a step
// of 1e-6 of each parameter's range, one-sided at a bound.
func (t *Target) finiteDifference(sc *scratch, theta []float64) ([]float64, error) {
	g := make([]float64, len(theta))
	x := append([]float64(nil), theta...)
	for j, p := range t.S.Free {
		h := 1e-6 * (p.Upper - p.Lower)
		lo, hi := math.Max(theta[j]-h, p.Lower), math.Min(theta[j]+h, p.Upper)
		x[j] = hi
		fh, err := t.logTarget(sc, x)
		if err != nil {
			return nil, err
		}
		x[j] = lo
		fl, err := t.logTarget(sc, x)
		if err != nil {
			return nil, err
		}
		x[j] = theta[j]
		g[j] = (fh - fl) / (hi - lo)
	}
	return g, nil
}

// logTarget evaluates one point serially (for finite differences).
func (t *Target) logTarget(sc *scratch, theta []float64) (float64, error) {
	var r [1]abi.Result
	if err := t.evalChunk(sc, [][]float64{theta}, r[:], 0); err != nil {
		return 0, err
	}
	if r[0].Status != abi.OK {
		return 0, t.statusErr(r[0].Status)
	}
	return r[0].LogTarget(), nil
}

type statusError abi.Status

func (e statusError) Error() string { return "gradient evaluation: " + abi.Status(e).String() }

func (t *Target) statusErr(st abi.Status) error {
	if st == abi.Timeout || st == abi.Trap {
		return fault(t.S.Model, st)
	}
	return statusError(st)
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
