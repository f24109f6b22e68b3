package wasm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Model returns the plugin's model configured with settings (in spec order,
// see abi.SettingValues), backed by a pool of up to workers instances.
//
// The value is safe for concurrent use and implements abi.Model,
// abi.BatchModel (one kinfer_model_eval call per batch), abi.Faulter and
// io.Closer, and abi.Jacobian / abi.VJP exactly when the spec lists the
// capability; with capability pullback also abi.Pullbacker, and abi.VJP
// (by kinfer_model_vjp when exported, else forward then pullback). Every guest call runs under ctx (cancelling it interrupts the
// plugin) and timeout_ms.
//
// One instance is created and configured at once, so that a refused
// configuration is an error here; the others are created when needed.
func (p *Plugin) Model(ctx context.Context, settings []float64, workers int) (abi.Model, error) {
	if err := p.checkSettings(abi.KindModel, settings); err != nil {
		return nil, err
	}
	pl, err := newPool(ctx, p, settings, workers)
	if err != nil {
		return nil, err
	}
	w := &model{pool: pl, spec: p.Spec, d: len(p.Spec.Params), c: len(p.Spec.Conditions), m: len(p.Spec.Outputs)}
	hasJ, hasV := p.Spec.Has(abi.CapJacobian), p.Spec.Has(abi.CapVJP)
	if p.Spec.Has(abi.CapPullback) {
		// A VJP too: its own export, or forward then pullback.
		if hasJ {
			return modelJacPB{w}, nil
		}
		return modelPB{w}, nil
	}
	switch {
	case hasJ && hasV:
		return modelJacVJP{w}, nil
	case hasJ:
		return modelJac{w}, nil
	case hasV:
		return modelVJP{w}, nil
	}
	return w, nil
}

// model is a WASM model without gradient capabilities; modelJac, modelVJP
// and modelJacVJP add them, so that a type assertion tells the truth.
type model struct {
	pool    *pool
	spec    abi.Spec
	d, c, m int
}

type modelJac struct{ *model }
type modelVJP struct{ *model }
type modelJacVJP struct{ *model }
type modelPB struct{ *model }    // capability pullback (pullback.go)
type modelJacPB struct{ *model } // jacobian and pullback

var (
	_ abi.BatchModel      = (*model)(nil)
	_ abi.RowsIndependent = (*model)(nil)
	_ abi.Faulter         = (*model)(nil)
	_ abi.Jacobian        = modelJac{}
	_ abi.VJP             = modelVJP{}
	_ abi.Jacobian        = modelJacVJP{}
	_ abi.VJP             = modelJacVJP{}
	_ abi.VJP             = modelPB{}
	_ abi.Pullbacker      = modelPB{}
	_ abi.Jacobian        = modelJacPB{}
	_ abi.VJP             = modelJacPB{}
	_ abi.Pullbacker      = modelJacPB{}
)

func (w *model) Spec() abi.Spec { return w.spec }

// RowsIndependent is the plugin's declaration (capability
// rows_independent, abi.RowsIndependent).
func (w *model) RowsIndependent() bool { return w.spec.Has(abi.CapRowsIndependent) }

// Fault is the first timeout or trap of any instance (abi.Faulter).
func (w *model) Fault() error { return w.pool.Fault() }

// Close discards the instances.
func (w *model) Close() error { return w.pool.Close() }

// Eval is a batch of one (abi.Model).
func (w *model) Eval(theta, x, y []float64) abi.Status {
	th, ys := [1][]float64{theta}, [1][]float64{y}
	var st [1]abi.Status
	w.EvalBatch(th[:], x, ys[:], st[:])
	return st[0]
}

// EvalBatch evaluates all thetas in one kinfer_model_eval call
// (abi.BatchModel). A status is OK, Failed, Invalid (from the guest),
// NonFinite (an OK point with a NaN or ±Inf output), or Timeout / Trap for
// the whole batch when the plugin faulted (see Fault). A non-zero return of
// kinfer_model_eval is such a fault: a Trap whose error carries the guest's
// kinfer_last_error message.
func (w *model) EvalBatch(thetas [][]float64, x []float64, ys [][]float64, status []abi.Status) {
	b := len(thetas)
	name := w.pool.p.Manifest.Name
	if len(ys) != b || len(status) != b {
		panic(fmt.Sprintf("wasm: plugin %s: EvalBatch with %d thetas, %d ys, %d statuses", name, b, len(ys), len(status)))
	}
	if b == 0 {
		return
	}
	K := dims(name, "y", len(ys[0]), w.m)
	if len(x) != K*w.c {
		panic(fmt.Sprintf("wasm: plugin %s: x has length %d, want K×c = %d×%d", name, len(x), K, w.c))
	}
	for i := range thetas {
		if len(thetas[i]) != w.d || len(ys[i]) != K*w.m {
			panic(fmt.Sprintf("wasm: plugin %s: point %d: θ has length %d (want %d), y %d (want %d)", name, i, len(thetas[i]), w.d, len(ys[i]), K*w.m))
		}
	}
	in, err := w.pool.get()
	if err != nil {
		fillStatus(status, w.pool.failed(err))
		return
	}
	err = in.modelEval(thetas, x, ys, status, K, w.d, w.c, w.m)
	w.pool.put(in)
	if err == nil {
		return // before errors.As's target, which escapes: an allocation per call
	}
	var e *Error
	if b > 1 && errors.As(err, &e) && e.Deterministic() {
		// A deterministic fault (a trap, exhausted fuel) of a batch is
		// retried point by point, each call with its own fuel: the fault,
		// if it comes again, names its point (audit 10: "in a batch of 7
		// points, the first at θ = …" named a point that did not trap),
		// and a batch that ran out of its pooled fuel only through its
		// order has each point's result.
		if w.evalEach(thetas, x, ys, status, K) && e.Status == abi.Trap {
			// Not a point's fault: the batch path's (an output or status
			// it left unwritten, a trap of its own, or memory a batch
			// needs beyond memory_mib). Said in batch_faults, and refused
			// by certify (audit 21: it passed silently, and certify said
			// deterministic).
			w.pool.p.evals.addBatchTrap(exModelEval, fmt.Sprintf("a batch of %d points: %s %s%s", b, e.Export, e.Msg, e.At))
		}
		return
	}
	fillStatus(status, w.pool.failed(w.at(err, thetas)))
}

// evalEach evaluates the points one call each (EvalBatch's retry of a
// faulted batch); the first point that faults alone stops it, its fault
// naming it. It reports whether every point succeeded alone.
func (w *model) evalEach(thetas [][]float64, x []float64, ys [][]float64, status []abi.Status, K int) bool {
	for i := range thetas {
		in, err := w.pool.get()
		if err != nil {
			fillStatus(status, w.pool.failed(err))
			return false
		}
		err = in.modelEval(thetas[i:i+1], x, ys[i:i+1], status[i:i+1], K, w.d, w.c, w.m)
		w.pool.put(in)
		if err != nil {
			err = w.at(err, thetas[i:i+1])
			var e *Error
			if errors.As(err, &e) && e.At != "" {
				e.At += fmt.Sprintf(", point %d (from 0) of a batch of %d (the batch faulted; each point was then called alone)", i, len(thetas))
			}
			fillStatus(status, w.pool.failed(err))
			return false
		}
	}
	return true
}

// statusUnset pre-fills the status buffer so that a guest that returns 0
// without writing a point's status is caught.
const statusUnset = 0xffffffff

func (in *instance) modelEval(thetas [][]float64, x []float64, ys [][]float64, status []abi.Status, K, d, c, m int) error {
	const e = exModelEval
	b := len(thetas)
	var l layout
	oT, oX, oY, oS := l.f64(b*d), l.f64(K*c), l.f64(b*K*m), l.i32(b)
	base, err := in.buffer(e, l.n)
	if err != nil {
		return err
	}
	tv, err := in.hostView(e, base+uint32(oT), uint64(b*d)*8)
	if err != nil {
		return err
	}
	for i, th := range thetas {
		putF64s(tv[i*d*8:], th)
	}
	if err := in.writeF64s(e, base+uint32(oX), x); err != nil {
		return err
	}
	if err := in.prefill(e, base+uint32(oY), b*K*m); err != nil {
		return err
	}
	if err := in.unsetStatuses(e, base+uint32(oS), b); err != nil {
		return err
	}
	ret, err := in.callN(e, b, uint64(b), uint64(base+uint32(oT)), uint64(K), uint64(base+uint32(oX)), uint64(base+uint32(oY)), uint64(base+uint32(oS)))
	if err != nil {
		return err
	}
	if code := i32(ret); code != 0 {
		// The whole call failed (not configured, out of memory): a fault of
		// the plugin, not a result of these points (ABI.md §6.1).
		what := fmt.Sprintf("a batch of %d points", b)
		if b == 1 {
			what = "a call of one point"
		}
		return in.fault(e, abi.Trap, nil, "returned %d for %s (a failure of the whole call): %s", code, what, in.lastErrorOr())
	}
	if err := in.readStatuses(e, base+uint32(oS), status); err != nil {
		return err
	}
	km := K * m
	yv, err := in.hostView(e, base+uint32(oY), uint64(b*km)*8)
	if err != nil {
		return err
	}
	nf, row, out, what := 0, 0, 0, ""
	for i := 0; i < b; i++ {
		if status[i] != abi.OK {
			continue
		}
		finite, missing := getF64s(ys[i], yv[i*km*8:])
		if missing >= 0 {
			return in.malformed(e, "returned status 0 for point %d without writing y[%d] (row %d, output %d)", i, missing, missing/m, missing%m)
		}
		if !finite {
			status[i] = abi.NonFinite
			if nf++; nf == 1 {
				row, out, what = in.nonFiniteWhat(ys[i], m)
			}
		}
	}
	if nf > 0 {
		in.p.evals.addNonFinite(e, nf, row, out, what)
	}
	return nil
}

// nonFiniteWhat describes the first NaN or ±Inf of a point's outputs y
// (rows of m): its row among the rows of the call (a model with
// rows_independent is called on blocks of a dataset's rows), output name
// and value.
func (in *instance) nonFiniteWhat(y []float64, m int) (row, out int, what string) {
	for k, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			name := fmt.Sprint(k % m)
			if outs := in.p.Spec.Outputs; k%m < len(outs) {
				name = guesttext.Escape(outs[k%m].Name)
			}
			return k / m, k % m, fmt.Sprintf("output %s = %v in row %d of the %d rows of its call", name, v, k/m, len(y)/m)
		}
	}
	return 0, 0, "?"
}

// unsetStatuses pre-fills n point statuses at host-buffer offset off, so
// that a guest that returns 0 without writing one is caught.
func (in *instance) unsetStatuses(e export, off uint32, n int) error {
	sv, err := in.hostView(e, off, uint64(n)*4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(sv[4*i:], statusUnset)
	}
	return nil
}

// readStatuses reads len(status) point statuses written by a batch call
// that returned 0; an unwritten or out-of-range one is a Trap.
func (in *instance) readStatuses(e export, off uint32, status []abi.Status) error {
	// The view is taken after the call: the guest may have grown (moved)
	// its memory.
	sv, err := in.hostView(e, off, uint64(len(status))*4)
	if err != nil {
		return err
	}
	for i := range status {
		v := int32(binary.LittleEndian.Uint32(sv[4*i:]))
		if uint32(v) == statusUnset {
			return in.malformed(e, "returned 0 without writing the status of point %d (it holds the host's 0xFFFFFFFF: unwritten, or written as -1, which is not a status; a guest returns only 0, 1 or 2)", i)
		}
		if status[i], err = in.guestStatus(e, v, i); err != nil {
			return err
		}
	}
	in.tallyEvals(e, status)
	return nil
}

// tallyEvals records the statuses of an eval export's points in the
// plugin's evaluation-failure tally, with the guest's kinfer_last_error
// message (read once per call) when a point failed (ABI.md §3: the host
// adds it to its error).
func (in *instance) tallyEvals(e export, status []abi.Status) {
	msg := ""
	for _, st := range status {
		if st != abi.OK {
			msg = in.lastError()
			break
		}
	}
	in.p.evals.addAll(e, status, msg)
}

// Jacobian evaluates y and ∂y/∂θ at one θ (abi.Jacobian).
func (w modelJac) Jacobian(theta, x, y, jac []float64) abi.Status {
	return w.jacobian(theta, x, y, jac)
}

// VJP evaluates y and vᵀ·∂y/∂θ at one θ (abi.VJP).
func (w modelVJP) VJP(theta, x, v, y, g []float64) abi.Status { return w.vjp(theta, x, v, y, g) }

// Jacobian evaluates y and ∂y/∂θ at one θ (abi.Jacobian).
func (w modelJacVJP) Jacobian(theta, x, y, jac []float64) abi.Status {
	return w.jacobian(theta, x, y, jac)
}

// VJP evaluates y and vᵀ·∂y/∂θ at one θ (abi.VJP).
func (w modelJacVJP) VJP(theta, x, v, y, g []float64) abi.Status { return w.vjp(theta, x, v, y, g) }

func (w *model) check(theta, x, y []float64) int {
	name := w.pool.p.Manifest.Name
	K := dims(name, "y", len(y), w.m)
	if len(theta) != w.d || len(x) != K*w.c {
		panic(fmt.Sprintf("wasm: plugin %s: θ has length %d (want %d), x %d (want %d)", name, len(theta), w.d, len(x), K*w.c))
	}
	return K
}

// run checks out an instance, runs f on it at θ and turns a fault into a
// status.
func (w *model) run(theta []float64, f func(in *instance) (abi.Status, error)) abi.Status {
	in, err := w.pool.get()
	if err != nil {
		return w.pool.failed(err)
	}
	st, err := f(in)
	w.pool.put(in)
	if err != nil {
		return w.pool.failed(w.at(err, [][]float64{theta}))
	}
	return st
}

// at adds to a call's fault the point(s) it was called at: "; at θ = (…)"
// with the parameters' names, or for a batch its size and first point.
func (w *model) at(err error, thetas [][]float64) error {
	var e *Error
	if !errors.As(err, &e) || e.At != "" || len(thetas) == 0 || len(thetas[0]) == 0 {
		return err
	}
	th := formatTheta(w.spec.Params, thetas[0])
	if len(thetas) == 1 {
		e.At = "; at θ = (" + th + ")"
	} else {
		e.At = fmt.Sprintf("; in a batch of %d points, the first at θ = (%s)", len(thetas), th)
	}
	return err
}

// formatTheta is "a 1.5, b 2": θ with its parameters' names (escaped),
// the first 16 of a longer vector.
func formatTheta(params []abi.Param, th []float64) string {
	var b strings.Builder
	for j, v := range th {
		if j > 0 {
			b.WriteString(", ")
		}
		if j < len(params) {
			b.WriteString(guesttext.Escape(params[j].Name) + " ")
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		if j == 15 && len(th) > 16 {
			fmt.Fprintf(&b, ", … (%d parameters)", len(th))
			break
		}
	}
	return b.String()
}

func (w *model) jacobian(theta, x, y, jac []float64) abi.Status {
	K := w.check(theta, x, y)
	if len(jac) != K*w.m*w.d {
		panic(fmt.Sprintf("wasm: plugin %s: jac has length %d, want (K·m)×d = %d", w.pool.p.Manifest.Name, len(jac), K*w.m*w.d))
	}
	return w.run(theta, func(in *instance) (abi.Status, error) {
		const e = exModelJacobian
		var l layout
		oT, oX, oY, oJ := l.f64(w.d), l.f64(len(x)), l.f64(len(y)), l.f64(len(jac))
		base, err := in.buffer(e, l.n)
		if err != nil {
			return abi.Trap, err
		}
		if err := in.writeF64s(e, base+uint32(oT), theta); err != nil {
			return abi.Trap, err
		}
		if err := in.writeF64s(e, base+uint32(oX), x); err != nil {
			return abi.Trap, err
		}
		if err := in.prefill(e, base+uint32(oY), len(y)+len(jac)); err != nil {
			return abi.Trap, err
		}
		ret, err := in.call(e, uint64(base+uint32(oT)), uint64(K), uint64(base+uint32(oX)), uint64(base+uint32(oY)), uint64(base+uint32(oJ)))
		if err != nil {
			return abi.Trap, err
		}
		st, err := in.derivStatus(e, i32(ret))
		if err != nil || st != abi.OK {
			return st, err
		}
		return in.readOutputs(e, base, "y", oY, y, "jac", oJ, jac)
	})
}

func (w *model) vjp(theta, x, v, y, g []float64) abi.Status {
	K := w.check(theta, x, y)
	if len(v) != K*w.m || len(g) != w.d {
		panic(fmt.Sprintf("wasm: plugin %s: v has length %d (want K·m = %d), g %d (want %d)", w.pool.p.Manifest.Name, len(v), K*w.m, len(g), w.d))
	}
	return w.run(theta, func(in *instance) (abi.Status, error) {
		const e = exModelVJP
		var l layout
		oT, oX, oV, oY, oG := l.f64(w.d), l.f64(len(x)), l.f64(len(v)), l.f64(len(y)), l.f64(w.d)
		base, err := in.buffer(e, l.n)
		if err != nil {
			return abi.Trap, err
		}
		for _, a := range []struct {
			off uint64
			v   []float64
		}{{oT, theta}, {oX, x}, {oV, v}} {
			if err := in.writeF64s(e, base+uint32(a.off), a.v); err != nil {
				return abi.Trap, err
			}
		}
		if err := in.prefill(e, base+uint32(oY), len(y)+w.d); err != nil {
			return abi.Trap, err
		}
		ret, err := in.call(e, uint64(base+uint32(oT)), uint64(K), uint64(base+uint32(oX)), uint64(base+uint32(oV)), uint64(base+uint32(oY)), uint64(base+uint32(oG)))
		if err != nil {
			return abi.Trap, err
		}
		st, err := in.derivStatus(e, i32(ret))
		if err != nil || st != abi.OK {
			return st, err
		}
		return in.readOutputs(e, base, "y", oY, y, "g", oG, g)
	})
}

// readOutputs reads two output arrays named n1 and n2 after a call that
// returned ok; NonFinite if either has a NaN or ±Inf, a Trap if a value
// was not written.
func (in *instance) readOutputs(e export, base uint32, n1 string, o1 uint64, a []float64, n2 string, o2 uint64, b []float64) (abi.Status, error) {
	f1, err := in.readOut(e, n1, base+uint32(o1), a)
	if err != nil {
		return abi.Trap, err
	}
	f2, err := in.readOut(e, n2, base+uint32(o2), b)
	if err != nil {
		return abi.Trap, err
	}
	if !f1 || !f2 {
		in.tallyNonFinite(e, n1, a, n2, b)
		return abi.NonFinite, nil
	}
	return abi.OK, nil
}

// tallyNonFinite records, for a model derivative export e that returned
// status 0 with a NaN or ±Inf in its outputs (arrays n1 and n2), the
// first such value, so that summary.json's derivative_failures names the
// export (audit 5: a Jacobian of NaN at status 0 was told as "the export
// failed, or a finite-difference step did", and named nowhere).
//
// A NaN or ±Inf in the values y themselves is the point's value failing,
// not its derivative: it is tallied with the evaluation failures (audit
// 6: under adam, a pullback model's NaN values were reported as "0
// Jacobians and 0 gradients could not be computed … 405 of 902").
func (in *instance) tallyNonFinite(e export, n1 string, a []float64, n2 string, b []float64) {
	if !derivExport(e) {
		return
	}
	for k, arr := range [][]float64{a, b} {
		for i, v := range arr {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				name := n1
				if k == 1 {
					name = n2
				}
				tally := &in.p.deriv
				if name == "y" {
					tally = &in.p.evals
				}
				tally.addNonFinite(e, 1, k, i, fmt.Sprintf("%s[%d] = %v", name, i, v))
				return
			}
		}
	}
}
