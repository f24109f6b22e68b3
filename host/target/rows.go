package target

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

// RowBlock is the number of dataset rows in one block when a model that
// declares its rows independent (abi.RowsIndependent) is evaluated by
// blocks. The blocks of a dataset are [0, RowBlock), [RowBlock,
// 2·RowBlock), …: their boundaries depend on the dataset only, never on the
// number of workers, and gradients are summed over the blocks in block
// order, so a point's result is the same whatever the number of workers
// (and whichever worker ran which block).
const RowBlock = 256

// rowsIndependent reports whether the model lets the host split a θ's
// rows into blocks.
func (t *Target) rowsIndependent() bool {
	r, ok := t.S.Model.(abi.RowsIndependent)
	return ok && r.RowsIndependent()
}

// rowBlocks is the number of blocks of k rows (at least 1).
func rowBlocks(k int) int { return max(1, (k+RowBlock-1)/RowBlock) }

// blockRows is block b's rows [lo, hi) of k.
func blockRows(k, b int) (lo, hi int) { return b * RowBlock, min((b+1)*RowBlock, k) }

// Worker slots. Each of forChunks' workers holds one slot while it runs;
// forBlocks lends the blocks of one point to helpers for the slots that
// are free (a single start, or the tail of a batch), so that no more than
// t.Workers goroutines evaluate at once.
func (t *Target) acquire() { t.slots <- struct{}{} }

func (t *Target) release() { <-t.slots }

func (t *Target) tryAcquire() bool {
	select {
	case t.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// getScratch returns a kept scratch or a new one. Keeping them between
// calls saves allocating and clearing ChunkSize model outputs per dataset
// and worker on every Evaluate (3.2 MB for the arm's 10 000 rows, which
// an Adam iteration paid each time).
func (t *Target) getScratch() *scratch {
	select {
	case sc := <-t.free:
		return sc
	default:
		return t.newScratch()
	}
}

// putScratch keeps sc for a later call, up to one per worker.
func (t *Target) putScratch(sc *scratch) {
	select {
	case t.free <- sc:
	default:
	}
}

// forBlocks runs f(b) for b = 0…n−1, on the calling goroutine and on
// helper goroutines for the worker slots that are free when it takes a
// block; it returns when every block is done. f(b) must write only to
// block b's own outputs: the caller combines them in block order, so the
// result does not depend on which goroutine ran which block.
func (t *Target) forBlocks(n int, f func(b int)) {
	if n == 1 {
		f(0)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	helper := func() {
		defer wg.Done()
		defer t.release()
		for {
			b := int(next.Add(1)) - 1
			if b >= n {
				return
			}
			f(b)
		}
	}
	for {
		b := int(next.Add(1)) - 1
		if b >= n {
			break
		}
		if b+1 < n && t.tryAcquire() {
			wg.Add(1)
			go helper()
		}
		f(b)
	}
	wg.Wait()
}

// timed runs f and adds its duration to the model time.
func (t *Target) timed(f func()) {
	start := time.Now()
	f()
	t.modelNanos.Add(int64(time.Since(start)))
}

// evalModelRows is evalModel for a model whose rows are independent: each
// point's rows are evaluated by blocks (in parallel when workers are
// free), and a point's status is that of its first block, in row order,
// that is not OK.
func (t *Target) evalModelRows(full [][]float64, ds *study.Dataset, ys [][]float64, st []abi.Status) error {
	c := len(t.S.ModelInfo.Spec.Conditions)
	m := len(t.S.ModelInfo.Spec.Outputs)
	nb := rowBlocks(ds.K)
	bst := make([]abi.Status, nb)
	for j, th := range full {
		t.forBlocks(nb, func(b int) {
			lo, hi := blockRows(ds.K, b)
			t.timed(func() { bst[b] = t.S.Model.Eval(th, ds.X[lo*c:hi*c], ys[j][lo*m:hi*m]) })
		})
		st[j] = firstNotOK(bst)
	}
	for _, s := range st {
		if s == abi.Timeout || s == abi.Trap {
			return fault(t.S.Model, s)
		}
	}
	return nil
}

// firstNotOK is the first status that is not OK, or OK.
func firstNotOK(st []abi.Status) abi.Status {
	for _, s := range st {
		if s != abi.OK {
			return s
		}
	}
	return abi.OK
}

// vjpRows is the model's VJP on one dataset by row blocks: g (length d,
// overwritten) = Σ_blocks VJP(θ, x_b, gy_b), summed in block order; yOut
// receives y. The status is the first block's, in row order, that is not
// OK.
func (t *Target) vjpRows(full []float64, ds *study.Dataset, gy, yOut, g []float64) abi.Status {
	c := len(t.S.ModelInfo.Spec.Conditions)
	m := len(t.S.ModelInfo.Spec.Outputs)
	v := t.S.Model.(abi.VJP)
	nb := rowBlocks(ds.K)
	bst := make([]abi.Status, nb)
	gb := make([]float64, nb*len(g))
	t.forBlocks(nb, func(b int) {
		lo, hi := blockRows(ds.K, b)
		bst[b] = v.VJP(full, ds.X[lo*c:hi*c], gy[lo*m:hi*m], yOut[lo*m:hi*m], gb[b*len(g):(b+1)*len(g)])
	})
	if st := firstNotOK(bst); st != abi.OK {
		return st
	}
	sumBlocks(g, gb)
	return abi.OK
}

// sumBlocks sets g to the sum of the len(gb)/len(g) block gradients in gb,
// in block order.
func sumBlocks(g, gb []float64) {
	for i := range g {
		g[i] = 0
	}
	for b := 0; b < len(gb)/len(g); b++ {
		for i, x := range gb[b*len(g) : (b+1)*len(g)] {
			g[i] += x
		}
	}
}
