package anneal

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/adam"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
)

// Local search choices (the setting local).
const (
	LocalNone = 0
	LocalAdam = 1
)

// LocalNames are the choices of the setting local, by index.
var LocalNames = []string{"none", "adam"}

// Spec is the self-description of the builtin annealing method. Settings
// arrive in this order.
var Spec = abi.Spec{
	Kind:    abi.KindMethod,
	Name:    "anneal",
	Version: "1.0.0",
	Doc:     "generalised simulated annealing (Tsallis & Stariolo 1996; Xiang et al. 1997) as in scipy.optimize.dual_annealing, minimising -log target over the parameter box, with an optional Adam local search (Zhou et al. M5)",
	Settings: []abi.Setting{
		{Name: "maxiter", Default: 1000, Doc: "annealing iterations (strategy chains of 2d visits each; scipy's default)"},
		{Name: "initial_temp", Default: 5230, Doc: "initial visiting temperature T0 (scipy's default; Zhou et al. used 0.02)"},
		{Name: "restart_temp_ratio", Default: 2e-5, Doc: "re-anneal from a uniform point when the temperature falls below T0 times this (scipy's default; Zhou et al. used 2e-15)"},
		{Name: "visit", Default: 2.62, Doc: "visiting parameter q_v in (1, 3); larger gives heavier tails (scipy's default; Zhou et al. used 1.1)"},
		{Name: "accept", Default: -5, Doc: "acceptance parameter q_a < 1; lower accepts fewer uphill moves (scipy's default)"},
		{Name: "maxfun", Default: 1e7, Doc: "soft limit on evaluations, local searches included (scipy's default)"},
		{Name: "local", Default: LocalNone, Choices: LocalNames, Doc: "local search after chains that improve the best point: none (plain generalised annealing) or adam (Zhou et al. M5)"},
		{Name: "local_iterations", Default: 100, Doc: "most Adam updates per local search (Zhou et al. Sec. IV-A: 100)"},
		{Name: "local_lr", Default: 1e-3, Doc: "Adam step size of the local search (Zhou et al. Sec. IV-A: 0.001)"},
		{Name: "trace_every", Default: 0, Doc: "record the best log target every this many iterations (0: ceil(maxiter/100))"},
		{Name: "trace_theta", Default: 0, Choices: []string{"no", "yes"}, Doc: "also record the best point at each trace point"},
	},
	Capabilities: []abi.Capability{abi.CapCheckpoint},
}

const (
	// MaxReinit is the number of points the start (prior draws) or a
	// restart (uniform points) may try to find a finite log target
	// (scipy's EnergyState.MAX_REINIT_COUNT).
	MaxReinit = 1000
	// notImprovedFirst is the number of iterations without a new best after
	// which the first local search from the chain's minimum is made; later
	// ones come every d such iterations (scipy's not_improved_max_idx).
	notImprovedFirst = 1000
	// earlyStopWindow is the number of previous losses whose mean a local
	// search's loss must not exceed (Zhou et al. Sec. IV-A: "the running
	// average of the last ten losses").
	earlyStopWindow = 10
	// traceDefault is the number of trace intervals when trace_every is 0.
	traceDefault = 100
	// stateFormat versions the checkpoint layout.
	stateFormat = 1
)

// Adam's β₁, β₂ and ε in the local search (Kingma & Ba 2015, Algorithm 1
// defaults, as in PyTorch).
const (
	localBeta1 = 0.9
	localBeta2 = 0.999
	localEps   = 1e-8
)

// Config is the validated settings.
type Config struct {
	MaxIter          int     `json:"maxiter"`
	InitialTemp      float64 `json:"initial_temp"`
	RestartTempRatio float64 `json:"restart_temp_ratio"`
	Visit            float64 `json:"visit"`
	Accept           float64 `json:"accept"`
	MaxFun           int     `json:"maxfun"`
	Local            int     `json:"local"`
	LocalIterations  int     `json:"local_iterations"`
	LocalLR          float64 `json:"local_lr"`
	TraceEvery       int     `json:"trace_every"`
	TraceTheta       bool    `json:"trace_theta"`
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
		return c, fmt.Errorf("anneal: want %d settings (maxiter, initial_temp, restart_temp_ratio, visit, accept, maxfun, local, local_iterations, local_lr, trace_every, trace_theta), got %d", len(Spec.Settings), len(settings))
	}
	whole := func(name string, v float64, lo, hi int) (int, error) {
		return mcmc.WholeSetting("anneal", name, v, lo, hi)
	}
	var err error
	if c.MaxIter, err = whole("maxiter", settings[0], 1, 1_000_000_000); err != nil {
		return c, err
	}
	if c.InitialTemp = settings[1]; !(c.InitialTemp > 0) || math.IsInf(c.InitialTemp, 1) {
		return c, fmt.Errorf("anneal: setting initial_temp must be finite and > 0, got %g", settings[1])
	}
	if c.RestartTempRatio = settings[2]; !(c.RestartTempRatio > 0 && c.RestartTempRatio < 1) {
		return c, fmt.Errorf("anneal: setting restart_temp_ratio must be in (0, 1), got %g", settings[2])
	}
	if c.Visit = settings[3]; !(c.Visit > 1 && c.Visit < 3) {
		return c, fmt.Errorf("anneal: setting visit must be in (1, 3), got %g", settings[3])
	}
	if c.Accept = settings[4]; !(c.Accept < 1) || math.IsInf(c.Accept, -1) {
		return c, fmt.Errorf("anneal: setting accept must be finite and < 1, got %g", settings[4])
	}
	if c.MaxFun, err = whole("maxfun", settings[5], 1, math.MaxInt32); err != nil {
		return c, err
	}
	if c.Local, err = whole("local", settings[6], 0, len(LocalNames)-1); err != nil {
		return c, err
	}
	if c.LocalIterations, err = whole("local_iterations", settings[7], 1, 1_000_000); err != nil {
		return c, err
	}
	if c.LocalLR = settings[8]; !(c.LocalLR > 0) || math.IsInf(c.LocalLR, 1) {
		return c, fmt.Errorf("anneal: setting local_lr must be finite and > 0, got %g", settings[8])
	}
	if c.TraceEvery, err = whole("trace_every", settings[9], 0, 1_000_000_000); err != nil {
		return c, err
	}
	if c.TraceEvery == 0 {
		c.TraceEvery = max(1, (c.MaxIter+traceDefault-1)/traceDefault)
	}
	tt, err := whole("trace_theta", settings[10], 0, 1)
	if err != nil {
		return c, err
	}
	c.TraceTheta = tt == 1
	return c, nil
}

// Phases of a run: what the next batch is for.
const (
	phInit    = 0 // drawing the starting point from the prior
	phRestart = 1 // evaluating a uniform point to re-anneal from
	phChain   = 2 // visit J of the strategy chain of step Step
	phLocal   = 3 // a local search
	phDone    = 4
)

// Local search kinds (scipy's two calls of local_search).
const (
	lsFromBest = 1 // after a chain that improved the best point
	lsFromMin  = 2 // after notImprovedMax iterations without improvement
)

// Trace is the run's trajectory at iterations 0, every, 2·every, … and at
// the end: the evaluations so far, the best log target and, with
// trace_theta, the best point.
type Trace struct {
	Iteration     []int       `json:"iteration"`
	Evaluations   []int       `json:"evaluations"`
	BestLogTarget []float64   `json:"best_log_target"`
	BestTheta     [][]float64 `json:"best_theta,omitempty"`
}

// state is everything that changes during a run; SaveState writes it as
// JSON together with the PCG state. Every energy in it is finite.
type state struct {
	mcmc.Header[Config]
	RNG []byte `json:"rng,omitempty"`

	Phase int `json:"phase"`
	// Current location and its energy E = −log target.
	X []float64 `json:"x"`
	E float64   `json:"e"`
	// The best point found.
	Best         []float64 `json:"best"`
	EBest        float64   `json:"e_best"`
	BestLogPrior float64   `json:"best_log_prior"`
	BestLogLik   float64   `json:"best_log_lik"`
	// The strategy chain's minimum (scipy's xmin, emin).
	XMin []float64 `json:"x_min"`
	EMin float64   `json:"e_min"`
	// Iterations since the best improved, and the count that triggers a
	// local search from XMin.
	NotImproved    int  `json:"not_improved"`
	NotImprovedMax int  `json:"not_improved_max"`
	Improved       bool `json:"improved"`
	// Step within the current annealing, visit index within its chain,
	// visiting and acceptance temperatures.
	Step     int     `json:"step"`
	J        int     `json:"j"`
	Temp     float64 `json:"temp"`
	TempStep float64 `json:"temp_step"`
	// Completed iterations, and the draws of the start and current restart.
	Iteration int `json:"iteration"`
	InitDraws int `json:"init_draws"`
	Reinits   int `json:"reinits"`
	Restarts  int `json:"restarts"`

	// The local search in progress.
	LSKind   int       `json:"ls_kind,omitempty"`
	LSFrom   []float64 `json:"ls_from,omitempty"`
	LSFromE  float64   `json:"ls_from_e"`
	LS       *adam.Run `json:"ls,omitempty"`
	LSLosses []float64 `json:"ls_losses,omitempty"`
	LSBest   []float64 `json:"ls_best,omitempty"`
	LSBestE  float64   `json:"ls_best_e"`
	LSBestLP float64   `json:"ls_best_log_prior"`
	LSBestLL float64   `json:"ls_best_log_lik"`

	// The batch handed out by Ask and not yet told: a prior draw when
	// Point is nil.
	Pending bool      `json:"pending"`
	Point   []float64 `json:"point,omitempty"`

	// Counters and output.
	Evaluations       int    `json:"evaluations"`
	LocalSearches     int    `json:"local_searches"`
	LocalFromMin      int    `json:"local_from_min"`
	LocalEvaluations  int    `json:"local_evaluations"`
	LocalImprovements int    `json:"local_improvements"`
	LocalHalvings     int    `json:"local_halvings"`
	RestartDraws      int    `json:"restart_draws"`
	Failures          int    `json:"failures"`
	OutOfSupport      int    `json:"out_of_support"`
	Stop              string `json:"stop,omitempty"`
	Trace             Trace  `json:"trace"`
}

// Method is generalised simulated annealing. Use New, then Init.
type Method struct {
	cfg    Config
	bounds mcmc.Bounds
	vis    *visitor
	inited bool
	rng    *rand.PCG
	rnd    *rand.Rand
	st     state
}

// Spec implements abi.Method.
func (m *Method) Spec() abi.Spec { return Spec }

// Progress is the status of the progress line (host/run.Progresser): the annealing iteration out of
// maxiter (or the evaluations out of maxfun, whichever is further) and
// the best −log target so far.
func (m *Method) Progress() (string, float64) {
	f := math.Max(float64(m.st.Iteration)/float64(max(m.cfg.MaxIter, 1)), float64(m.st.Evaluations)/float64(max(m.cfg.MaxFun, 1)))
	s := fmt.Sprintf("iteration %d/%d", m.st.Iteration, m.cfg.MaxIter)
	if !math.IsInf(m.st.EBest, 0) && !math.IsNaN(m.st.EBest) && m.st.Best != nil {
		s += fmt.Sprintf(", best −log target %.6g", m.st.EBest)
	}
	return s, math.Min(f, 1)
}

// Config returns the method's validated settings.
func (m *Method) Config() Config { return m.cfg }

// memoryNeed is the planned memory of a run: its trace, whose points
// (⌊maxiter / trace_every⌋ + 2) each hold an iteration, an evaluation count
// and a log target, with trace_theta the best point's d values, twice (the
// trace grows by doubling) plus their JSON text in a checkpoint or the
// report (≈ 25 bytes a number); and the state of the annealing and of a
// local search (≈ 16 vectors of d values).
func memoryNeed(c Config, d int) float64 {
	vals := 3.0
	if c.TraceTheta {
		vals += float64(d)
	}
	points := float64(c.MaxIter/c.TraceEvery + 2)
	return points*(2*8*vals+25*vals) + float64(16*8*d+4096)
}

// Init implements abi.Method. It may be called again to restart. The
// parameter box must be finite: the visits wrap around it. Settings whose
// trace would not fit in the problem's memory budget are refused.
func (m *Method) Init(p abi.Problem) error {
	b, err := mcmc.NewBounds("anneal", p)
	if err != nil {
		return err
	}
	for i, q := range p.Params {
		if math.IsInf(b.Lower[i], 0) || math.IsInf(b.Upper[i], 0) {
			return fmt.Errorf("anneal: parameter %q has bounds [%g, %g]; annealing needs a finite box", q.Name, q.Lower, q.Upper)
		}
	}
	what := fmt.Sprintf("maxiter / trace_every = %d / %d trace points (trace_theta = %v) of %d parameters", m.cfg.MaxIter, m.cfg.TraceEvery, m.cfg.TraceTheta, len(p.Params))
	if err := mcmc.CheckMemory("anneal", p, memoryNeed(m.cfg, len(p.Params)), what); err != nil {
		return err
	}
	vals := 3.0 // an iteration, an evaluation count, a log target; with trace_theta d more
	if m.cfg.TraceTheta {
		vals += float64(len(p.Params))
	}
	if err := mcmc.CheckReport("anneal", float64(m.cfg.MaxIter/m.cfg.TraceEvery+2)*vals*25, what, "raise trace_every (0: 100 points), or leave out trace_theta"); err != nil {
		return err
	}
	m.bounds = b
	m.vis = newVisitor(m.cfg.Visit, b.Lower, b.Upper)
	m.rng = mcmc.Stream(p.Seed, 0)
	m.rnd = rand.New(m.rng)
	m.st = state{Header: mcmc.Header[Config]{Format: stateFormat, Config: m.cfg, D: len(p.Params), Seed: p.Seed}}
	m.inited = true
	return nil
}

// Done implements abi.Method.
func (m *Method) Done() bool { return m.inited && m.st.Phase == phDone }

func (m *Method) hyper() adam.Hyper {
	return adam.Hyper{LR: m.cfg.LocalLR, Beta1: localBeta1, Beta2: localBeta2, Eps: localEps, Iterations: m.cfg.LocalIterations}
}

// Ask implements abi.Method. It is idempotent: until Tell, it returns the
// same batch again. Every batch is one point (the algorithm is sequential).
func (m *Method) Ask() (abi.Batch, error) {
	if !m.inited {
		return abi.Batch{}, errors.New("anneal: Ask before Init")
	}
	if m.Done() {
		return abi.Batch{}, errors.New("anneal: Ask after the run is done")
	}
	s := &m.st
	if !s.Pending {
		switch s.Phase {
		case phInit:
			s.Point = nil
		case phRestart:
			// scipy's EnergyState.reset: uniform in the box.
			s.Point = make([]float64, s.D)
			for i := range s.Point {
				s.Point[i] = m.bounds.Lower[i] + m.rnd.Float64()*(m.bounds.Upper[i]-m.bounds.Lower[i])
			}
		case phChain:
			s.Point = m.vis.visit(m.rnd, s.X, s.J, s.Temp)
		case phLocal:
			s.Point = append([]float64(nil), s.LS.X...)
		}
		s.Pending = true
	}
	want := abi.WantLogTarget
	if s.Phase == phLocal {
		want = abi.WantGradient
	}
	if s.Point == nil {
		return abi.Batch{Draw: 1, Want: want}, nil
	}
	return abi.Batch{Points: [][]float64{append([]float64(nil), s.Point...)}, Want: want}, nil
}

// energy is −log target of a usable evaluation of x, or +Inf.
func (m *Method) energy(r abi.Result, x []float64) float64 {
	if !mcmc.Usable(r) || !m.bounds.Contains(x) {
		return math.Inf(1)
	}
	return -(r.LogPrior + r.LogLik)
}

// Tell implements abi.Method. A malformed batch is refused before anything
// changes. For points it asked, the method reads its own copy, not
// Result.Theta.
func (m *Method) Tell(results []abi.Result) error {
	s := &m.st
	if !m.inited || !s.Pending {
		return errors.New("anneal: Tell without a pending Ask")
	}
	if len(results) != 1 {
		return fmt.Errorf("anneal: Tell got %d results for a batch of 1", len(results))
	}
	r := results[0]
	x := s.Point
	if x == nil {
		if len(r.Theta) != s.D {
			return fmt.Errorf("anneal: result has %d parameter values, want %d", len(r.Theta), s.D)
		}
		x = append([]float64(nil), r.Theta...)
	}
	if r.Grad != nil && len(r.Grad) != s.D {
		return fmt.Errorf("anneal: result has a gradient of %d values, want %d", len(r.Grad), s.D)
	}
	s.Pending, s.Point = false, nil
	s.Evaluations++
	switch r.Status {
	case abi.OK:
	case abi.OutOfSupport:
		s.OutOfSupport++
	default:
		s.Failures++
	}
	e := m.energy(r, x)
	switch s.Phase {
	case phInit:
		s.InitDraws++
		if math.IsInf(e, 1) {
			if s.InitDraws >= MaxReinit {
				return fmt.Errorf("anneal: no starting point with a finite log target in %d prior draws (last: status %v, log prior %g, log likelihood %g); check that the prior overlaps the region where the model succeeds", s.InitDraws, r.Status, r.LogPrior, r.LogLik)
			}
			return nil
		}
		s.X, s.E = x, e
		s.setBest(x, e, r.LogPrior, r.LogLik)
		s.XMin, s.EMin = append([]float64(nil), x...), e
		s.NotImprovedMax = notImprovedFirst
		m.trace()
		m.beginIteration()
	case phRestart:
		s.Reinits++
		s.RestartDraws++
		if math.IsInf(e, 1) {
			if s.Reinits >= MaxReinit {
				return fmt.Errorf("anneal: restart %d found no point with a finite log target in %d uniform draws over the box", s.Restarts, s.Reinits)
			}
			return nil
		}
		s.X, s.E = x, e
		if e < s.EBest {
			s.setBest(x, e, r.LogPrior, r.LogLik)
		}
		m.beginIteration()
	case phChain:
		m.tellVisit(x, e, r)
	case phLocal:
		s.LocalEvaluations++
		m.tellLocal(r)
	}
	return nil
}

func (s *state) setBest(x []float64, e, lp, ll float64) {
	s.Best, s.EBest = append([]float64(nil), x...), e
	s.BestLogPrior, s.BestLogLik = lp, ll
}

// beginIteration starts iteration Iteration at step Step of the current
// annealing (the body of scipy's main loop up to StrategyChain.run):
// stop at maxiter, re-anneal when the temperature has fallen below
// T₀·restart_temp_ratio, else start a strategy chain.
func (m *Method) beginIteration() {
	s := &m.st
	if s.Iteration >= m.cfg.MaxIter {
		m.finish("maxiter")
		return
	}
	t := temperature(m.cfg.InitialTemp, m.cfg.Visit, s.Step)
	if t < m.cfg.InitialTemp*m.cfg.RestartTempRatio {
		s.Restarts++
		s.Step, s.Reinits = 0, 0
		s.Phase = phRestart
		return
	}
	s.Temp = t
	// The acceptance temperature T_qa = T_qv/(i + 1) (scipy's
	// temperature_step; Xiang et al. 1997).
	s.TempStep = t / float64(s.Step+1)
	s.NotImproved++
	s.J = 0
	s.Improved = s.Step == 0
	s.Phase = phChain
}

// tellVisit is one visit of a strategy chain (scipy's StrategyChain.run
// and accept_reject): a lower energy is always taken (and may be a new
// best); a higher one is accepted with the generalised Metropolis
// probability, drawing one uniform. An unusable point has energy +∞ and
// acceptance probability 0 (its uniform is still drawn).
func (m *Method) tellVisit(x []float64, e float64, r abi.Result) {
	s := &m.st
	if e < s.E {
		s.X, s.E = x, e
		if e < s.EBest {
			s.setBest(x, e, r.LogPrior, r.LogLik)
			s.Improved = true
			s.NotImproved = 0
		}
	} else {
		u := m.rnd.Float64()
		p := 0.0
		if !math.IsInf(e, 1) {
			p = acceptance(m.cfg.Accept, e-s.E, s.TempStep)
		}
		if u <= p && p > 0 {
			s.X, s.E = x, e
			s.XMin, s.EMin = append([]float64(nil), x...), e
		}
		if s.NotImproved >= s.NotImprovedMax && (s.J == 0 || s.E < s.EMin) {
			s.XMin, s.EMin = append([]float64(nil), s.X...), s.E
		}
	}
	s.J++
	if s.Evaluations >= m.cfg.MaxFun {
		m.finish("maxfun")
		return
	}
	if s.J == 2*s.D {
		m.endChain()
	}
}

// endChain decides on local searches after a strategy chain (scipy's
// StrategyChain.local_search): from the best point if the chain improved
// it (or it was the first of an annealing), then from the chain's minimum
// if the best has not improved for NotImprovedMax iterations.
func (m *Method) endChain() {
	if m.cfg.Local == LocalNone {
		m.endIteration()
		return
	}
	s := &m.st
	if s.Improved {
		m.startLocal(lsFromBest, s.Best, s.EBest)
		return
	}
	m.maybeLocalFromMin()
}

func (m *Method) maybeLocalFromMin() {
	s := &m.st
	if s.NotImproved >= s.NotImprovedMax {
		m.startLocal(lsFromMin, s.XMin, s.EMin)
		return
	}
	m.endIteration()
}

// endIteration completes an iteration and begins the next.
func (m *Method) endIteration() {
	s := &m.st
	s.Iteration++
	s.Step++
	if s.Iteration%m.cfg.TraceEvery == 0 {
		m.trace()
	}
	m.beginIteration()
}

func (m *Method) startLocal(kind int, x []float64, e float64) {
	s := &m.st
	s.LocalSearches++
	if kind == lsFromMin {
		s.LocalFromMin++
	}
	s.LSKind = kind
	s.LSFrom, s.LSFromE = append([]float64(nil), x...), e
	s.LS = adam.NewRun(x)
	s.LSLosses, s.LSBest = nil, nil
	s.LSBestE, s.LSBestLP, s.LSBestLL = 0, 0, 0
	s.Phase = phLocal
}

// tellLocal feeds one evaluation to the local Adam run. The search ends
// when Adam has made local_iterations updates, when it stalls (see
// adam.Run.Observe; also when its starting point has no gradient), or when
// an iterate's loss exceeds the mean of the previous earlyStopWindow
// losses (Zhou et al. Sec. IV-A).
func (m *Method) tellLocal(r abi.Result) {
	s := &m.st
	ls := s.LS
	end := false
	if ls.Observe(r, m.hyper(), m.bounds) {
		loss := -(ls.GoodLogPrior + ls.GoodLogLik)
		if s.LSBest == nil || loss < s.LSBestE {
			s.LSBest = append([]float64(nil), ls.Good...)
			s.LSBestE, s.LSBestLP, s.LSBestLL = loss, ls.GoodLogPrior, ls.GoodLogLik
		}
		if n := len(s.LSLosses); n >= earlyStopWindow {
			mean := 0.0
			for _, l := range s.LSLosses[n-earlyStopWindow:] {
				mean += l
			}
			end = loss > mean/earlyStopWindow
			s.LSLosses = s.LSLosses[n-earlyStopWindow+1:]
		}
		s.LSLosses = append(s.LSLosses, loss)
	}
	if end || ls.Done {
		m.endLocal()
	}
}

// endLocal takes the local search's result — its lowest-energy iterate if
// that is below the energy it started from, else the starting point
// (scipy's LocalSearchWrapper) — and continues as scipy's local_search.
func (m *Method) endLocal() {
	s := &m.st
	x, e := s.LSFrom, s.LSFromE
	lp, ll := 0.0, 0.0
	if s.LSBest != nil && s.LSBestE < e {
		x, e, lp, ll = s.LSBest, s.LSBestE, s.LSBestLP, s.LSBestLL
	}
	kind := s.LSKind
	s.LocalHalvings += s.LS.TotalHalvings
	s.LSKind, s.LSFrom, s.LSFromE, s.LS, s.LSLosses, s.LSBest = 0, nil, 0, nil, nil, nil
	s.LSBestE, s.LSBestLP, s.LSBestLL = 0, 0, 0
	if kind == lsFromMin {
		s.XMin, s.EMin = append([]float64(nil), x...), e
		s.NotImproved = 0
		s.NotImprovedMax = s.D
	}
	if e < s.EBest {
		if kind == lsFromBest {
			s.NotImproved = 0
		}
		s.setBest(x, e, lp, ll)
		s.X, s.E = append([]float64(nil), x...), e
		s.LocalImprovements++
	}
	if s.Evaluations >= m.cfg.MaxFun {
		m.finish("maxfun")
		return
	}
	if kind == lsFromBest {
		m.maybeLocalFromMin()
		return
	}
	m.endIteration()
}

// finish ends the run.
func (m *Method) finish(why string) {
	s := &m.st
	s.Stop = why
	s.Phase = phDone
	last := len(s.Trace.Iteration) - 1
	if last < 0 || s.Trace.Iteration[last] != s.Iteration || s.Trace.Evaluations[last] != s.Evaluations {
		m.trace()
	}
}

func (m *Method) trace() {
	s := &m.st
	s.Trace.Iteration = append(s.Trace.Iteration, s.Iteration)
	s.Trace.Evaluations = append(s.Trace.Evaluations, s.Evaluations)
	s.Trace.BestLogTarget = append(s.Trace.BestLogTarget, -s.EBest)
	if m.cfg.TraceTheta {
		s.Trace.BestTheta = append(s.Trace.BestTheta, append([]float64(nil), s.Best...))
	}
}

// Report implements abi.Method.
func (m *Method) Report() (abi.Report, error) {
	if !m.inited {
		return abi.Report{}, errors.New("anneal: Report before Init")
	}
	s := &m.st
	var rep abi.Report
	if s.Best != nil { // nil only in a run stopped before its first usable point
		rep.Samples = []abi.Sample{{Theta: append([]float64(nil), s.Best...), LogPrior: s.BestLogPrior, LogLik: s.BestLogLik}}
	}
	trajectory := map[string]any{
		"iteration":       s.Trace.Iteration,
		"evaluations":     s.Trace.Evaluations,
		"best_log_target": s.Trace.BestLogTarget,
	}
	if m.cfg.TraceTheta {
		trajectory["best_theta"] = s.Trace.BestTheta
	}
	rep.Extra = map[string]any{
		"best_value":          mcmc.JSONNum(s.EBest),
		"best_log_target":     mcmc.JSONNum(-s.EBest),
		"iterations":          s.Iteration,
		"restarts":            s.Restarts,
		"evaluations":         s.Evaluations,
		"local":               LocalNames[m.cfg.Local],
		"local_searches":      s.LocalSearches,
		"local_from_min":      s.LocalFromMin,
		"local_evaluations":   s.LocalEvaluations,
		"local_improvements":  s.LocalImprovements,
		"local_step_halvings": s.LocalHalvings,
		"restart_draws":       s.RestartDraws,
		"init_draws":          s.InitDraws,
		"failures":            s.Failures,
		"out_of_support":      s.OutOfSupport,
		"stop":                s.Stop,
		"final_temperature":   s.Temp,
		"maxiter":             m.cfg.MaxIter,
		"initial_temp":        m.cfg.InitialTemp,
		"restart_temp_ratio":  m.cfg.RestartTempRatio,
		"visit":               m.cfg.Visit,
		"accept":              m.cfg.Accept,
		"trace_every":         m.cfg.TraceEvery,
		"trace_theta":         m.cfg.TraceTheta,
		"trajectory":          trajectory,
	}
	if !m.Done() {
		// Stopped early (Ctrl-C, a fault; ABI.md §6.3: a method answers
		// in any state after init): the best point so far.
		rep.Extra["stopped"] = true
		rep.Extra["warnings"] = []string{fmt.Sprintf("the run stopped after %d of maxiter = %d iterations: the row is the best point so far, not the search's result", s.Iteration, m.cfg.MaxIter)}
	}
	return rep, nil
}
