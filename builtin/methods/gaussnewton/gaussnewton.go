package gaussnewton

import (
	"errors"
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/lsq"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/methods/internal/multistart"
)

// Spec is the self-description of the builtin Gauss–Newton method.
// Settings arrive in this order.
var Spec = abi.Spec{
	Kind:    abi.KindMethod,
	Name:    "gaussnewton",
	Version: "1.0.0",
	Doc:     "Gauss-Newton least squares with the pseudo-inverse step -J+ r (Gouveia et al. Eq. 13; SVD, relative singular-value cutoff), optional step halving, projected onto the parameter box; several starts; covariance, standard errors and correlations at the solution",
	Settings: []abi.Setting{
		{Name: "starts", Default: 1, Doc: "independent runs: the study's init points first, then prior draws; advanced together"},
		{Name: "step_control", Default: 1, Choices: []string{"none", "halving"}, Doc: "none: take every Gauss-Newton step (Gouveia's plain iteration); halving: halve a step until the cost decreases"},
		{Name: "ftol", Default: 1e-15, Doc: "stop when the relative decrease of the sum of squares (predicted, or actual after a step) is at most ftol"},
		{Name: "xtol", Default: 1e-12, Doc: "stop when a step is at most xtol times the norm of the parameters"},
		{Name: "gtol", Default: 0, Doc: "stop when the cosine between the residuals and every free column of the Jacobian is at most gtol"},
		{Name: "max_iterations", Default: 100, Doc: "Gauss-Newton steps per start"},
		{Name: "max_evaluations", Default: 0, Doc: "evaluations (residuals and Jacobian) per start; 0: 100*(d+1)"},
		{Name: "scale", Default: 1, Choices: []string{"jacobian", "none"}, Doc: "column scaling before the pseudo-inverse: unit columns (the cutoff is then relative to equilibrated J), or none (plain J+)"},
		{Name: "rcond", Default: 1e-12, Doc: "relative singular-value cutoff of the pseudo-inverse and of the rank behind the covariance"},
	},
	Capabilities: []abi.Capability{abi.CapCheckpoint, abi.CapLeastSquares},
}

// Step control and scaling modes (the step_control and scale settings).
const (
	StepNone      = 0
	StepHalving   = 1
	ScaleJacobian = 0
	ScaleNone     = 1
)

const (
	// MaxInitDraws is the number of points a start may try (the study's
	// init points, then prior draws) to find one with usable residuals and
	// Jacobian.
	MaxInitDraws = lsq.MaxInitDraws
	// stateFormat versions the checkpoint layout.
	stateFormat = 1
)

// Config is the validated settings.
type Config struct {
	Starts      int     `json:"starts"`
	StepControl int     `json:"step_control"`
	Ftol        float64 `json:"ftol"`
	Xtol        float64 `json:"xtol"`
	Gtol        float64 `json:"gtol"`
	MaxIter     int     `json:"max_iterations"`
	MaxEvals    int     `json:"max_evaluations"` // resolved at Init when 0
	Scale       int     `json:"scale"`
	Rcond       float64 `json:"rcond"`
}

// New builds the method from its settings, in the order of Spec.Settings.
func New(settings []float64) (abi.Method, error) {
	c, err := parse(settings)
	if err != nil {
		return nil, err
	}
	return &Method{cfg: c}, nil
}

func nonneg(name string, v float64) (float64, error) {
	if !(v >= 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("gaussnewton: setting %s must be finite and >= 0, got %g", name, v)
	}
	return v, nil
}

func parse(s []float64) (Config, error) {
	var c Config
	if len(s) != len(Spec.Settings) {
		return c, fmt.Errorf("gaussnewton: want %d settings (starts, step_control, ftol, xtol, gtol, max_iterations, max_evaluations, scale, rcond), got %d", len(Spec.Settings), len(s))
	}
	var err error
	if c.Starts, err = mcmc.WholeSetting("gaussnewton", "starts", s[0], 1, 100_000); err != nil {
		return c, err
	}
	if c.StepControl, err = mcmc.WholeSetting("gaussnewton", "step_control", s[1], 0, 1); err != nil {
		return c, err
	}
	if c.Ftol, err = nonneg("ftol", s[2]); err != nil {
		return c, err
	}
	if c.Xtol, err = nonneg("xtol", s[3]); err != nil {
		return c, err
	}
	if c.Gtol, err = nonneg("gtol", s[4]); err != nil {
		return c, err
	}
	if c.MaxIter, err = mcmc.WholeSetting("gaussnewton", "max_iterations", s[5], 0, 1_000_000_000); err != nil {
		return c, err
	}
	if c.MaxEvals, err = mcmc.WholeSetting("gaussnewton", "max_evaluations", s[6], 0, 1_000_000_000); err != nil {
		return c, err
	}
	if c.Scale, err = mcmc.WholeSetting("gaussnewton", "scale", s[7], 0, 1); err != nil {
		return c, err
	}
	if c.Rcond = s[8]; !(c.Rcond >= 0 && c.Rcond < 1) {
		return c, fmt.Errorf("gaussnewton: setting rcond must be in [0, 1), got %g", s[8])
	}
	return c, nil
}

// state is everything that changes during a run; SaveState writes it as
// JSON (floats round-trip exactly through encoding/json).
type state struct {
	mcmc.Header[Config]
	Runs []*Run `json:"runs"` // nil until the start has a usable point
	lsq.Starts
}

// Method is the multi-start Gauss–Newton method. Use New, then Init.
type Method struct {
	cfg    Config
	bounds mcmc.Bounds
	names  []string
	obs    int // observations among the residuals (statistics)
	inited bool
	st     state
}

// Spec implements abi.Method.
func (m *Method) Spec() abi.Spec { return Spec }

// Config returns the method's validated settings (MaxEvals resolved after
// Init).
func (m *Method) Config() Config { return m.cfg }

// Init implements abi.Method. It may be called again to restart.
func (m *Method) Init(p abi.Problem) error {
	set, err := lsq.NewSetup("gaussnewton", p, m.cfg.Starts, m.cfg.MaxEvals)
	if err != nil {
		return err
	}
	c := m.cfg
	c.MaxEvals = set.MaxEvals
	m.cfg, m.bounds, m.names, m.obs = c, set.Bounds, set.Names, set.Observations
	m.st = state{
		Header: mcmc.Header[Config]{Format: stateFormat, Config: c, D: len(p.Params), Seed: p.Seed},
		Runs:   make([]*Run, c.Starts),
		Starts: lsq.Starts{InitDraws: make([]int, c.Starts)},
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
	return s.Schedule.Ask("gaussnewton", m.inited, len(s.Runs), s.status, lsq.Want, func(k int) []float64 { return s.Runs[k].Trial })
}

// Tell implements abi.Method. A malformed batch — the wrong number of
// results, a drawn point of the wrong dimension, residuals whose number
// differs from the first evaluation's, a Jacobian that is not
// len(residuals)×d — is refused with an error before anything changes. An
// evaluation that failed (status not OK, non-finite residuals or Jacobian,
// no Jacobian) is not an error: it counts as a failure and the run shrinks
// its step.
func (m *Method) Tell(results []abi.Result) error {
	s := &m.st
	start := func(k int, r abi.Result) bool {
		run := &Run{}
		if !run.Start(r, r.Theta, m.cfg, m.bounds) {
			return false
		}
		s.Runs[k] = run
		return true
	}
	observe := func(k int, r abi.Result) { s.Runs[k].Observe(r, m.cfg, m.bounds) }
	return s.Starts.Tell("gaussnewton", m.inited, s.D, results, start, observe)
}

// Report implements abi.Method. Samples hold the final iterate of every
// start, in start order; Extra the settings, per-start outcomes and the
// statistics of the best start (lsq.Stats).
func (m *Method) Report() (abi.Report, error) {
	if !m.inited {
		return abi.Report{}, errors.New("gaussnewton: Report before Init")
	}
	s := &m.st
	var outs []lsq.Outcome
	for k, r := range s.Runs {
		if r == nil {
			continue // no usable point yet (a run stopped early)
		}
		outs = append(outs, lsq.Outcome{Start: k, X: r.X, Fac: r.Fac, LogPrior: r.LogPrior, LogLik: r.LogLik, Reason: r.Reason, Done: r.Done,
			Iter: r.Iter, Evals: r.Evals, Failures: r.Failures, Trace: r.Trace})
	}
	settings := map[string]any{
		"step_control":    Spec.Settings[1].Choices[m.cfg.StepControl],
		"ftol":            m.cfg.Ftol,
		"xtol":            m.cfg.Xtol,
		"gtol":            m.cfg.Gtol,
		"max_iterations":  m.cfg.MaxIter,
		"max_evaluations": m.cfg.MaxEvals,
		"scale":           Spec.Settings[7].Choices[m.cfg.Scale],
		"rcond":           m.cfg.Rcond,
	}
	return lsq.Report(outs, settings, m.cfg.Rcond, m.obs, m.names, m.bounds, s.InitDraws, s.Counts, !m.Done()), nil
}
