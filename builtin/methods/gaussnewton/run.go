package gaussnewton

import (
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/lsq"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
)

// MaxHalvings is the number of times a step is halved (after a failed
// evaluation, or with step_control = "halving" after a step that did not
// lower the cost) before the run stops: the last try is 2⁻³⁰ ≈ 1e-9 of the
// Gauss–Newton step.
const MaxHalvings = 30

// Exit reasons, as the report names them.
const (
	ExitFtol       = "ftol"            // relative decrease of the cost ≤ ftol (predicted, or actual after a step)
	ExitXtol       = "xtol"            // relative step ≤ xtol
	ExitGtol       = "gtol"            // cosine between r and every free column of J ≤ gtol
	ExitMaxIter    = "max_iterations"  // the iteration budget is spent
	ExitMaxEvals   = "max_evaluations" // the evaluation budget is spent
	ExitExactFit   = "exact_fit"       // the residuals are all zero
	ExitNoDecrease = "no_decrease"     // MaxHalvings halvings did not lower the cost
	ExitStalled    = "stalled"         // MaxHalvings halvings after failed evaluations
)

// Run is one Gauss–Newton run from one starting point, driven one
// evaluation at a time (Trial, then Observe). Its fields are exported so
// that it saves as JSON; every float in it is finite.
type Run struct {
	X        []float64   `json:"x"`
	LogPrior float64     `json:"log_prior"`
	LogLik   float64     `json:"log_lik"`
	Fac      *lsq.Factor `json:"factor"`
	// Dir is the Gauss–Newton step from X (unscaled, zero in held
	// parameters); T the fraction of it Trial takes (1, ½, ¼, …).
	Dir      []float64 `json:"dir"`
	T        float64   `json:"t"`
	Halvings int       `json:"halvings"`
	Trial    []float64 `json:"trial"`
	// Iter steps taken, Evals trial evaluations, Failures failed ones.
	Iter     int       `json:"iter"`
	Evals    int       `json:"evals"`
	Failures int       `json:"failures"`
	Trace    []float64 `json:"trace"`
	Done     bool      `json:"done"`
	Reason   string    `json:"reason,omitempty"`
}

// Cost is ½‖r‖² at the current iterate.
func (run *Run) Cost() float64 { return 0.5 * run.Fac.RNorm * run.Fac.RNorm }

func usable(r abi.Result, x []float64, b mcmc.Bounds) bool {
	if !mcmc.Usable(r) || !b.Contains(x) || len(r.Residuals) == 0 || r.Jacobian == nil {
		return false
	}
	for _, v := range r.Residuals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	for _, v := range r.Jacobian {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func cost(r []float64) float64 {
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	return 0.5 * s
}

func norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// Start begins a run at the usable evaluation r of x and proposes the
// first trial; false when r cannot be used.
func (run *Run) Start(r abi.Result, x []float64, c Config, b mcmc.Bounds) bool {
	if !usable(r, x, b) || !run.accept(r, x, c) {
		return false
	}
	run.next(c, b)
	return true
}

// accept makes x (evaluated as r) the iterate.
func (run *Run) accept(r abi.Result, x []float64, c Config) bool {
	p := len(x)
	f, err := lsq.Factorize(r.Jacobian, r.Residuals, p)
	if err != nil {
		return false
	}
	if c.Scale == ScaleJacobian {
		// Unit columns: D = the column norms of J (1 for a zero column).
		d := make([]float64, p)
		for j, v := range f.ColNorm {
			d[j] = 1
			if v > 0 {
				d[j] = v
			}
		}
		if f.SetScale(d) != nil {
			return false
		}
	}
	run.Fac = f
	run.X = append(run.X[:0], x...)
	run.LogPrior, run.LogLik = r.LogPrior, r.LogLik
	run.Trace = append(run.Trace, run.Cost())
	return true
}

func (run *Run) finish(reason string) {
	run.Done, run.Reason, run.Trial = true, reason, nil
}

// free is the active-set rule of the levmar method: a parameter on a bound
// whose gradient points out of the box is held for the step.
func (run *Run) free(b mcmc.Bounds) []int { return run.Fac.Free(run.X, b, nil) }

// next computes the Gauss–Newton step from the iterate and its first trial,
// after the tests that need no evaluation: an exact fit, the gradient test,
// and a step or a predicted decrease too small to matter.
func (run *Run) next(c Config, b mcmc.Bounds) {
	f := run.Fac
	if f.RNorm == 0 {
		run.finish(ExitExactFit)
		return
	}
	free := run.free(b)
	g := f.MaxCosine(free)
	if len(free) == 0 || g <= c.Gtol {
		run.finish(ExitGtol)
		return
	}
	if run.Iter >= c.MaxIter {
		run.finish(ExitMaxIter)
		return
	}
	sub, err := f.NewSub(free)
	if err != nil {
		run.finish(ExitStalled)
		return
	}
	// Δθ = −J⁺r (Gouveia et al., Eq. 13): the λ = 0 step of the scaled
	// subproblem, singular values below rcond·s₁ dropped.
	pt := make([]float64, len(free))
	sub.Step(0, c.Rcond, pt)
	prered, _ := sub.Reduction(pt)
	run.Dir = make([]float64, len(run.X))
	f.Unscale(sub, pt, run.Dir)
	if norm(run.Dir) <= c.Xtol*(norm(run.X)+c.Xtol) {
		run.finish(ExitXtol)
		return
	}
	if prered <= c.Ftol*f.RNorm*f.RNorm {
		run.finish(ExitFtol)
		return
	}
	run.T, run.Halvings = 1, 0
	run.setTrial(b)
}

// setTrial sets Trial = Π(X + T·Dir), the projection onto the box.
func (run *Run) setTrial(b mcmc.Bounds) {
	t := make([]float64, len(run.X))
	for j := range t {
		t[j] = math.Max(b.Lower[j], math.Min(b.Upper[j], run.X[j]+run.T*run.Dir[j]))
	}
	run.Trial = t
}

// Observe takes the evaluation r of Trial. A usable evaluation becomes the
// iterate — always with step_control = "none" (the plain iteration of
// Gouveia et al., Eq. 13), only if it lowers the cost with "halving" —
// after which the convergence tests run and the next step is computed.
// Otherwise the step is halved (Armijo's rule with the sufficient-decrease
// constant 0; Nocedal & Wright 2006, Numerical Optimization, Algorithm 3.1),
// up to MaxHalvings times.
func (run *Run) Observe(r abi.Result, c Config, b mcmc.Bounds) {
	if run.Done || run.Trial == nil {
		return
	}
	run.Evals++
	ok := usable(r, run.Trial, b)
	if !ok {
		run.Failures++
	}
	old := run.Cost()
	if ok && (c.StepControl == StepNone || cost(r.Residuals) < old) {
		prev := append([]float64(nil), run.X...)
		if run.accept(r, run.Trial, c) {
			run.Iter++
			step := 0.0
			for j := range prev {
				step += (run.X[j] - prev[j]) * (run.X[j] - prev[j])
			}
			switch {
			case run.Fac.RNorm == 0:
				run.finish(ExitExactFit)
			case math.Sqrt(step) <= c.Xtol*(norm(prev)+c.Xtol):
				run.finish(ExitXtol)
			case math.Abs(old-run.Cost()) <= c.Ftol*old:
				run.finish(ExitFtol)
			case run.Evals >= c.MaxEvals:
				run.finish(ExitMaxEvals)
			default:
				run.next(c, b)
			}
			return
		}
	}
	if run.Evals >= c.MaxEvals {
		run.finish(ExitMaxEvals)
		return
	}
	run.Halvings++
	if run.Halvings > MaxHalvings {
		if ok {
			run.finish(ExitNoDecrease)
		} else {
			run.finish(ExitStalled)
		}
		return
	}
	run.T /= 2
	run.setTrial(b)
}

// checkShape verifies a decoded run for d parameters.
func (run *Run) checkShape(d int) bool {
	if run == nil || len(run.X) != d || run.Fac == nil {
		return false
	}
	f := run.Fac
	if f.P != d || len(f.R) != d*d || len(f.C) != d || len(f.Grad) != d || len(f.ColNorm) != d || len(f.D) != d || f.N < 1 {
		return false
	}
	return run.Done || (len(run.Trial) == d && len(run.Dir) == d)
}
