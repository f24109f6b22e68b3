package wasm

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
)

// Likelihood returns the plugin's likelihood configured with settings,
// backed by a pool of up to workers instances, for a term that sees outputs
// (m) columns. Every call passes m (abi.Likelihood) and the guest gets the
// call's K and m (ABI.md §6.2); outputs is a check: a call with another m
// is a bug of the caller and panics.
//
// The value is safe for concurrent use and implements abi.Likelihood,
// abi.Faulter and io.Closer, and abi.GradY / abi.Residuals exactly when the
// spec lists the capability. A non-OK status comes with a log-likelihood of
// −∞; NonFinite means the guest returned NaN or +Inf (−∞ with status 0 is
// an evaluated point whose data are impossible, ABI.md §6.2).
func (p *Plugin) Likelihood(ctx context.Context, settings []float64, outputs, workers int) (abi.Likelihood, error) {
	if err := p.checkSettings(abi.KindLikelihood, settings); err != nil {
		return nil, err
	}
	if outputs < 1 {
		return nil, fmt.Errorf("plugin %s: a likelihood needs outputs ≥ 1, got %d", p.Manifest.Name, outputs)
	}
	pl, err := newPool(ctx, p, settings, workers)
	if err != nil {
		return nil, err
	}
	w := &likelihood{model: model{pool: pl, spec: p.Spec, m: outputs}}
	hasG, hasR := p.Spec.Has(abi.CapGradY), p.Spec.Has(abi.CapResiduals)
	switch {
	case hasG && hasR:
		return likGradRes{w}, nil
	case hasG:
		return likGrad{w}, nil
	case hasR:
		return likRes{w}, nil
	}
	return w, nil
}

// likelihood reuses model's pool plumbing (run, Fault, Close); model.m is
// the number of output columns every call must pass.
type likelihood struct{ model model }

// EvaluationFailures describes the points the likelihood failed, with its
// last kinfer_last_error message ("" for none).
func (w *likelihood) EvaluationFailures() string { return w.model.EvaluationFailures() }

// PluginName is the manifest's name.
func (w *likelihood) PluginName() string { return w.model.PluginName() }

type likGrad struct{ *likelihood }
type likRes struct{ *likelihood }
type likGradRes struct{ *likelihood }

var (
	_ abi.Faulter         = (*likelihood)(nil)
	_ abi.BatchLikelihood = (*likelihood)(nil)
	_ abi.GradY           = likGrad{}
	_ abi.Residuals       = likRes{}
	_ abi.GradY           = likGradRes{}
	_ abi.Residuals       = likGradRes{}
)

func (w *likelihood) Spec() abi.Spec { return w.model.spec }

// Fault is the first timeout or trap of any instance (abi.Faulter).
func (w *likelihood) Fault() error { return w.model.pool.Fault() }

// Close discards the instances.
func (w *likelihood) Close() error { return w.model.pool.Close() }

// LogLikelihood calls kinfer_likelihood_eval (abi.Likelihood).
func (w *likelihood) LogLikelihood(m int, y, obs, sigma []float64) (float64, abi.Status) {
	return w.eval(exLikEval, m, y, obs, sigma, nil)
}

// LogLikelihoodGrad calls kinfer_likelihood_grad (abi.GradY).
func (w likGrad) LogLikelihoodGrad(m int, y, obs, sigma, gy []float64) (float64, abi.Status) {
	return w.eval(exLikGrad, m, y, obs, sigma, gy)
}

// Residuals calls kinfer_likelihood_residuals (abi.Residuals).
func (w likRes) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	return w.residuals(m, y, obs, sigma, r)
}

// LogLikelihoodGrad calls kinfer_likelihood_grad (abi.GradY).
func (w likGradRes) LogLikelihoodGrad(m int, y, obs, sigma, gy []float64) (float64, abi.Status) {
	return w.eval(exLikGrad, m, y, obs, sigma, gy)
}

// Residuals calls kinfer_likelihood_residuals (abi.Residuals).
func (w likGradRes) Residuals(m int, y, obs, sigma, r []float64) abi.Status {
	return w.residuals(m, y, obs, sigma, r)
}

// check panics on a caller's bug: an m other than the term's, or buffers
// that are not all K×m. It returns K.
func (w *likelihood) check(m int, y, obs, sigma []float64, extra []float64, extraName string) int {
	name := w.model.pool.p.Manifest.Name
	if m != w.model.m {
		panic(fmt.Sprintf("wasm: plugin %s: likelihood called with m = %d; it was created for outputs = %d", name, m, w.model.m))
	}
	K := dims(name, "y", len(y), m)
	if len(obs) != len(y) || len(sigma) != len(y) || (extraName != "" && len(extra) != len(y)) {
		panic(fmt.Sprintf("wasm: plugin %s: y, obs, sigma%s have lengths %d, %d, %d, %d; want equal (K×m)",
			name, extraName, len(y), len(obs), len(sigma), len(extra)))
	}
	return K
}

// eval is kinfer_likelihood_eval (gy == nil) or kinfer_likelihood_grad.
func (w *likelihood) eval(e export, m int, y, obs, sigma, gy []float64) (float64, abi.Status) {
	extra := ""
	if e == exLikGrad {
		extra = ", gy"
	}
	K := w.check(m, y, obs, sigma, gy, extra)
	ll := math.Inf(-1)
	st := w.model.run(nil, func(in *instance) (abi.Status, error) {
		var st abi.Status
		var err error
		ll, st, err = in.likEval(e, K, m, y, obs, sigma, gy)
		return st, err
	})
	if st != abi.OK {
		ll = math.Inf(-1)
	}
	return ll, st
}

// likEval is one kinfer_likelihood_eval (gy == nil) or
// kinfer_likelihood_grad call on in.
func (in *instance) likEval(e export, K, m int, y, obs, sigma, gy []float64) (float64, abi.Status, error) {
	var l layout
	oY, oO, oS, oOut := l.f64(len(y)), l.f64(len(y)), l.f64(len(y)), l.f64(1)
	oG := l.f64(len(gy))
	base, err := in.buffer(e, l.n)
	if err != nil {
		return 0, abi.Trap, err
	}
	if err := in.writeInputs(e, base, oY, y, oO, obs, oS, sigma); err != nil {
		return 0, abi.Trap, err
	}
	if err := in.prefill(e, base+uint32(oOut), 1+len(gy)); err != nil { // out and gy are adjacent
		return 0, abi.Trap, err
	}
	args := [7]uint64{uint64(K), uint64(m), uint64(base + uint32(oY)), uint64(base + uint32(oO)), uint64(base + uint32(oS)), uint64(base + uint32(oOut)), uint64(base + uint32(oG))}
	var ret uint64
	if e == exLikGrad {
		ret, err = in.call(e, args[:]...)
	} else {
		ret, err = in.call(e, args[:6]...)
	}
	if err != nil {
		return 0, abi.Trap, err
	}
	st, err := in.guestStatus(e, i32(ret), -1)
	if err == nil {
		in.tallyEvals(e, []abi.Status{st})
	}
	if err != nil || st != abi.OK {
		return 0, st, err
	}
	var out [1]float64
	st, err = in.readOutputs(e, base, "out", oOut, out[:], "gy", oG, gy)
	if err == nil && st == abi.NonFinite && math.IsInf(out[0], -1) {
		// Status 0 with out = −∞: the data are impossible under y (ABI.md
		// §6.2), an evaluated point of log target −∞; its gradient has no
		// meaning.
		clear(gy)
		return out[0], abi.OK, nil
	}
	return out[0], st, err
}

// LogLikelihoodBatch evaluates several points' outputs against the same
// data (abi.BatchLikelihood): one kinfer_likelihood_eval_batch call when
// the plugin lists the "batch" capability, else one kinfer_likelihood_eval
// call per point on one instance. A fault makes every status Timeout or
// Trap (see Fault).
func (w *likelihood) LogLikelihoodBatch(m int, ys [][]float64, obs, sigma []float64, ll []float64, status []abi.Status) {
	name := w.model.pool.p.Manifest.Name
	if len(ll) != len(ys) || len(status) != len(ys) {
		panic(fmt.Sprintf("wasm: plugin %s: LogLikelihoodBatch with %d ys, %d ll, %d statuses", name, len(ys), len(ll), len(status)))
	}
	if len(ys) == 0 {
		return
	}
	K := 0
	for _, y := range ys {
		K = w.check(m, y, obs, sigma, nil, "")
	}
	for i := range ll {
		ll[i] = math.Inf(-1)
	}
	in, err := w.model.pool.get()
	if err != nil {
		fillStatus(status, w.model.pool.failed(err))
		return
	}
	if w.model.spec.Has(abi.CapBatch) {
		err = in.likEvalBatch(K, m, ys, obs, sigma, ll, status)
	} else {
		for i, y := range ys {
			var l float64
			if l, status[i], err = in.likEval(exLikEval, K, m, y, obs, sigma, nil); err != nil {
				break
			}
			if status[i] == abi.OK {
				ll[i] = l
			}
		}
	}
	w.model.pool.put(in)
	if err != nil {
		fillStatus(status, w.model.pool.failed(err))
		for i := range ll {
			ll[i] = math.Inf(-1)
		}
	}
}

// likEvalBatch is one kinfer_likelihood_eval_batch call (ABI.md §6.2).
func (in *instance) likEvalBatch(K, m int, ys [][]float64, obs, sigma, ll []float64, status []abi.Status) error {
	const e = exLikEvalBatch
	b, km := len(ys), K*m
	var l layout
	oY, oO, oS, oOut, oSt := l.f64(b*km), l.f64(km), l.f64(km), l.f64(b), l.i32(b)
	base, err := in.buffer(e, l.n)
	if err != nil {
		return err
	}
	yv, err := in.hostView(e, base+uint32(oY), uint64(b*km)*8)
	if err != nil {
		return err
	}
	for i, y := range ys {
		putF64s(yv[i*km*8:], y)
	}
	if err := in.writeF64s(e, base+uint32(oO), obs); err != nil {
		return err
	}
	if err := in.writeF64s(e, base+uint32(oS), sigma); err != nil {
		return err
	}
	if err := in.prefill(e, base+uint32(oOut), b); err != nil {
		return err
	}
	if err := in.unsetStatuses(e, base+uint32(oSt), b); err != nil {
		return err
	}
	ret, err := in.callN(e, b, uint64(b), uint64(K), uint64(m), uint64(base+uint32(oY)), uint64(base+uint32(oO)), uint64(base+uint32(oS)), uint64(base+uint32(oOut)), uint64(base+uint32(oSt)))
	if err != nil {
		// The call's size, which a fault may depend on (audit 15: a trap
		// named nothing but "unreachable").
		var fe *Error
		if errors.As(err, &fe) && fe.At == "" {
			fe.At = fmt.Sprintf(" (a batch of b = %d points of K = %d rows × m = %d outputs)", b, K, m)
		}
		return err
	}
	if code := i32(ret); code != 0 {
		return in.fault(e, abi.Trap, nil, "returned %d for a batch of %d points (a failure of the whole call): %s", code, b, in.lastErrorOr())
	}
	if err := in.readStatuses(e, base+uint32(oSt), status); err != nil {
		return err
	}
	out := make([]float64, b)
	ov, err := in.hostView(e, base+uint32(oOut), uint64(b)*8)
	if err != nil {
		return err
	}
	getF64s(out, ov)
	for i := range out {
		if status[i] != abi.OK {
			continue
		}
		u := math.Float64bits(out[i])
		if u == unwritten {
			return in.malformed(e, "returned status 0 for point %d without writing out[%d]", i, i)
		}
		// −∞ with status 0 is allowed: the data are impossible under y
		// (ABI.md §6.2); NaN and +∞ are non-finite.
		if math.IsNaN(out[i]) || math.IsInf(out[i], 1) {
			status[i] = abi.NonFinite
			continue
		}
		ll[i] = out[i]
	}
	return nil
}

func (w *likelihood) residuals(m int, y, obs, sigma, r []float64) abi.Status {
	const e = exLikResiduals
	K := w.check(m, y, obs, sigma, r, ", r")
	return w.model.run(nil, func(in *instance) (abi.Status, error) {
		var l layout
		oY, oO, oS, oR := l.f64(len(y)), l.f64(len(y)), l.f64(len(y)), l.f64(len(r))
		base, err := in.buffer(e, l.n)
		if err != nil {
			return abi.Trap, err
		}
		if err := in.writeInputs(e, base, oY, y, oO, obs, oS, sigma); err != nil {
			return abi.Trap, err
		}
		if err := in.prefill(e, base+uint32(oR), len(r)); err != nil {
			return abi.Trap, err
		}
		ret, err := in.call(e, uint64(K), uint64(m), uint64(base+uint32(oY)), uint64(base+uint32(oO)), uint64(base+uint32(oS)), uint64(base+uint32(oR)))
		if err != nil {
			return abi.Trap, err
		}
		st, err := in.guestStatus(e, i32(ret), -1)
		if err == nil {
			in.tallyEvals(e, []abi.Status{st})
		}
		if err != nil || st != abi.OK {
			return st, err
		}
		return in.readOutputs(e, base, "r", oR, r, "", 0, nil)
	})
}

func (in *instance) writeInputs(e export, base uint32, o1 uint64, a []float64, o2 uint64, b []float64, o3 uint64, c []float64) error {
	if err := in.writeF64s(e, base+uint32(o1), a); err != nil {
		return err
	}
	if err := in.writeF64s(e, base+uint32(o2), b); err != nil {
		return err
	}
	return in.writeF64s(e, base+uint32(o3), c)
}
