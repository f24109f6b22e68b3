package metropolis

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/stats"
)

// Spec is the self-description of the builtin Metropolis method. Settings
// arrive in this order.
var Spec = abi.Spec{
	Kind:    abi.KindMethod,
	Name:    "metropolis",
	Version: "1.0.0",
	Doc:     "adaptive random-walk Metropolis-Hastings (Haario 2001 covariance, Andrieu & Thoms 2008 global scale); adaptation during burn-in only",
	Settings: []abi.Setting{
		{Name: "chains", Default: 4, Doc: "number of chains, run in lock-step (one proposal each per batch)"},
		{Name: "samples", Default: 5000, Doc: "kept draws per chain after burn-in"},
		{Name: "burn_in", Default: 2000, Doc: "steps per chain before keeping draws; the proposal adapts only during these"},
		{Name: "thin", Default: 1, Doc: "keep every thin-th state after burn-in"},
		{Name: "target_accept", Default: 0.234, Doc: "acceptance rate the global proposal scale is tuned to (Roberts, Gelman & Gilks 1997)"},
		{Name: "init_scale", Default: 0.1, Doc: "initial proposal sd as a fraction of each parameter's range (its bounds, or the spread of the chains' starting draws when the bounds are infinite or over 1000 times wider)"},
	},
	Capabilities: []abi.Capability{abi.CapCheckpoint},
}

const (
	// MaxInitDraws is the number of prior draws a chain may use to find a
	// starting point with a finite log target.
	MaxInitDraws = 100
	// rmExponent is δ in the Robbins–Monro gain γₖ = k^(−δ); Andrieu & Thoms
	// 2008 (Sec. 5) require δ ∈ (½, 1].
	rmExponent = 0.6
	// logLambdaMax bounds |log λ| so that a target rejecting every proposal
	// cannot drive the scale to 0 or ∞.
	logLambdaMax = 40
	// scaleSD is s_d·d = 2.38² (Gelman, Roberts & Gilks 1996; Haario et al.
	// 2001, Sec. 2): the proposal covariance is 2.38²/d times the target's.
	scaleSD = 2.38 * 2.38
	// regEps is ε of Haario et al. 2001's s_d·ε·I_d, in units of the initial
	// proposal variances s₀ᵢ².
	regEps = 1e-6
	// stateFormat versions the checkpoint layout.
	stateFormat = 1
)

// Config is the validated settings.
type Config struct {
	Chains       int     `json:"chains"`
	Samples      int     `json:"samples"`
	BurnIn       int     `json:"burn_in"`
	Thin         int     `json:"thin"`
	TargetAccept float64 `json:"target_accept"`
	InitScale    float64 `json:"init_scale"`
}

// whole checks that setting name holds a whole number in [lo, hi].
func whole(name string, v float64, lo, hi int) (int, error) {
	return mcmc.WholeSetting("metropolis", name, v, lo, hi)
}

// New builds the method from its settings, in the order of Spec.Settings.
func New(settings []float64) (abi.Method, error) {
	if len(settings) != len(Spec.Settings) {
		return nil, fmt.Errorf("metropolis: want %d settings (chains, samples, burn_in, thin, target_accept, init_scale), got %d", len(Spec.Settings), len(settings))
	}
	var c Config
	var err error
	if c.Chains, err = whole("chains", settings[0], 1, 100_000); err != nil {
		return nil, err
	}
	if c.Samples, err = whole("samples", settings[1], 1, 100_000_000); err != nil {
		return nil, err
	}
	if c.BurnIn, err = whole("burn_in", settings[2], 0, 1_000_000_000); err != nil {
		return nil, err
	}
	if c.Thin, err = whole("thin", settings[3], 1, 1_000_000); err != nil {
		return nil, err
	}
	if c.TargetAccept = settings[4]; !(c.TargetAccept > 0 && c.TargetAccept < 1) {
		return nil, fmt.Errorf("metropolis: setting target_accept must be in (0, 1), got %g", settings[4])
	}
	if c.InitScale = settings[5]; !(c.InitScale > 0) || math.IsInf(c.InitScale, 1) {
		return nil, fmt.Errorf("metropolis: setting init_scale must be finite and > 0, got %g", settings[5])
	}
	if int64(c.Samples)*int64(c.Thin) > 1<<40 {
		return nil, fmt.Errorf("metropolis: samples × thin = %d × %d is too many steps", c.Samples, c.Thin)
	}
	return &Method{cfg: c}, nil
}

// Pending batch kinds.
const (
	pendNone      = 0
	pendDraw      = 1
	pendProposals = 2
)

// state is everything that changes during a run; SaveState writes it as
// JSON (floats round-trip exactly through encoding/json's shortest
// representation) together with the PCG states.
type state struct {
	mcmc.Header[Config]
	// RNG holds the chains' PCG states (encoding.BinaryMarshaler); filled
	// only in a checkpoint.
	RNG [][]byte `json:"rng,omitempty"`

	// Chains: current state, whether started, prior draws used.
	X         [][]float64 `json:"x"`
	LogPrior  []float64   `json:"log_prior"`
	LogLik    []float64   `json:"log_lik"`
	Started   []bool      `json:"started"`
	InitDraws []int       `json:"init_draws"`
	// Step is the number of completed Metropolis steps of every chain.
	Step int `json:"step"`

	// Adaptation.
	S0          []float64 `json:"s0"`
	LogLambda   float64   `json:"log_lambda"`
	RMK         int       `json:"rm_k"`
	Adaptive    bool      `json:"adaptive"`
	WindowReset bool      `json:"window_reset"`
	AccN        int       `json:"acc_n"`
	AccMean     []float64 `json:"acc_mean"`
	AccM2       []float64 `json:"acc_m2"`
	Chol        []float64 `json:"chol"`

	// The batch handed out by Ask and not yet told.
	Pending       int         `json:"pending"`
	PendingChains []int       `json:"pending_chains,omitempty"`
	Proposals     [][]float64 `json:"proposals,omitempty"`

	// Counters.
	AcceptBurn   []int `json:"accept_burn"`
	AcceptKept   []int `json:"accept_kept"`
	ProposedKept int   `json:"proposed_kept"`
	Failures     int   `json:"failures"`
	OutOfSupport int   `json:"out_of_support"`

	// Taken is the number of kept steps whose draws TakeSamples has handed
	// out (abi.SampleStream). Samples, filled only in a checkpoint, holds
	// per chain the kept draws of the later steps: a checkpoint does not
	// repeat what the host has journaled.
	Taken   int            `json:"taken"`
	Samples [][]abi.Sample `json:"samples,omitempty"`
	// SamplesBin is Samples packed (packSamples), what SaveState writes:
	// formatting a float as JSON costs a Go plugin under wazero so much
	// that the state of ~50 000 kept draws, which a plugin's host takes
	// only at the end, exceeded a call's fuel. Samples is read from a
	// checkpoint of an older kinfer.
	SamplesBin []byte `json:"samples_bin,omitempty"`
}

// Method is the adaptive Metropolis sampler. Use New, then Init.
type Method struct {
	cfg    Config
	bounds mcmc.Bounds
	names  []string    // the parameters', for the report's warnings
	starts [][]float64 // Problem.Starts: a chain start among them is not a prior draw
	// priorBox is Problem.PriorBox (nil when not given): the prior's width
	// where the starting values do not tell it.
	priorBox [][2]float64
	inited   bool
	rngs     []*rand.PCG
	rands    []*rand.Rand
	st       state
	// kept holds per chain the kept draws of steps keptFrom, keptFrom+1,
	// ...; keptFrom is 0 except after LoadState of a state with taken
	// steps, until RestoreSamples gives them back.
	kept     [][]abi.Sample
	keptFrom int
}

// Spec implements abi.Method.
func (m *Method) Spec() abi.Spec { return Spec }

// Config returns the method's validated settings.
func (m *Method) Config() Config { return m.cfg }

// Memory per kept draw: its d values twice (the method's and, when the
// study has transforms, the host's θ for samples.csv), the Sample headers
// of the method's list, the host's list and the report, and slack for the
// lists' growth by doubling, and the host's output columns (d values, the
// log prior and log likelihood, twice while samples.parquet is encoded);
// then per chain its state (x, the proposal and the batch's copy,
// counters, stream) and the d×d adaptation matrices. Measured (audit 10):
// 4 × 200 000 draws of 2 parameters peaked 322 MB above the process's
// base, 400 bytes a draw; 4 × 330 000 at 662 MB, over a 512 MiB budget
// that had accepted them at 400 planned (with the collector's headroom);
// this plans 528.
func memoryNeed(c Config, d int) float64 {
	perDraw := float64(2*8*d+4*mcmc.SampleHeader+8) + float64(2*8*(d+2))
	perChain := float64(3*8*d + 256)
	return float64(c.Chains)*float64(c.Samples)*perDraw + float64(c.Chains)*perChain + float64(4*8*d*d)
}

// Init implements abi.Method. It may be called again to restart. It
// refuses settings whose kept draws would not fit in the problem's memory
// budget.
func (m *Method) Init(p abi.Problem) error {
	b, err := mcmc.NewBounds("metropolis", p)
	if err != nil {
		return err
	}
	d := len(p.Params)
	c := m.cfg.Chains
	if err := mcmc.CheckMemory("metropolis", p, memoryNeed(m.cfg, d),
		fmt.Sprintf("chains × samples = %d × %d kept draws of %d parameters", c, m.cfg.Samples, d)); err != nil {
		return err
	}
	m.bounds = b
	m.names = make([]string, d)
	for i, q := range p.Params {
		m.names[i] = q.Name
	}
	m.starts = p.Starts
	m.priorBox = nil
	if len(p.PriorBox) == len(p.Params) {
		m.priorBox = p.PriorBox
	}
	m.rngs, m.rands = make([]*rand.PCG, c), make([]*rand.Rand, c)
	for k := range c {
		m.rngs[k] = mcmc.Stream(p.Seed, k) // chain k's own stream
		m.rands[k] = rand.New(m.rngs[k])
	}
	s := state{
		Header: mcmc.Header[Config]{Format: stateFormat, Config: m.cfg, D: d, Seed: p.Seed},
		X:      make([][]float64, c), LogPrior: make([]float64, c), LogLik: make([]float64, c),
		Started: make([]bool, c), InitDraws: make([]int, c),
		S0: make([]float64, d), AccMean: make([]float64, d), AccM2: make([]float64, d*d),
		AcceptBurn: make([]int, c), AcceptKept: make([]int, c),
	}
	for k := range c {
		s.X[k] = make([]float64, d)
	}
	// The kept draws grow as they are produced: nothing is reserved for
	// the final count.
	m.kept, m.keptFrom = make([][]abi.Sample, c), 0
	m.st = s
	m.inited = true
	return nil
}

func (m *Method) allStarted() bool {
	for _, ok := range m.st.Started {
		if !ok {
			return false
		}
	}
	return true
}

func (m *Method) totalSteps() int { return m.cfg.BurnIn + m.cfg.Samples*m.cfg.Thin }

// Progress is the status of the progress line (host/run.Progresser): the
// step of every chain out of burn-in plus kept steps, the phase, and the
// acceptance rate of the kept steps so far, with the fraction of steps
// done.
func (m *Method) Progress() (string, float64) {
	if !m.inited || !m.allStarted() {
		return "drawing starting points", 0
	}
	s, total := &m.st, m.totalSteps()
	phase := "sampling"
	if s.Step < m.cfg.BurnIn {
		phase = "burn-in"
	}
	status := fmt.Sprintf("step %d/%d (%s)", s.Step, total, phase)
	if s.ProposedKept > 0 {
		acc := 0
		for _, a := range s.AcceptKept {
			acc += a
		}
		status += fmt.Sprintf(", acceptance %.2f", float64(acc)/float64(s.ProposedKept))
	}
	return status, float64(min(s.Step, total)) / float64(max(total, 1))
}

// Done implements abi.Method.
func (m *Method) Done() bool {
	return m.inited && m.allStarted() && m.st.Step >= m.totalSteps()
}

// Ask implements abi.Method. It is idempotent: until Tell, it returns the
// same batch again.
func (m *Method) Ask() (abi.Batch, error) {
	if !m.inited {
		return abi.Batch{}, errors.New("metropolis: Ask before Init")
	}
	if m.Done() {
		return abi.Batch{}, errors.New("metropolis: Ask after the run is done")
	}
	s := &m.st
	if s.Pending == pendNone {
		if !m.allStarted() {
			s.PendingChains = s.PendingChains[:0]
			for k, ok := range s.Started {
				if !ok {
					s.PendingChains = append(s.PendingChains, k)
				}
			}
			s.Pending = pendDraw
		} else {
			m.propose()
			s.Pending = pendProposals
		}
	}
	if s.Pending == pendDraw {
		return abi.Batch{Draw: len(s.PendingChains), Want: abi.WantLogTarget}, nil
	}
	pts := make([][]float64, len(s.Proposals))
	for k, y := range s.Proposals {
		pts[k] = append([]float64(nil), y...)
	}
	return abi.Batch{Points: pts, Want: abi.WantLogTarget}, nil
}

// propose draws y = x + √λ·L·z for every chain from its own stream.
func (m *Method) propose() {
	s := &m.st
	d := s.D
	sl := math.Exp(0.5 * s.LogLambda)
	var walk mcmc.Walker
	walk.SetFactor(s.Chol, d)
	s.Proposals = make([][]float64, m.cfg.Chains)
	for c := range m.cfg.Chains {
		y := make([]float64, d)
		walk.Step(m.rands[c], y, s.X[c], sl)
		s.Proposals[c] = y
	}
}

// usable reports whether a result can be a chain state: status OK, finite
// log prior and log likelihood, inside the bounds.
func (m *Method) usable(r abi.Result, theta []float64) bool {
	return mcmc.Usable(r) && m.bounds.Contains(theta)
}

// Tell implements abi.Method. A malformed batch is refused before anything
// changes. For proposals, Result.Theta is not read: the method keeps its own
// copy of the points it asked for.
func (m *Method) Tell(results []abi.Result) error {
	s := &m.st
	if !m.inited || s.Pending == pendNone {
		return errors.New("metropolis: Tell without a pending Ask")
	}
	want := m.cfg.Chains
	if s.Pending == pendDraw {
		want = len(s.PendingChains)
	}
	if len(results) != want {
		return fmt.Errorf("metropolis: Tell got %d results for a batch of %d", len(results), want)
	}
	for k, r := range results {
		if s.Pending == pendDraw && len(r.Theta) != s.D {
			return fmt.Errorf("metropolis: result %d has %d parameter values, want %d", k, len(r.Theta), s.D)
		}
	}
	if s.Pending == pendDraw {
		return m.tellDraws(results)
	}
	m.tellProposals(results)
	return nil
}

func (m *Method) tellDraws(results []abi.Result) error {
	s := &m.st
	var errs []error
	for k, c := range s.PendingChains {
		r := results[k]
		s.InitDraws[c]++
		if m.usable(r, r.Theta) {
			copy(s.X[c], r.Theta)
			s.LogPrior[c], s.LogLik[c] = r.LogPrior, r.LogLik
			s.Started[c] = true
			continue
		}
		if s.InitDraws[c] >= MaxInitDraws {
			errs = append(errs, fmt.Errorf("metropolis: chain %d found no starting point with a finite log target in %d prior draws (last: status %v, log prior %g, log likelihood %g); check that the prior overlaps the region where the model succeeds", c, s.InitDraws[c], r.Status, r.LogPrior, r.LogLik))
		}
	}
	s.Pending, s.PendingChains = pendNone, nil
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if m.allStarted() {
		m.startProposal()
	}
	return nil
}

// priorWidth is the width of parameter i's prior box (0 when unknown or
// not finite).
func (m *Method) priorWidth(i int) float64 {
	if m.priorBox == nil {
		return 0
	}
	if w := m.priorBox[i][1] - m.priorBox[i][0]; mcmc.Finite(w) && w > 0 {
		return w
	}
	return 0
}

// startProposal sets the initial diagonal proposal Σ = diag(s₀²),
// s₀ᵢ = init_scale·(upperᵢ − lowerᵢ), or init_scale times the spread of the
// starting values (prior draws; the width of the prior's box,
// Problem.PriorBox, when every chain starts at an init row or there is one
// chain) when a bound is infinite or the bounds are more than narrowBounds
// times wider than that spread: a normal prior of
// sd 1e-4 inside bounds of ±1e9 would otherwise get a proposal sd of 2e8,
// and the adaptation of one global scale never brings every parameter
// back, so no proposal is ever accepted.
func (m *Method) startProposal() {
	s := &m.st
	d := s.D
	for i := range d {
		r := m.bounds.Upper[i] - m.bounds.Lower[i]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range s.X {
			// The study's initial points (which the host hands out first)
			// say nothing of the prior's scale: a tight cluster of them
			// would make the first proposal tiny.
			if slices.ContainsFunc(m.starts, func(st []float64) bool { return slices.Equal(st, x) }) {
				continue
			}
			lo, hi = math.Min(lo, x[i]), math.Max(hi, x[i])
		}
		spread := hi - lo
		if w := m.priorWidth(i); !(spread > 0) && w > 0 {
			// Every chain starts at an init row, or there is one chain:
			// no spread of prior draws, so the prior's own width.
			spread = w
		}
		if !mcmc.Finite(r) || (spread > 0 && spread*narrowBounds < r) {
			r = spread
			if !(r > 0) || !mcmc.Finite(r) {
				r = math.Max(1, math.Abs(s.X[0][i]))
			}
		}
		s.S0[i] = m.cfg.InitScale * r
	}
	s.Chol = make([]float64, d*d)
	for i := range d {
		s.Chol[i*d+i] = s.S0[i]
	}
}

// narrowBounds: the starting values' spread sets the first proposal when
// the bounds are more than this many times wider (for c uniform starts in
// the bounds that has probability about c(c−1)/narrowBounds^(c−1)).
const narrowBounds = 1000

func (m *Method) tellProposals(results []abi.Result) {
	s := &m.st
	step := s.Step + 1 // the step being completed
	burn := step <= m.cfg.BurnIn
	alphaSum := 0.0
	for c, r := range results {
		u := m.rands[c].Float64() // drawn whatever the outcome, to keep streams aligned
		y := s.Proposals[c]
		switch r.Status {
		case abi.OK:
		case abi.OutOfSupport:
			s.OutOfSupport++
		default:
			s.Failures++
		}
		if !m.usable(r, y) {
			continue // rejected; acceptance probability 0
		}
		// Metropolis–Hastings with a symmetric proposal: accept when
		// log u < log π(y) − log π(x) (Metropolis et al. 1953; Hastings 1970
		// with a symmetric q).
		delta := (r.LogPrior + r.LogLik) - (s.LogPrior[c] + s.LogLik[c])
		alphaSum += math.Exp(math.Min(0, delta))
		if math.Log(u) < delta {
			s.X[c] = y
			s.LogPrior[c], s.LogLik[c] = r.LogPrior, r.LogLik
			if burn {
				s.AcceptBurn[c]++
			} else {
				s.AcceptKept[c]++
			}
		}
	}
	s.Pending, s.Proposals = pendNone, nil
	s.Step = step
	if burn {
		m.adapt(alphaSum / float64(m.cfg.Chains))
		return
	}
	s.ProposedKept++
	if (step-m.cfg.BurnIn)%m.cfg.Thin == 0 {
		for c := range s.X {
			m.kept[c] = append(m.kept[c], abi.Sample{
				Theta: append([]float64(nil), s.X[c]...), LogPrior: s.LogPrior[c], LogLik: s.LogLik[c],
			})
		}
	}
}

// minPooled is the number of pooled states the empirical covariance needs
// before it replaces the initial or previous proposal.
func minPooled(d int) int { return max(100, 10*d) }

// adapt is one burn-in adaptation step (see the package documentation).
func (m *Method) adapt(alphaMean float64) {
	s := &m.st
	d := s.D
	// Robbins–Monro on log λ (Andrieu & Thoms 2008, Algorithm 4):
	// log λ ← log λ + γₖ(ᾱ − α*), γₖ = k^(−δ).
	s.RMK++
	gamma := math.Pow(float64(s.RMK), -rmExponent)
	s.LogLambda = math.Max(-logLambdaMax, math.Min(logLambdaMax, s.LogLambda+gamma*(alphaMean-m.cfg.TargetAccept)))

	// Second window: forget the first half of burn-in.
	if !s.WindowReset && s.Step > m.cfg.BurnIn/2 {
		s.WindowReset = true
		s.AccN = 0
		clear(s.AccMean)
		clear(s.AccM2)
	}
	// Pooled running mean and co-moment (Welford 1962; the multivariate
	// form M₂ += δ·(x − x̄_new)ᵀ, δ = x − x̄_old).
	delta := make([]float64, d)
	for _, x := range s.X {
		s.AccN++
		for i := range d {
			delta[i] = x[i] - s.AccMean[i]
			s.AccMean[i] += delta[i] / float64(s.AccN)
		}
		for i := range d {
			di := delta[i]
			for j := range d {
				s.AccM2[i*d+j] += di * (x[j] - s.AccMean[j])
			}
		}
	}
	if s.AccN < minPooled(d) {
		return
	}
	// Haario et al. 2001: Σ = s_d·(Cov + ε·I), here ε·diag(s₀²).
	sd := scaleSD / float64(d)
	sigma := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			v := sd * 0.5 * (s.AccM2[i*d+j] + s.AccM2[j*d+i]) / float64(s.AccN-1)
			if i == j {
				v += sd * regEps * s.S0[i] * s.S0[i]
			}
			sigma[i*d+j], sigma[j*d+i] = v, v
		}
	}
	l, ok := mcmc.Cholesky(sigma, d)
	if !ok {
		return // keep the previous factor
	}
	s.Chol = l
	if !s.Adaptive {
		s.Adaptive = true
		s.LogLambda, s.RMK = 0, 0
	}
}

// Report implements abi.Method.
func (m *Method) Report() (abi.Report, error) {
	if !m.inited {
		return abi.Report{}, errors.New("metropolis: Report before Init")
	}
	if m.keptFrom != 0 {
		return abi.Report{}, fmt.Errorf("metropolis: Report without the draws of the first %d kept steps (RestoreSamples after LoadState)", m.keptFrom)
	}
	s := &m.st
	c, d := m.cfg.Chains, s.D
	var rep abi.Report
	rep.Samples = m.steps(0, m.keptSteps())
	rate := func(acc, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return float64(acc) / float64(n)
	}
	perChain := make([]float64, c)
	accKept, accBurn := 0, 0
	for k := range c {
		perChain[k] = rate(s.AcceptKept[k], s.ProposedKept)
		accKept += s.AcceptKept[k]
		accBurn += s.AcceptBurn[k]
	}
	rhat, ess, psd := make([]float64, d), make([]float64, d), make([]float64, d)
	lambda := math.Exp(s.LogLambda)
	col := make([][]float64, c)
	for i := range d {
		for k := range c {
			col[k] = col[k][:0]
			for _, smp := range m.kept[k] {
				col[k] = append(col[k], smp.Theta[i])
			}
		}
		rhat[i] = stats.SplitRHat(col)
		ess[i] = stats.ESS(col)
		// Σᵢᵢ = Σⱼ L²ᵢⱼ
		v := math.NaN() // no proposal yet (a run stopped before its chains started)
		if len(s.Chol) == d*d {
			v = 0
			for j := 0; j <= i; j++ {
				v += s.Chol[i*d+j] * s.Chol[i*d+j]
			}
		}
		psd[i] = math.Sqrt(lambda * v)
	}
	initDraws := 0
	for _, n := range s.InitDraws {
		initDraws += n
	}
	rep.Extra = map[string]any{
		"chains":                  c,
		"samples_per_chain":       m.cfg.Samples,
		"burn_in":                 m.cfg.BurnIn,
		"thin":                    m.cfg.Thin,
		"acceptance_rate":         mcmc.JSONNum(rate(accKept, c*s.ProposedKept)),
		"acceptance_per_chain":    mcmc.JSONList(perChain),
		"burn_in_acceptance_rate": mcmc.JSONNum(rate(accBurn, c*min(s.Step, m.cfg.BurnIn))),
		"proposal_scale":          mcmc.JSONNum(lambda),
		"proposal_sd":             mcmc.JSONList(psd),
		"init_draws":              initDraws,
		"rejected_failures":       s.Failures,
		"rejected_out_of_support": s.OutOfSupport,
		"rhat":                    mcmc.JSONList(rhat),
		"ess":                     mcmc.JSONList(ess),
	}
	w := m.warnings(rate(accKept, c*s.ProposedKept), rhat)
	if !m.Done() {
		// Stopped early (Ctrl-C, a fault): the draws kept so far
		// (ABI.md §6.3: a method answers in any state after init).
		rep.Extra["stopped"] = true
		rep.Extra["steps_done"] = s.Step
		w = append(w, fmt.Sprintf("the run stopped after %d of %d steps per chain (%d of them burn-in): the statistics are of the draws kept so far", s.Step, m.totalSteps(), m.cfg.BurnIn))
	}
	if len(w) > 0 {
		rep.Extra["warnings"] = w
	}
	return rep, nil
}

// Thresholds of the report's warnings: an acceptance rate below minAccept
// after burn-in (the chains barely moved), a split-R̂ above maxRHat (the
// chains disagree; Gelman et al. 2013, BDA3 Sec. 11.4, ask for R̂ near 1,
// 1.1 at most).
const (
	minAccept = 0.01
	maxRHat   = 1.1
)

// warnings say when the samples are not a posterior sample yet; kinfer
// run prints them (docs/OUTPUTS.md, method_report.warnings).
func (m *Method) warnings(accept float64, rhat []float64) []any {
	var w []any
	if m.st.ProposedKept > 0 && !(accept >= minAccept) { // none yet: stopped in burn-in
		w = append(w, fmt.Sprintf("acceptance rate %.3g after burn-in: the chains barely moved, so the samples are not a posterior sample; compare proposal_sd with the parameters' scales and the init_scale setting", accept))
	}
	if m.cfg.Chains > 1 {
		var bad, none []string
		for i, r := range rhat {
			switch {
			case math.IsNaN(r):
				none = append(none, m.names[i])
			case !(r <= maxRHat):
				bad = append(bad, fmt.Sprintf("%s (%.3g)", m.names[i], r))
			}
		}
		if len(bad) > 0 {
			w = append(w, fmt.Sprintf("split-R̂ above %g for %s: the chains have not converged to one distribution; run longer (burn_in, samples) before using these samples", maxRHat, strings.Join(bad, ", ")))
		}
		if len(none) > 0 {
			// NaN is not "above 1.1" (audit 4): too few draws to split, or
			// chains that never moved.
			w = append(w, fmt.Sprintf("split-R̂ could not be computed for %s (fewer than 4 kept draws per half chain, or chains that never moved): convergence is unchecked; run longer (samples)", strings.Join(none, ", ")))
		}
	}
	return w
}
