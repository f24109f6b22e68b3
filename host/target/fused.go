package target

import (
	"errors"
	"math"
	"sync/atomic"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

// The fused gradient path. For a model that can keep what its VJP needs
// (abi.Pullbacker), a point's value and gradient take one forward pass:
// EvalPullback gives y and a Pullback, the likelihood gives ∂logL/∂y from
// all of y, and Pull runs the backward pass only. The unfused path (Eval,
// then the VJP, which computes y again) stays for the other models. With
// row blocks (abi.RowsIndependent) each block has its own pullback and the
// blocks' gradients are summed in block order, as vjpRows does, so both
// paths give the same numbers, bit for bit, when the model's Pull equals
// its VJP bit for bit (which the builtin arm guarantees). Points are done
// one at a time per worker, so a worker holds the pullbacks of one point
// at a time (for the arm ≈ 1.2 KB per row).

// FusedMaxRows bounds the rows, over all datasets, of a study on the fused
// path: what a model keeps for its backward pass grows with the rows (the
// arm: 1.2 KB per row, so ≈ 300 MB per worker at this bound), and a study
// with more rows takes the unfused path, whose memory does not grow with
// the rows beyond the outputs.
const FusedMaxRows = 1 << 18

// FusedMaxTapeBytes bounds the host memory of one point's pullbacks that
// report it (a plugin's tape copies: abi.Pullback with TapeBytes), over
// all its row blocks and datasets. A point past it is evaluated again on
// the unfused path (Eval, then the VJP) instead: a plugin returning the
// largest tape (64 MiB) for every block of 256 rows made the host hold
// 64 MiB per block, 1.7 GB for 5 000 rows and an out-of-memory crash for
// 100 000 (audit 5). Whether a point passes depends on the point alone.
const FusedMaxTapeBytes = 128 << 20

// LimitFused bounds the points on the fused path at once so that their
// pullbacks (at most FusedMaxTapeBytes each that report their size) take
// at most a quarter of budget: workers beyond wait for a slot (recheck of
// audit 5: 64 workers held 128 MiB each under a 1 GiB budget). Results do
// not change; budget ≤ 0 sets no bound.
func (t *Target) LimitFused(budget int64) {
	if k := int(budget / 4 / FusedMaxTapeBytes); budget > 0 && k < t.Workers {
		t.fusedSem = make(chan struct{}, max(1, k))
	}
}

// errTapes: a point's pullbacks would exceed FusedMaxTapeBytes.
var errTapes = errors.New("the point's tapes exceed FusedMaxTapeBytes")

// tapeBytes is the host memory a pullback reports holding, or 0.
func tapeBytes(pb abi.Pullback) int {
	if tb, ok := pb.(interface{ TapeBytes() int }); ok {
		return tb.TapeBytes()
	}
	return 0
}

// fused reports whether evalChunk takes the fused path.
func (t *Target) fused(want abi.Want) bool {
	if want&abi.WantGradient == 0 || want&(abi.WantResiduals|abi.WantJacobian|abi.WantOutputs) != 0 || t.gradMode != "analytic" {
		return false
	}
	if _, ok := t.S.Model.(abi.Pullbacker); !ok {
		return false
	}
	rows := 0
	for _, ds := range t.S.Data {
		rows += ds.K
	}
	return rows <= FusedMaxRows
}

// evalChunkFused is evalChunk with gradients by pullbacks.
func (t *Target) evalChunkFused(sc *scratch, pts [][]float64, res []abi.Result, want abi.Want) error {
	for i, th := range pts {
		res[i] = abi.Result{Theta: append([]float64(nil), th...), LogPrior: t.LogPrior(th), LogLik: math.Inf(-1)}
		if math.IsInf(res[i].LogPrior, -1) {
			res[i].Status = abi.OutOfSupport
			continue
		}
		if t.fusedSem != nil {
			t.fusedSem <- struct{}{}
		}
		err := t.evalPointFused(sc, th, &res[i])
		if t.fusedSem != nil {
			<-t.fusedSem
		}
		if errors.Is(err, errTapes) {
			err = t.evalChunkUnfused(sc, pts[i:i+1], res[i:i+1], want)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fusedBuf holds a worker's buffers of the fused path, kept with its
// scratch: per dataset ∂logL/∂y, and the blocks' gradients.
type fusedBuf struct {
	gy [][]float64
	gb []float64
}

// pulled is one dataset's forward pass: the pullbacks of its blocks (one
// for the whole dataset without row blocks).
type pulled struct {
	pb []abi.Pullback
}

func (p *pulled) release() {
	for i, b := range p.pb {
		if b != nil {
			b.Release()
			p.pb[i] = nil
		}
	}
}

// evalPointFused evaluates one point inside the support: model outputs
// with pullbacks on every dataset, the likelihood terms, and, if the
// point is OK, the gradient by pulling ∂logL/∂y back.
func (t *Target) evalPointFused(sc *scratch, theta []float64, r *abi.Result) error {
	full := t.Full(theta)
	ps := make([]pulled, len(t.S.Data))
	defer func() {
		for i := range ps {
			ps[i].release()
		}
	}()
	status := abi.OK
	var tape atomic.Int64 // the point's tape bytes, all datasets
	for d, ds := range t.S.Data {
		y := sc.y[d][0]
		st, err := t.forwardPullback(full, ds, y, &ps[d], &tape)
		if err != nil {
			return err
		}
		if status == abi.OK && st != abi.OK {
			status = st
		}
		if status == abi.OK && !finite(y) {
			status = abi.NonFinite
		}
		if status != abi.OK {
			break
		}
	}
	logL := 0.0
	if status == abi.OK {
		for _, term := range t.S.Terms {
			l, st, err := t.termLogLik(sc, term, sc.y[dataIndex(t.S, term.Data)][0], nil)
			if err != nil {
				return err
			}
			if st != abi.OK {
				status = st
				break
			}
			logL += l
		}
	}
	if status == abi.OK && len(t.S.Constraints) > 0 {
		cl, bad := t.constraintLogLik(sc, theta, sc.pointY(len(t.S.Data), 0))
		if bad != nil {
			t.nonFinite(constraintSource(bad), 1)
			status = abi.NonFinite
		}
		logL += cl
	}
	r.Status = status
	if status != abi.OK {
		return nil
	}
	r.LogLik = logL
	g, err := t.pullGradient(sc, theta, ps)
	var se statusError
	if errors.As(err, &se) {
		return nil // valid point, no gradient (as the unfused path)
	}
	if err != nil {
		return err
	}
	r.Grad = g
	return nil
}

// forwardPullback evaluates the model on one dataset into y (K×m) keeping
// the pullbacks in p; the status is the first block's, in row order, that
// is not OK. A plugin fault (Timeout, Trap) is returned as an error.
func (t *Target) forwardPullback(full []float64, ds *study.Dataset, y []float64, p *pulled, tape *atomic.Int64) (abi.Status, error) {
	pb := t.S.Model.(abi.Pullbacker)
	c := len(t.S.ModelInfo.Spec.Conditions)
	m := len(t.S.ModelInfo.Spec.Outputs)
	nb := 1
	if t.rowsIndependent() {
		nb = rowBlocks(ds.K)
	}
	p.pb = make([]abi.Pullback, nb)
	bst := make([]abi.Status, nb)
	t.forBlocks(nb, func(b int) {
		if tape.Load() > FusedMaxTapeBytes {
			return // the point goes to the unfused path anyway
		}
		lo, hi := 0, ds.K
		if nb > 1 {
			lo, hi = blockRows(ds.K, b)
		}
		t.timed(func() { p.pb[b], bst[b] = pb.EvalPullback(full, ds.X[lo*c:hi*c], y[lo*m:hi*m]) })
		if bst[b] == abi.OK && p.pb[b] == nil {
			bst[b] = abi.Failed // a broken promise: OK without a pullback
		}
		if p.pb[b] != nil && tape.Add(int64(tapeBytes(p.pb[b]))) > FusedMaxTapeBytes {
			p.pb[b].Release()
			p.pb[b] = nil
		}
	})
	if tape.Load() > FusedMaxTapeBytes {
		return abi.OK, errTapes
	}
	st := firstNotOK(bst)
	if st == abi.Timeout || st == abi.Trap {
		return st, fault(t.S.Model, st)
	}
	return st, nil
}

// pullGradient is analytic's gradient from the pullbacks of a point's
// forward pass: ∂logL/∂y of each dataset's terms pulled back through its
// blocks (summed in block order), plus the prior's d log p/dθ.
func (t *Target) pullGradient(sc *scratch, theta []float64, ps []pulled) ([]float64, error) {
	spec := t.S.ModelInfo.Spec
	d, m := len(spec.Params), len(spec.Outputs)
	gFull := make([]float64, d)
	if sc.fz.gy == nil {
		sc.fz.gy = make([][]float64, len(t.S.Data))
	}
	for di, ds := range t.S.Data {
		if sc.fz.gy[di] == nil {
			sc.fz.gy[di] = make([]float64, ds.K*m)
		}
		gy := sc.fz.gy[di]
		for i := range gy {
			gy[i] = 0
		}
		for _, term := range t.S.Terms {
			if term.Data != ds {
				continue
			}
			if _, st, err := t.termLogLik(sc, term, sc.y[di][0], gy); err != nil || st != abi.OK {
				return nil, firstErr(err, t.statusErr(st))
			}
		}
		t.constraintGradY(sc, di, sc.y[di][0], gy)
		nb := len(ps[di].pb)
		bst := make([]abi.Status, nb)
		if cap(sc.fz.gb) < nb*d {
			sc.fz.gb = make([]float64, nb*d)
		}
		gb := sc.fz.gb[:nb*d]
		t.forBlocks(nb, func(b int) {
			lo, hi := 0, ds.K
			if nb > 1 {
				lo, hi = blockRows(ds.K, b)
			}
			bst[b] = ps[di].pb[b].Pull(gy[lo*m:hi*m], gb[b*d:(b+1)*d])
		})
		if st := firstNotOK(bst); st != abi.OK {
			return nil, t.statusErr(st)
		}
		g := make([]float64, d)
		sumBlocks(g, gb)
		for i := range g {
			gFull[i] += g[i]
		}
	}
	g := make([]float64, len(theta))
	for j, i := range t.S.FreeIdx {
		g[j] = gFull[i] + t.S.Priors[j].DLogPdf(theta[j])
	}
	t.constraintGradTheta(theta, g)
	return g, nil
}
