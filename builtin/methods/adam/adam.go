package adam

import (
	"errors"
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// Spec is the self-description of the builtin Adam method. Settings arrive
// in this order.
var Spec = abi.Spec{
	Kind:    abi.KindMethod,
	Name:    "adam",
	Version: "1.0.0",
	Doc:     "Adam (Kingma & Ba 2015) maximising the log target from prior draws, several starts in parallel; steps projected onto the parameter box, halved after failed evaluations",
	Settings: []abi.Setting{
		{Name: "lr", Default: 1e-3, Doc: "step size alpha (Zhou et al. Sec. IV-A: 0.001; also Kingma & Ba's default)"},
		{Name: "beta1", Default: 0.9, Doc: "decay rate of the first moment estimate (Kingma & Ba 2015, Algorithm 1)"},
		{Name: "beta2", Default: 0.999, Doc: "decay rate of the second moment estimate (Kingma & Ba 2015, Algorithm 1)"},
		{Name: "eps", Default: 1e-8, Doc: "epsilon added to sqrt(v-hat) (Kingma & Ba 2015, Algorithm 1)"},
		{Name: "iterations", Default: 10000, Doc: "Adam updates per start (Zhou et al. Sec. IV-D: 10K iterations)"},
		{Name: "starts", Default: 1, Doc: "independent runs from prior draws, advanced together (one point each per batch)"},
		{Name: "trace_every", Default: 0, Doc: "record each start's log target every this many iterations (0: ceil(iterations/100))"},
		{Name: "trace_theta", Default: 0, Choices: []string{"no", "yes"}, Doc: "also record the parameters at each trace point"},
	},
	Capabilities: []abi.Capability{abi.CapCheckpoint},
}

const (
	// MaxInitDraws is the number of prior draws a start may use to find a
	// starting point with a finite log target and a gradient.
	MaxInitDraws = 100
	// traceDefault is the number of trace intervals when trace_every is 0.
	traceDefault = 100
	// stateFormat versions the checkpoint layout.
	stateFormat = 1
)

// Config is the validated settings.
type Config struct {
	Hyper
	Starts     int  `json:"starts"`
	TraceEvery int  `json:"trace_every"`
	TraceTheta bool `json:"trace_theta"`
}

// New builds the method from its settings, in the order of Spec.Settings.
func New(settings []float64) (abi.Method, error) {
	c, err := parse(settings)
	if err != nil {
		return nil, err
	}
	return &Method{cfg: c}, nil
}

func parse(settings []float64) (Config, error) {
	var c Config
	if len(settings) != len(Spec.Settings) {
		return c, fmt.Errorf("adam: want %d settings (lr, beta1, beta2, eps, iterations, starts, trace_every, trace_theta), got %d", len(Spec.Settings), len(settings))
	}
	var err error
	if c.LR = settings[0]; !(c.LR > 0) || math.IsInf(c.LR, 1) {
		return c, fmt.Errorf("adam: setting lr must be finite and > 0, got %g", settings[0])
	}
	if c.Beta1 = settings[1]; !(c.Beta1 >= 0 && c.Beta1 < 1) {
		return c, fmt.Errorf("adam: setting beta1 must be in [0, 1), got %g", settings[1])
	}
	if c.Beta2 = settings[2]; !(c.Beta2 >= 0 && c.Beta2 < 1) {
		return c, fmt.Errorf("adam: setting beta2 must be in [0, 1), got %g", settings[2])
	}
	if c.Eps = settings[3]; !(c.Eps > 0) || math.IsInf(c.Eps, 1) {
		return c, fmt.Errorf("adam: setting eps must be finite and > 0, got %g", settings[3])
	}
	if c.Iterations, err = mcmc.WholeSetting("adam", "iterations", settings[4], 0, 1_000_000_000); err != nil {
		return c, err
	}
	if c.Starts, err = mcmc.WholeSetting("adam", "starts", settings[5], 1, 100_000); err != nil {
		return c, err
	}
	if c.TraceEvery, err = mcmc.WholeSetting("adam", "trace_every", settings[6], 0, 1_000_000_000); err != nil {
		return c, err
	}
	tt, err := mcmc.WholeSetting("adam", "trace_theta", settings[7], 0, 1)
	if err != nil {
		return c, err
	}
	c.TraceTheta = tt == 1
	if c.TraceEvery == 0 {
		c.TraceEvery = max(1, (c.Iterations+traceDefault-1)/traceDefault)
	}
	return c, nil
}

// Trace is one start's trajectory: its log target (and, with trace_theta,
// its parameters) at iterations 0, every, 2·every, ... and at its last
// iterate.
type Trace struct {
	Iteration []int       `json:"iteration"`
	LogTarget []float64   `json:"log_target"`
	Theta     [][]float64 `json:"theta,omitempty"`
}

// state is everything that changes during a run; SaveState writes it as
// JSON (floats round-trip exactly through encoding/json).
type state struct {
	mcmc.Header[Config]
	Runs      []*Run  `json:"runs"` // nil until the start has a usable draw
	InitDraws []int   `json:"init_draws"`
	Traces    []Trace `json:"traces"`

	multistart.Schedule
	multistart.Counts
}

// Method is the multi-start Adam optimiser. Use New, then Init.
type Method struct {
	cfg    Config
	bounds mcmc.Bounds
	inited bool
	st     state
}

// Spec implements abi.Method.
func (m *Method) Spec() abi.Spec { return Spec }

// Progress is the status of the progress line (host/run.Progresser): the iteration (of the least
// advanced start) out of iterations, and the best −log target of the
// starts' last iterates.
func (m *Method) Progress() (string, float64) {
	it, best, any := m.cfg.Iterations, math.Inf(1), false
	for _, r := range m.st.Runs {
		if r == nil {
			it = 0
			continue
		}
		it = min(it, r.T)
		if r.Good != nil {
			best, any = math.Min(best, -(r.GoodLogPrior+r.GoodLogLik)), true
		}
	}
	if len(m.st.Runs) == 0 {
		it = 0
	}
	s := fmt.Sprintf("iteration %d/%d", it, m.cfg.Iterations)
	if any {
		s += fmt.Sprintf(", −log target %.6g", best)
	}
	return s, float64(it) / float64(max(m.cfg.Iterations, 1))
}

// Config returns the method's validated settings.
func (m *Method) Config() Config { return m.cfg }

// memoryNeed is the planned memory of a run: per start, its Adam state (≈ 8
// vectors of d values) and its trace, whose points (⌊iterations /
// trace_every⌋ + 2) each hold an iteration and a log target, with
// trace_theta d values, twice (the trace grows by doubling) plus their
// JSON text in a checkpoint or the report (≈ 25 bytes a number).
func memoryNeed(c Config, d int) float64 {
	vals := 2.0
	if c.TraceTheta {
		vals += float64(d)
	}
	points := float64(c.Iterations/c.TraceEvery + 2)
	perPoint := 2*8*vals + 25*vals
	// 1 536 bytes more a start: its rows of the report's per-start lists
	// (trajectory, final log target, stalled, step halvings, iterations),
	// their JSON and the host's copies of its results (audit 12: 60 000
	// starts peaked at 229 MB, 3.9 kB a start, under a 128 MiB budget
	// that had accepted them at 1.3 kB planned with the headroom).
	perStart := float64(8*8*d+512+1536) + points*perPoint
	return float64(c.Starts) * perStart
}

// reportBytes is the planned JSON of the report's traces: per start, its
// points of 2 numbers (with trace_theta, d more) at about 25 bytes a
// number.
func reportBytes(c Config, d int) float64 {
	vals := 2.0
	if c.TraceTheta {
		vals += float64(d)
	}
	return float64(c.Starts) * float64(c.Iterations/c.TraceEvery+2) * vals * 25
}

// Init implements abi.Method. It may be called again to restart. It
// refuses settings whose traces would not fit in the problem's memory
// budget, or in a report (mcmc.MaxReportBytes).
func (m *Method) Init(p abi.Problem) error {
	b, err := mcmc.NewBounds("adam", p)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("starts = %d with iterations / trace_every = %d / %d trace points (trace_theta = %v) of %d parameters",
		m.cfg.Starts, m.cfg.Iterations, m.cfg.TraceEvery, m.cfg.TraceTheta, len(p.Params))
	if err := mcmc.CheckMemory("adam", p, memoryNeed(m.cfg, len(p.Params)), what); err != nil {
		return err
	}
	if err := mcmc.CheckReport("adam", reportBytes(m.cfg, len(p.Params)), what, "raise trace_every (0: 100 points a start), or leave out trace_theta"); err != nil {
		return err
	}
	m.bounds = b
	n := m.cfg.Starts
	m.st = state{
		Header:    mcmc.Header[Config]{Format: stateFormat, Config: m.cfg, D: len(p.Params), Seed: p.Seed},
		Runs:      make([]*Run, n),
		InitDraws: make([]int, n),
		Traces:    make([]Trace, n),
	}
	m.inited = true
	return nil
}

// Done implements abi.Method.
func (m *Method) Done() bool {
	return m.inited && multistart.AllDone(len(m.st.Runs), m.st.status)
}

// status reports whether start k has started and whether it is done.
func (s *state) status(k int) (started, done bool) {
	r := s.Runs[k]
	return r != nil, r != nil && r.Done
}

// Ask implements abi.Method. It is idempotent: until Tell, it returns the
// same batch again.
func (m *Method) Ask() (abi.Batch, error) {
	s := &m.st
	return s.Schedule.Ask("adam", m.inited, len(s.Runs), s.status, abi.WantGradient, func(k int) []float64 { return s.Runs[k].X })
}

// Tell implements abi.Method. A malformed batch is refused before anything
// changes. For iterates, Result.Theta is not read: the method keeps its own
// copy of the points it asked for.
func (m *Method) Tell(results []abi.Result) error {
	s := &m.st
	if !m.inited || s.Pending == multistart.None {
		return errors.New("adam: Tell without a pending Ask")
	}
	if len(results) != len(s.PendingStarts) {
		return fmt.Errorf("adam: Tell got %d results for a batch of %d", len(results), len(s.PendingStarts))
	}
	for i, r := range results {
		if s.Pending == multistart.Draw && len(r.Theta) != s.D {
			return fmt.Errorf("adam: result %d has %d parameter values, want %d", i, len(r.Theta), s.D)
		}
		if r.Grad != nil && len(r.Grad) != s.D {
			return fmt.Errorf("adam: result %d has a gradient of %d values, want %d", i, len(r.Grad), s.D)
		}
	}
	s.Counts.Add(results)
	starts, kind := s.Take()
	if kind == multistart.Draw {
		return m.tellDraws(starts, results)
	}
	for i, k := range starts {
		run := s.Runs[k]
		if run.Observe(results[i], m.cfg.Hyper, m.bounds) || run.Done {
			m.trace(k)
		}
	}
	return nil
}

func (m *Method) tellDraws(starts []int, results []abi.Result) error {
	s := &m.st
	var errs []error
	for i, k := range starts {
		r := results[i]
		s.InitDraws[k]++
		if Usable(r, r.Theta, m.bounds) {
			run := NewRun(r.Theta)
			run.Observe(r, m.cfg.Hyper, m.bounds)
			s.Runs[k] = run
			m.trace(k)
			continue
		}
		if s.InitDraws[k] >= MaxInitDraws && r.Status == abi.OK && r.Grad == nil && !math.IsInf(r.LogTarget(), 0) && !math.IsNaN(r.LogTarget()) {
			// The point itself was fine: its gradient is what failed (the
			// model's VJP or Jacobian export returned a failed status, or a
			// difference step did). The prior is not the cause.
			errs = append(errs, fmt.Errorf("adam: start %d found no starting point with a gradient in %d prior draws: the last point's log target was computed (%g, status ok) but its gradient could not be (the model's gradient export failed there or returned NaN or ±Inf, or a finite-difference step failed); summary.json counts gradient_failures, and derivative_failures names a plugin export that failed", k, s.InitDraws[k], r.LogTarget()))
		} else if s.InitDraws[k] >= MaxInitDraws {
			errs = append(errs, fmt.Errorf("adam: start %d found no starting point with a finite log target and a gradient in %d prior draws (last: status %v, log prior %g, log likelihood %g, gradient of %d values); check that the prior overlaps the region where the model succeeds", k, s.InitDraws[k], r.Status, r.LogPrior, r.LogLik, len(r.Grad)))
		}
	}
	return errors.Join(errs...)
}

// trace records start k's iterate if it is at a trace point: iteration 0,
// a multiple of trace_every, or the run's last iterate (recorded once).
func (m *Method) trace(k int) {
	run, tr := m.st.Runs[k], &m.st.Traces[k]
	if run.Good == nil {
		return
	}
	t := run.GoodT
	last := len(tr.Iteration) - 1
	if last >= 0 && tr.Iteration[last] == t {
		return
	}
	if t%m.cfg.TraceEvery != 0 && !run.Done {
		return
	}
	tr.Iteration = append(tr.Iteration, t)
	tr.LogTarget = append(tr.LogTarget, run.GoodLogPrior+run.GoodLogLik)
	if m.cfg.TraceTheta {
		tr.Theta = append(tr.Theta, append([]float64(nil), run.Good...))
	}
}

// Report implements abi.Method.
func (m *Method) Report() (abi.Report, error) {
	if !m.inited {
		return abi.Report{}, errors.New("adam: Report before Init")
	}
	s := &m.st
	n := m.cfg.Starts
	var rep abi.Report
	final := make([]float64, n)
	iters := make([]int, n)
	stalled := make([]bool, n)
	halvings := make([]int, n)
	best := -1
	initDraws := 0
	for k, run := range s.Runs {
		if k < len(s.InitDraws) {
			initDraws += s.InitDraws[k]
		}
		if run == nil || run.Good == nil {
			// No usable point yet (a run stopped early): no row.
			final[k] = math.NaN()
			continue
		}
		iters[k], stalled[k], halvings[k] = run.GoodT, run.Stalled, run.TotalHalvings
		rep.Samples = append(rep.Samples, abi.Sample{
			Theta: append([]float64(nil), run.Good...), LogPrior: run.GoodLogPrior, LogLik: run.GoodLogLik,
		})
		final[k] = run.GoodLogPrior + run.GoodLogLik
		if best < 0 || final[k] > final[best] {
			best = k
		}
	}
	bestLT := math.NaN()
	if best >= 0 {
		bestLT = final[best]
	}
	var bestStart any = best // null when no start has a usable point (stopped early)
	if best < 0 {
		bestStart = nil
	}
	traces := make([]any, n)
	for k, tr := range s.Traces {
		t := map[string]any{"iteration": tr.Iteration, "log_target": mcmc.JSONList(tr.LogTarget)}
		if m.cfg.TraceTheta {
			t["theta"] = tr.Theta
		}
		traces[k] = t
	}
	rep.Extra = map[string]any{
		"starts":           n,
		"iterations":       m.cfg.Iterations,
		"lr":               m.cfg.LR,
		"beta1":            m.cfg.Beta1,
		"beta2":            m.cfg.Beta2,
		"eps":              m.cfg.Eps,
		"final_log_target": mcmc.JSONList(final),
		"iterations_done":  iters,
		"stalled":          stalled,
		"step_halvings":    halvings,
		"best_start":       bestStart,
		"best_log_target":  mcmc.JSONNum(bestLT),
		"trace_every":      m.cfg.TraceEvery,
		"trajectory":       traces,
		"init_draws":       initDraws,
		"evaluations":      s.Evaluations,
		"failures":         s.Failures,
		"out_of_support":   s.OutOfSupport,
	}
	var warn []string
	if best >= 0 {
		if w := notConverged(s.Traces[best], iters[best], m.cfg.Iterations, best); w != "" {
			warn = append(warn, w)
		}
	}
	if !m.Done() {
		// Stopped early (Ctrl-C, a fault; ABI.md §6.3: a method answers
		// in any state after init): each start's last usable iterate.
		rep.Extra["stopped"] = true
		warn = append(warn, fmt.Sprintf("the run stopped before every start made its %d iterations (iterations_done per start): the rows are the starts' last usable iterates so far, not optima", m.cfg.Iterations))
	}
	if len(warn) > 0 {
		rep.Extra["warnings"] = warn
	}
	return rep, nil
}

// convergedRise is the rise of the log target over a run's last 10 % of
// iterations above which the run is said not to have converged (nats).
const convergedRise = 0.01

// notConverged is a warning when the best start used all its iterations
// and its log target still rose by more than convergedRise over their last
// 10 % (its trace), else "": such a run ended "done" below its optimum
// (audit 4: 25 nats below, still climbing).
func notConverged(tr Trace, done, iterations, k int) string {
	if done < iterations || len(tr.Iteration) < 2 {
		return ""
	}
	last := len(tr.Iteration) - 1
	from := -1
	for i, it := range tr.Iteration {
		if float64(it) >= 0.9*float64(done) {
			from = i
			break
		}
	}
	if from < 0 || from == last {
		from = last - 1 // the trace is too coarse: its last step
	}
	rise := tr.LogTarget[last] - tr.LogTarget[from]
	if !(rise > convergedRise) {
		return ""
	}
	return fmt.Sprintf("start %d's log target still rose by %.3g from iteration %d to its last, %d: not converged; raise iterations or lr, or reparameterise with [transform] (parameters of very different scales)",
		k+1, rise, tr.Iteration[from], tr.Iteration[last])
}
