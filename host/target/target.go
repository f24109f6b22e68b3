package target

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/study"
)

// ChunkSize is the largest number of points a worker evaluates at a time
// (and sends to a batch-capable model in one call).
const ChunkSize = 8

// chunkSize is the chunk for a batch of n points: ChunkSize for large
// batches, smaller for small ones so that a few expensive points (a
// multi-start optimiser, a handful of chains) still spread over the
// workers. It depends on n only, never on the number of workers, and a
// point's result does not depend on its chunk anyway (the determinism contract).
func chunkSize(n int) int { return min(ChunkSize, max(1, (n+15)/16)) }

// maxScratchOutputs bounds the model outputs a worker's scratch holds for
// a chunk (32 MiB of float64): a study whose one point has more outputs
// (many rows × many outputs) evaluates fewer points per chunk, down to
// one, instead of holding ChunkSize copies per worker (audit 5: 5.5 M rows
// took 704 MB of scratch per worker, past every bound).
const maxScratchOutputs = 4 << 20

// chunkCap is the most points a chunk of this study holds (1 ≤ … ≤
// ChunkSize): maxScratchOutputs over one point's outputs, all datasets.
func chunkCap(s *study.Study) int {
	per := 0
	for _, ds := range s.Data {
		per += ds.K * len(s.ModelInfo.Spec.Outputs)
	}
	if per == 0 {
		return ChunkSize
	}
	return max(1, min(ChunkSize, maxScratchOutputs/per))
}

// Counts tallies evaluations by status.
type Counts struct {
	Evaluations int            // points for which the model was called
	Failed      int            // of those, with a non-OK status
	ByStatus    map[string]int // all points by status name
	Gradients   int            // gradient evaluations
	GradientFD  bool           // gradients came from finite differences
	// Jacobians counts the residual Jacobians computed, JacobianEvals the
	// extra evaluations of finite-difference Jacobians (not in
	// Evaluations).
	Jacobians     int
	JacobianEvals int
	// JacobianFailures and GradientFailures count the points of status OK
	// whose residual Jacobian or gradient was asked for but could not be
	// computed (the model's Jacobian or VJP returned a failed status, or
	// a finite-difference step failed): the method got the point without
	// it.
	JacobianFailures int `json:",omitempty"`
	GradientFailures int `json:",omitempty"`
	// NonFiniteFrom counts the points of status non-finite by the
	// component that gave the NaN or +∞: "model", or a likelihood term
	// by name and component (audit 15: a likelihood plugin's NaN was
	// reported as the model's or the prior's problem).
	NonFiniteFrom map[string]int `json:",omitempty"`
	// ModelSeconds is the time spent inside model calls, summed over
	// workers (so it can exceed the wall time).
	ModelSeconds float64
}

// Target evaluates a study's log target.
type Target struct {
	S       *study.Study
	Workers int

	modelNanos atomic.Int64 // time inside model calls, all workers

	gradMode string // "analytic" or "finite-difference"
	jacMode  string // "analytic", "forward-difference" or "central-difference"
	lsq      lsqLayout
	mu       sync.Mutex
	counts   Counts

	chunkCap int // the most points of a chunk (chunkCap)
	// callPoints, when > 0, is the chunk of the next evaluation
	// (EvaluateInCalls; a remote worker's target, used by one goroutine).
	callPoints int
	fusedSem   chan struct{} // points on the fused path at once (LimitFused); nil: no bound
	slots      chan struct{} // one per worker: see rows.go
	free       chan *scratch // scratches kept between calls: see rows.go

	// trunc holds, per free parameter, the prior cut to the bounds when it
	// has so little mass inside them that its draws are by inversion
	// (drawParam); made once.
	truncOnce sync.Once
	trunc     []func(u float64) float64

	// fdIQR: each coordinate's prior interquartile range, a typical size
	// for finite-difference steps (fdScales); made once.
	fdOnce sync.Once
	fdIQR  []float64

	// Remote, when set, evaluates Evaluate's batches elsewhere (host/remote:
	// worker processes reached through a NATS JetStream server) instead of
	// on this process's workers. Tallies stay here.
	Remote Remote
}

// Remote evaluates whole batches of points elsewhere with the same code as
// Evaluate on this machine, so that each point's result is bit-identical
// to a local one (the determinism contract).
type Remote interface {
	// Evaluate returns the points' results in order, as Target.Evaluate
	// would, and the extra tallies of the evaluation.
	Evaluate(ctx context.Context, points [][]float64, want abi.Want) ([]abi.Result, RemoteTally, error)
}

// RemoteTally is what a remote evaluation adds to the tallies beyond what
// its results show.
type RemoteTally struct {
	JacobianEvals int     // finite-difference Jacobian evaluations
	ModelSeconds  float64 // time inside model calls, on the workers
}

// New builds a target for s with the given number of workers (≥ 1).
func New(s *study.Study, workers int) *Target {
	if workers < 1 {
		workers = 1
	}
	t := &Target{S: s, Workers: workers, counts: Counts{ByStatus: map[string]int{}}, slots: make(chan struct{}, workers), free: make(chan *scratch, workers)}
	t.gradMode = "finite-difference"
	if t.analyticGradient() {
		t.gradMode = "analytic"
	}
	t.jacMode, t.lsq = t.jacobianMode(), newLSQLayout(s)
	t.chunkCap = chunkCap(s)
	return t
}

// GradientMode says how gradients are computed: "analytic" (model
// Jacobian/VJP and likelihood ∂logL/∂y) or "finite-difference".
func (t *Target) GradientMode() string { return t.gradMode }

func (t *Target) analyticGradient() bool {
	_, jac := t.S.Model.(abi.Jacobian)
	_, vjp := t.S.Model.(abi.VJP)
	if !jac && !vjp {
		return false
	}
	for _, term := range t.S.Terms {
		if _, ok := term.Likelihood.(abi.GradY); !ok {
			return false
		}
	}
	return true
}

// ModelNanos and SetModelNanos read and reset the time spent inside model
// calls (Counts.ModelSeconds adds it): a run that abandons a batch puts it
// back to what it was before the batch, whose results it never used.
func (t *Target) ModelNanos() int64     { return t.modelNanos.Load() }
func (t *Target) SetModelNanos(v int64) { t.modelNanos.Store(v) }

// Counts returns a copy of the tallies so far.
func (t *Target) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.counts
	c.ModelSeconds += time.Duration(t.modelNanos.Load()).Seconds()
	c.ByStatus = map[string]int{}
	for k, v := range t.counts.ByStatus {
		c.ByStatus[k] = v
	}
	if t.counts.NonFiniteFrom != nil {
		c.NonFiniteFrom = map[string]int{}
		for k, v := range t.counts.NonFiniteFrom {
			c.NonFiniteFrom[k] = v
		}
	}
	return c
}

// nonFinite counts n points made non-finite by source (Counts.NonFiniteFrom).
func (t *Target) nonFinite(source string, n int) {
	if n == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts.NonFiniteFrom == nil {
		t.counts.NonFiniteFrom = map[string]int{}
	}
	t.counts.NonFiniteFrom[source] += n
}

// termSource names a likelihood term in Counts.NonFiniteFrom.
func termSource(term *study.Term) string {
	return "likelihood " + term.Name + " (" + term.Component.Label() + ")"
}

// DrawPrior draws n points from the prior with rng: each parameter by the
// inverse CDF of one uniform, redrawn (up to 10000 times) while outside the
// model's bounds, which truncate the prior. With transforms (the study's
// [transform] table) the points are returned in the method's coordinates
// x = T⁻¹(θ); a transform's parameters whose θ has no preimage (outside a
// multiplier's range, an inertia without a Cholesky factor) are redrawn
// together, up to 10000 times, so the draws are from the prior truncated
// to T's image. Without transforms the stream is consumed exactly as
// before transforms existed.
func (t *Target) DrawPrior(rng *rand.Rand, n int) ([][]float64, error) {
	out := make([][]float64, n)
	for i := range out {
		th := make([]float64, len(t.S.Free))
		for j := range t.S.Free {
			if err := t.drawParam(rng, th, j); err != nil {
				return nil, err
			}
		}
		if !t.S.Transformed() {
			out[i] = th
			continue
		}
		x := append([]float64(nil), th...)
		for k, tr := range t.S.Transforms {
			err := t.S.InverseOf(k, th, x)
			for try := 1; try < 10000 && err != nil; try++ {
				for _, j := range tr.Idx {
					if e := t.drawParam(rng, th, j); e != nil {
						return nil, e
					}
				}
				err = t.S.InverseOf(k, th, x)
			}
			if err != nil {
				return nil, fmt.Errorf("prior draws: no draw in the image of the %s transform in 10000 tries: %w", tr.Kind, err)
			}
		}
		out[i] = x
	}
	return out, nil
}

// invertBelow: a prior with less than this mass inside the bounds is
// drawn by inversion from the start, not after 10 000 rejections per draw
// (a vague prior of sd 1e8 took 13 s for 20 000 draws).
const invertBelow = 1e-3

// drawParam draws θ_j from its prior, inside the model's bounds.
func (t *Target) drawParam(rng *rand.Rand, th []float64, j int) error {
	p := t.S.Free[j]
	t.truncOnce.Do(func() {
		t.trunc = make([]func(float64) float64, len(t.S.Free))
		for k, q := range t.S.Free {
			if lo, hi := t.S.Priors[k].Support(); lo >= q.Lower && hi <= q.Upper {
				continue // the bounds do not cut it
			}
			if f, mass, err := prior.Truncate(t.S.Priors[k], q.Lower, q.Upper); err == nil && mass < invertBelow {
				t.trunc[k] = f
			}
		}
	})
	if q := t.trunc[j]; q != nil {
		th[j] = q(rng.Float64())
		if !(th[j] >= p.Lower && th[j] <= p.Upper) {
			return fmt.Errorf("prior of %s: no draw inside the model's bounds [%g, %g]", p.Name, p.Lower, p.Upper)
		}
		return nil
	}
	for try := 0; try < 10000; try++ {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		th[j] = t.S.Priors[j].Quantile(u)
		if th[j] >= p.Lower && th[j] <= p.Upper {
			return nil
		}
	}
	// Little mass inside the bounds: draw the truncated prior by
	// inversion. (Rejection first keeps the draws of every prior that
	// has mass enough, as they always were.)
	q, _, err := prior.Truncate(t.S.Priors[j], p.Lower, p.Upper)
	if err != nil {
		return fmt.Errorf("prior of %s: %w (the model's bounds)", p.Name, err)
	}
	u := rng.Float64()
	th[j] = q(u)
	if !(th[j] >= p.Lower && th[j] <= p.Upper) {
		return fmt.Errorf("prior of %s: no draw inside the model's bounds [%g, %g]", p.Name, p.Lower, p.Upper)
	}
	return nil
}

// LogPrior is Σ log p(θ_i), −∞ outside the (truncated) support.
func (t *Target) LogPrior(theta []float64) float64 {
	lp := 0.0
	for j, p := range t.S.Free {
		x := theta[j]
		// ±∞ is no parameter value, even within infinite bounds (ABI.md
		// §6.3: every θ value is finite).
		if !(x >= p.Lower && x <= p.Upper) || math.IsInf(x, 0) {
			return math.Inf(-1)
		}
		lp += t.S.Priors[j].LogPdf(x)
	}
	return lp
}

// Full returns the model's parameter vector for θ (fixed values filled in).
func (t *Target) Full(theta []float64) []float64 {
	full := append([]float64(nil), t.S.Base...)
	for j, i := range t.S.FreeIdx {
		full[i] = theta[j]
	}
	return full
}

// fault is the error of a plugin that timed out or trapped.
func fault(c any, st abi.Status) error {
	if f, ok := c.(abi.Faulter); ok {
		if err := f.Fault(); err != nil {
			return err
		}
	}
	return fmt.Errorf("evaluation %s", st)
}

// Evaluate evaluates the points in parallel and returns their results in
// order. It stops at the first plugin fault or when ctx is done.
//
// The points are in the method's coordinates: θ itself, or x when the
// study has transforms. Then each is evaluated at θ = T(x) — log prior and
// likelihood of θ, with no log-Jacobian term — and its result carries x in
// Theta and the gradient in x, (∂θ/∂x)ᵀ·∇θ (the Jacobian likewise).
//
// WantJacobian implies WantResiduals (lsq.go).
func (t *Target) Evaluate(ctx context.Context, points [][]float64, want abi.Want) ([]abi.Result, error) {
	if want&abi.WantJacobian != 0 {
		want |= abi.WantResiduals
	}
	if t.Remote != nil {
		res, tally, err := t.Remote.Evaluate(ctx, points, want)
		if err != nil {
			return nil, err
		}
		t.modelNanos.Add(int64(tally.ModelSeconds * 1e9))
		t.tally(res, want, tally.JacobianEvals)
		return res, nil
	}
	res, err := t.evaluate(ctx, points, want)
	if err != nil {
		return nil, err
	}
	fdEvals := 0
	if want&abi.WantJacobian != 0 && t.jacMode != "analytic" {
		if fdEvals, err = t.fdJacobians(ctx, points, res); err != nil {
			return nil, err
		}
	}
	t.tally(res, want, fdEvals)
	return res, nil
}

// tally counts a batch's results, asked for with want, and fdEvals
// finite-difference Jacobian evaluations.
func (t *Target) tally(res []abi.Result, want abi.Want, fdEvals int) {
	t.mu.Lock()
	for _, r := range res {
		t.counts.ByStatus[r.Status.String()]++
		if r.Status != abi.OutOfSupport {
			t.counts.Evaluations++
			if r.Status != abi.OK {
				t.counts.Failed++
			}
		}
		if r.Grad != nil {
			t.counts.Gradients++
		}
		if r.Jacobian != nil {
			t.counts.Jacobians++
		}
		if r.Status == abi.OK && want&abi.WantGradient != 0 && r.Grad == nil {
			t.counts.GradientFailures++
		}
		if r.Status == abi.OK && want&abi.WantJacobian != 0 && r.Jacobian == nil {
			t.counts.JacobianFailures++
		}
	}
	t.counts.JacobianEvals += fdEvals
	t.counts.GradientFD = t.gradMode != "analytic"
	t.mu.Unlock()
}

// evaluate is Evaluate without the tallies and the finite-difference
// Jacobians.
func (t *Target) evaluate(ctx context.Context, points [][]float64, want abi.Want) ([]abi.Result, error) {
	xs := points
	if t.S.Transformed() {
		points = make([][]float64, len(xs))
		for i, x := range xs {
			points[i] = t.S.Forward(x)
			// A non-finite coordinate is out of the support, whatever
			// finite θ the transform maps it to (audit 10: x = +∞ of an
			// unbounded box was evaluated, and told back as a sample).
			if !finite(x) {
				for j := range points[i] {
					points[i][j] = math.NaN()
				}
			}
		}
	}
	res := make([]abi.Result, len(points))
	size := min(chunkSize(len(points)), t.chunkCap)
	if t.callPoints > 0 {
		// A remote chunk: the local run's calls, for the chunk's own
		// points only (consumed here: the finite-difference points that
		// follow are grouped as the worker's own).
		size, t.callPoints = t.callPoints, 0
	}
	err := t.forChunksOf(ctx, len(points), size, func(sc *scratch, lo, hi int) error {
		return t.evalChunk(sc, points[lo:hi], res[lo:hi], want)
	})
	if err != nil {
		return nil, err
	}
	if t.S.Transformed() {
		for i := range res {
			res[i].Theta = append([]float64(nil), xs[i]...)
			if res[i].Grad != nil {
				res[i].Grad = t.S.PullBack(xs[i], res[i].Grad)
			}
			if res[i].Jacobian != nil {
				t.pullBackRows(xs[i], res[i].Jacobian)
			}
		}
	}
	return res, nil
}

// forChunks cuts n points into chunks of chunkSize(n) and runs f on them on
// the workers (each with its own scratch). It stops at the first error or
// when ctx is done, and returns that error.
func (t *Target) forChunks(ctx context.Context, n int, f func(sc *scratch, lo, hi int) error) error {
	return t.forChunksOf(ctx, n, min(chunkSize(n), t.chunkCap), f)
}

// CallPoints is the number of points a local run evaluates in one call
// (one chunk) of a batch of n points of study s: a remote worker
// evaluates its chunks in calls of the same points (EvaluateInCalls), so
// that a plugin's fuel, pooled per call (ABI.md §8), is pooled over the
// same points on a laptop and on a cluster (audit 10: a point over its
// fuel passed locally and stopped a remote run).
func CallPoints(s *study.Study, n int) int { return min(chunkSize(n), chunkCap(s)) }

// EvaluateInCalls is Evaluate with the points cut into calls of call
// points (1 ≤ call ≤ ChunkSize; within the study's cap), for a remote
// worker's chunk whose first point begins a local call.
func (t *Target) EvaluateInCalls(ctx context.Context, points [][]float64, want abi.Want, call int) ([]abi.Result, error) {
	t.callPoints = max(1, min(call, t.chunkCap))
	defer func() { t.callPoints = 0 }()
	return t.Evaluate(ctx, points, want)
}

// forChunksOf is forChunks with chunks of size points.
func (t *Target) forChunksOf(ctx context.Context, n, size int, f func(sc *scratch, lo, hi int) error) error {
	nChunks := (n + size - 1) / size
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	fail := func(err error) {
		once.Do(func() { firstErr = err })
		stop.Store(true)
	}
	for w := 0; w < min(t.Workers, nChunks); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.acquire()
			defer t.release()
			sc := t.getScratch()
			defer t.putScratch(sc)
			for !stop.Load() {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := f(sc, c*size, min((c+1)*size, n)); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// scratch holds one worker's buffers.
type scratch struct {
	ys    [][]float64   // one point's outputs per dataset (pointY)
	rbuf  []float64     // a constraint's residuals (constraintLogLik)
	full  [][]float64   // per chunk point
	y     [][][]float64 // [dataset][point] K×m model outputs
	st    []abi.Status
	yobs  []float64   // one point's term outputs
	yobsB [][]float64 // a chunk's term outputs (batched likelihoods)
	gyo   []float64   // one term's ∂logL/∂y (its outputs only)
	fz    fusedBuf    // the fused path's buffers (fused.go)
}

func (t *Target) newScratch() *scratch {
	sc := &scratch{st: make([]abi.Status, t.chunkCap)}
	m := len(t.S.ModelInfo.Spec.Outputs)
	sc.y = make([][][]float64, len(t.S.Data))
	for d, ds := range t.S.Data {
		sc.y[d] = make([][]float64, t.chunkCap)
		for i := range sc.y[d] {
			sc.y[d][i] = make([]float64, ds.K*m)
		}
	}
	sc.full = make([][]float64, t.chunkCap)
	return sc
}

// pointY is chunk point j's model outputs per dataset, in sc.ys.
func (sc *scratch) pointY(nData, j int) [][]float64 {
	if len(sc.ys) != nData {
		sc.ys = make([][]float64, nData)
	}
	for d := range sc.ys {
		sc.ys[d] = sc.y[d][j]
	}
	return sc.ys
}

func (t *Target) evalChunk(sc *scratch, pts [][]float64, res []abi.Result, want abi.Want) error {
	if t.fused(want) {
		return t.evalChunkFused(sc, pts, res, want)
	}
	return t.evalChunkUnfused(sc, pts, res, want)
}

// evalChunkUnfused is evalChunk without pullbacks: Eval, then the VJP
// for gradients.
func (t *Target) evalChunkUnfused(sc *scratch, pts [][]float64, res []abi.Result, want abi.Want) error {
	// Prior first: points outside the support are not evaluated.
	live := sc.full[:0]
	idx := make([]int, 0, len(pts))
	// The results' Theta copies share one allocation per chunk.
	n := 0
	for _, th := range pts {
		n += len(th)
	}
	thetas := make([]float64, 0, n)
	for i, th := range pts {
		thetas = append(thetas, th...)
		res[i] = abi.Result{Theta: thetas[len(thetas)-len(th) : len(thetas) : len(thetas)], LogPrior: t.LogPrior(th), LogLik: math.Inf(-1)}
		if math.IsInf(res[i].LogPrior, -1) {
			res[i].Status = abi.OutOfSupport
			continue
		}
		live = append(live, t.Full(th))
		idx = append(idx, i)
	}
	if len(live) == 0 {
		return nil
	}
	logL := make([]float64, len(live))
	status := make([]abi.Status, len(live))
	for d, ds := range t.S.Data {
		ys := sc.y[d][:len(live)]
		st := sc.st[:len(live)]
		if err := t.evalModel(live, ds, ys, st); err != nil {
			return err
		}
		nf := 0
		for j := range live {
			if status[j] != abi.OK {
				continue
			}
			if st[j] != abi.OK {
				status[j] = st[j]
				if st[j] == abi.NonFinite {
					nf++
				}
				continue
			}
			if !finite(ys[j]) {
				status[j] = abi.NonFinite
				nf++
			}
		}
		t.nonFinite("model", nf)
	}
	// Terms in study order, each over the chunk's points at once (one call
	// of a likelihood with the batch capability); every point's sum adds
	// its terms in the same order as one point at a time would.
	// A difference point of a Jacobian (wantResidualsOnly, lsq.go) needs
	// its residuals alone: its log likelihood is left at −∞.
	resOnly := want&wantResidualsOnly != 0
	for _, term := range t.S.Terms {
		if resOnly {
			break
		}
		if err := t.termChunk(sc, term, sc.y[dataIndex(t.S, term.Data)][:len(live)], logL, status); err != nil {
			return err
		}
	}
	// Soft constraints after the terms (lsq.go), then, when asked, the
	// residuals and their analytic Jacobian.
	for j, i := range idx {
		if status[j] != abi.OK || (len(t.S.Constraints) == 0 && want&abi.WantResiduals == 0) {
			continue
		}
		ys := sc.pointY(len(t.S.Data), j)
		if len(t.S.Constraints) > 0 && !resOnly {
			cl, bad := t.constraintLogLik(sc, pts[i], ys)
			if bad != nil {
				t.nonFinite(constraintSource(bad), 1)
				status[j] = abi.NonFinite
				continue
			}
			logL[j] += cl
		}
		if want&abi.WantResiduals != 0 {
			r, st, err := t.residuals(sc, pts[i], ys)
			if err != nil {
				return err
			}
			if st != abi.OK {
				status[j] = st
				continue
			}
			res[i].Residuals = r
			if want&abi.WantJacobian != 0 && t.jacMode == "analytic" {
				jac, err := t.analyticJacobian(sc, pts[i], live[j], ys)
				if err != nil {
					return err
				}
				res[i].Jacobian = jac
			}
		}
	}
	// Outputs before the gradients, which may reuse the scratch.
	for j, i := range idx {
		if want&abi.WantOutputs != 0 && status[j] == abi.OK {
			res[i].Outputs = t.pointOutputs(sc, j)
		}
	}
	for j, i := range idx {
		res[i].Status = status[j]
		if status[j] == abi.OK && !resOnly {
			res[i].LogLik = logL[j]
		}

		if want&abi.WantGradient != 0 && status[j] == abi.OK {
			ys := make([][]float64, len(t.S.Data))
			for di := range ys {
				ys[di] = sc.y[di][j]
			}
			g, err := t.gradient(sc, pts[i], ys)
			var se statusError
			if errors.As(err, &se) {
				// The point is valid but its gradient could not be computed
				// (a finite-difference step failed): no gradient for it.
				continue
			}
			if err != nil {
				return err
			}
			res[i].Grad = g
		}
	}
	return nil
}

// OutputRows is the number of condition rows of a result's Outputs: the
// rows of every dataset (abi.Problem.OutputRows).
func (t *Target) OutputRows() int {
	n := 0
	for _, ds := range t.S.Data {
		n += ds.K
	}
	return n
}

// pointOutputs is chunk point j's model outputs (abi.WantOutputs): every
// dataset's K×m outputs in study order, in a new slice.
func (t *Target) pointOutputs(sc *scratch, j int) []float64 {
	m := len(t.S.ModelInfo.Spec.Outputs)
	out := make([]float64, 0, t.OutputRows()*m)
	for d := range t.S.Data {
		out = append(out, sc.y[d][j]...)
	}
	return out
}

func dataIndex(s *study.Study, ds *study.Dataset) int {
	for i, x := range s.Data {
		if x == ds {
			return i
		}
	}
	return -1
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// evalModel evaluates the model for the points on one dataset.
func (t *Target) evalModel(full [][]float64, ds *study.Dataset, ys [][]float64, st []abi.Status) error {
	// A dataset of one block is not split: its points go to the model in
	// one batched call, as for any model (audit 21: rows_independent made
	// every call one point, even on 20 rows).
	if t.rowsIndependent() && rowBlocks(ds.K) > 1 {
		return t.evalModelRows(full, ds, ys, st)
	}
	start := time.Now()
	defer func() { t.modelNanos.Add(int64(time.Since(start))) }()
	if bm, ok := t.S.Model.(abi.BatchModel); ok {
		bm.EvalBatch(full, ds.X, ys, st)
	} else {
		for j, th := range full {
			st[j] = t.S.Model.Eval(th, ds.X, ys[j])
		}
	}
	for _, s := range st {
		if s == abi.Timeout || s == abi.Trap {
			return fault(t.S.Model, s)
		}
	}
	return nil
}

// termChunk adds one likelihood term's log-likelihood to logL[j] for the
// chunk's points whose status is still OK (ys[j] holds all K×m model
// outputs of point j), and sets the status of those it fails.
func (t *Target) termChunk(sc *scratch, term *study.Term, ys [][]float64, logL []float64, status []abi.Status) error {
	bl, batch := term.Likelihood.(abi.BatchLikelihood)
	if !batch {
		for j := range ys {
			if status[j] != abi.OK {
				continue
			}
			l, st, err := t.termLogLik(sc, term, ys[j], nil)
			if err != nil {
				return err
			}
			if st != abi.OK {
				if st == abi.NonFinite {
					t.nonFinite(termSource(term), 1)
				}
				status[j] = st
				continue
			}
			logL[j] += l
		}
		return nil
	}
	mo := len(term.OutIdx)
	var idx []int
	var yo [][]float64
	for j := range ys {
		if status[j] != abi.OK {
			continue
		}
		k := len(idx)
		if k == len(sc.yobsB) {
			sc.yobsB = append(sc.yobsB, nil)
		}
		sc.yobsB[k] = t.termOutputs(term, ys[j], sc.yobsB[k])
		idx, yo = append(idx, j), append(yo, sc.yobsB[k])
	}
	if len(idx) == 0 {
		return nil
	}
	ll := make([]float64, len(idx))
	st := make([]abi.Status, len(idx))
	bl.LogLikelihoodBatch(mo, yo, term.Obs, term.Sigma, ll, st)
	nf := 0
	defer func() { t.nonFinite(termSource(term), nf) }()
	for k, j := range idx {
		s := st[k]
		if s == abi.Timeout || s == abi.Trap {
			return fault(term.Likelihood, s)
		}
		if s == abi.OK && (math.IsNaN(ll[k]) || math.IsInf(ll[k], 1)) {
			s = abi.NonFinite
		}
		if s != abi.OK {
			if s == abi.NonFinite {
				nf++
			}
			status[j] = s
			continue
		}
		logL[j] += ll[k]
	}
	return nil
}

// termOutputs extracts the term's outputs (K×mo, in the term's order) from
// y (K×m, all model outputs) into buf, reallocated when too small.
func (t *Target) termOutputs(term *study.Term, y, buf []float64) []float64 {
	m := len(t.S.ModelInfo.Spec.Outputs)
	mo := len(term.OutIdx)
	K := term.Data.K
	if cap(buf) < K*mo {
		buf = make([]float64, K*mo)
	}
	yo := buf[:K*mo]
	for r := 0; r < K; r++ {
		for j, oi := range term.OutIdx {
			yo[r*mo+j] = y[r*m+oi]
		}
	}
	return yo
}

// termLogLik evaluates one likelihood term on the model output y (K×m of
// all model outputs). With gy non-nil it also writes ∂logL/∂y into gy
// (K×m, zero on unobserved outputs).
func (t *Target) termLogLik(sc *scratch, term *study.Term, y, gy []float64) (float64, abi.Status, error) {
	ds := term.Data
	m := len(t.S.ModelInfo.Spec.Outputs)
	mo := len(term.OutIdx)
	sc.yobs = t.termOutputs(term, y, sc.yobs)
	yo := sc.yobs
	var l float64
	var st abi.Status
	if gy == nil {
		l, st = term.Likelihood.LogLikelihood(mo, yo, term.Obs, term.Sigma)
	} else {
		if cap(sc.gyo) < len(yo) {
			sc.gyo = make([]float64, len(yo))
		}
		g := sc.gyo[:len(yo)]
		clear(g) // a likelihood writes every entry, but a stale one must not leak
		l, st = term.Likelihood.(abi.GradY).LogLikelihoodGrad(mo, yo, term.Obs, term.Sigma, g)
		for r := 0; r < ds.K; r++ {
			for j, oi := range term.OutIdx {
				gy[r*m+oi] += g[r*mo+j]
			}
		}
	}
	if st == abi.Timeout || st == abi.Trap {
		return 0, st, fault(term.Likelihood, st)
	}
	if st == abi.OK && (math.IsNaN(l) || math.IsInf(l, 1)) {
		st = abi.NonFinite
	}
	return l, st, nil
}

// DerivativeFailures describes the calls of the model's derivative
// exports (a plugin's kinfer_model_jacobian, kinfer_model_vjp, …) that
// returned a failed or invalid status, with the guest's last
// kinfer_last_error message; "" when there were none or the model does
// not say.
func (t *Target) DerivativeFailures() string {
	if r, ok := t.Remote.(interface{ DerivativeFailures() string }); ok {
		return r.DerivativeFailures() // the workers' (the local plugin evaluated nothing)
	}
	if d, ok := t.S.Model.(interface{ DerivativeFailures() string }); ok {
		return d.DerivativeFailures()
	}
	return ""
}

// EvaluationFailures describes the points a plugin model or likelihood
// failed (status 1 or 2), per component, with the guest's last
// kinfer_last_error message; "" when none did or no plugin says.
func (t *Target) EvaluationFailures() string {
	type failer interface{ EvaluationFailures() string }
	if r, ok := t.Remote.(failer); ok {
		return r.EvaluationFailures() // the workers' (the local plugin evaluated nothing)
	}
	// A plugin is named by its manifest, as validate and its other
	// errors name it (ABI.md §4), not by its spec's name.
	name := func(c any, spec string) string {
		if p, ok := c.(interface{ PluginName() string }); ok {
			return p.PluginName()
		}
		return spec
	}
	var parts []string
	if f, ok := t.S.Model.(failer); ok {
		if n := f.EvaluationFailures(); n != "" {
			parts = append(parts, "model "+name(t.S.Model, t.S.ModelInfo.Spec.Name)+": "+n)
		}
	}
	seen := map[failer]bool{}
	for _, term := range t.S.Terms {
		if f, ok := term.Likelihood.(failer); ok && !seen[f] {
			seen[f] = true
			if n := f.EvaluationFailures(); n != "" {
				parts = append(parts, "likelihood "+name(term.Likelihood, term.Component.Spec.Name)+": "+n)
			}
		}
	}
	return strings.Join(parts, "; ")
}

// BatchFaults describes the batched model calls that faulted while each
// of their points then succeeded alone (a plugin's batch path breaking
// ABI.md §2; the results are the single-point calls'), or "".
func (t *Target) BatchFaults() string {
	if r, ok := t.Remote.(interface{ BatchFaults() string }); ok {
		return r.BatchFaults() // the workers' (the local plugin evaluated nothing)
	}
	if f, ok := t.S.Model.(interface{ BatchFaults() string }); ok {
		return f.BatchFaults()
	}
	return ""
}

// SetCounts restores tallies (when a run resumes from a checkpoint).
func (t *Target) SetCounts(c Counts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts = c
	t.modelNanos.Store(0) // c.ModelSeconds already holds the earlier time
	if t.counts.ByStatus == nil {
		t.counts.ByStatus = map[string]int{}
	}
}

// Outputs evaluates the model (all its outputs, K×m each) at the points on
// one dataset, in parallel, with each point's status (OutOfSupport for
// points outside the prior's support, which are not evaluated). It is the
// posterior-predictive counterpart of Evaluate and does not count
// evaluations.
func (t *Target) Outputs(ctx context.Context, points [][]float64, ds *study.Dataset) ([][]float64, []abi.Status, error) {
	m := len(t.S.ModelInfo.Spec.Outputs)
	ys := make([][]float64, len(points))
	st := make([]abi.Status, len(points))
	err := t.forChunks(ctx, len(points), func(_ *scratch, lo, hi int) error {
		var full, out [][]float64
		var idx []int
		for i := lo; i < hi; i++ {
			ys[i] = make([]float64, ds.K*m)
			if math.IsInf(t.LogPrior(points[i]), -1) {
				st[i] = abi.OutOfSupport
				continue
			}
			full, out, idx = append(full, t.Full(points[i])), append(out, ys[i]), append(idx, i)
		}
		s := make([]abi.Status, len(idx))
		if err := t.evalModel(full, ds, out, s); err != nil {
			return err
		}
		for j, i := range idx {
			st[i] = s[j]
			if s[j] == abi.OK && !finite(ys[i]) {
				st[i] = abi.NonFinite
			}
		}
		return nil
	})
	return ys, st, err
}
