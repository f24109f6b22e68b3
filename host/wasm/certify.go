package wasm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"

	"github.com/kinfer/kinfer/abi"
)

// CertifyOptions configure Plugin.Certify.
type CertifyOptions struct {
	// Settings are the component's setting values in spec order.
	Settings []float64
	// X holds a model's conditions (K×c, row-major), e.g. a dataset's; nil
	// uses a grid: row r has the value r+1 in every column, K = 5.
	X []float64
	// Rows is K, the number of condition rows, for a model without
	// conditions (c = 0), whose X is empty and cannot tell it: a dataset's
	// row count. 0: 5.
	Rows int
	// Outputs is the number of output columns a likelihood sees (m); 0: 2.
	Outputs int
	// Points is the number of points evaluated (θ for a model, model
	// outputs for a likelihood); 0: 12. A method is driven for Points
	// batches at most.
	Points int
	// Seed makes the points (the draws are kinfer's, not the study's).
	Seed uint64
	// OutputNames and OutputRows are the study's model outputs and
	// condition rows, for a propagation method (ABI.md §6.5); nil: one
	// output "y" at one row.
	OutputNames []string
	OutputRows  int
	// Params are a method's parameters, the study's (its d and bounds);
	// nil: three on [-3, 3].
	Params []abi.Param
}

// certifyBlock is the block of rows the host evaluates a rows_independent
// model by (host/target.RowBlock), which certification also compares.
const certifyBlock = 256

// Certificate is what Certify checked.
type Certificate struct {
	Plugin string
	Checks []string // one line per comparison made
}

// NondeterminismError is a plugin whose results differ between two fresh
// instances, call orders or batch sizes: its results would depend on the
// number of workers and on scheduling (ABI.md §1, §8).
type NondeterminismError struct {
	Plugin string
	Export string
	Point  int // the point's index in the certification, −1 for a method
	Detail string
}

func (e *NondeterminismError) Error() string {
	where := ""
	if e.Point >= 0 {
		where = fmt.Sprintf(" at point %d", e.Point)
	}
	return fmt.Sprintf("plugin %s is not deterministic: %s%s: %s (ABI.md §1: results must depend only on the inputs and settings)", e.Plugin, e.Export, where, e.Detail)
}

// MismatchError is a plugin whose two exports for the same value disagree
// on a point although each is deterministic: kinfer_likelihood_eval and
// kinfer_likelihood_eval_batch MUST give the same logL (ABI.md §6.2), so
// the run's results would depend on how its points are chunked.
type MismatchError struct {
	Plugin   string
	Exports  [2]string // the reference export, then the one that disagrees
	Point    int
	Detail   string
	Contract string // the ABI.md section that requires agreement
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("plugin %s: %s and %s give different results at point %d: %s (%s: they MUST agree for every point)",
		e.Plugin, e.Exports[0], e.Exports[1], e.Point, e.Detail, e.Contract)
}

// Certify evaluates the same points on two fresh instances of the plugin,
// in different orders and batch sizes (and, for a method, drives two
// instances with the same seed through the same batches), and returns a
// *NondeterminismError naming the export and the point where results
// differ bit for bit. Other errors are faults or refusals of the plugin.
func (p *Plugin) Certify(ctx context.Context, o CertifyOptions) (*Certificate, error) {
	if o.Points <= 0 {
		o.Points = 12
	}
	c := &Certificate{Plugin: p.Manifest.Name}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6365727469667921)) // "certify!"
	var err error
	switch p.Spec.Kind {
	case abi.KindModel:
		err = p.certifyModel(ctx, o, rng, c)
	case abi.KindLikelihood:
		err = p.certifyLikelihood(ctx, o, rng, c)
	case abi.KindMethod:
		err = p.certifyMethod(ctx, o, rng, c)
	}
	return c, err
}

// rowsWord names what the rows of x are: conditions, or, for a model
// without conditions, rows (audit 21: "5 conditions" of a model with none).
func rowsWord(nc int) string {
	if nc == 0 {
		return "rows (no conditions)"
	}
	return "conditions"
}

func (p *Plugin) differ(e export, point int, format string, args ...any) error {
	return &NondeterminismError{Plugin: p.Manifest.Name, Export: e.String(), Point: point, Detail: fmt.Sprintf(format, args...)}
}

// sameBits reports the first index where a and b differ bit for bit, or −1.
func sameBits(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

func closeAll(cs ...any) {
	for _, c := range cs {
		if cl, ok := c.(io.Closer); ok {
			cl.Close()
		}
	}
}

func (p *Plugin) certifyModel(ctx context.Context, o CertifyOptions, rng *rand.Rand, c *Certificate) (err error) {
	d, nc, m := len(p.Spec.Params), len(p.Spec.Conditions), len(p.Spec.Outputs)
	var thetas [][]float64
	// A failure names its point by θ too, which an author can evaluate
	// again (audit 10: "point 0" alone, an index into these points).
	defer func() {
		var dm *DerivativeMismatchError
		var nd *NondeterminismError
		var mm *MismatchError
		switch {
		case errors.As(err, &dm) && dm.Point >= 0 && dm.Point < len(thetas):
			dm.Detail += p.thetaNote(thetas[dm.Point])
		case errors.As(err, &nd) && nd.Point >= 0 && nd.Point < len(thetas):
			nd.Detail += p.thetaNote(thetas[nd.Point])
		case errors.As(err, &mm) && mm.Point >= 0 && mm.Point < len(thetas):
			mm.Detail += p.thetaNote(thetas[mm.Point])
		}
	}()
	x := o.X
	if x == nil {
		const K = 5
		x = make([]float64, K*nc)
		for r := 0; r < K; r++ {
			for j := 0; j < nc; j++ {
				x[r*nc+j] = float64(r + 1)
			}
		}
	}
	// A model without conditions is still called with K rows (ABI.md
	// §6.1), and may use the row index (audit 5: one row made
	// rows_independent uncheckable).
	K := o.Rows
	if nc > 0 {
		K = len(x) / nc
	} else if K <= 0 {
		K = 5
	}
	n := o.Points
	thetas = make([][]float64, n)
	for i := range thetas {
		thetas[i] = make([]float64, d)
		for j, q := range p.Spec.Params {
			thetas[i][j] = inBox(q, rng.Float64())
		}
	}
	a, err := p.Model(ctx, o.Settings, 1)
	if err != nil {
		return err
	}
	defer closeAll(a)
	b, err := p.Model(ctx, o.Settings, 1)
	if err != nil {
		return err
	}
	defer closeAll(b)
	eval := func(mdl abi.Model, order []int, size int) ([][]float64, []abi.Status, error) {
		ys := make([][]float64, n)
		st := make([]abi.Status, n)
		for lo := 0; lo < len(order); lo += size {
			idx := order[lo:min(lo+size, len(order))]
			th, out := make([][]float64, len(idx)), make([][]float64, len(idx))
			s := make([]abi.Status, len(idx))
			for k, i := range idx {
				th[k], ys[i] = thetas[i], make([]float64, K*m)
				out[k] = ys[i]
			}
			mdl.(abi.BatchModel).EvalBatch(th, x, out, s)
			for k, i := range idx {
				if s[k] == abi.Timeout || s[k] == abi.Trap {
					return nil, nil, mdl.(abi.Faulter).Fault()
				}
				st[i] = s[k]
			}
		}
		return ys, st, nil
	}
	inOrder := make([]int, n)
	for i := range inOrder {
		inOrder[i] = i
	}
	reversed := slices.Clone(inOrder)
	slices.Reverse(reversed)
	rotated := append(slices.Clone(inOrder[n/2:]), inOrder[:n/2]...)
	y0, s0, err := eval(a, inOrder, n)
	if err != nil {
		return err
	}
	if !slices.Contains(s0, abi.OK) {
		// Identical failures everywhere certify nothing (audit 4).
		return &NothingComparedError{p.Manifest.Name, exModelEval.String(), n, statusCounts(s0), failureNote(a, "EvaluationFailures"), "give conditions where the model succeeds (--data), or fix it"}
	}
	for _, run := range []struct {
		what  string
		order []int
		size  int
	}{
		{"a second instance, one point per call, in reverse order", reversed, 1},
		{"the second instance again, batches of 3, rotated order", rotated, 3},
	} {
		y1, s1, err := eval(b, run.order, run.size)
		if err != nil {
			return err
		}
		for i := range y0 {
			if s0[i] != s1[i] {
				return p.differ(exModelEval, i, "status %v in one batch of %d on a fresh instance, %v on %s", s0[i], n, s1[i], run.what)
			}
			if s0[i] == abi.OK {
				if k := sameBits(y0[i], y1[i]); k >= 0 {
					return p.differ(exModelEval, i, "y[%d] = %v in one batch of %d on a fresh instance, %v on %s", k, y0[i][k], n, y1[i][k], run.what)
				}
			}
		}
		c.Checks = append(c.Checks, fmt.Sprintf("%s: %d points, %d %s: identical to one batch on a fresh instance, on %s", exModelEval, n, K, rowsWord(nc), run.what))
	}
	// A batch that trapped (an output or status left unwritten) while its
	// points then succeeded alone gave the same results through the host's
	// retry, so the comparisons above pass: refused here (audit 21).
	if msg := p.evals.batchTrap(); msg != "" {
		return fmt.Errorf("plugin %s: %s faults in a batch whose points each succeed alone (%s): a batch must give each point what a call of that point alone gives (ABI.md §2), or, if the batch runs out of memory, needs a larger memory_mib; a run retries each such batch point by point, on a new instance", p.Manifest.Name, exModelEval, msg)
	}
	// Gradients: each point on both instances, in opposite orders.
	if _, ok := a.(abi.Jacobian); ok {
		jac := func(mdl abi.Model, i int) ([]float64, abi.Status) {
			y, j := make([]float64, K*m), make([]float64, K*m*d)
			st := mdl.(abi.Jacobian).Jacobian(thetas[i], x, y, j)
			return append(y, j...), st
		}
		if err := p.certifyPairs(exModelJacobian, a, b, n, jac); err != nil {
			return err
		}
		c.Checks = append(c.Checks, fmt.Sprintf("%s: %d points on two instances in opposite orders: identical", exModelJacobian, n))
	}
	if _, ok := a.(abi.VJP); ok {
		v := make([]float64, K*m)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		vjp := func(mdl abi.Model, i int) ([]float64, abi.Status) {
			y, g := make([]float64, K*m), make([]float64, d)
			st := mdl.(abi.VJP).VJP(thetas[i], x, v, y, g)
			return append(y, g...), st
		}
		if err := p.certifyPairs(p.vjpExport(), a, b, n, vjp); err != nil {
			return err
		}
		c.Checks = append(c.Checks, fmt.Sprintf("%s: %d points on two instances in opposite orders: identical", p.vjpExport(), n))
	}
	if p.Spec.Has(abi.CapRowsIndependent) && K > 1 {
		// ABI.md §4: any contiguous block of rows gives exactly those rows'
		// outputs; here, on the second instance, each row alone, the
		// blocks the host evaluates (certifyBlock rows) and blocks of a
		// drawn size (recheck of audit 5: a model lying only for blocks of
		// 2–39 rows, or of 256, was certified).
		checked := 0
		sizes := []int{1, certifyBlock, 2 + rng.IntN(38)}
		jm, hasJac := b.(abi.Jacobian)
		for i, th := range thetas {
			if s0[i] != abi.OK || checked == 4 {
				continue
			}
			checked++
			// The Jacobian too: the host assembles a least-squares
			// Jacobian from blocks of rows (audit 18: one whose rows
			// depended on the block's first condition was certified, and
			// Levenberg–Marquardt stopped at wrong points).
			var jfull []float64
			if hasJac {
				jfull = make([]float64, K*m*d)
				st := a.(abi.Jacobian).Jacobian(th, x, make([]float64, K*m), jfull)
				if st == abi.Timeout || st == abi.Trap {
					return a.(abi.Faulter).Fault()
				}
				if st != abi.OK {
					jfull = nil
				}
			}
			for _, size := range sizes {
				if size >= K && size > 1 {
					continue // the whole call, compared above
				}
				yr := make([]float64, size*m)
				for lo := 0; lo < K; lo += size {
					hi := min(lo+size, K)
					st := b.Eval(th, x[lo*nc:hi*nc], yr[:(hi-lo)*m])
					where, verb := fmt.Sprintf("rows %d–%d alone", lo, hi-1), " give"
					if hi-lo == 1 {
						where, verb = fmt.Sprintf("row %d alone", lo), " gives"
					}
					what := where + verb
					if st == abi.Timeout || st == abi.Trap {
						return fmt.Errorf("%w (rows_independent check: %s)", b.(abi.Faulter).Fault(), where)
					}
					if st != abi.OK {
						return &DerivativeMismatchError{p.Manifest.Name, exModelEval.String() + " (rows_independent)", i,
							fmt.Sprintf("%s status %v, but all %d rows together give ok", what, st, K)}
					}
					if k := sameBits(yr[:(hi-lo)*m], y0[i][lo*m:hi*m]); k >= 0 {
						return &DerivativeMismatchError{p.Manifest.Name, exModelEval.String() + " (rows_independent)", i,
							fmt.Sprintf("%s y[%d] = %v, but all %d rows together give %v: the rows are not independent", what, lo*m+k, yr[k], K, y0[i][lo*m+k])}
					}
					if jfull != nil {
						jb := make([]float64, (hi-lo)*m*d)
						st := jm.Jacobian(th, x[lo*nc:hi*nc], make([]float64, (hi-lo)*m), jb)
						if st == abi.Timeout || st == abi.Trap {
							// Located: the rows of the call (audit 20).
							return fmt.Errorf("%w (rows_independent check: %s)", b.(abi.Faulter).Fault(), where)
						}
						if st != abi.OK {
							return &DerivativeMismatchError{p.Manifest.Name, exModelJacobian.String() + " (rows_independent)", i,
								fmt.Sprintf("%s status %v, but all %d rows together give ok", what, st, K)}
						}
						if k := sameBits(jb, jfull[lo*m*d:hi*m*d]); k >= 0 {
							return &DerivativeMismatchError{p.Manifest.Name, exModelJacobian.String() + " (rows_independent)", i,
								fmt.Sprintf("%s Jacobian entry %d (row %d, parameter %s) = %v, but all %d rows together give %v: the Jacobian's rows are not independent", what, lo*m*d+k, lo+k/(m*d), p.Spec.Params[k%d].Name, jb[k], K, jfull[lo*m*d+k])}
						}
					}
				}
			}
		}
		jtoo := ""
		if hasJac {
			jtoo = " (outputs and Jacobian)"
		}
		c.Checks = append(c.Checks, fmt.Sprintf("rows_independent: for %d points, every row alone, and blocks of %d and %d rows, give the bits%s of all %d rows together", checked, certifyBlock, sizes[2], jtoo, K))
	}
	if _, j := a.(abi.Jacobian); j || isVJP(a) {
		msg, err := p.certifyDerivatives(a, thetas, x, K, y0, s0, rng)
		if err != nil {
			return err
		}
		c.Checks = append(c.Checks, msg)
	}
	if _, ok := a.(abi.Pullbacker); ok {
		msg, err := p.certifyPullback(a, b, thetas, x, K, y0, s0, rng)
		if err != nil {
			return err
		}
		c.Checks = append(c.Checks, msg)
	}
	return nil
}

// PullbackMismatchError is a model whose pullback (capability pullback)
// disagrees with its own kinfer_model_eval or kinfer_model_vjp: a plugin
// that lies about its gradient or value (ABI.md §6.1).
type PullbackMismatchError struct {
	Plugin string
	Point  int
	Detail string
}

func (e *PullbackMismatchError) Error() string {
	return fmt.Sprintf("plugin %s: %s at point %d: %s (ABI.md §6.1: the forward pass gives kinfer_model_eval's y, the pullback kinfer_model_vjp's g)",
		e.Plugin, exModelPullback, e.Point, e.Detail)
}

// pullbackTol is the relative tolerance of certifyPullback's comparison of
// the pullback's g with the VJP's: the ABI asks for the same g and
// recommends the same bits; rounding differences of a different but
// equivalent order of summation stay far below it.
const pullbackTol = 1e-9

// certifyPullback checks, at every point: the forward pass's y and status
// against kinfer_model_eval's (bit for bit), its pullback run twice and on
// a second instance's tape (bit for bit), and, when the plugin exports its
// own kinfer_model_vjp, g against the VJP's (within pullbackTol).
func (p *Plugin) certifyPullback(a, b abi.Model, thetas [][]float64, x []float64, K int, y0 [][]float64, s0 []abi.Status, rng *rand.Rand) (string, error) {
	d, m := len(p.Spec.Params), len(p.Spec.Outputs)
	v := make([]float64, K*m)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	lie := func(i int, format string, args ...any) error {
		return &PullbackMismatchError{Plugin: p.Manifest.Name, Point: i, Detail: fmt.Sprintf(format, args...)}
	}
	hasVJP := p.exported[exModelVJP] && p.Spec.Has(abi.CapVJP)
	exact, compared := 0, 0
	for i, th := range thetas {
		y := make([]float64, K*m)
		pa, st := a.(abi.Pullbacker).EvalPullback(th, x, y)
		if st == abi.Timeout || st == abi.Trap {
			return "", a.(abi.Faulter).Fault()
		}
		if st != s0[i] {
			return "", lie(i, "%s gives status %v, %s %v", exModelForward, st, exModelEval, s0[i])
		}
		if st != abi.OK {
			continue
		}
		if k := sameBits(y, y0[i]); k >= 0 {
			pa.Release()
			return "", lie(i, "%s gives y[%d] = %v, %s %v", exModelForward, k, y[k], exModelEval, y0[i][k])
		}
		g1, g2, g3, g4 := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
		st1, st2 := pa.Pull(v, g1), pa.Pull(v, g2)
		// The same tape again after a forward pass of another point on
		// the same instance: a pullback that reads the instance's own
		// copy of the last forward's tape, not the one it is given (ABI.md
		// §6.1 MUST NOT), passed the checks above and gave workers-
		// dependent gradients in runs (audit 16).
		st4 := abi.OK
		if n := len(thetas); n > 1 {
			po, _ := a.(abi.Pullbacker).EvalPullback(thetas[(i+1)%n], x, make([]float64, K*m))
			if po != nil {
				po.Release()
			}
			st4 = pa.Pull(v, g4)
		} else {
			copy(g4, g1)
		}
		pa.Release()
		pb, stb := b.(abi.Pullbacker).EvalPullback(th, x, make([]float64, K*m))
		st3 := stb
		if stb == abi.OK {
			st3 = pb.Pull(v, g3)
			pb.Release()
		}
		for _, s := range []abi.Status{st1, st2, st3, st4} {
			if s == abi.Timeout || s == abi.Trap {
				return "", firstFault(a, b)
			}
		}
		if st4 != st1 {
			return "", p.differ(exModelPullback, i, "status %v from its tape, %v from the same tape after a forward pass of another point on that instance: the pullback must read only the tape it is given (ABI.md §6.1)", st1, st4)
		}
		if st1 == abi.OK {
			if k := sameBits(g1, g4); k >= 0 {
				return "", p.differ(exModelPullback, i, "g[%d] = %v from its tape, %v from the same tape after a forward pass of another point on that instance: the pullback must read only the tape it is given, not state the forward pass left in the instance (ABI.md §6.1)", k, g1[k], g4[k])
			}
		}
		if st1 != st2 || st1 != st3 {
			return "", p.differ(exModelPullback, i, "statuses %v, %v (the same tape twice) and %v (a second instance)", st1, st2, st3)
		}
		if st1 != abi.OK {
			continue
		}
		if k := sameBits(g1, g2); k >= 0 {
			return "", p.differ(exModelPullback, i, "g[%d] = %v, then %v from the same tape", k, g1[k], g2[k])
		}
		if k := sameBits(g1, g3); k >= 0 {
			return "", p.differ(exModelPullback, i, "g[%d] = %v on one instance, %v on a second", k, g1[k], g3[k])
		}
		if !hasVJP {
			continue
		}
		yv, gv := make([]float64, K*m), make([]float64, d)
		sv := a.(abi.VJP).VJP(th, x, v, yv, gv)
		if sv == abi.Timeout || sv == abi.Trap {
			return "", a.(abi.Faulter).Fault()
		}
		if sv != abi.OK {
			return "", lie(i, "status %v, %s %v", st1, exModelVJP, sv)
		}
		compared++
		if sameBits(g1, gv) < 0 {
			exact++
			continue
		}
		scale := 0.0
		for _, z := range gv {
			scale = math.Max(scale, math.Abs(z))
		}
		for k := range g1 {
			if !(math.Abs(g1[k]-gv[k]) <= pullbackTol*scale) {
				return "", lie(i, "g[%d] = %v, %s gives %v", k, g1[k], exModelVJP, gv[k])
			}
		}
	}
	msg := fmt.Sprintf("%s then %s: %d points: y identical to %s; g identical from the same tape twice, after another point's forward pass and on a second instance", exModelForward, exModelPullback, len(thetas), exModelEval)
	if hasVJP {
		msg += fmt.Sprintf("; g equal to %s's at the %d points with status ok (bit for bit at %d of %d)", exModelVJP, compared, exact, compared)
	}
	return msg, nil
}

// NothingComparedError: an export failed at every point certification
// tried, so nothing could be compared (identical failures are not
// determinism).
type NothingComparedError struct {
	Plugin, Export string
	Points         int
	Statuses       map[abi.Status]int
	Note           string // the plugin's last error message, if any
	Advice         string
}

func (e *NothingComparedError) Error() string {
	var st []string
	for s, k := range e.Statuses {
		st = append(st, fmt.Sprintf("%v %d", s, k))
	}
	slices.Sort(st)
	msg := fmt.Sprintf("plugin %s: %s failed at all %d points (%s): nothing could be certified; %s", e.Plugin, e.Export, e.Points, strings.Join(st, ", "), e.Advice)
	if e.Note != "" {
		msg += " (" + e.Note + ")"
	}
	return msg
}

// statusCounts counts statuses by value.
func statusCounts(s []abi.Status) map[abi.Status]int {
	c := map[abi.Status]int{}
	for _, v := range s {
		c[v]++
	}
	return c
}

func sumCounts(c map[abi.Status]int) int {
	n := 0
	for _, k := range c {
		n += k
	}
	return n
}

// failureNote is the model's tally of failures (method EvaluationFailures
// or DerivativeFailures): which export, how often, kinfer_last_error.
func failureNote(m abi.Model, method string) string {
	switch method {
	case "EvaluationFailures":
		if f, ok := m.(interface{ EvaluationFailures() string }); ok {
			return f.EvaluationFailures()
		}
	case "DerivativeFailures":
		if f, ok := m.(interface{ DerivativeFailures() string }); ok {
			return f.DerivativeFailures()
		}
	}
	return ""
}

// firstFault is the fault of whichever model faulted.
func firstFault(ms ...abi.Model) error {
	for _, m := range ms {
		if err := m.(abi.Faulter).Fault(); err != nil {
			return err
		}
	}
	return fmt.Errorf("a plugin call faulted")
}

// certifyPairs evaluates f at points 0..n−1 on a and n−1..0 on b and
// compares the results.
// vjpExport is the export behind the model's VJP: kinfer_model_vjp, or
// for a model listing only pullback the host's VJP (forward, then
// pullback), whose g is kinfer_model_pullback's (audit 6: certify said
// "kinfer_model_vjp … identical" for a model without that export).
func (p *Plugin) vjpExport() export {
	if p.exported[exModelVJP] && p.Spec.Has(abi.CapVJP) {
		return exModelVJP
	}
	return exModelPullback
}

func (p *Plugin) certifyPairs(e export, a, b any, n int, f func(mdl abi.Model, i int) ([]float64, abi.Status)) error {
	ra, sa := make([][]float64, n), make([]abi.Status, n)
	for i := 0; i < n; i++ {
		ra[i], sa[i] = f(a.(abi.Model), i)
	}
	for i := n - 1; i >= 0; i-- {
		rb, sb := f(b.(abi.Model), i)
		for _, st := range []abi.Status{sa[i], sb} {
			if st == abi.Timeout || st == abi.Trap {
				if err := a.(abi.Faulter).Fault(); err != nil {
					return err
				}
				return b.(abi.Faulter).Fault()
			}
		}
		if sa[i] != sb {
			return p.differ(e, i, "status %v on one instance, %v on another", sa[i], sb)
		}
		if sb == abi.OK {
			if k := sameBits(ra[i], rb); k >= 0 {
				return p.differ(e, i, "value %d is %v on one instance, %v on another", k, ra[i][k], rb[k])
			}
		}
	}
	return nil
}

func (p *Plugin) certifyLikelihood(ctx context.Context, o CertifyOptions, rng *rand.Rand, c *Certificate) error {
	m := o.Outputs
	if m <= 0 {
		m = 2
	}
	const K = 8
	obs, sigma := make([]float64, K*m), make([]float64, K*m)
	for i := range obs {
		obs[i], sigma[i] = rng.NormFloat64(), 0.5+rng.Float64()
	}
	n := o.Points
	ys := make([][]float64, n)
	for i := range ys {
		ys[i] = make([]float64, K*m)
		for j := range ys[i] {
			ys[i][j] = obs[j] + sigma[j]*rng.NormFloat64()
		}
	}
	a, err := p.Likelihood(ctx, o.Settings, m, 1)
	if err != nil {
		return err
	}
	defer closeAll(a)
	b, err := p.Likelihood(ctx, o.Settings, m, 1)
	if err != nil {
		return err
	}
	defer closeAll(b)
	fault := func(l abi.Likelihood) error { return l.(abi.Faulter).Fault() }
	// faulted is the instances' fault when either status is one (a timeout
	// or a trap discards the instance that had it), else nil.
	faulted := func(s1, s2 abi.Status) error {
		for _, st := range []abi.Status{s1, s2} {
			if st == abi.Timeout || st == abi.Trap {
				if err := fault(a); err != nil {
					return err
				}
				return fault(b)
			}
		}
		return nil
	}
	la, sa := make([]float64, n), make([]abi.Status, n)
	for i := 0; i < n; i++ {
		la[i], sa[i] = a.LogLikelihood(m, ys[i], obs, sigma)
	}
	// Refusals compared with refusals certify nothing (audit 20: a
	// log-normal likelihood refusing certify's observations ≤ 0 at every
	// point was "certified").
	if !slices.Contains(sa, abi.OK) {
		if err := faulted(sa[0], sa[0]); err != nil {
			return err
		}
		note := ""
		if f, ok := a.(interface{ EvaluationFailures() string }); ok {
			note = f.EvaluationFailures()
		}
		return &NothingComparedError{p.Manifest.Name, exLikEval.String(), n, statusCounts(sa), note,
			"certify's observations are standard normal draws (some ≤ 0), σ in [0.5, 1.5] and y = obs + σ·a normal draw (ABI.md §8): a likelihood whose domain excludes them cannot be certified by kinfer inspect; certify it in its study (certify = true in its [[likelihood]] table)"}
	}
	lb, sb := make([]float64, n), make([]abi.Status, n)
	for i := n - 1; i >= 0; i-- {
		lb[i], sb[i] = b.LogLikelihood(m, ys[i], obs, sigma)
	}
	compare := func(e export, what string, l2 []float64, s2 []abi.Status) error {
		for i := range la {
			if err := faulted(sa[i], s2[i]); err != nil {
				return err
			}
			if sa[i] != s2[i] {
				return p.differ(e, i, "status %v in order on a fresh instance, %v %s", sa[i], s2[i], what)
			}
			if sa[i] == abi.OK && math.Float64bits(la[i]) != math.Float64bits(l2[i]) {
				return p.differ(e, i, "logL = %v in order on a fresh instance, %v %s", la[i], l2[i], what)
			}
		}
		c.Checks = append(c.Checks, fmt.Sprintf("%s: %d points, K=%d, m=%d: identical %s", e, n, K, m, what))
		return nil
	}
	if err := compare(exLikEval, "on a second instance in reverse order", lb, sb); err != nil {
		return err
	}
	if msg, err := p.certifyLikelihoodDerivatives(a, m, ys, obs, sigma, la, sa); err != nil {
		return err
	} else if msg != "" {
		c.Checks = append(c.Checks, msg)
	}
	// The batch export on complete data first, then missing observations
	// in both exports: a batch that disagrees everywhere was reported only
	// as a missing observation's mismatch (audit 21).
	if p.Spec.Has(abi.CapBatch) {
		// kinfer_likelihood_eval_batch in batches of 5 on the second
		// instance and of 3 on the first: where the two agree with each
		// other but not with kinfer_likelihood_eval (deterministic, checked
		// above), the exports disagree (ABI.md §6.2), which is not a
		// matter of state or order.
		batches := func(l abi.Likelihood, size int) ([]float64, []abi.Status) {
			out, st := make([]float64, n), make([]abi.Status, n)
			bl := l.(abi.BatchLikelihood)
			for lo := 0; lo < n; lo += size {
				hi := min(lo+size, n)
				bl.LogLikelihoodBatch(m, ys[lo:hi], obs, sigma, out[lo:hi], st[lo:hi])
			}
			return out, st
		}
		lb, sb = batches(b, 5)
		l3, s3 := batches(a, 3)
		for i := range la {
			if err := faulted(sb[i], s3[i]); err != nil {
				return err
			}
			// The batch export disagrees with itself between batch sizes:
			// refused whichever of the two kinfer_likelihood_eval agrees
			// with (one batch size alone wrong was once certified).
			if sb[i] != s3[i] {
				return p.differ(exLikEvalBatch, i, "status %v in batches of 5 on the second instance, %v in batches of 3 on the first", sb[i], s3[i])
			}
			if sb[i] == abi.OK && math.Float64bits(lb[i]) != math.Float64bits(l3[i]) {
				return p.differ(exLikEvalBatch, i, "logL = %v in batches of 5 on the second instance, %v in batches of 3 on the first", lb[i], l3[i])
			}
			mismatch := func(format string, args ...any) error {
				return &MismatchError{Plugin: p.Manifest.Name, Exports: [2]string{exLikEval.String(), exLikEvalBatch.String()}, Point: i,
					Detail: fmt.Sprintf(format, args...), Contract: "ABI.md §6.2"}
			}
			if sa[i] != sb[i] {
				return mismatch("status %v from %s, %v from %s (the same in batches of 5 and of 3)", sa[i], exLikEval, sb[i], exLikEvalBatch)
			}
			if sa[i] == abi.OK && math.Float64bits(la[i]) != math.Float64bits(lb[i]) {
				return mismatch("logL = %v from %s, %v from %s (the same in batches of 5 and of 3)", la[i], exLikEval, lb[i], exLikEvalBatch)
			}
		}
		if err := compare(exLikEvalBatch, "in batches of 5 on the second instance", lb, sb); err != nil {
			return err
		}
		if err := compare(exLikEvalBatch, "in batches of 3 on the first instance", l3, s3); err != nil {
			return err
		}
	}
	return p.certifyMissing(a, m, ys[0], obs, sigma, c)
}

// certifyResume checks a method with the checkpoint capability: its
// state saved between an ask and its tell (as the host saves it when a
// run stops during an evaluation) and loaded into a fresh instance gives
// the pending batch again on the next ask (ABI.md §6.3), so that a resumed
// run is the run that was stopped. It returns the resumed instance, which
// certifyMethod then drives beside the others: its later batches and its
// samples must be theirs (audit 15: a load that dropped the samples or
// the random-number state was certified). nil without the capability.
func (p *Plugin) certifyResume(ctx context.Context, o CertifyOptions, prob abi.Problem, m abi.Method, pending abi.Batch, c *Certificate) (abi.Method, error) {
	cp, ok := m.(abi.Checkpointer)
	if !ok {
		return nil, nil
	}
	st, err := cp.SaveState()
	if err != nil {
		return nil, err
	}
	fresh, err := p.Method(ctx, o.Settings)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			closeAll(fresh)
		}
	}()
	if err := fresh.Init(prob); err != nil {
		return nil, err
	}
	if err := fresh.(abi.Checkpointer).LoadState(st); err != nil {
		return nil, err
	}
	b, err := fresh.Ask()
	if err != nil {
		return nil, err
	}
	if b.Len() != pending.Len() || b.Want != pending.Want || len(b.Points) != len(pending.Points) {
		return nil, p.broken(exMethodLoad, "after save and load the next ask has %d points (want %v), the pending batch %d (want %v): load must restore the batch asked before the save", b.Len(), b.Want, pending.Len(), pending.Want)
	}
	for i := range b.Points {
		if k := sameBits(b.Points[i], pending.Points[i]); k >= 0 {
			return nil, p.broken(exMethodLoad, "after save and load, point %d of the next ask differs at coordinate %d (%v, the pending batch's %v): load must restore the batch asked before the save", i, k, b.Points[i][k], pending.Points[i][k])
		}
	}
	c.Checks = append(c.Checks, fmt.Sprintf("%s then %s between an ask and its tell: the next ask on a fresh instance is the pending batch", exMethodSave, exMethodLoad))
	keep = true
	return fresh, nil
}

// ResumeError is a method whose state, saved and loaded into a fresh
// instance, does not continue as the instance it was saved from: the
// pending batch, later batches or the samples differ (ABI.md §6.3). The
// plugin is deterministic; its save or load leaves something out.
type ResumeError struct {
	Plugin string
	Export string
	Detail string
}

func (e *ResumeError) Error() string {
	return fmt.Sprintf("plugin %s: %s does not restore the method: %s (ABI.md §6.3: the state must hold everything the method's future depends on)", e.Plugin, e.Export, e.Detail)
}

// broken is a ResumeError of export e.
func (p *Plugin) broken(e export, format string, args ...any) error {
	return &ResumeError{Plugin: p.Manifest.Name, Export: e.String(), Detail: fmt.Sprintf(format, args...)}
}

// certifyMethod drives two instances with the same seed through the same
// batches (prior draws from one stream, a standard normal log target) and
// compares every batch they ask for, then their samples.
func (p *Plugin) certifyMethod(ctx context.Context, o CertifyOptions, rng *rand.Rand, c *Certificate) error {
	params := o.Params
	if len(params) == 0 {
		params = make([]abi.Param, 3)
		for i := range params {
			params[i] = abi.Param{Name: fmt.Sprintf("x%d", i), Lower: -3, Upper: 3}
		}
	}
	d := len(params)
	// The target is a standard normal in z = (x − c)/s, c and s the
	// centre and a sixth of the width of a finite box (0 and 1 otherwise),
	// with a uniform prior over a finite box: log target −½‖z‖².
	ctr, sc := make([]float64, d), make([]float64, d)
	logPrior := 0.0
	start := make([]float64, d)
	for j, q := range params {
		ctr[j], sc[j] = 0, 1
		switch w := q.Upper - q.Lower; {
		case !math.IsInf(w, 0) && w > 0:
			ctr[j], sc[j] = q.Lower+w/2, w/6
			logPrior -= math.Log(w)
		case !math.IsInf(q.Lower, 0):
			ctr[j] = q.Lower + 3 // half-infinite (a log transform): the draws stay inside
		case !math.IsInf(q.Upper, 0):
			ctr[j] = q.Upper - 3
		}
		start[j] = ctr[j] + []float64{0.5, -1, 2}[j%3]*sc[j]
	}
	// A least-squares method (ABI.md §6.4) gets the residuals r = z of
	// the same target and their Jacobian diag(1/s). A propagation method
	// (ABI.md §6.5) gets the study's outputs and rows (CertifyOptions),
	// output j of a point being −½‖z‖² + j.
	prob := abi.Problem{Params: params, Seed: o.Seed, Residuals: d, Starts: [][]float64{start},
		OutputNames: []string{"y"}, OutputRows: 1, Likelihoods: 1}
	if len(o.OutputNames) > 0 && o.OutputRows > 0 {
		prob.OutputNames, prob.OutputRows = o.OutputNames, o.OutputRows
	}
	nOut := len(prob.OutputNames) * prob.OutputRows
	var ms [2]abi.Method
	for k := range ms {
		m, err := p.Method(ctx, o.Settings)
		if err != nil {
			return err
		}
		defer closeAll(m)
		if err := m.Init(prob); err != nil {
			return err
		}
		ms[k] = m
	}
	draw := rand.New(rand.NewPCG(o.Seed, 1))
	var resumed abi.Method // loaded from ms[0]'s state at batch 1 (certifyResume)
	defer func() {
		if resumed != nil {
			closeAll(resumed)
		}
	}()
	batches := 0
	for ; batches < o.Points && !ms[0].Done(); batches++ {
		if ms[1].Done() {
			return p.differ(exMethodDone, -1, "one instance is done after %d batches, the other is not", batches)
		}
		if resumed != nil && resumed.Done() {
			return p.broken(exMethodLoad, "the instance loaded at batch 1 is done after %d batches, the one it was saved from is not", batches)
		}
		var asks [2]abi.Batch
		for k, m := range ms {
			b, err := m.Ask()
			if err != nil {
				return err
			}
			asks[k] = b
		}
		if asks[0].Len() != asks[1].Len() || asks[0].Want != asks[1].Want || len(asks[0].Points) != len(asks[1].Points) {
			return p.differ(exMethodAsk, -1, "batch %d: %d points (want %v) on one instance, %d (want %v) on the other", batches, asks[0].Len(), asks[0].Want, asks[1].Len(), asks[1].Want)
		}
		for i := range asks[0].Points {
			if k := sameBits(asks[0].Points[i], asks[1].Points[i]); k >= 0 {
				return p.differ(exMethodAsk, -1, "batch %d, point %d, coordinate %d: %v on one instance, %v on the other", batches, i, k, asks[0].Points[i][k], asks[1].Points[i][k])
			}
		}
		if resumed != nil {
			b, err := resumed.Ask()
			if err != nil {
				return err
			}
			if b.Len() != asks[0].Len() || b.Want != asks[0].Want || len(b.Points) != len(asks[0].Points) {
				return p.broken(exMethodLoad, "batch %d: %d points (want %v) on the instance loaded at batch 1, %d (want %v) on the one it was saved from", batches, b.Len(), b.Want, asks[0].Len(), asks[0].Want)
			}
			for i := range b.Points {
				if k := sameBits(b.Points[i], asks[0].Points[i]); k >= 0 {
					return p.broken(exMethodLoad, "batch %d, point %d, coordinate %d: %v on the instance loaded at batch 1, %v on the one it was saved from (its random-number state?)", batches, i, k, b.Points[i][k], asks[0].Points[i][k])
				}
			}
		}
		if batches == 1 {
			r, err := p.certifyResume(ctx, o, prob, ms[0], asks[0], c)
			if err != nil {
				return err
			}
			resumed = r
		}
		pts := asks[0].Points
		if pts == nil {
			pts = make([][]float64, asks[0].Draw)
			for i := range pts {
				pts[i] = make([]float64, d)
				for j := range pts[i] {
					pts[i][j] = ctr[j] + sc[j]*(-3+6*draw.Float64())
				}
			}
		}
		res := make([]abi.Result, len(pts))
		for i, x := range pts {
			ll, g, z := 0.0, make([]float64, d), make([]float64, d)
			for j, v := range x {
				z[j] = (v - ctr[j]) / sc[j]
				ll -= 0.5 * z[j] * z[j]
				g[j] = -z[j] / sc[j]
			}
			res[i] = abi.Result{Theta: x, LogPrior: logPrior, LogLik: ll}
			if asks[0].Want&abi.WantGradient != 0 {
				res[i].Grad = g
			}
			if asks[0].Want&(abi.WantResiduals|abi.WantJacobian) != 0 {
				res[i].Residuals = z
			}
			if asks[0].Want&abi.WantOutputs != 0 {
				res[i].Outputs = make([]float64, nOut)
				for j := range res[i].Outputs {
					res[i].Outputs[j] = ll + float64(j)
				}
			}
			if asks[0].Want&abi.WantJacobian != 0 {
				res[i].Jacobian = make([]float64, d*d)
				for j := 0; j < d; j++ {
					res[i].Jacobian[j*d+j] = 1 / sc[j]
				}
			}
		}
		for _, m := range append(ms[:], resumed) {
			if m == nil {
				continue
			}
			if err := m.Tell(res); err != nil {
				return err
			}
		}
	}
	nb := fmt.Sprintf("%d batches", batches)
	if batches == 1 {
		nb = "1 batch"
	}
	c.Checks = append(c.Checks, fmt.Sprintf("%s: %s on two instances with the same seed: identical", exMethodAsk, nb))
	// The samples so far, done or not (a method answers samples in any
	// state after init, ABI.md §6.3): each instance's, and the resumed
	// one's, which must hold those from before its save too.
	var reps [2]abi.Report
	for k, m := range ms {
		r, err := m.Report()
		if err != nil {
			return err
		}
		reps[k] = r
	}
	if len(reps[0].Samples) != len(reps[1].Samples) {
		return p.differ(exMethodSamples, -1, "%d samples on one instance, %d on the other", len(reps[0].Samples), len(reps[1].Samples))
	}
	for i := range reps[0].Samples {
		if k := sameBits(reps[0].Samples[i].Theta, reps[1].Samples[i].Theta); k >= 0 {
			return p.differ(exMethodSamples, -1, "sample %d differs at coordinate %d", i, k)
		}
	}
	if len(reps[0].Samples) == 0 {
		c.Checks = append(c.Checks, fmt.Sprintf("%s: NOT CHECKED: no samples after %d batches (give --set values or --points so that the method produces samples within the batches)", exMethodSamples, batches))
	} else {
		c.Checks = append(c.Checks, fmt.Sprintf("%s: %d samples: identical", exMethodSamples, len(reps[0].Samples)))
	}
	if resumed != nil {
		r, err := resumed.Report()
		if err != nil {
			return err
		}
		if len(r.Samples) != len(reps[0].Samples) {
			return p.broken(exMethodLoad, "the instance loaded at batch 1 returns %d samples after %d batches, the one it was saved from %d: the state must hold the samples", len(r.Samples), batches, len(reps[0].Samples))
		}
		for i := range r.Samples {
			if k := sameBits(r.Samples[i].Theta, reps[0].Samples[i].Theta); k >= 0 {
				return p.broken(exMethodLoad, "sample %d differs at coordinate %d between the instance loaded at batch 1 and the one it was saved from", i, k)
			}
		}
		c.Checks = append(c.Checks, fmt.Sprintf("%s then %s at batch 1: the loaded instance's later batches and %d samples are the original's", exMethodSave, exMethodLoad, len(r.Samples)))
		// And at the end, where the samples are: a state saved now and
		// loaded into a fresh instance returns them all (a load that
		// dropped them passed the check at batch 1, before any).
		st, err := ms[0].(abi.Checkpointer).SaveState()
		if err != nil {
			return err
		}
		late, err := p.Method(ctx, o.Settings)
		if err != nil {
			return err
		}
		defer closeAll(late)
		if err := late.Init(prob); err != nil {
			return err
		}
		if err := late.(abi.Checkpointer).LoadState(st); err != nil {
			return err
		}
		r2, err := late.Report()
		if err != nil {
			return err
		}
		if len(r2.Samples) != len(reps[0].Samples) {
			return p.broken(exMethodLoad, "a state saved after %d batches and loaded into a fresh instance returns %d samples, the instance it was saved from %d: the state must hold the samples", batches, len(r2.Samples), len(reps[0].Samples))
		}
		for i := range r2.Samples {
			if k := sameBits(r2.Samples[i].Theta, reps[0].Samples[i].Theta); k >= 0 {
				return p.broken(exMethodLoad, "sample %d differs at coordinate %d after a save and load at batch %d", i, k, batches)
			}
		}
		c.Checks = append(c.Checks, fmt.Sprintf("%s then %s after batch %d: the %d samples are kept", exMethodSave, exMethodLoad, batches, len(r2.Samples)))
	}
	return nil
}

func isVJP(m abi.Model) bool { _, ok := m.(abi.VJP); return ok }

// DerivativeMismatchError is a model whose kinfer_model_jacobian or
// kinfer_model_vjp disagrees with its own kinfer_model_eval (the value y,
// or the derivative of y by central differences) or with each other: a
// wrong gradient that would silently mislead every gradient-based method
// (ABI.md §6.1).
type DerivativeMismatchError struct {
	Plugin string
	Export string
	Point  int
	Detail string
}

func (e *DerivativeMismatchError) Error() string {
	contract := "ABI.md §6.1: the Jacobian is ∂y/∂θ of kinfer_model_eval's y, the VJP vᵀ·∂y/∂θ"
	switch {
	case strings.HasSuffix(e.Export, "(rows_independent)"):
		contract = "ABI.md §4: with rows_independent, row k of y depends on θ and row k of x only"
	case e.Export == exLikGrad.String():
		contract = "ABI.md §6.2: gy = ∂logL/∂y"
	case strings.HasPrefix(e.Export, "kinfer_likelihood"):
		contract = "ABI.md §6.2: logL = C − ½‖r‖² for the residuals r"
	}
	return fmt.Sprintf("plugin %s: %s at point %d: %s (%s)", e.Plugin, e.Export, e.Point, e.Detail, contract)
}

// Tolerances of certifyDerivatives: vjpTol relative (normwise) between
// the VJP and vᵀ·J of the plugin's own Jacobian (the same derivative by
// another route: an adjoint solved to 1e-8 differs by about that);
// certFDTol relative, column by column beyond the measured noise, between
// the derivative and central differences of kinfer_model_eval with steps
// of certFDStep times each parameter's range: loose, so that a model with
// an inner solver's noise or a kink near the point is not refused, while
// a wrong derivative (a sign, a missing term) is.
const (
	vjpTol     = 1e-6
	certFDTol  = 0.1
	certFDStep = 1e-5
)

// certifyDerivatives checks, at every point where eval succeeded: the y
// of kinfer_model_jacobian and kinfer_model_vjp against kinfer_model_eval's
// (bit for bit); the VJP against vᵀ·J when both exist (vjpTol); and the
// derivative (J, else the VJP) against central differences of eval
// (certFDTol).
func (p *Plugin) certifyDerivatives(a abi.Model, thetas [][]float64, x []float64, K int, y0 [][]float64, s0 []abi.Status, rng *rand.Rand) (string, error) {
	d, m := len(p.Spec.Params), len(p.Spec.Outputs)
	n := K * m
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	jm, hasJ := a.(abi.Jacobian)
	vm, hasV := a.(abi.VJP)
	vjpName := p.vjpExport().String()
	worst, compared := 0.0, 0
	evalOK, jFailed, vFailed := 0, map[abi.Status]int{}, map[abi.Status]int{}
	var jFirst, vFirst []float64 // the first point where each failed
	for i, th := range thetas {
		if s0[i] != abi.OK {
			continue
		}
		evalOK++
		var J []float64 // n×d, row-major
		if hasJ {
			y, j := make([]float64, n), make([]float64, n*d)
			st := jm.Jacobian(th, x, y, j)
			if st == abi.Timeout || st == abi.Trap {
				return "", a.(abi.Faulter).Fault()
			}
			// A failed Jacobian is a counted status, not a lie: the VJP is
			// then checked against central differences alone.
			if st != abi.OK {
				jFailed[st]++
				if jFirst == nil {
					jFirst = th
				}
			}
			if st == abi.OK {
				if k := sameBits(y, y0[i]); k >= 0 {
					return "", &DerivativeMismatchError{p.Manifest.Name, exModelJacobian.String(), i, fmt.Sprintf("y[%d] = %v, kinfer_model_eval's %v", k, y[k], y0[i][k])}
				}
				J = j
			}
		}
		var g []float64
		if hasV {
			y := make([]float64, n)
			g = make([]float64, d)
			st := vm.VJP(th, x, v, y, g)
			if st == abi.Timeout || st == abi.Trap {
				return "", a.(abi.Faulter).Fault()
			}
			if st != abi.OK {
				g = nil
				vFailed[st]++
				if vFirst == nil {
					vFirst = th
				}
			} else if k := sameBits(y, y0[i]); k >= 0 {
				return "", &DerivativeMismatchError{p.Manifest.Name, vjpName, i, fmt.Sprintf("y[%d] = %v, kinfer_model_eval's %v", k, y[k], y0[i][k])}
			}
		}
		if g != nil && J != nil {
			vj := vtJ(v, J, n, d)
			if e := relDiff(g, vj); !(e <= vjpTol) {
				// The parameter that differs most (audit 12: the
				// difference alone did not say which).
				worstJ := 0
				for j := range g {
					if math.Abs(g[j]-vj[j]) > math.Abs(g[worstJ]-vj[worstJ]) {
						worstJ = j
					}
				}
				return "", &DerivativeMismatchError{p.Manifest.Name, vjpName, i, fmt.Sprintf("g differs from vᵀ·J of kinfer_model_jacobian by %.3g (relative), most in %s: g = %v, vᵀ·J = %v", e, p.Spec.Params[worstJ].Name, g[worstJ], vj[worstJ])}
			}
		}
		// Central differences of eval, one parameter at a time, compared
		// column by column (a parameter whose derivative is small in its
		// own units is checked as much as any), each entry within the
		// noise of its own output.
		fd, noise, ok := p.centralDifferences(a, th, x, y0[i])
		if !ok {
			continue
		}
		var e float64
		var what string
		var col int
		switch {
		case J != nil:
			e, col = columnDiff(J, fd, noise, n, d)
			what = exModelJacobian.String()
		case g != nil:
			// (vᵀ·fd)_j against g_j, with the noise Σ_r |v_r|·noise_rj.
			vfd, vn := vtJ(v, fd, n, d), make([]float64, d)
			for r := range n {
				for j := range d {
					vn[j] += math.Abs(v[r]) * noise[r*d+j]
				}
			}
			e, col = columnDiff(g, vfd, vn, 1, d)
			what = vjpName
		default:
			continue
		}
		compared++
		worst = max(worst, e)
		if !(e <= certFDTol) {
			return "", &DerivativeMismatchError{p.Manifest.Name, what, i, fmt.Sprintf("the derivative in %s differs from central differences of kinfer_model_eval by %.3g (relative), more than %g", p.Spec.Params[col].Name, e, certFDTol)}
		}
	}
	// A listed derivative that fails wherever the model succeeds is a
	// plugin bug (a stub, a capability listed but not served), not a
	// counted status to pass over (audit 4).
	for _, f := range []struct {
		has    bool
		export string
		failed map[abi.Status]int
	}{{hasJ, exModelJacobian.String(), jFailed}, {hasV, vjpName, vFailed}} {
		if f.has && evalOK > 0 && sumCounts(f.failed) == evalOK {
			return "", &NothingComparedError{p.Manifest.Name, f.export, evalOK, f.failed, failureNote(a, "DerivativeFailures"),
				"at every point where kinfer_model_eval succeeded: serve the derivative, or do not list its capability"}
		}
	}
	if compared == 0 {
		return "derivatives: NOT CHECKED against central differences: at no point did the model and its central differences all evaluate (give conditions where it succeeds with --data)", nil
	}
	line := fmt.Sprintf("derivatives: y of the Jacobian/VJP identical to kinfer_model_eval's; VJP = vᵀ·J within %g when both exist; against central differences at %d points: largest relative difference beyond rounding noise %.2g (≤ %g)",
		vjpTol, compared, worst, certFDTol)
	// Failures at some points are counted statuses, not lies, but an
	// author must hear of them (audit 10: a Jacobian failing in half the
	// box was certified without a word, and levmar then stopped at the
	// failure's edge).
	for _, f := range []struct {
		export string
		failed map[abi.Status]int
		first  []float64
	}{{exModelJacobian.String(), jFailed, jFirst}, {vjpName, vFailed, vFirst}} {
		if n := sumCounts(f.failed); n > 0 {
			line += fmt.Sprintf("; NOTE: %s failed at %d of the %d points where kinfer_model_eval succeeded, the first θ = (%s) (not compared there; a run counts such failures, and a least-squares method cannot step there)", f.export, n, evalOK, formatTheta(p.Spec.Params, f.first))
		}
	}
	return line, nil
}

// thetaNote is "; the point is θ = (a 1.5, b 2)", for a certify error.
func (p *Plugin) thetaNote(th []float64) string {
	return "; the point is θ = (" + formatTheta(p.Spec.Params, th) + ")"
}

// inBox is the point at u ∈ [0, 1) of q's bounds: lower + u·(upper −
// lower), or, for finite bounds more than MaxFloat64 apart (ABI.md §4
// allows [−1e308, 1e308]), (1 − u)·lower + u·upper, which stays finite
// (audit 7: certify gave such a model θ = +Inf).
func inBox(q abi.Param, u float64) float64 {
	if w := q.Upper - q.Lower; !math.IsInf(w, 0) {
		return q.Lower + w*u
	}
	return (1-u)*q.Lower + u*q.Upper
}

// centralDifferences is ∂y/∂θ (n×d) by central differences of eval at θ
// (where eval gave y) with steps certFDStep·(upper − lower), one-sided at
// a bound, and each entry's noise (n×d), measured: the difference from
// the same differences with twice the step (which an inner solver's
// noise or a kink makes large, and a smooth model leaves at rounding),
// plus the rounding of y over the step. False when an evaluation failed.
func (p *Plugin) centralDifferences(a abi.Model, th, x, y []float64) ([]float64, []float64, bool) {
	d, n := len(th), len(y)
	fd, noise := make([]float64, n*d), make([]float64, n*d)
	yp, ym := make([]float64, n), make([]float64, n)
	diff := func(j int, h float64, q abi.Param, out []float64) (float64, bool) {
		lo, hi := math.Max(th[j]-h, q.Lower), math.Min(th[j]+h, q.Upper)
		if !(hi > lo) {
			return 0, false
		}
		tp, tm := slices.Clone(th), slices.Clone(th)
		tp[j], tm[j] = hi, lo
		if a.Eval(tp, x, yp) != abi.OK || a.Eval(tm, x, ym) != abi.OK {
			return 0, false
		}
		for r := range n {
			out[r] = (yp[r] - ym[r]) / (hi - lo)
		}
		return hi - lo, true
	}
	d1, d2 := make([]float64, n), make([]float64, n)
	for j, q := range p.Spec.Params {
		h := certFDStep * (q.Upper - q.Lower)
		if math.IsInf(h, 0) { // finite bounds more than MaxFloat64 apart
			h = certFDStep*q.Upper - certFDStep*q.Lower
		}
		w, ok1 := diff(j, h, q, d1)
		_, ok2 := diff(j, 2*h, q, d2)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		for r := range n {
			fd[r*d+j] = d1[r]
			noise[r*d+j] = math.Abs(d1[r]-d2[r]) + 16*0x1p-52*math.Max(math.Abs(y[r]), 1e-300)/w
		}
	}
	return fd, noise, true
}

// columnDiff compares a and b (n×d) column by column: for column j,
// ‖a_j − b_j‖ beyond the entries' noise over max(‖a_j‖, ‖b_j‖, ‖noise_j‖).
// It returns the largest and its column.
func columnDiff(a, b, noise []float64, n, d int) (float64, int) {
	worst, at := 0.0, 0
	da, db, dd := make([]float64, n), make([]float64, n), make([]float64, n)
	nn := make([]float64, n)
	for j := range d {
		for r := range n {
			k := r*d + j
			da[r], db[r], nn[r] = a[k], b[k], noise[k]
			dd[r] = math.Max(math.Abs(a[k]-b[k])-noise[k], 0)
		}
		e := norm(dd) / math.Max(math.Max(math.Max(norm(da), norm(db)), norm(nn)), 1e-300)
		if !(e <= worst) {
			worst, at = e, j
		}
	}
	return worst, at
}

// diffBeyondNoise is ‖a − b‖ less the noise (not below 0) over
// max(‖a‖, ‖b‖, noise): relDiff where the difference exceeds what the
// differences' noise explains, 0 below it, so that a derivative of about
// 0 (a parameter without effect at the point) is not refused for the
// noise of its differences.
func diffBeyondNoise(a, b []float64, noise float64) float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	num := math.Max(norm(d)-noise, 0)
	return num / math.Max(math.Max(math.Max(norm(a), norm(b)), noise), 1e-300)
}

// vtJ is vᵀ·J for J n×d row-major.
func vtJ(v, J []float64, n, d int) []float64 {
	g := make([]float64, d)
	for r := range n {
		for j := range d {
			g[j] += v[r] * J[r*d+j]
		}
	}
	return g
}

// relDiff is ‖a − b‖/max(‖a‖, ‖b‖, 1e-300), Euclidean over all entries.
func relDiff(a, b []float64) float64 { return diffBeyondNoise(a, b, 0) }

// norm is the Euclidean norm of a, computed without overflow for entries
// beyond 1e154 (gonum's scaled sum of squares).
func norm(a []float64) float64 { return floats.Norm(a, 2) }

// Tolerances of certifyLikelihoodDerivatives: residualsTol relative on the
// constant C = logL + ½‖r‖² across points; gradYTol relative between
// grad_y's gy and central differences of logL in y (steps 1e-6·max(1, |y|),
// exact to about 1e-9 for a smooth likelihood).
const (
	residualsTol = 1e-9
	gradYTol     = 1e-4
)

// certifyLikelihoodDerivatives checks what a least-squares or gradient
// method takes from a likelihood besides logL: with capability residuals,
// that logL = C − ½‖r‖² with one C for every point (ABI.md §6.2); with
// grad_y, that its logL is kinfer_likelihood_eval's (bits) and gy the
// derivative of logL in y (central differences). Wrong residuals or a
// wrong gy silently mislead Levenberg–Marquardt or Adam.
// certifyMissing checks what ABI.md §6.2 requires of a likelihood's
// inputs that carry no information: an unobserved value (obs NaN) is
// skipped — the log-likelihood is that of the other values, so it does
// not change with the model's prediction there — and a sigma_free
// likelihood, which the host gives NaN σ, does not use σ.
func (p *Plugin) certifyMissing(a abi.Likelihood, m int, y, obs, sigma []float64, c *Certificate) error {
	eval := func(y, obs, sigma []float64) (float64, error) {
		l, st := a.LogLikelihood(m, y, obs, sigma)
		if st == abi.Timeout || st == abi.Trap {
			return 0, a.(abi.Faulter).Fault()
		}
		if st != abi.OK || math.IsNaN(l) {
			return 0, fmt.Errorf("status %v, logL %v", st, l)
		}
		return l, nil
	}
	// A missing observation at each output of the first row and at the
	// last value (audit 20: only observation 0 was tried, and one reading
	// another output's NaN as 0 was certified).
	bl, batch := a.(abi.BatchLikelihood)
	sameInBatch := func(what string, ys [][]float64, obs, sigma []float64, want float64) error {
		if !batch {
			return nil
		}
		ll, st := make([]float64, len(ys)), make([]abi.Status, len(ys))
		bl.LogLikelihoodBatch(m, ys, obs, sigma, ll, st)
		for i := range ys {
			if st[i] == abi.Timeout || st[i] == abi.Trap {
				return a.(abi.Faulter).Fault()
			}
			if st[i] != abi.OK || math.Float64bits(ll[i]) != math.Float64bits(want) {
				return &MismatchError{Plugin: p.Manifest.Name, Exports: [2]string{exLikEval.String(), exLikEvalBatch.String()}, Point: i,
					Detail: fmt.Sprintf("with %s: logL = %v from %s, status %v and logL %v from %s", what, want, exLikEval, st[i], ll[i], exLikEvalBatch), Contract: "ABI.md §6.2"}
			}
		}
		return nil
	}
	positions := make([]int, 0, m+1)
	for j := range min(m, len(obs)) {
		positions = append(positions, j)
	}
	if last := len(obs) - 1; last >= m {
		positions = append(positions, last)
	}
	for _, at := range positions {
		if err := p.certifyMissingAt(a, m, y, obs, sigma, at, eval, sameInBatch); err != nil {
			return err
		}
	}
	exps := []string{exLikEval.String()}
	if batch {
		exps = append(exps, exLikEvalBatch.String())
	}
	if _, ok := a.(abi.Residuals); ok {
		exps = append(exps, exLikResiduals.String())
	}
	if _, ok := a.(abi.GradY); ok {
		exps = append(exps, exLikGrad.String())
	}
	check := strings.Join(exps, ", ") + ": a missing observation (NaN) is skipped"
	if len(exps) == 2 {
		check = strings.Join(exps, " and ") + ": a missing observation (NaN) is skipped"
	}
	if p.Spec.Has(abi.CapSigmaFree) {
		nan := make([]float64, len(sigma))
		for i := range nan {
			nan[i] = math.NaN()
		}
		ln, err := eval(y, obs, nan)
		if err != nil {
			return fmt.Errorf("plugin %s: %s with σ NaN, as the host gives a sigma_free likelihood (ABI.md §6.2): %v", p.Manifest.Name, exLikEval, err)
		}
		if err := sameInBatch("σ NaN, as the host gives a sigma_free likelihood", [][]float64{y}, obs, nan, ln); err != nil {
			return err
		}
		check += "; σ NaN (sigma_free) is not used"
	}
	c.Checks = append(c.Checks, check)
	return nil
}

// certifyMissingAt checks observation at missing (NaN): logL does not
// change with the prediction there, its residual and ∂logL/∂y are 0, and
// the batch export gives kinfer_likelihood_eval's value (ABI.md §6.2).
func (p *Plugin) certifyMissingAt(a abi.Likelihood, m int, y, obs, sigma []float64, at int,
	eval func(y, obs, sigma []float64) (float64, error), sameInBatch func(string, [][]float64, []float64, []float64, float64) error) error {
	where := fmt.Sprintf("observation %d (row %d, output %d) missing (NaN)", at, at/m, at%m)
	miss := append([]float64(nil), obs...)
	miss[at] = math.NaN()
	y2 := append([]float64(nil), y...)
	y2[at] += 10 * sigma[at]
	l1, err := eval(y, miss, sigma)
	if err == nil {
		var l2 float64
		if l2, err = eval(y2, miss, sigma); err == nil && math.Float64bits(l1) != math.Float64bits(l2) {
			err = fmt.Errorf("logL %v, and %v with another prediction there", l1, l2)
		}
	}
	if err != nil {
		return fmt.Errorf("plugin %s: %s with %s, which a likelihood must skip (ABI.md §6.2): %v", p.Manifest.Name, exLikEval, where, err)
	}
	// Its residual and its entry of ∂logL/∂y are 0 (ABI.md §6.2): a
	// nonzero gy there moved Adam's optimum, a nonzero residual inflated
	// Levenberg–Marquardt's standard errors (audit 18).
	if rl, ok := a.(abi.Residuals); ok {
		r := make([]float64, len(y))
		st := rl.Residuals(m, y, miss, sigma, r)
		if st == abi.Timeout || st == abi.Trap {
			return a.(abi.Faulter).Fault()
		}
		if st != abi.OK || r[at] != 0 {
			return fmt.Errorf("plugin %s: %s with %s: status %v, r[%d] = %v; a missing observation's residual MUST be 0 (ABI.md §6.2)", p.Manifest.Name, exLikResiduals, where, st, at, r[at])
		}
	}
	if gl, ok := a.(abi.GradY); ok {
		gy := make([]float64, len(y))
		_, st := gl.LogLikelihoodGrad(m, y, miss, sigma, gy)
		if st == abi.Timeout || st == abi.Trap {
			return a.(abi.Faulter).Fault()
		}
		if st != abi.OK || gy[at] != 0 {
			return fmt.Errorf("plugin %s: %s with %s: status %v, gy[%d] = %v; a missing observation's ∂logL/∂y MUST be 0 (ABI.md §6.2)", p.Manifest.Name, exLikGrad, where, st, at, gy[at])
		}
	}
	// The batch export, which a run uses for every point, must skip it
	// too, with kinfer_likelihood_eval's value (audit 15: one reading NaN
	// as 0 was certified, and moved k's posterior by 9 sd).
	return sameInBatch(where+", which a likelihood must skip", [][]float64{y, y2}, miss, sigma, l1)
}

func (p *Plugin) certifyLikelihoodDerivatives(a abi.Likelihood, m int, ys [][]float64, obs, sigma, la []float64, sa []abi.Status) (string, error) {
	var checks []string
	mismatch := func(e export, i int, format string, args ...any) error {
		return &DerivativeMismatchError{Plugin: p.Manifest.Name, Export: e.String(), Point: i, Detail: fmt.Sprintf(format, args...)}
	}
	if rl, ok := a.(abi.Residuals); ok {
		c0, i0, worst := 0.0, -1, 0.0
		for i, y := range ys {
			if sa[i] != abi.OK || math.IsInf(la[i], -1) {
				continue
			}
			r := make([]float64, len(y))
			st := rl.Residuals(m, y, obs, sigma, r)
			if st == abi.Timeout || st == abi.Trap {
				return "", a.(abi.Faulter).Fault()
			}
			if st != abi.OK {
				continue
			}
			half := 0.5 * norm(r) * norm(r)
			c := la[i] + half
			if i0 < 0 {
				c0, i0 = c, i
				continue
			}
			e := math.Abs(c-c0) / math.Max(math.Max(math.Abs(la[i]), half), 1)
			worst = math.Max(worst, e)
			if !(e <= residualsTol) {
				return "", mismatch(exLikResiduals, i, "logL + ½‖r‖² = %v here and %v at point %d: logL is not C − ½‖r‖² with one C", c, c0, i0)
			}
		}
		if i0 >= 0 {
			checks = append(checks, fmt.Sprintf("%s: logL + ½‖r‖² constant across points within %.2g (≤ %g)", exLikResiduals, worst, residualsTol))
		} else {
			// Said, not dropped (audit 10): logL −∞ (or a failed call)
			// at every point leaves nothing to compare.
			checks = append(checks, fmt.Sprintf("%s: NOT CHECKED: logL was −∞ or a call failed at every point (give --set values where the likelihood is finite)", exLikResiduals))
		}
	}
	if gl, ok := a.(abi.GradY); ok {
		worst, compared := 0.0, 0
		for i, y := range ys {
			if sa[i] != abi.OK || compared == 3 {
				continue
			}
			gy := make([]float64, len(y))
			l, st := gl.LogLikelihoodGrad(m, y, obs, sigma, gy)
			if st == abi.Timeout || st == abi.Trap {
				return "", a.(abi.Faulter).Fault()
			}
			if st != abi.OK || math.IsInf(l, -1) {
				continue
			}
			if math.Float64bits(l) != math.Float64bits(la[i]) {
				return "", mismatch(exLikGrad, i, "logL = %v, kinfer_likelihood_eval's %v", l, la[i])
			}
			fd := make([]float64, len(y))
			ok := true
			for j := range y {
				h := 1e-6 * math.Max(1, math.Abs(y[j]))
				yp, ym := slices.Clone(y), slices.Clone(y)
				yp[j], ym[j] = y[j]+h, y[j]-h
				lp, s1 := a.LogLikelihood(m, yp, obs, sigma)
				lm, s2 := a.LogLikelihood(m, ym, obs, sigma)
				if s1 != abi.OK || s2 != abi.OK || math.IsInf(lp, 0) || math.IsInf(lm, 0) {
					ok = false
					break
				}
				fd[j] = (lp - lm) / (yp[j] - ym[j])
			}
			if !ok {
				continue
			}
			compared++
			// Rounding of logL near y: ≈ 50 ε·|logL| over the step.
			noise := 1e-14 * math.Max(math.Abs(l), 1) / 1e-6 * math.Sqrt(float64(len(y)))
			e := diffBeyondNoise(gy, fd, noise)
			worst = math.Max(worst, e)
			if !(e <= gradYTol) {
				// The entry that differs most, with its inputs, so that a
				// derivative wrong only in the tails can be found (audit 18).
				k := 0
				for j := range gy {
					if math.Abs(gy[j]-fd[j]) > math.Abs(gy[k]-fd[k]) {
						k = j
					}
				}
				return "", mismatch(exLikGrad, i, "gy differs from central differences of logL in y by %.3g (relative), more than %g; most at row %d, output %d (y %v, obs %v, σ %v): gy %v, the difference quotient %v",
					e, gradYTol, k/m, k%m, y[k], obs[k], sigma[k], gy[k], fd[k])
			}
		}
		if compared > 0 {
			checks = append(checks, fmt.Sprintf("%s: gy against central differences of logL at %d points: largest relative difference beyond rounding noise %.2g (≤ %g)", exLikGrad, compared, worst, gradYTol))
		} else {
			checks = append(checks, fmt.Sprintf("%s: NOT CHECKED: logL was −∞ or a call failed at every point", exLikGrad))
		}
	}
	return strings.Join(checks, "; "), nil
}
