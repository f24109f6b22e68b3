package lsq

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// This file is the multi-start driving the least-squares methods share
// around their own iteration: setting up, checking the host's results, and
// the report.

// MaxInitDraws is the number of points a start may try (the study's init
// points, then prior draws) to find one with usable residuals and Jacobian.
const MaxInitDraws = 100

// Want is what every batch of a least-squares method asks: the residuals
// and their Jacobian.
const Want = abi.WantResiduals | abi.WantJacobian

// Setup is what Init of a least-squares method finds out of its problem.
type Setup struct {
	Bounds mcmc.Bounds
	// Names are the parameters' names, for the report's statistics.
	Names []string
	// MaxEvals is the evaluation budget per start: the setting, or when it
	// is 0 MINPACK's default 100·(d + 1).
	MaxEvals int
	// Observations is the problem's (abi.Problem.Observations): the
	// residuals the statistics count.
	Observations int
}

// NewSetup checks the problem p for the method named method with starts
// starts and max_evaluations maxEvals: the parameter box, and the planned
// memory (per start, its factorisation and scaling, ≈ d² + 8d values, and
// its cost trace, one value per evaluation at most; twice, for the JSON of
// a checkpoint or the report at ≈ 25 bytes a number beside the values)
// against the problem's budget.
func NewSetup(method string, p abi.Problem, starts, maxEvals int) (Setup, error) {
	b, err := mcmc.NewBounds(method, p)
	if err != nil {
		return Setup{}, err
	}
	d := len(p.Params)
	if maxEvals == 0 {
		maxEvals = 100 * (d + 1)
	}
	vals := float64(d*d+8*d) + float64(maxEvals)
	need := float64(starts) * vals * (8 + 25) * 2
	// The QR factorisation's column-major [J | r] (Factor's scratch: one
	// at a time, whatever the starts; the Jacobians themselves are the
	// host's batch, which the host budgets).
	need += 8 * float64(max(p.Observations, d+1)) * float64(d+1)
	if err := mcmc.CheckMemory(method, p, need,
		fmt.Sprintf("starts = %d of %d parameters with max_evaluations = %d", starts, d, maxEvals)); err != nil {
		return Setup{}, err
	}
	names := make([]string, d)
	for i, q := range p.Params {
		names[i] = q.Name
	}
	return Setup{Bounds: b, Names: names, MaxEvals: maxEvals, Observations: p.Observations}, nil
}

// CheckResults refuses a malformed batch of results for d parameters before
// anything changes: with draw, a drawn point of the wrong dimension; a
// result with status OK but no residuals; residuals whose number differs
// from n, the number of the earlier evaluations (0: none yet); a Jacobian
// that is not residuals × d. It returns the number of residuals.
func CheckResults(method string, results []abi.Result, draw bool, d, n int) (int, error) {
	for i, r := range results {
		if draw && len(r.Theta) != d {
			return n, fmt.Errorf("%s: result %d has %d parameter values, want %d", method, i, len(r.Theta), d)
		}
		if r.Status != abi.OK {
			continue
		}
		if len(r.Residuals) == 0 {
			return n, fmt.Errorf("%s: result %d has status ok but no residuals: the host did not honour WantResiduals (does every likelihood term have the residuals capability?)", method, i)
		}
		if n == 0 {
			n = len(r.Residuals)
		}
		if len(r.Residuals) != n {
			return n, fmt.Errorf("%s: result %d has %d residuals, earlier evaluations %d: the number of residuals must not change", method, i, len(r.Residuals), n)
		}
		if r.Jacobian != nil && len(r.Jacobian) != n*d {
			return n, fmt.Errorf("%s: result %d has a Jacobian of %d values, want %d residuals × %d parameters = %d", method, i, len(r.Jacobian), n, d, n*d)
		}
	}
	return n, nil
}

// noStart is the error of start k, whose draws points (the last r) all
// failed to give usable residuals and Jacobian.
func noStart(method string, k, draws int, r abi.Result) error {
	if r.Status == abi.OK && len(r.Residuals) > 0 && r.Jacobian == nil {
		// The point itself was fine: its Jacobian is what failed (the
		// model's Jacobian export returned a failed status, or a
		// difference step failed). The prior is not the cause.
		return fmt.Errorf("%s: start %d found no starting point with a Jacobian in %d points: the last point's residuals were computed (%d, status ok) but its Jacobian could not be (the model's Jacobian export failed there or returned NaN or ±Inf, or a finite-difference step failed); summary.json counts jacobian_failures, and derivative_failures names a plugin export that failed", method, k, draws, len(r.Residuals))
	}
	if r.Status == abi.OK && len(r.Residuals) > 0 && AllFinite(r.Residuals) && r.Jacobian != nil && AllFinite(r.Jacobian) && math.IsInf(r.LogLik, -1) {
		// Residuals and Jacobian were fine; the log likelihood was −∞ (a
		// likelihood's hard constraint, ABI.md §6.2), which a point of the
		// target cannot have (audit 10: the message named the residuals).
		return fmt.Errorf("%s: start %d found no starting point with a finite log target in %d points: the last point's residuals and Jacobian were finite (status ok) but its log likelihood was −∞ (a likelihood term returned −∞: data impossible under the model there, a hard constraint); check the init points and that the prior overlaps the region where every term is finite", method, k, draws)
	}
	return fmt.Errorf("%s: start %d found no starting point with finite residuals and Jacobian in %d points (last: status %v, %d residuals, Jacobian of %d values, log likelihood %g); check the init points and that the prior overlaps the region where the model succeeds", method, k, draws, r.Status, len(r.Residuals), len(r.Jacobian), r.LogLik)
}

// Stopped is the exit reason of a start whose run had not ended when the
// whole run stopped (Ctrl-C, a fault): its row is its current iterate.
const Stopped = "stopped"

// Outcome is where one start's run ended.
type Outcome struct {
	Start int // the start's index
	// X is the final iterate, Fac its factorisation, LogPrior and LogLik
	// its values from the host.
	X                []float64
	Fac              *Factor
	LogPrior, LogLik float64
	Reason           string // the exit reason (Report makes it Stopped while not Done)
	Done             bool   // the start's run has ended
	// Iter steps taken, Evals evaluations, Failures failed ones.
	Iter, Evals, Failures int
	Trace                 []float64 // the cost of every iterate
}

// Cost is ½‖r‖² at the final iterate.
func (o Outcome) Cost() float64 { return 0.5 * o.Fac.RNorm * o.Fac.RNorm }

// Report is a least-squares method's report: Samples hold the final iterate
// of every start, in start order; Extra the settings (given, by name), the
// per-start outcomes, and the statistics (Stats with cutoff rcond, names
// the parameters) of the best start, the first of the lowest cost.
// initDraws are the points each start tried, c the counts of the run; obs
// is the number of observations among the residuals (Setup.Observations).
// stopped says the run stopped early (ABI.md §6.3: a method answers in any
// state after init): outs then hold the starts that have a point, a
// start's row its current iterate (reason Stopped unless it had ended),
// and Extra says "stopped".
func Report(outs []Outcome, settings map[string]any, rcond float64, obs int, names []string, bounds mcmc.Bounds, initDraws []int, c multistart.Counts, stopped bool) abi.Report {
	n := len(outs)
	var rep abi.Report
	if n == 0 {
		rep.Extra = map[string]any{"starts": 0, "stopped": stopped, "evaluations": c.Evaluations,
			"failures": c.Failures, "out_of_support": c.OutOfSupport}
		for k, v := range settings {
			rep.Extra[k] = v
		}
		return rep
	}
	costs := make([]any, n)
	reasons := make([]string, n)
	iters, evals, fails := make([]int, n), make([]int, n), make([]int, n)
	traces := make([]any, n)
	best := 0
	for k, o := range outs {
		if !o.Done {
			o.Reason = Stopped
			outs[k].Reason = Stopped
		}
		rep.Samples = append(rep.Samples, abi.Sample{
			Theta: append([]float64(nil), o.X...), LogPrior: o.LogPrior, LogLik: o.LogLik,
		})
		costs[k] = mcmc.JSONNum(o.Cost())
		reasons[k] = o.Reason
		iters[k], evals[k], fails[k] = o.Iter, o.Evals, o.Failures
		traces[k] = mcmc.JSONList(o.Trace)
		if o.Cost() < outs[best].Cost() {
			best = k
		}
	}
	b := outs[best]
	stats := b.Fac.Stats(rcond, obs)
	js := stats.JSON(names)
	// A parameter on a bound: its standard error assumes an interior
	// optimum, which it is not.
	var at []string
	for j, x := range b.X {
		if j < len(bounds.Lower) && (onBound(x, bounds.Lower[j]) || onBound(x, bounds.Upper[j])) {
			at = append(at, names[j])
		}
	}
	if len(at) > 0 {
		js["at_bound"] = at
		note := fmt.Sprintf("%s on a bound: the covariance and standard errors assume an optimum inside the bounds and do not hold for them", strings.Join(at, ", "))
		if old, ok := js["note"].(string); ok && old != "" {
			note = old + "; " + note
		}
		js["note"] = note
	}
	draws := 0
	for _, v := range initDraws {
		draws += v
	}
	rep.Extra = map[string]any{
		"starts":                n,
		"exit_reason":           reasons,
		"cost":                  costs,
		"iterations":            iters,
		"evaluations_per_start": evals,
		"failures_per_start":    fails,
		"trace_cost":            traces,
		"best_start":            outs[best].Start,
		"best":                  map[string]any{"theta": b.X, "exit_reason": b.Reason, "iterations": b.Iter, "evaluations": b.Evals, "jacobian_evaluations": b.Evals},
		"statistics":            js,
		"init_draws":            draws,
		"evaluations":           c.Evaluations,
		"jacobian_evaluations":  c.Evaluations,
		"failures":              sum(fails), // every start's, as failures_per_start counts them
		"failed_evaluations":    c.Failures, // statuses not ok (a failed Jacobian alone is not one)
		"out_of_support":        c.OutOfSupport,
	}
	for k, v := range settings {
		rep.Extra[k] = v
	}
	// What a user must not miss (kinfer run prints these).
	var warn []any
	if stats.Rank < stats.P {
		warn = append(warn, fmt.Sprintf("the Jacobian at the solution has rank %d < %d parameters: they are not all identifiable, and there are no standard errors (statistics.null_space lists the unidentifiable directions)", stats.Rank, stats.P))
	}
	if len(at) > 0 {
		warn = append(warn, fmt.Sprintf("%s ended on a bound: the standard errors assume an optimum inside the bounds", strings.Join(at, ", ")))
	}
	switch b.Reason {
	case "max_evaluations", "max_iterations", "stalled", "no_decrease", Stopped:
		warn = append(warn, fmt.Sprintf("the best start stopped with %q, not by a convergence test (the largest cosine between the residuals and a free column of J there is %.2g; 0 at a minimum): the point may not be a minimum", b.Reason, freeCosine(b, bounds)))
	case "blocked_by_failures":
		warn = append(warn, fmt.Sprintf("the best start stopped with %q: its steps were cut short by %d failed evaluations (statuses not ok, or Jacobians that could not be computed), so the point may be the edge of the region where the model succeeds, not a minimum, and its standard errors do not hold", b.Reason, b.Failures))
	}
	// Other starts stopped the same way are rows of samples.csv too, and
	// so of the run table's mean and quantiles: named, with their cost
	// against the best's (audit 18: gaussnewton's start 1 on MGH09 ended
	// at 21 times the best cost, unmentioned).
	var unconverged []string
	for k, o := range outs {
		if k == best {
			continue
		}
		switch o.Reason {
		case "max_evaluations", "max_iterations", "stalled", "no_decrease":
			unconverged = append(unconverged, fmt.Sprintf("start %d (%q, cost %.3g × the best's, largest cosine %.2g)", o.Start, o.Reason, o.Cost()/b.Cost(), freeCosine(o, bounds)))
		}
	}
	if len(unconverged) > 0 {
		warn = append(warn, fmt.Sprintf("%s stopped without a convergence test: their rows in samples.csv (and the run table's mean and quantiles over the starts) include points that may not be minima", strings.Join(unconverged, ", ")))
	}
	// A start whose first point (an init row, or a prior draw) could not
	// be used started elsewhere: said, since an init row given to be
	// started from was replaced by a prior draw without a word (audit 12).
	var redrawn []string
	for k, v := range initDraws {
		if v > 1 {
			redrawn = append(redrawn, fmt.Sprintf("start %d (%d points)", k, v))
		}
	}
	if len(redrawn) > 0 {
		warn = append(warn, fmt.Sprintf("%s tried more than one point before one had usable residuals and Jacobian: their first point (an init row, or a prior draw) was not used, and they started from a later prior draw", strings.Join(redrawn, ", ")))
	}
	if stopped {
		rep.Extra["stopped"] = true
		if len(outs) < len(initDraws) {
			warn = append(warn, fmt.Sprintf("the run stopped before %d of the %d starts had a usable point: they have no row (best_start is an index among all the starts)", len(initDraws)-len(outs), len(initDraws)))
		}
	}
	if len(warn) > 0 {
		rep.Extra["warnings"] = warn
	}
	return rep
}

// freeCosine is the gradient test's measure at o's iterate: the largest
// cosine between the residuals and a column of J of a parameter the next
// step may move (MINPACK's gtol test over the methods' free set; 0 at a
// stationary point). A start that
// stopped by no test (gaussnewton's "no_decrease": 30 halvings of its step
// did not lower the cost) shows by it whether its point may be a minimum
// (audit 21: NIST Rat43 from start 1 stopped at 141 times the certified
// cost with cosines up to 0.94, and no warning).
func freeCosine(o Outcome, bounds mcmc.Bounds) float64 {
	if len(bounds.Lower) != len(o.X) || len(bounds.Upper) != len(o.X) {
		all := make([]int, len(o.X)) // no bounds to hold a parameter: every one
		for j := range all {
			all[j] = j
		}
		return o.Fac.MaxCosine(all)
	}
	return o.Fac.MaxCosine(o.Fac.Free(o.X, bounds, nil))
}

// Starts is the part of a least-squares method's saved state besides its
// settings and its runs: the points each start tried, the number of
// residuals, the pending batch and the counters. A method embeds it after
// its runs; it saves as the fields init_draws, n, pending, pending_starts,
// evaluations, failures and out_of_support.
type Starts struct {
	InitDraws []int `json:"init_draws"`
	// N is the number of residuals (0 until the first usable evaluation);
	// every evaluation must return as many.
	N int `json:"n"`

	multistart.Schedule
	multistart.Counts
}

// Tell is abi.Method.Tell of the method named method, initialised (inited)
// or not, of d parameters. Without a pending batch it is an error. It
// refuses a malformed batch before anything changes (CheckResults), counts
// the results, then gives each result to its start — for a draw to
// start(k, r), which begins start k from r at the drawn point r.Theta and
// reports whether the point was usable (a start that has tried
// MaxInitDraws points without one is an error); for an iterate to
// observe(k, r).
func (s *Starts) Tell(method string, inited bool, d int, results []abi.Result, start func(k int, r abi.Result) bool, observe func(k int, r abi.Result)) error {
	if !inited || s.Pending == multistart.None {
		return fmt.Errorf("%s: Tell without a pending Ask", method)
	}
	if len(results) != len(s.PendingStarts) {
		return fmt.Errorf("%s: Tell got %d results for a batch of %d", method, len(results), len(s.PendingStarts))
	}
	n, err := CheckResults(method, results, s.Pending == multistart.Draw, d, s.N)
	if err != nil {
		return err
	}
	s.N = n
	s.Counts.Add(results)
	starts, kind := s.Take()
	if kind != multistart.Draw {
		for i, k := range starts {
			observe(k, results[i])
		}
		return nil
	}
	var errs []error
	for i, k := range starts {
		r := results[i]
		s.InitDraws[k]++
		if start(k, r) {
			continue
		}
		if s.InitDraws[k] >= MaxInitDraws {
			errs = append(errs, noStart(method, k, s.InitDraws[k], r))
		}
	}
	return errors.Join(errs...)
}

// Check verifies the shapes of a decoded state of n starts for d
// parameters, with runs runs as status says, so that a damaged checkpoint
// gives an error rather than a panic later: as many runs and draw counts as
// starts, shapeOK(k) of every started run k (its own check, against d and
// N), and the schedule.
func (s *Starts) Check(n, d, runs int, status multistart.Status, shapeOK func(k int) bool) error {
	if runs != n || len(s.InitDraws) != n {
		return fmt.Errorf("%d runs and %d draw counts, want %d", runs, len(s.InitDraws), n)
	}
	for k := range n {
		if started, _ := status(k); started && !shapeOK(k) {
			return fmt.Errorf("run %d has the wrong shape for d = %d, n = %d", k, d, s.N)
		}
	}
	return s.Schedule.Check(n, status)
}

// onBound reports whether x is the finite bound b (to 1e-10 relative).
func onBound(x, b float64) bool {
	return !math.IsInf(b, 0) && math.Abs(x-b) <= 1e-10*math.Max(1, math.Abs(b))
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}
