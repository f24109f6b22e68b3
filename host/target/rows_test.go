package target_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// armRowsStudy loads an NMSE study of the arm on the first n rows of
// examples/arm/train.csv with the bones' mass and COM and every muscle
// parameter free (uniform over the model's bounds: M4's 36), the inertia
// entries fixed.
func armRowsStudy(t testing.TB, n int) *study.Study {
	return armRowsStudyData(t, n, false)
}

// armRowsStudyData is armRowsStudy, with twice: a second dataset (the
// same rows) under its own NMSE term normalised per degree of freedom.
func armRowsStudyData(t testing.TB, n int, twice bool) *study.Study {
	t.Helper()
	dir := t.TempDir()
	writeArmRows(t, dir, n)
	var b strings.Builder
	b.WriteString("name = \"arm-rows\"\n[model]\nuse = \"arm\"\n[[data]]\nname = \"train\"\nfile = \"train.csv\"\n")
	if twice {
		b.WriteString("[[data]]\nname = \"again\"\nfile = \"train.csv\"\n" +
			"[[likelihood]]\nuse = \"nmse\"\ndata = \"train\"\n[[likelihood]]\nuse = \"nmse\"\ndata = \"again\"\nnormalise = \"per_dof\"\n")
	} else {
		b.WriteString("[[likelihood]]\nuse = \"nmse\"\n")
	}
	b.WriteString("[method]\nuse = \"metropolis\"\n[prior]\n")
	var fixed strings.Builder
	for _, p := range arm.Spec.Params {
		if strings.Contains(p.Name, "_I") {
			fixed.WriteString(p.Name + " = " + ftoa(p.Default) + "\n")
			continue
		}
		b.WriteString(p.Name + " = { uniform = [" + ftoa(p.Lower) + ", " + ftoa(p.Upper) + "] }\n")
	}
	b.WriteString("[fixed]\n" + fixed.String())
	p := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(context.Background(), p, study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if len(s.Free) != 36 {
		t.Fatalf("%d free parameters, want 36", len(s.Free))
	}
	return s
}

// unfused hides the arm's Pullbacker: the host evaluates with Eval, then
// the VJP (by row blocks, since it keeps RowsIndependent).
type unfused struct{ m *arm.Model }

func (u unfused) Spec() abi.Spec                             { return u.m.Spec() }
func (u unfused) Eval(theta, x, y []float64) abi.Status      { return u.m.Eval(theta, x, y) }
func (u unfused) VJP(theta, x, v, y, g []float64) abi.Status { return u.m.VJP(theta, x, v, y, g) }
func (u unfused) RowsIndependent() bool                      { return true }

// whole hides the arm's Pullbacker and RowsIndependent: Eval and VJP over
// all the rows at once, the host's path before row blocks.
type whole struct{ m *arm.Model }

func (u whole) Spec() abi.Spec                             { return u.m.Spec() }
func (u whole) Eval(theta, x, y []float64) abi.Status      { return u.m.Eval(theta, x, y) }
func (u whole) VJP(theta, x, v, y, g []float64) abi.Status { return u.m.VJP(theta, x, v, y, g) }

// evalAll evaluates the points with gradients on a fresh target.
func evalAll(t *testing.T, s *study.Study, model abi.Model, workers int, pts [][]float64, want abi.Want) []abi.Result {
	t.Helper()
	s.Model = model
	res, err := target.New(s, workers).Evaluate(context.Background(), pts, want)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The same results bit for bit: status, log likelihood, gradient.
func sameResults(t *testing.T, what string, a, b []abi.Result) {
	t.Helper()
	for i := range a {
		if a[i].Status != b[i].Status || math.Float64bits(a[i].LogLik) != math.Float64bits(b[i].LogLik) || len(a[i].Grad) != len(b[i].Grad) {
			t.Fatalf("%s: point %d: %v %.17g vs %v %.17g", what, i, a[i].Status, a[i].LogLik, b[i].Status, b[i].LogLik)
		}
		for j := range a[i].Grad {
			if math.Float64bits(a[i].Grad[j]) != math.Float64bits(b[i].Grad[j]) {
				t.Fatalf("%s: point %d: gradient %d: %.17g vs %.17g", what, i, j, a[i].Grad[j], b[i].Grad[j])
			}
		}
	}
}

// armPoints are 1 or 3 points of the free parameters: the defaults, then
// 0.9 and 1.1 times them.
func armPoints(s *study.Study, n int) [][]float64 {
	var pts [][]float64
	for _, f := range []float64{1, 0.9, 1.1}[:n] {
		p := make([]float64, len(s.Free))
		for j, q := range s.Free {
			p[j] = q.Default
			if q.Default > q.Lower/f && q.Default < q.Upper/f {
				p[j] = q.Default * f
			}
		}
		pts = append(pts, p)
	}
	return pts
}

// Row blocks: on 1000 rows (four blocks of RowBlock = 256, the last
// short), results with 1, 2 and 3 workers are identical bit for bit, for
// one point (whose blocks the free workers share) and for three (which
// share the workers with their blocks), with and without gradients; the
// fused path (EvalPullback, Pull) equals the unfused one (Eval, then the
// VJP by blocks) bit for bit; and both equal the whole-dataset path (Eval
// and VJP over all rows at once) to fusedTol — the log likelihood exactly,
// since y is the same, and the gradient up to the order of the sum over
// the rows.
func TestRowBlocksAndFusedPath(t *testing.T) {
	const fusedTol = 1e-12 // relative to max |gradient component|
	s := armRowsStudy(t, 1000)
	m := arm.NewModel(arm.DefaultDamping)
	for _, n := range []int{1, 3} {
		pts := armPoints(s, n)
		for _, want := range []abi.Want{abi.WantLogTarget, abi.WantGradient} {
			ref := evalAll(t, s, m, 1, pts, want)
			for _, r := range ref {
				if r.Status != abi.OK || (want == abi.WantGradient) != (r.Grad != nil) {
					t.Fatalf("reference: %v, gradient %v", r.Status, r.Grad != nil)
				}
			}
			for _, w := range []int{2, 3} {
				sameResults(t, "workers", ref, evalAll(t, s, m, w, pts, want))
			}
			if want != abi.WantGradient {
				continue
			}
			for _, w := range []int{1, 2} {
				sameResults(t, "unfused", ref, evalAll(t, s, unfused{m}, w, pts, want))
			}
			all := evalAll(t, s, whole{m}, 2, pts, want)
			for i := range ref {
				if ref[i].LogLik != all[i].LogLik {
					t.Fatalf("point %d: log likelihood %.17g by blocks, %.17g whole", i, ref[i].LogLik, all[i].LogLik)
				}
				scale := 0.0
				for _, g := range all[i].Grad {
					scale = math.Max(scale, math.Abs(g))
				}
				worst := 0.0
				for j := range ref[i].Grad {
					worst = math.Max(worst, math.Abs(ref[i].Grad[j]-all[i].Grad[j]))
				}
				if worst > fusedTol*scale {
					t.Errorf("point %d: |fused − whole| up to %.3g, max |g| %.3g", i, worst, scale)
				}
				t.Logf("%d points, point %d: largest |fused by blocks − whole| / max|g| = %.2g", n, i, worst/scale)
			}
		}
	}
}

// Two datasets, each with its own term: the fused path equals the unfused
// one bit for bit, with 1 and 2 workers, and the second term (an NMSE,
// negative) lowers the log likelihood of the single-term study.
func TestFusedTwoDatasets(t *testing.T) {
	s := armRowsStudyData(t, 600, true)
	m := arm.NewModel(arm.DefaultDamping)
	pts := armPoints(s, 3)
	ref := evalAll(t, s, m, 1, pts, abi.WantGradient)
	for _, r := range ref {
		if r.Status != abi.OK || r.Grad == nil {
			t.Fatalf("reference: %v", r.Status)
		}
	}
	sameResults(t, "workers", ref, evalAll(t, s, m, 2, pts, abi.WantGradient))
	sameResults(t, "unfused", ref, evalAll(t, s, unfused{m}, 2, pts, abi.WantGradient))
	one := evalAll(t, armRowsStudy(t, 600), m, 1, pts, abi.WantGradient)
	for i := range ref {
		if !(ref[i].LogLik < one[i].LogLik) { // the second term adds a negative log likelihood
			t.Errorf("point %d: two terms %g, one %g", i, ref[i].LogLik, one[i].LogLik)
		}
	}
}

// A row whose evaluation fails (row 600, in the third block, made
// non-finite) fails every point, with no gradient, on the fused and the
// unfused path, with 1 and 2 workers.
func TestRowBlockFailure(t *testing.T) {
	s := armRowsStudy(t, 1000)
	s.Data[0].X[600*arm.NConditions+arm.NDoF] = 1e300 // q̇: a non-finite damping torque
	m := arm.NewModel(arm.DefaultDamping)
	pts := armPoints(s, 3)
	for _, model := range []abi.Model{m, unfused{m}} {
		for _, w := range []int{1, 2} {
			for _, want := range []abi.Want{abi.WantLogTarget, abi.WantGradient} {
				for i, r := range evalAll(t, s, model, w, pts, want) {
					if r.Status != abi.Failed || r.Grad != nil || !math.IsInf(r.LogLik, -1) {
						t.Errorf("%T, %d workers, want %v: point %d: %v, log L %g, gradient %v", model, w, want, i, r.Status, r.LogLik, r.Grad)
					}
				}
			}
		}
	}
}

// One evaluation with its gradient (an Adam iteration's host part, without
// the method and transforms) of the arm's NMSE on the 10 000 training rows
// at M4's 36 free parameters, with 1 and 2 workers.
func BenchmarkArmGradient10k(b *testing.B) {
	s := armRowsStudy(b, 10000)
	pts := armPoints(s, 1)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			tg := target.New(s, w)
			for b.Loop() {
				res, err := tg.Evaluate(context.Background(), pts, abi.WantGradient)
				if err != nil || res[0].Status != abi.OK {
					b.Fatal(err, res[0].Status)
				}
			}
		})
	}
}

// bigTape is the arm whose pullbacks say they hold 50 MiB each (a
// plugin's tape copies: TapeBytes), counting its forward passes, releases
// and VJP calls.
type bigTape struct {
	m                  *arm.Model
	fwd, rel, vjpCalls *atomic.Int64
}

type bigPullback struct {
	abi.Pullback
	rel *atomic.Int64
}

func (b bigPullback) TapeBytes() int { return 50 << 20 }
func (b bigPullback) Release()       { b.rel.Add(1); b.Pullback.Release() }

func (u bigTape) Spec() abi.Spec                        { return u.m.Spec() }
func (u bigTape) Eval(theta, x, y []float64) abi.Status { return u.m.Eval(theta, x, y) }
func (u bigTape) VJP(theta, x, v, y, g []float64) abi.Status {
	u.vjpCalls.Add(1)
	return u.m.VJP(theta, x, v, y, g)
}
func (u bigTape) RowsIndependent() bool { return true }
func (u bigTape) EvalPullback(theta, x, y []float64) (abi.Pullback, abi.Status) {
	u.fwd.Add(1)
	pb, st := u.m.EvalPullback(theta, x, y)
	if pb == nil {
		return nil, st
	}
	return bigPullback{pb, u.rel}, st
}

// A point whose pullbacks would hold more than FusedMaxTapeBytes (four
// blocks of 50 MiB) is evaluated on the unfused path instead, with the
// same results bit for bit, and every pullback it made is released
// (audit 5: a plugin's 64 MiB tape per block of 256 rows took the host to
// an out-of-memory crash).
func TestFusedTapeBound(t *testing.T) {
	s := armRowsStudy(t, 1000)
	m := arm.NewModel(arm.DefaultDamping)
	pts := armPoints(s, 3)
	ref := evalAll(t, s, unfused{m}, 2, pts, abi.WantGradient)
	for _, w := range []int{1, 2} {
		bt := bigTape{m, new(atomic.Int64), new(atomic.Int64), new(atomic.Int64)}
		sameResults(t, fmt.Sprintf("tape bound, %d workers", w), ref, evalAll(t, s, bt, w, pts, abi.WantGradient))
		if bt.fwd.Load() != bt.rel.Load() {
			t.Errorf("%d workers: %d forward passes, %d released", w, bt.fwd.Load(), bt.rel.Load())
		}
		if bt.vjpCalls.Load() == 0 {
			t.Errorf("%d workers: no VJP call: the points were not evaluated on the unfused path", w)
		}
	}
}

// LimitFused: under a budget whose quarter holds one point's largest
// tapes, the points on the fused path run one at a time, with the same
// results bit for bit (recheck of audit 5: 64 workers held 128 MiB of
// tapes each under a 1 GiB budget).
func TestLimitFusedSerialises(t *testing.T) {
	s := armRowsStudy(t, 1000)
	m := arm.NewModel(arm.DefaultDamping)
	pts := armPoints(s, 3)
	ref := evalAll(t, s, m, 3, pts, abi.WantGradient)
	c := &concurrency{m: m}
	s.Model = c
	tg := target.New(s, 3)
	tg.LimitFused(4 * target.FusedMaxTapeBytes)
	got, err := tg.Evaluate(context.Background(), pts, abi.WantGradient)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "fused, limited", ref, got)
	// One point at a time holds at most its four blocks' pullbacks (1000
	// rows in blocks of 256); three points at once would hold up to 12.
	if c.max.Load() > 4 {
		t.Errorf("%d pullbacks held at once, want at most one point's 4", c.max.Load())
	}
	if c.calls.Load() == 0 {
		t.Error("the fused path was not taken")
	}
}

// concurrency is the arm counting the forward passes (EvalPullback) held
// at once, until their pullbacks are released.
type concurrency struct {
	m                *arm.Model
	live, max, calls atomic.Int64
}

type liveRelease struct {
	abi.Pullback
	c *concurrency
}

func (l liveRelease) Release() { l.c.live.Add(-1); l.Pullback.Release() }

func (u *concurrency) RowsIndependent() bool                      { return true }
func (u *concurrency) Spec() abi.Spec                             { return u.m.Spec() }
func (u *concurrency) Eval(theta, x, y []float64) abi.Status      { return u.m.Eval(theta, x, y) }
func (u *concurrency) VJP(theta, x, v, y, g []float64) abi.Status { return u.m.VJP(theta, x, v, y, g) }
func (u *concurrency) EvalPullback(theta, x, y []float64) (abi.Pullback, abi.Status) {
	u.calls.Add(1)
	pb, st := u.m.EvalPullback(theta, x, y)
	if pb == nil {
		return nil, st
	}
	n := u.live.Add(1)
	for {
		old := u.max.Load()
		if n <= old || u.max.CompareAndSwap(old, n) {
			break
		}
	}
	return liveRelease{pb, u}, st
}

// batchRows is the arm with a batched Eval that counts its calls and the
// points in them, and RowsIndependent.
type batchRows struct {
	m             *arm.Model
	calls, points atomic.Int64
}

func (u *batchRows) Spec() abi.Spec { return u.m.Spec() }
func (u *batchRows) Eval(theta, x, y []float64) abi.Status {
	u.calls.Add(1)
	u.points.Add(1)
	return u.m.Eval(theta, x, y)
}
func (u *batchRows) EvalBatch(thetas [][]float64, x []float64, ys [][]float64, st []abi.Status) {
	u.calls.Add(1)
	u.points.Add(int64(len(thetas)))
	for j, th := range thetas {
		st[j] = u.m.Eval(th, x, ys[j])
	}
}
func (u *batchRows) RowsIndependent() bool { return true }

// A model with independent rows on a dataset of one block (≤ RowBlock
// rows) gets its points in batched calls, as any model: the host splits
// only larger datasets (audit 21: every call was one point, on 20 rows);
// the results are those of point-by-point calls, bit for bit.
func TestRowsIndependentSmallDatasetBatched(t *testing.T) {
	s := armRowsStudy(t, 20)
	three := armPoints(s, 3)
	var pts [][]float64
	for i := range 128 { // chunks of target.ChunkSize = 8 for 128 points
		pts = append(pts, three[i%3])
	}
	b := &batchRows{m: arm.NewModel(arm.DefaultDamping)}
	got := evalAll(t, s, b, 1, pts, abi.WantLogTarget)
	if b.calls.Load() != 16 || b.points.Load() != 128 {
		t.Errorf("128 points on 20 rows: %d calls of %d points in all, want 16 calls of 128", b.calls.Load(), b.points.Load())
	}
	sameResults(t, "batched vs whole", got, evalAll(t, s, whole{arm.NewModel(arm.DefaultDamping)}, 1, pts, abi.WantLogTarget))
}
