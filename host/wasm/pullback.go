package wasm

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/kinfer/kinfer/abi"
)

// Capability pullback (ABI.md §6.1): kinfer_model_forward evaluates one θ
// and hands the host the values its backward pass needs (its "tape", a
// span of f64 in guest memory); kinfer_model_pullback takes θ, x, the tape
// and a cotangent v and writes g = vᵀ·∂y/∂θ. The host copies the tape out
// after the forward call and back in for each pullback, so the guest keeps
// no state between the two calls and any instance of the pool can run the
// pullback: a point's pullbacks hold no instance (the host's fused
// gradient path keeps one per row block, host/target), and the result does
// not depend on which instance ran which call. The copies cost a memmove
// of the tape each way, small beside the backward pass that reads it.

// MaxTape bounds a tape, in f64 values (ABI.md §6: 64 MiB, as a saved
// state).
const MaxTape = 1 << 23

// tapeUnset pre-fills the tape slot of kinfer_model_forward, so that a
// guest that returns ok without writing it is caught.
const tapeUnset = math.MaxUint64

// Pullback implements abi.Pullbacker for a model with capability
// pullback: y as kinfer_model_eval gives it (ABI.md requires bit
// equality), and a Pullback holding copies of θ, x and the tape.
func (w modelPB) EvalPullback(theta, x, y []float64) (abi.Pullback, abi.Status) {
	return w.evalPullback(theta, x, y)
}

// VJP is kinfer_model_vjp when the plugin exports it, else forward then
// pullback (abi.VJP).
func (w modelPB) VJP(theta, x, v, y, g []float64) abi.Status { return w.vjpOrPull(theta, x, v, y, g) }

// EvalPullback: see modelPB.
func (w modelJacPB) EvalPullback(theta, x, y []float64) (abi.Pullback, abi.Status) {
	return w.evalPullback(theta, x, y)
}

// VJP: see modelPB.
func (w modelJacPB) VJP(theta, x, v, y, g []float64) abi.Status {
	return w.vjpOrPull(theta, x, v, y, g)
}

// Jacobian evaluates y and ∂y/∂θ at one θ (abi.Jacobian).
func (w modelJacPB) Jacobian(theta, x, y, jac []float64) abi.Status {
	return w.jacobian(theta, x, y, jac)
}

func (w *model) vjpOrPull(theta, x, v, y, g []float64) abi.Status {
	if w.pool.p.exported[exModelVJP] && w.spec.Has(abi.CapVJP) {
		return w.vjp(theta, x, v, y, g)
	}
	K := w.check(theta, x, y)
	if len(v) != K*w.m || len(g) != w.d {
		panic(fmt.Sprintf("wasm: plugin %s: v has length %d (want K·m = %d), g %d (want %d)", w.pool.p.Manifest.Name, len(v), K*w.m, len(g), w.d))
	}
	w.pool.tapes <- struct{}{}
	defer func() { <-w.pool.tapes }()
	pb, st := w.evalPullback(theta, x, y)
	if st != abi.OK {
		return st
	}
	defer pb.Release()
	return pb.Pull(v, g)
}

// tapes recycles tape copies between pullbacks.
var tapes sync.Pool

func getTape(n int) []float64 {
	if t, ok := tapes.Get().(*[]float64); ok && cap(*t) >= n {
		return (*t)[:n]
	}
	return make([]float64, n)
}

func (w *model) evalPullback(theta, x, y []float64) (abi.Pullback, abi.Status) {
	K := w.check(theta, x, y)
	var pb *pullback
	st := w.run(theta, func(in *instance) (abi.Status, error) {
		const e = exModelForward
		var l layout
		oT, oX, oY, oS := l.f64(w.d), l.f64(len(x)), l.f64(len(y)), l.f64(1)
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
		if err := in.prefill(e, base+uint32(oY), len(y)); err != nil {
			return abi.Trap, err
		}
		sv, err := in.hostView(e, base+uint32(oS), 8)
		if err != nil {
			return abi.Trap, err
		}
		binary.LittleEndian.PutUint64(sv, tapeUnset)
		ret, err := in.call(e, uint64(base+uint32(oT)), uint64(K), uint64(base+uint32(oX)), uint64(base+uint32(oY)), uint64(base+uint32(oS)))
		if err != nil {
			return abi.Trap, err
		}
		st, err := in.derivStatus(e, i32(ret))
		if err != nil || st != abi.OK {
			return st, err
		}
		finite, err := in.readOut(e, "y", base+uint32(oY), y)
		if err != nil {
			return abi.Trap, err
		}
		if sv, err = in.hostView(e, base+uint32(oS), 8); err != nil {
			return abi.Trap, err
		}
		span := binary.LittleEndian.Uint64(sv)
		if span == tapeUnset {
			return abi.Trap, in.malformed(e, "returned ok without writing its tape span (ABI.md §6.1)")
		}
		ptr, n := unpackSpan(span)
		if n > MaxTape {
			return abi.Trap, in.malformed(e, "returned a tape of %d values (at most %d accepted)", n, MaxTape)
		}
		if n > 0 && ptr%8 != 0 {
			return abi.Trap, in.malformed(e, "returned a tape at %d: not 8-byte aligned", ptr)
		}
		tb, err := in.view(e, "tape", ptr, uint64(n)*8)
		if err != nil {
			return abi.Trap, err
		}
		if !finite {
			// A point with a non-finite output has no gradient.
			in.tallyNonFinite(e, "y", y, "", nil)
			return abi.NonFinite, nil
		}
		tape := getTape(int(n))
		if w := words(tb); w != nil {
			copy(tape, unsafeF64s(w))
		} else {
			for i := range tape {
				tape[i] = math.Float64frombits(binary.LittleEndian.Uint64(tb[8*i:]))
			}
		}
		pb = &pullback{w: w, K: K, theta: append([]float64(nil), theta...), x: append([]float64(nil), x...), tape: tape}
		return abi.OK, nil
	})
	if st != abi.OK {
		return nil, st
	}
	return pb, abi.OK
}

// pullback is one forward pass's state, held by the host: copies of θ, x
// and the guest's tape.
type pullback struct {
	w     *model
	K     int
	theta []float64
	x     []float64
	tape  []float64
}

// Pull runs kinfer_model_pullback on any instance (abi.Pullback). A
// cotangent of the wrong length or with a non-finite value is Invalid and
// g is zero, as for the builtin models; a non-finite g is NonFinite.
func (p *pullback) Pull(v, g []float64) abi.Status {
	w := p.w
	if p.tape == nil {
		panic(fmt.Sprintf("wasm: plugin %s: Pull after Release", w.pool.p.Manifest.Name))
	}
	if len(g) != w.d || len(v) != p.K*w.m {
		clear(g)
		return abi.Invalid
	}
	for _, c := range v {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			clear(g)
			return abi.Invalid
		}
	}
	st := w.run(p.theta, func(in *instance) (abi.Status, error) {
		const e = exModelPullback
		var l layout
		oT, oX, oS, oV, oG := l.f64(w.d), l.f64(len(p.x)), l.f64(len(p.tape)), l.f64(len(v)), l.f64(w.d)
		base, err := in.buffer(e, l.n)
		if err != nil {
			return abi.Trap, err
		}
		for _, a := range []struct {
			off uint64
			v   []float64
		}{{oT, p.theta}, {oX, p.x}, {oS, p.tape}, {oV, v}} {
			if err := in.writeF64s(e, base+uint32(a.off), a.v); err != nil {
				return abi.Trap, err
			}
		}
		if err := in.prefill(e, base+uint32(oG), w.d); err != nil {
			return abi.Trap, err
		}
		ret, err := in.call(e, uint64(base+uint32(oT)), uint64(p.K), uint64(base+uint32(oX)),
			uint64(base+uint32(oS)), uint64(len(p.tape)), uint64(base+uint32(oV)), uint64(base+uint32(oG)))
		if err != nil {
			return abi.Trap, err
		}
		st, err := in.derivStatus(e, i32(ret))
		if err != nil || st != abi.OK {
			return st, err
		}
		finite, err := in.readOut(e, "g", base+uint32(oG), g)
		if err != nil {
			return abi.Trap, err
		}
		if !finite {
			in.tallyNonFinite(e, "g", g, "", nil)
			return abi.NonFinite, nil
		}
		return abi.OK, nil
	})
	if st != abi.OK && st != abi.NonFinite {
		clear(g)
	}
	return st
}

// TapeBytes is the host memory the pullback's tape copy holds (the host's
// fused path bounds a point's total: host/target).
func (p *pullback) TapeBytes() int { return 8 * len(p.tape) }

// Release hands the tape back for reuse (abi.Pullback).
func (p *pullback) Release() {
	if p.tape != nil {
		t := p.tape[:0]
		tapes.Put(&t)
	}
	p.tape, p.theta, p.x = nil, nil, nil
}
