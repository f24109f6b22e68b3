package levmar

import (
	"math"
	"slices"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/lsq"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
)

// MaxFailures is the number of consecutive failed evaluations (status not
// OK, a non-finite residual or Jacobian entry) after which a run stops as
// stalled. Each failure shrinks the trust region tenfold, so the last trial
// step is 1e-30 of the first failed one.
const MaxFailures = 30

// Exit reasons, as the report names them. The first eight are MINPACK's
// lmder info values 1–8 (Moré, Garbow & Hillstrom 1980, User guide for
// MINPACK-1, ANL-80-74, Sec. 2.4).
const (
	ExitFtol        = "ftol"            // info 1: relative reduction of the cost ≤ ftol (actual and predicted)
	ExitXtol        = "xtol"            // info 2: trust region ≤ xtol·‖D·x‖
	ExitBoth        = "ftol+xtol"       // info 3
	ExitGtol        = "gtol"            // info 4: cosine of the angle between r and every free column of J ≤ gtol
	ExitMaxEvals    = "max_evaluations" // info 5: the evaluation budget is spent
	ExitFtolMachine = "ftol_machine"    // info 6: no further reduction possible in floating point
	ExitXtolMachine = "xtol_machine"    // info 7: no further improvement of x possible in floating point
	ExitGtolMachine = "gtol_machine"    // info 8: r is orthogonal to J's columns to machine precision
	ExitExactFit    = "exact_fit"       // the residuals are all zero
	ExitStalled     = "stalled"         // MaxFailures consecutive evaluations failed
	ExitNoStep      = "no_step"         // the projected step is zero: no move inside the box
	// ExitBlocked: a convergence test (ftol, xtol) held in a start that
	// had failed evaluations (a status not ok, a Jacobian that could not
	// be computed), at a point far from stationary (gnorm over the free
	// parameters above blockedGnorm): the failures, not the cost, shrank
	// the trust region, so the point may be the edge of the region where
	// the model succeeds rather than a minimum (audit 10: a model whose
	// Jacobian failed beyond a = 5 "converged" by xtol at a = 5, its
	// optimum at 7).
	ExitBlocked = "blocked_by_failures"
)

// Run is one Levenberg–Marquardt run from one starting point, driven one
// evaluation at a time: Trial is the point to evaluate next (with its
// residuals and Jacobian) and Observe takes the result. Its fields are
// exported so that it saves as JSON in a checkpoint; every float in it is
// finite.
type Run struct {
	// X is the current iterate and Fac its factorisation; LogPrior and
	// LogLik its values from the host.
	X        []float64   `json:"x"`
	LogPrior float64     `json:"log_prior"`
	LogLik   float64     `json:"log_lik"`
	Fac      *lsq.Factor `json:"factor"`
	// D is the scaling (MINPACK's diag), Delta the trust-region radius in
	// ‖D·p‖, Par the last Levenberg–Marquardt parameter λ, XNorm ‖D·x‖.
	D     []float64 `json:"d"`
	Delta float64   `json:"delta"`
	Par   float64   `json:"par"`
	XNorm float64   `json:"x_norm"`
	// Trial is the pending point, with the scaled length PNorm of the step
	// that leads to it and its predicted relative reduction Prered and
	// directional derivative Dirder (both divided by ‖r‖²).
	Trial  []float64 `json:"trial"`
	PNorm  float64   `json:"p_norm"`
	Prered float64   `json:"prered"`
	Dirder float64   `json:"dirder"`
	// Counters: Iter accepted steps, Evals trial evaluations (each with its
	// residuals and Jacobian), Failures those that failed, ConsecFail the
	// current streak.
	Iter       int `json:"iter"`
	Evals      int `json:"evals"`
	Failures   int `json:"failures"`
	ConsecFail int `json:"consec_fail"`

	// OpenLower and OpenUpper mark the bounds found to be open: a trial
	// projected onto one came back out of the prior's support (a
	// lognormal's 0). A step is then held short of such a bound
	// (openBoundKeep). Nil until one is found.
	OpenLower []bool `json:"open_lower,omitempty"`
	OpenUpper []bool `json:"open_upper,omitempty"`
	// Trace is the cost ½‖r‖² of every iterate, from the start.
	Trace  []float64 `json:"trace"`
	Done   bool      `json:"done"`
	Reason string    `json:"reason,omitempty"`

	// sub caches the SVD of the current factorisation's free columns
	// across rejected steps while subOK (not saved: it is recomputed,
	// identically, after a restore); its storage is reused for the next
	// factorisation's.
	sub   *lsq.Sub
	subOK bool
	// Per-run scratch, so that an iteration allocates nothing (not saved):
	// spare is the factorisation an accepted trial is computed into (then
	// swapped with Fac), the rest the work of propose.
	spare                    *lsq.Factor
	freeBuf                  []int
	ptBuf, stepBuf, trialBuf []float64
}

// Cost is ½‖r‖² at the current iterate.
func (run *Run) Cost() float64 { return 0.5 * run.Fac.RNorm * run.Fac.RNorm }

// usable reports whether r, the evaluation of x, can be an iterate: status
// OK, finite log prior and log likelihood, x in the box, and finite
// residuals and Jacobian (whose shapes Tell has checked).
func usable(r abi.Result, x []float64, b mcmc.Bounds) bool {
	return mcmc.Usable(r) && b.Contains(x) && len(r.Residuals) > 0 && r.Jacobian != nil &&
		lsq.AllFinite(r.Residuals) && lsq.AllFinite(r.Jacobian)
}

func scaledNorm(d, x []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += (d[i] * v) * (d[i] * v)
	}
	return math.Sqrt(s)
}

// Start begins a run at the usable evaluation r of x (the first iterate)
// and proposes the first trial. It reports false, leaving the run unset,
// when r cannot be used (the caller draws another start).
func (run *Run) Start(r abi.Result, x []float64, c Config, b mcmc.Bounds) bool {
	if !usable(r, x, b) {
		return false
	}
	if !run.accept(r, x, c) {
		return false
	}
	// Initial trust region: factor·‖D·x₀‖, or factor when that is 0
	// (MINPACK lmder).
	run.Delta = c.Factor * run.XNorm
	if run.Delta == 0 {
		run.Delta = c.Factor
	}
	run.check(c)
	if !run.Done {
		run.propose(c, b)
	}
	return true
}

// accept makes x (evaluated as r) the iterate: its factorisation, and the
// scaling, which starts at the first iterate's column norms of J (1 for a
// zero column) and grows to the new ones (MINPACK mode 1: D_j = max(D_j,
// ‖J_j‖)).
func (run *Run) accept(r abi.Result, x []float64, c Config) bool {
	p := len(x)
	f := run.spare
	if f == nil {
		f = new(lsq.Factor)
	}
	if f.Refactorize(r.Jacobian, r.Residuals, p) != nil {
		run.spare = f
		return false
	}
	if run.D == nil {
		run.D = make([]float64, p)
		for j := range run.D {
			run.D[j] = 1
			if c.Scale == ScaleJacobian && f.ColNorm[j] > 0 {
				run.D[j] = f.ColNorm[j]
			}
		}
	} else if c.Scale == ScaleJacobian {
		for j, v := range f.ColNorm {
			run.D[j] = math.Max(run.D[j], v)
		}
	}
	if f.SetScale(run.D) != nil {
		run.spare = f
		return false
	}
	run.Fac, run.spare, run.subOK = f, run.Fac, false
	run.X = append(run.X[:0], x...)
	run.LogPrior, run.LogLik = r.LogPrior, r.LogLik
	run.XNorm = scaledNorm(run.D, x)
	run.Trace = append(run.Trace, run.Cost())
	return true
}

// free returns the parameters the next step may move (lsq.Factor.Free).
func (run *Run) free(b mcmc.Bounds) []int {
	run.freeBuf = run.Fac.Free(run.X, b, run.freeBuf[:0])
	return run.freeBuf
}

// blockedGnorm is the gnorm above which a start that had failed
// evaluations and stops by ftol or xtol is not at a stationary point
// (ExitBlocked): at a least-squares minimum inside the bounds the cosines
// are at rounding level, and MINPACK's own gtol test is 0 by default.
const blockedGnorm = 1e-3

// gnorm is MINPACK's max_j |J_jᵀr|/(‖J_j‖·‖r‖) over the free parameters:
// the largest cosine between the residual and a column of J.
func (run *Run) gnorm(free []int) float64 { return run.Fac.MaxCosine(free) }

// check applies the tests made at every new iterate: an exact fit, and
// MINPACK's gtol test on the free parameters.
func (run *Run) check(c Config) {
	if run.Fac.RNorm == 0 {
		run.finish(ExitExactFit)
	}
}

func (run *Run) finish(reason string) {
	run.Done, run.Reason, run.Trial = true, reason, nil
}

// propose computes the next trial point: the free set, the
// Levenberg–Marquardt step of length about Delta (lsq.Sub.SolveTrustRegion),
// and its projection onto the box, Π(x + p) (the projected
// Levenberg–Marquardt method of Kanzow, Yamashita & Fukushima 2004,
// "Levenberg–Marquardt methods with strong local convergence properties for
// solving nonlinear equations with convex constraints", J. Comput. Appl.
// Math. 172:375–397, Eq. 7). The predicted reduction is that of the
// projected step, so the ratio test judges the step actually taken.
func (run *Run) propose(c Config, b mcmc.Bounds) {
	free := run.free(b)
	gnorm := run.gnorm(free)
	if len(free) == 0 || gnorm <= c.Gtol {
		run.finish(ExitGtol)
		return
	}
	if gnorm <= epsmch {
		run.finish(ExitGtolMachine)
		return
	}
	if !run.subOK || !slices.Equal(run.sub.Free, free) {
		sub, err := run.Fac.SubInto(run.sub, free)
		if err != nil {
			run.finish(ExitStalled)
			return
		}
		run.sub, run.subOK = sub, true
	}
	sub := run.sub
	run.Par = sub.SolveTrustRegion(run.Delta, run.Par, c.Rcond)
	m, p := len(free), len(run.X)
	pt := grow(&run.ptBuf, m)
	sub.Step(run.Par, c.Rcond, pt)
	step := grow(&run.stepBuf, p)
	run.Fac.Unscale(sub, pt, step)
	trial := grow(&run.trialBuf, p)
	for j := range trial {
		lo, hi := b.Lower[j], b.Upper[j]
		if run.OpenLower != nil && run.OpenLower[j] {
			lo += openBoundKeep * (run.X[j] - lo)
		}
		if run.OpenUpper != nil && run.OpenUpper[j] {
			hi -= openBoundKeep * (hi - run.X[j])
		}
		trial[j] = math.Max(lo, math.Min(hi, run.X[j]+step[j]))
	}
	// The step actually taken, in the free scaled coordinates.
	pnorm := 0.0
	for k, j := range free {
		pt[k] = run.D[j] * (trial[j] - run.X[j])
		pnorm += pt[k] * pt[k]
	}
	pnorm = math.Sqrt(pnorm)
	if !(pnorm > 0) || math.IsInf(pnorm, 1) {
		run.finish(ExitNoStep)
		return
	}
	prered, dir := sub.Reduction(pt)
	f2 := run.Fac.RNorm * run.Fac.RNorm
	run.Trial, run.PNorm, run.Prered, run.Dirder = trial, pnorm, prered/f2, dir/f2
}

// openBoundKeep is the share of the distance to an open bound that a step
// keeps: the trial stops at x − (1 − openBoundKeep)·(x − bound), the
// fraction-to-the-boundary rule of interior-point methods (Nocedal &
// Wright 2006, Numerical Optimization, Eq. 19.9, τ = 0.995), so an
// iterate can approach the bound geometrically but never land on it.
const openBoundKeep = 0.005

// markOpen marks the bounds the out-of-support Trial sits on while the
// iterate does not: the prior's density is zero there, so the projection
// onto the box must stop short of them (audit 7: levmar's steps onto a
// lognormal parameter's bound 0 were all refused, and it reported
// convergence at 30 000 times the minimum cost).
//
// When the trial was pushed onto several bounds at once, the one at
// fault cannot be told from the status alone: each is tried, one at a
// time, by the bounds' order. A bound that was not open costs only a step
// held short of it (the iterate still approaches it geometrically).
func (run *Run) markOpen(b mcmc.Bounds) {
	for j, t := range run.Trial {
		lo := t == b.Lower[j] && run.X[j] > b.Lower[j] && !(run.OpenLower != nil && run.OpenLower[j])
		hi := t == b.Upper[j] && run.X[j] < b.Upper[j] && !(run.OpenUpper != nil && run.OpenUpper[j])
		if !lo && !hi {
			continue
		}
		if run.OpenLower == nil {
			run.OpenLower = make([]bool, len(run.X))
		}
		if run.OpenUpper == nil {
			run.OpenUpper = make([]bool, len(run.X))
		}
		run.OpenLower[j] = run.OpenLower[j] || lo
		run.OpenUpper[j] = run.OpenUpper[j] || hi
		return // one bound per out-of-support trial
	}
}

// grow returns *buf resized to n (contents unspecified), reallocating it
// when it is too small.
func grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// epsmch is the machine precision MINPACK's tests 6–8 compare with.
const epsmch = 2.220446049250313e-16

// Observe takes the evaluation r of Trial: the trust-region update and
// acceptance of Moré 1978 (Sec. 4, Eqs. 4.2–4.6) as MINPACK's lmder makes
// them, then its convergence tests, then the next trial. A failed
// evaluation counts as a step that made the residual infinitely worse:
// the trust region shrinks tenfold and the run tries again, and after
// MaxFailures in a row it stops as stalled.
func (run *Run) Observe(r abi.Result, c Config, b mcmc.Bounds) {
	if run.Done || run.Trial == nil {
		return
	}
	run.Evals++
	fnorm := run.Fac.RNorm
	fnorm1 := math.Inf(1)
	ok := usable(r, run.Trial, b)
	if r.Status == abi.OutOfSupport {
		run.markOpen(b)
	}
	if ok {
		s := 0.0
		for _, v := range r.Residuals {
			s += v * v
		}
		fnorm1 = math.Sqrt(s)
		run.ConsecFail = 0
	} else {
		run.Failures++
		run.ConsecFail++
	}
	// On the first iteration, the initial step bound shrinks to the first
	// step's length (MINPACK).
	if run.Iter == 0 {
		run.Delta = math.Min(run.Delta, run.PNorm)
	}
	// Actual and predicted relative reductions, and their ratio.
	actred := -1.0
	if 0.1*fnorm1 < fnorm {
		actred = 1 - (fnorm1/fnorm)*(fnorm1/fnorm)
	}
	// A step projected onto the box can predict an increase (prered < 0,
	// which MINPACK's unconstrained step never does); its ratio would then
	// be positive for an actual increase and accept it. Such a step is
	// judged a failure: ratio 0, rejected, the trust region shrinks.
	ratio := 0.0
	if run.Prered > 0 {
		ratio = actred / run.Prered
	}
	if ratio <= 0.25 {
		temp := 0.5
		if actred < 0 {
			temp = 0.5 * run.Dirder / (run.Dirder + 0.5*actred)
		}
		if 0.1*fnorm1 >= fnorm || temp < 0.1 {
			temp = 0.1
		}
		run.Delta = temp * math.Min(run.Delta, run.PNorm/0.1)
		run.Par /= temp
	} else if run.Par == 0 || ratio >= 0.75 {
		run.Delta = run.PNorm / 0.5
		run.Par *= 0.5
	}
	trial := run.Trial
	if ok && ratio >= 1e-4 {
		if run.accept(r, trial, c) {
			run.Iter++
		}
	}
	if !ok {
		if run.ConsecFail >= MaxFailures {
			run.finish(ExitStalled)
			return
		}
	} else {
		// MINPACK's convergence tests.
		ftol := math.Abs(actred) <= c.Ftol && run.Prered <= c.Ftol && 0.5*ratio <= 1
		xtol := run.Delta <= c.Xtol*run.XNorm
		switch {
		case (ftol || xtol) && run.Failures > 0 && run.gnorm(run.free(b)) > blockedGnorm:
			run.finish(ExitBlocked)
			return
		case ftol && xtol:
			run.finish(ExitBoth)
			return
		case ftol:
			run.finish(ExitFtol)
			return
		case xtol:
			run.finish(ExitXtol)
			return
		}
		if math.Abs(actred) <= epsmch && run.Prered <= epsmch && 0.5*ratio <= 1 {
			run.finish(ExitFtolMachine)
			return
		}
		if run.Delta <= epsmch*run.XNorm {
			run.finish(ExitXtolMachine)
			return
		}
	}
	if run.Evals >= c.MaxEvals {
		run.finish(ExitMaxEvals)
		return
	}
	run.check(c)
	if !run.Done {
		run.propose(c, b)
	}
}

// checkShape verifies a decoded run for d parameters.
func (run *Run) checkShape(d int) bool {
	if run == nil || len(run.X) != d || len(run.D) != d || run.Fac == nil {
		return false
	}
	// The open-bound marks: none, or one of each per parameter.
	if (run.OpenLower == nil) != (run.OpenUpper == nil) || run.OpenLower != nil && (len(run.OpenLower) != d || len(run.OpenUpper) != d) {
		return false
	}
	f := run.Fac
	if f.P != d || len(f.R) != d*d || len(f.C) != d || len(f.Grad) != d || len(f.ColNorm) != d || len(f.D) != d || f.N < 1 {
		return false
	}
	return run.Done || len(run.Trial) == d
}
