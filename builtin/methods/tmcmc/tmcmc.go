package tmcmc

import (
	"errors"
	"fmt"
	"gonum.org/v1/gonum/stat"
	"math"
	"math/rand/v2"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/stats"
)

// Variant indices, in the order of the variant setting's Choices.
const (
	Original = 0 // Ching & Chen 2007
	Betz     = 1 // + Betz et al. 2016 modifications 1 and 3
	Bartsoen = 2 // + resampling once per stage (Bartsoen et al. 2023)
)

// VariantNames are the variant setting's choices.
var VariantNames = []string{"original", "betz", "bartsoen"}

// Biased reports whether a variant's evidence and posterior are biased
// (resampling within the sub-steps compounds the weights; see doc.go).
func Biased(variant int) bool { return variant != Bartsoen }

// BiasWarning is the warning a report of a biased variant carries.
const BiasWarning = "variant %s resamples within the sub-steps, which compounds the weights: its log evidence is biased (by +0.5 to +7 nats on problems with known evidence), its posterior too narrow and minor modes are lost, and the standard error does not cover that bias; use variant = \"bartsoen\" for inference (original and betz are there to reproduce Bartsoen et al. 2023's comparison)"

// Proposal-scale rules, in the order of the adapt setting's Choices.
const (
	AdaptSubstep = 0
	AdaptStage   = 1
)

// AdaptNames are the adapt setting's choices.
var AdaptNames = []string{"substep", "stage"}

// Spec is the self-description of the builtin TMCMC method. Settings arrive
// in this order.
var Spec = abi.Spec{
	Kind:    abi.KindMethod,
	Name:    "tmcmc",
	Version: "1.0.0",
	Doc:     "transitional MCMC (Ching & Chen 2007) with the Betz et al. 2016 and Bartsoen et al. 2023 modifications; log evidence with standard error (variants original and betz: biased evidence, kept to reproduce the paper)",
	Settings: []abi.Setting{
		{Name: "chains", Default: 1000, Doc: "population size N_s: chains moved in parallel, one proposal each per batch (Bartsoen 2023 used 10000)"},
		{Name: "substeps", Default: 50, Doc: "Metropolis sub-steps N_a per chain and stage (Bartsoen 2023 Appendix A: 50)"},
		{Name: "target_cov", Default: 1.0, Doc: "coefficient of variation of the plausibility weights that fixes each tempering step (Eq. 12, v_t = 1)"},
		{Name: "target_accept", Default: 0.23, Doc: "acceptance rate the proposal scale beta is adapted to (Eq. 19; betz and bartsoen variants)"},
		{Name: "max_stages", Default: 100, Doc: "maximum number of tempering stages; a run that has not reached q = 1 by then stops with an error"},
		{Name: "variant", Default: Bartsoen, Choices: VariantNames, Doc: "original: Ching & Chen 2007 (resampling every sub-step, beta = 0.2); betz: + weights recomputed after every move and adaptive beta; bartsoen: betz with one resampling per stage. original and betz give BIASED evidence and too narrow posteriors (they compound the weights); only bartsoen converges to the right ones (its log evidence is low by about 0.4 standard errors at 1000 chains, less with more)"},
		{Name: "proposal", Default: Transform, Choices: ProposalNames, Doc: "transform: random walk in unconstrained coordinates (a bounded parameter: identity on the middle half of its range with exponential margins that never reach the bounds; a one-sided one: log) with the log-Jacobian in the Metropolis ratio, so no proposal leaves the prior's support; reject: random walk in the parameters, proposals outside the bounds rejected (the paper's algorithm)"},
		{Name: "adapt", Default: AdaptSubstep, Choices: AdaptNames, Doc: "substep: the proposal scale beta follows the acceptance rate after each of the first half of a stage's sub-steps, then stays fixed; stage: beta changes once per stage by Eq. 19 (the paper's rule)"},
	},
	// prior_draws: stage 0 is a sample of the prior (the evidence
	// estimate Π S_j assumes it), never the study's initial points.
	Capabilities: []abi.Capability{abi.CapCheckpoint, abi.CapPriorDraws},
}

const (
	// betaOriginal is the fixed proposal scale of Ching & Chen 2007, as
	// quoted by Bartsoen et al. 2023 (Sec. 2.4).
	betaOriginal = 0.2
	// beta0Numerator: β₀ = 2.4/√d (Bartsoen et al. 2023, Appendix A, after
	// Eq. 16).
	beta0Numerator = 2.4
	// logBetaMax bounds |log β| so that a target rejecting every proposal
	// cannot drive the scale to 0 or ∞.
	logBetaMax = 30
	// bisectSteps bounds the bisection of Eq. 12: 64 halvings of [0, 1]
	// resolve q to below 1e-19.
	bisectSteps = 64
	// adaptGain is the gain of the sub-step rule: log β changes by
	// adaptGain·(a − t_acr) after a sub-step with acceptance rate a, so a
	// sub-step that accepts nothing shrinks β by e^(−2·0.23) ≈ 0.63.
	adaptGain = 2
	// stateFormat versions the checkpoint layout.
	stateFormat = 3
)

// Config is the validated settings.
type Config struct {
	Chains       int     `json:"chains"`
	Substeps     int     `json:"substeps"`
	TargetCoV    float64 `json:"target_cov"`
	TargetAccept float64 `json:"target_accept"`
	MaxStages    int     `json:"max_stages"`
	Variant      int     `json:"variant"`
	Proposal     int     `json:"proposal"`
	Adapt        int     `json:"adapt"`
}

// adaptSteps is the number of leading sub-steps of a stage after which the
// sub-step rule updates β (the rest of the stage uses a fixed β).
func (c Config) adaptSteps() int {
	if c.Variant == Original || c.Adapt != AdaptSubstep {
		return 0
	}
	return c.Substeps / 2
}

// whole checks that setting name holds a whole number in [lo, hi].
func whole(name string, v float64, lo, hi int) (int, error) {
	return mcmc.WholeSetting("tmcmc", name, v, lo, hi)
}

// New builds the method from its settings, in the order of Spec.Settings.
func New(settings []float64) (abi.Method, error) {
	if len(settings) != len(Spec.Settings) {
		return nil, fmt.Errorf("tmcmc: want %d settings (chains, substeps, target_cov, target_accept, max_stages, variant, proposal, adapt), got %d", len(Spec.Settings), len(settings))
	}
	var c Config
	var err error
	if c.Chains, err = whole("chains", settings[0], 2, 10_000_000); err != nil {
		return nil, err
	}
	if c.Substeps, err = whole("substeps", settings[1], 1, 1_000_000); err != nil {
		return nil, err
	}
	if c.TargetCoV = settings[2]; !(c.TargetCoV > 0) || math.IsInf(c.TargetCoV, 1) {
		return nil, fmt.Errorf("tmcmc: setting target_cov must be finite and > 0, got %g", settings[2])
	}
	if c.TargetAccept = settings[3]; !(c.TargetAccept > 0 && c.TargetAccept < 1) {
		return nil, fmt.Errorf("tmcmc: setting target_accept must be in (0, 1), got %g", settings[3])
	}
	if c.MaxStages, err = whole("max_stages", settings[4], 1, 1_000_000); err != nil {
		return nil, err
	}
	if c.Variant, err = whole("variant", settings[5], 0, len(VariantNames)-1); err != nil {
		return nil, fmt.Errorf("%w (choices: %v by index)", err, VariantNames)
	}
	if c.Proposal, err = whole("proposal", settings[6], 0, len(ProposalNames)-1); err != nil {
		return nil, fmt.Errorf("%w (choices: %v by index)", err, ProposalNames)
	}
	if c.Adapt, err = whole("adapt", settings[7], 0, len(AdaptNames)-1); err != nil {
		return nil, fmt.Errorf("%w (choices: %v by index)", err, AdaptNames)
	}
	return &Method{cfg: c}, nil
}

// Phases of a run.
const (
	phaseDraw   = 0 // waiting for the prior population
	phaseStages = 1 // tempering stages
	phaseDone   = 2
)

// stage is the record of one tempering stage j → j+1.
type stage struct {
	Q        float64 `json:"q"`        // q_{j+1}
	Beta     float64 `json:"beta"`     // β_j at the stage's start
	BetaEnd  float64 `json:"beta_end"` // β after the stage's adaptation
	LogS     float64 `json:"log_s"`    // log S_j (Eq. 14)
	VarLogS  float64 `json:"var_log_s"`
	ESS      float64 `json:"ess"`      // Kish ESS of the stage's weights
	CoV      float64 `json:"cov"`      // CoV of the weights at q_{j+1}
	Accepted int     `json:"accepted"` // over the stage's N·N_a proposals
	Proposed int     `json:"proposed"`
	// InSupport counts the stage's proposals inside the parameter bounds.
	InSupport int `json:"in_support"`
	// CDFRMSE is, per parameter, the RMSE between the marginal empirical
	// CDFs of the population at the stage's start and at its end, on the
	// prior range's midpoint grid (Bartsoen 2023 Fig. 7).
	CDFRMSE f64s `json:"cdf_rmse,omitempty"`
}

// state is everything that changes during a run; SaveState writes it with
// the PCG state. Float slices are stored bit-exactly (see f64s).
type state struct {
	mcmc.Header[Config]
	RNG []byte `json:"rng,omitempty"` // filled only in a checkpoint

	Phase int `json:"phase"`
	// The population: N×d row-major states θ, their proposal coordinates
	// u = T(θ) (θ itself in reject mode) with log|dθ/du|, their log
	// prior, log likelihood (−∞ for a failed point) and log plausibility
	// weight.
	X        f64s `json:"x"`
	U        f64s `json:"u"`
	LogJ     f64s `json:"log_j"`
	LogPrior f64s `json:"log_prior"`
	LogLik   f64s `json:"log_lik"`
	LogW     f64s `json:"log_w"`
	// Parent is each chain's index before the latest resampling (its own
	// index before the first): chains of one parent form a cluster in the
	// variance of log S_j. Eve is each chain's ancestor in the prior
	// population, and EveSum, per ancestor, the sum over all stages of its
	// descendants' influence on log Ẑ (the lineage variance).
	Parent []int `json:"parent"`
	Eve    []int `json:"eve"`
	EveSum f64s  `json:"eve_sum"`
	// Scale0 and Scale0U are the per-parameter spreads of the prior
	// population in θ and in the transform coordinate (box map or log), the
	// units of the covariance regularisation.
	Scale0  f64s `json:"scale0"`
	Scale0U f64s `json:"scale0_u"`
	// Kinds is each parameter's coordinate map in the running stage
	// (stageKinds).
	Kinds []int `json:"kinds"`

	// The running stage: tempering from Q to QNext with Σ = β²·C, C = L·Lᵀ
	// (in u).
	Q     float64 `json:"q"`
	QNext float64 `json:"q_next"`
	Beta  float64 `json:"beta"`
	Chol  f64s    `json:"chol"`
	Sub   int     `json:"sub"` // sub-steps of the stage completed
	// StageX is the population at the running stage's start, for its CDF
	// comparison (Fig. 7).
	StageX f64s `json:"stage_x"`
	// CDFLo and CDFHi are, per parameter, the range of that comparison:
	// the bounds cut to the prior population's mean ± cdfSpan sds (a
	// normal prior inside bounds of ±1e6 would otherwise fall into one of
	// the grid's cells). Absent in an older checkpoint: the bounds.
	CDFLo f64s `json:"cdf_lo,omitempty"`
	CDFHi f64s `json:"cdf_hi,omitempty"`

	// Pending proposals (N×d, in θ and in u) handed out by Ask and not
	// yet told, with their log-Jacobians.
	Pending    bool `json:"pending"`
	Proposals  f64s `json:"proposals,omitempty"`
	ProposalsU f64s `json:"proposals_u,omitempty"`
	PropLogJ   f64s `json:"proposals_log_j,omitempty"`

	LogZ float64 `json:"log_z"`
	// VarLogZ is Σ_j Var(log S_j), stages taken as independent.
	VarLogZ      float64 `json:"var_log_z"`
	Stages       []stage `json:"stages"`
	Failures     int     `json:"failures"`
	OutOfSupport int     `json:"out_of_support"`
	InitFailures int     `json:"init_failures"`
	Incomplete   bool    `json:"incomplete"`
}

// Method is the TMCMC sampler. Use New, then Init.
type Method struct {
	cfg    Config
	bounds mcmc.Bounds
	cs     []coord
	// checkBounds is false when every parameter's map keeps proposals
	// inside its bounds (box and one-sided maps, or no finite bound), so
	// the bound check of a proposal can be skipped.
	checkBounds bool
	inited      bool
	rng         *rand.PCG
	rnd         *rand.Rand
	st          state
	// scratch
	wbuf    []float64
	pts     [][]float64
	handout []float64
	walk    mcmc.Walker // the random walk of the current sub-step
}

// Spec implements abi.Method.
func (m *Method) Spec() abi.Spec { return Spec }

// Progress is the status of the progress line (host/run.Progresser): the stage, its tempering exponents
// q_j → q_{j+1}, the sub-step and the proposal scale β. The number of
// stages is not known in advance, so the fraction is unknown (−1).
func (m *Method) Progress() (string, float64) {
	switch {
	case m.inited && m.st.Phase == phaseDone:
		return fmt.Sprintf("done after %d stages", len(m.st.Stages)), 1
	case !m.inited || m.st.Phase != phaseStages:
		return "drawing the prior population", -1
	}
	return fmt.Sprintf("stage %d: q %.3g → %.3g, sub-step %d/%d, β %.3g", max(len(m.st.Stages), 1), m.st.Q, m.st.QNext, m.st.Sub, m.cfg.Substeps, m.st.Beta), -1
}

// Config returns the method's validated settings.
func (m *Method) Config() Config { return m.cfg }

// memoryNeed is the planned memory of a run: per chain, its point in the
// population in θ and u, the stage's copy, the proposal in θ and u, the
// batch handed to the host and the report's sample (8·d values and their
// headers), its weights, lineage and bookkeeping (16 values), and the
// checkpoint's base64 text of the state (≈ 1.4 × 5·d values); per stage,
// its record with d CDF changes. The per-chain sum is doubled: measured
// (audit 10), 50 000 chains of 2 parameters peaked 86 MB above the
// process's base (1.7 KB a chain, against 0.97 KB planned with the
// collector's headroom) and 500 000 at 897 MB, over a 512 MiB budget that
// had accepted them; the resampling, the stage's weights and the host's
// batches and outputs hold more than the list above.
func memoryNeed(c Config, d int) float64 {
	perChain := 2 * float64(8*(8*d+16)+3*mcmc.SampleHeader+11*5*d)
	perStage := float64(8*d + 256)
	return float64(c.Chains)*perChain + float64(c.MaxStages)*perStage + float64(2*8*d*d)
}

// Init implements abi.Method. It may be called again to restart.
func (m *Method) Init(p abi.Problem) error {
	b, err := mcmc.NewBounds("tmcmc", p)
	if err != nil {
		return err
	}
	d := len(p.Params)
	n := m.cfg.Chains
	if err := mcmc.CheckMemory("tmcmc", p, memoryNeed(m.cfg, d), fmt.Sprintf("chains = %d (the population) of %d parameters and max_stages = %d", n, d, m.cfg.MaxStages)); err != nil {
		return err
	}
	m.bounds = b
	m.cs = coords(b.Lower, b.Upper, m.cfg.Proposal)
	m.checkBounds = true           // until the first stage chooses its maps (setCoords)
	m.rng = mcmc.Stream(p.Seed, 0) // one stream for the whole population
	m.rnd = rand.New(m.rng)
	m.st = state{
		Header: mcmc.Header[Config]{Format: stateFormat, Config: m.cfg, D: d, Seed: p.Seed},
		Phase:  phaseDraw,
		X:      make(f64s, n*d), U: make(f64s, n*d), LogJ: make(f64s, n),
		LogPrior: make(f64s, n), LogLik: make(f64s, n), LogW: make(f64s, n),
		Scale0: make(f64s, d), Scale0U: make(f64s, d), CDFLo: make(f64s, d), CDFHi: make(f64s, d), Kinds: make([]int, d), Stages: []stage{}, Parent: make([]int, n),
		Eve: make([]int, n), EveSum: make(f64s, n),
	}
	for k := range n {
		m.st.Parent[k], m.st.Eve[k] = k, k
	}
	m.wbuf = make([]float64, n)
	m.pts = make([][]float64, n)
	m.inited = true
	return nil
}

// Done implements abi.Method.
func (m *Method) Done() bool { return m.inited && m.st.Phase == phaseDone }

// Ask implements abi.Method. The first batch asks the host for the prior
// population; every later one holds one Metropolis proposal per chain. Ask
// is idempotent: until Tell, it returns the same batch again. The points
// are views of one hand-out buffer, refilled by every Ask with one bulk
// copy (no per-point allocation): what the caller writes into them does
// not reach the method's proposals, and they are valid until the next Ask.
func (m *Method) Ask() (abi.Batch, error) {
	if !m.inited {
		return abi.Batch{}, errors.New("tmcmc: Ask before Init")
	}
	s := &m.st
	switch s.Phase {
	case phaseDone:
		return abi.Batch{}, errors.New("tmcmc: Ask after the run is done")
	case phaseDraw:
		return abi.Batch{Draw: m.cfg.Chains, Want: abi.WantLogTarget}, nil
	}
	if !s.Pending {
		if m.cfg.Variant != Bartsoen || s.Sub == 0 {
			m.resample()
		}
		m.propose()
		s.Pending = true
	}
	d := s.D
	if len(m.handout) != len(s.Proposals) {
		m.handout = make([]float64, len(s.Proposals))
	}
	copy(m.handout, s.Proposals)
	for k := range m.pts {
		m.pts[k] = m.handout[k*d : (k+1)*d : (k+1)*d]
	}
	return abi.Batch{Points: m.pts, Want: abi.WantLogTarget}, nil
}

// propose draws u' = u + β·L·z, z ~ N(0, I_d), for every chain in order,
// and maps it to θ' = T⁻¹(u').
func (m *Method) propose() {
	s := &m.st
	d := s.D
	if len(s.Proposals) != len(s.X) {
		s.Proposals, s.ProposalsU, s.PropLogJ = make(f64s, len(s.X)), make(f64s, len(s.X)), make(f64s, m.cfg.Chains)
	}
	m.walk.SetFactor(s.Chol, d)
	for k := range m.cfg.Chains {
		pu := s.ProposalsU[k*d : (k+1)*d]
		m.walk.Step(m.rnd, pu, s.U[k*d:(k+1)*d], s.Beta)
		s.PropLogJ[k] = m.toTheta(pu, s.Proposals[k*d:(k+1)*d])
	}
}

// toTheta writes θ = T⁻¹(u) and returns log|dθ/du| under the stage's
// maps (0 for identity maps).
func (m *Method) toTheta(u, theta []float64) float64 {
	return mapPoint(m.cs, u, theta)
}

// resample replaces the population by N draws with replacement, chain l
// drawn with probability p_l ∝ exp(LogW_l) (Eq. 17). Every copy keeps its
// parent's state, log densities, weight and ancestor.
func (m *Method) resample() {
	s := &m.st
	n, d := m.cfg.Chains, s.D
	idx := multinomial(m.rnd, s.LogW, m.wbuf)
	x, u := make(f64s, n*d), make(f64s, n*d)
	lj, lp, ll, lw := make(f64s, n), make(f64s, n), make(f64s, n), make(f64s, n)
	eve := make([]int, n)
	for k, a := range idx {
		copy(x[k*d:(k+1)*d], s.X[a*d:(a+1)*d])
		copy(u[k*d:(k+1)*d], s.U[a*d:(a+1)*d])
		lj[k], lp[k], ll[k], lw[k] = s.LogJ[a], s.LogPrior[a], s.LogLik[a], s.LogW[a]
		eve[k] = s.Eve[a]
	}
	s.Parent, s.Eve = idx, eve
	s.X, s.U, s.LogJ, s.LogPrior, s.LogLik, s.LogW = x, u, lj, lp, ll, lw
}

// Tell implements abi.Method.
func (m *Method) Tell(results []abi.Result) error {
	if !m.inited {
		return errors.New("tmcmc: Tell before Init")
	}
	s := &m.st
	var want int
	switch {
	case s.Phase == phaseDraw:
		want = m.cfg.Chains
	case s.Phase == phaseStages && s.Pending:
		want = m.cfg.Chains
	default:
		return errors.New("tmcmc: Tell without a pending batch (call Ask first)")
	}
	if len(results) != want {
		return fmt.Errorf("tmcmc: Tell with %d results for a batch of %d", len(results), want)
	}
	for k, r := range results {
		if len(r.Theta) != s.D {
			return fmt.Errorf("tmcmc: result %d has %d parameter values, want %d", k, len(r.Theta), s.D)
		}
	}
	if s.Phase == phaseDraw {
		return m.tellDraws(results)
	}
	m.tellProposals(results)
	return nil
}

// tellDraws stores the prior population. A point whose status is not OK or
// whose log densities are not finite has likelihood 0: it gets weight 0 at
// the first stage and is never resampled.
func (m *Method) tellDraws(results []abi.Result) error {
	s := &m.st
	d := s.D
	usable := 0
	for k, r := range results {
		copy(s.X[k*d:(k+1)*d], r.Theta)
		s.LogPrior[k], s.LogLik[k] = r.LogPrior, r.LogLik
		if !mcmc.Usable(r) {
			s.LogLik[k] = math.Inf(-1)
			s.InitFailures++
			continue
		}
		usable++
	}
	if usable == 0 {
		r := results[0]
		return fmt.Errorf("tmcmc: none of the %d prior draws has a finite log target (first: status %v, log prior %g, log likelihood %g); check that the prior overlaps the region where the model succeeds", len(results), r.Status, r.LogPrior, r.LogLik)
	}
	// Scale0, Scale0U: the spread of the prior population per parameter
	// in θ and in its transform coordinate (its sd; the bound width, or 1,
	// when that is not positive and finite).
	n := len(results)
	col := make([]float64, n)
	if len(s.CDFLo) != d || len(s.CDFHi) != d { // a checkpoint of an older kinfer
		s.CDFLo, s.CDFHi = make(f64s, d), make(f64s, d)
	}
	for i := range d {
		c := newCoord(m.bounds.Lower[i], m.bounds.Upper[i], fullKind(m.bounds.Lower[i], m.bounds.Upper[i]))
		for k := range n {
			col[k] = s.X[k*d+i]
		}
		s.Scale0[i] = spread(col, m.bounds.Upper[i]-m.bounds.Lower[i])
		mean := stat.Mean(col, nil)
		s.CDFLo[i] = math.Max(m.bounds.Lower[i], mean-cdfSpan*s.Scale0[i])
		s.CDFHi[i] = math.Min(m.bounds.Upper[i], mean+cdfSpan*s.Scale0[i])
		for k := range n {
			col[k] = c.toU(col[k])
		}
		s.Scale0U[i] = spread(col, 1)
	}
	s.Q = 0
	if m.cfg.Variant == Original {
		s.Beta = betaOriginal
	} else {
		s.Beta = beta0Numerator / math.Sqrt(float64(d))
	}
	s.Phase = phaseStages
	m.startStage()
	return nil
}

// spread is the standard deviation of xs, or fallback (1 if that is not
// finite) when it is not positive and finite.
func spread(xs []float64, fallback float64) float64 {
	mean, sq := 0.0, 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(sq / float64(len(xs)))
	if !(sd > 0) || !mcmc.Finite(sd) {
		sd = fallback
		if !mcmc.Finite(sd) {
			sd = 1
		}
	}
	return sd
}

// remap chooses the running stage's coordinate maps (stageKinds) and
// recomputes every chain's u = T(θ) and log|dθ/du| under them. θ, the
// chain's state, is kept as it is.
func (m *Method) remap() {
	s := &m.st
	n, d := m.cfg.Chains, s.D
	stageKinds(s.X, n, d, m.bounds.Lower, m.bounds.Upper, m.cfg.Proposal, s.Kinds)
	m.setCoords()
	tmp := make([]float64, d)
	for k := range n {
		x, u := s.X[k*d:(k+1)*d], s.U[k*d:(k+1)*d]
		for i, c := range m.cs {
			u[i] = c.toU(x[i])
		}
		s.LogJ[k] = mapPoint(m.cs, u, tmp)
	}
}

// setCoords builds the maps of s.Kinds.
func (m *Method) setCoords() {
	m.checkBounds = false
	for i, k := range m.st.Kinds {
		m.cs[i] = newCoord(m.bounds.Lower[i], m.bounds.Upper[i], k)
		if k == mapIdentity && (!math.IsInf(m.bounds.Lower[i], 0) || !math.IsInf(m.bounds.Upper[i], 0)) {
			m.checkBounds = true
		}
	}
}

// startStage begins stage j → j+1 from the current, equally weighted
// population at exponent Q (Appendix A, steps 1–3), or ends the run.
func (m *Method) startStage() {
	s := &m.st
	if len(s.Stages) > 0 {
		s.Stages[len(s.Stages)-1].CDFRMSE = m.cdfChange(s.StageX, s.X)
	}
	s.StageX = append(s.StageX[:0], s.X...)
	if s.Q >= 1 {
		s.Phase = phaseDone
		return
	}
	if len(s.Stages) >= m.cfg.MaxStages {
		s.Phase, s.Incomplete = phaseDone, true
		return
	}
	n, d := m.cfg.Chains, s.D
	w := m.wbuf
	// Step 1: q_{j+1} by bisection on the weights' CoV (Eq. 12).
	dq := nextExponent(w, nil, s.LogLik, 1-s.Q, m.cfg.TargetCoV)
	q := s.Q + dq
	if dq == 1-s.Q {
		q = 1
	}
	// Step 2: plausibility weights (Eq. 13) and S_j (Eq. 14).
	ws := stageWeights(w, nil, s.LogLik, dq)
	for k := range n {
		s.LogW[k] = logWeight(dq, s.LogLik[k])
	}
	s.LogZ += ws.LogS
	varLogS := clusteredVar(w, nil, s.Parent)
	s.VarLogZ += varLogS
	addInfluence(s.EveSum, w, nil, s.Eve)
	// Step 3: Σ_j = β_j²·C (Eq. 15–16), in the stage's proposal
	// coordinates.
	m.remap()
	c := weightedCov(s.U, w, n, d)
	scale := make([]float64, d)
	for i, k := range s.Kinds {
		scale[i] = s.Scale0[i]
		if k != mapIdentity {
			scale[i] = s.Scale0U[i]
		}
	}
	s.Chol = regularisedCholesky(c, scale, d)
	s.QNext, s.Sub = q, 0
	s.Stages = append(s.Stages, stage{Q: q, Beta: s.Beta, BetaEnd: s.Beta, LogS: ws.LogS, VarLogS: varLogS, ESS: ws.ESS, CoV: ws.CoV})
}

// minLineages: a final population descended from fewer prior draws than
// this is warned about (Report).
const minLineages = 10

// cdfSpan: the CDF comparison's range reaches this many prior-population
// sds either side of its mean. A uniform prior's population has sd
// width/√12, so ±6 sd covers its whole support and the range is the
// bounds, as in Bartsoen et al. 2023 (Fig. 7).
const cdfSpan = 6

// cdfChange is, per parameter, stats.MidpointCDFRMSE between the
// populations a and b (N×d each) on DefaultGridPoints midpoints of the
// parameter's range: CDFLo–CDFHi, or the bounds (NaN for an unbounded
// parameter).
func (m *Method) cdfChange(a, b f64s) f64s {
	n, d := m.cfg.Chains, m.st.D
	out := make(f64s, d)
	ca, cb := make([]float64, n), make([]float64, n)
	for i := range d {
		for k := range n {
			ca[k], cb[k] = a[k*d+i], b[k*d+i]
		}
		var err error
		lo, hi := m.bounds.Lower[i], m.bounds.Upper[i]
		if s := &m.st; len(s.CDFLo) == d && s.CDFLo[i] < s.CDFHi[i] {
			lo, hi = s.CDFLo[i], s.CDFHi[i]
		}
		out[i], err = stats.MidpointCDFRMSE(ca, cb, lo, hi, stats.DefaultGridPoints)
		if err != nil {
			out[i] = math.NaN()
		}
	}
	return out
}

// logWeight is log L^dq = dq·log L, −∞ for a failed point (L = 0).
func logWeight(dq, logLik float64) float64 {
	if math.IsInf(logLik, -1) {
		return math.Inf(-1)
	}
	return dq * logLik
}

// tellProposals is one Metropolis–Hastings sub-step of every chain under
// the stage's target π_{j+1} ∝ prior·L^q, q = q_{j+1}, in the proposal
// coordinates u: the target density there is π(θ(u))·|dθ/du|.
func (m *Method) tellProposals(results []abi.Result) {
	s := &m.st
	d := s.D
	q := s.QNext
	dq := q - s.Q
	st := &s.Stages[len(s.Stages)-1]
	accepted := 0
	for k, r := range results {
		u := m.rnd.Float64() // drawn whatever the outcome, to keep the stream aligned
		st.Proposed++
		switch r.Status {
		case abi.OK:
		case abi.OutOfSupport:
			s.OutOfSupport++
		default:
			s.Failures++
		}
		y := s.Proposals[k*d : (k+1)*d]
		if m.checkBounds && !m.bounds.Contains(y) {
			continue // rejected: the proposal's target density is 0
		}
		st.InSupport++
		if !mcmc.Usable(r) {
			continue
		}
		// Metropolis–Hastings with a symmetric proposal in u (Metropolis et
		// al. 1953; Hastings 1970): accept when log u < log π_u(u') −
		// log π_u(u).
		delta := (r.LogPrior + s.PropLogJ[k] - s.LogPrior[k] - s.LogJ[k]) + q*(r.LogLik-s.LogLik[k])
		if delta >= 0 || math.Log(u) < delta { // log u < 0 ≤ delta needs no logarithm
			copy(s.X[k*d:(k+1)*d], y)
			copy(s.U[k*d:(k+1)*d], s.ProposalsU[k*d:(k+1)*d])
			s.LogJ[k], s.LogPrior[k], s.LogLik[k] = s.PropLogJ[k], r.LogPrior, r.LogLik
			accepted++
			if m.cfg.Variant != Original {
				// Modification 1: the chain's weight follows its state (Eq. 18).
				s.LogW[k] = logWeight(dq, r.LogLik)
			}
		}
	}
	st.Accepted += accepted
	s.Pending = false
	s.Sub++
	if s.Sub <= m.cfg.adaptSteps() {
		// Sub-step rule: a stochastic-approximation step of log β towards
		// the target acceptance rate, during the first half of the stage
		// only, so its last sub-steps use one fixed kernel.
		acc := float64(accepted) / float64(len(results))
		s.Beta = clampBeta(math.Log(s.Beta) + adaptGain*(acc-m.cfg.TargetAccept))
		st.BetaEnd = s.Beta
	}
	if s.Sub < m.cfg.Substeps {
		return
	}
	// End of the stage: modification 3, β_{j+1} = β_j·exp((p_acr − t_acr)/√N_a)
	// (Eq. 19).
	if m.cfg.Variant != Original && m.cfg.Adapt == AdaptStage {
		acc := float64(st.Accepted) / float64(st.Proposed)
		s.Beta = clampBeta(math.Log(s.Beta) + (acc-m.cfg.TargetAccept)/math.Sqrt(float64(m.cfg.Substeps)))
		st.BetaEnd = s.Beta
	}
	s.Q = q
	m.startStage()
}

// clampBeta is exp(lb) with |lb| ≤ logBetaMax.
func clampBeta(lb float64) float64 {
	return math.Exp(math.Max(-logBetaMax, math.Min(logBetaMax, lb)))
}

// Report implements abi.Method. When max_stages ran out before q reached 1
// it returns the report (samples from the last tempered distribution) and
// an error saying so.
func (m *Method) Report() (abi.Report, error) {
	if !m.inited {
		return abi.Report{}, errors.New("tmcmc: Report before Init")
	}
	s := &m.st
	if s.Phase == phaseDraw {
		// Stopped before the prior population was evaluated: no samples
		// and no stage yet (ABI.md §6.3: a method answers in any state).
		return abi.Report{Extra: map[string]any{"stopped": true, "stages": []any{},
			"chains": m.cfg.Chains, "init_failures": s.InitFailures}}, nil
	}
	n, d := m.cfg.Chains, s.D
	var rep abi.Report
	rep.Samples = make([]abi.Sample, n)
	distinct := map[string]bool{}
	thetas := make([]float64, n*d)
	copy(thetas, s.X)
	for k := range n {
		x := thetas[k*d : (k+1)*d : (k+1)*d]
		rep.Samples[k] = abi.Sample{Theta: x, LogPrior: s.LogPrior[k], LogLik: s.LogLik[k]}
		distinct[string(f64s(x).bytes())] = true
	}
	stages := make([]any, len(s.Stages))
	accepted, proposed, inSupport := 0, 0, 0
	for j, st := range s.Stages {
		stages[j] = map[string]any{
			"q":                   mcmc.JSONNum(st.Q),
			"acceptance_rate":     mcmc.JSONNum(float64(st.Accepted) / float64(st.Proposed)),
			"in_support_fraction": mcmc.JSONNum(float64(st.InSupport) / float64(st.Proposed)),
			"beta":                mcmc.JSONNum(st.Beta),
			"beta_end":            mcmc.JSONNum(st.BetaEnd),
			"ess":                 mcmc.JSONNum(st.ESS),
			"log_S":               mcmc.JSONNum(st.LogS),
			"cdf_rmse":            mcmc.JSONList(st.CDFRMSE),
		}
		accepted += st.Accepted
		proposed += st.Proposed
		inSupport += st.InSupport
	}
	varLineage, lineages := lineageVar(s.EveSum, s.Eve)
	rep.Extra = map[string]any{
		"log_evidence":              mcmc.JSONNum(s.LogZ),
		"log_evidence_se":           mcmc.JSONNum(math.Sqrt(math.Max(s.VarLogZ, varLineage))),
		"log_evidence_se_stagewise": mcmc.JSONNum(math.Sqrt(s.VarLogZ)),
		"log_evidence_se_lineage":   mcmc.JSONNum(math.Sqrt(varLineage)),
		"lineages":                  lineages,
		"stages":                    stages,
		"variant":                   VariantNames[m.cfg.Variant],
		"proposal":                  ProposalNames[m.cfg.Proposal],
		"adapt":                     AdaptNames[m.cfg.Adapt],
		"chains":                    n,
		"substeps":                  m.cfg.Substeps,
		"target_cov":                m.cfg.TargetCoV,
		"final_q":                   mcmc.JSONNum(s.Q),
		"acceptance_rate":           mcmc.JSONNum(float64(accepted) / float64(proposed)),
		"in_support_fraction":       mcmc.JSONNum(float64(inSupport) / float64(proposed)),
		"distinct_samples":          len(distinct),
		"init_failures":             s.InitFailures,
		"rejected_failures":         s.Failures,
		"rejected_out_of_support":   s.OutOfSupport,
	}
	var warnings []any
	if Biased(m.cfg.Variant) {
		warnings = append(warnings, fmt.Sprintf(BiasWarning, VariantNames[m.cfg.Variant]))
		rep.Extra["evidence_biased"] = true
	}
	if lineages < minLineages {
		// With chains = 2 the evidence came out 129 nats off with a
		// standard error of 0.71, and the posterior a single point.
		warnings = append(warnings, fmt.Sprintf("the final population descends from only %d of the %d prior draws (%d distinct samples): the posterior and the log evidence (and its standard error) are unreliable; raise chains", lineages, n, len(distinct)))
	}
	if !m.Done() {
		// Stopped early (Ctrl-C, a fault): the population as it stands,
		// a sample of the tempered posterior prior·L^q, and no evidence.
		rep.Extra["stopped"] = true
		// Before the first stage's resampling the population still holds
		// the prior draws that failed (log likelihood −∞, weight 0).
		kept := rep.Samples[:0]
		for _, smp := range rep.Samples {
			if mcmc.Finite(smp.LogPrior + smp.LogLik) {
				kept = append(kept, smp)
			}
		}
		rep.Samples = kept
		rep.Extra["log_evidence"], rep.Extra["log_evidence_se"] = nil, nil
		rep.Extra["log_evidence_se_stagewise"], rep.Extra["log_evidence_se_lineage"] = nil, nil
		warnings = append(warnings, fmt.Sprintf("the run stopped at q = %.6g, before q = 1: the samples are from the tempered posterior prior·L^q, not the posterior, and there is no log evidence", s.Q))
	}
	if warnings != nil {
		rep.Extra["warnings"] = warnings
	}
	if s.Incomplete {
		rep.Extra["log_evidence"], rep.Extra["log_evidence_se"] = nil, nil
		return rep, fmt.Errorf("tmcmc: tempering reached only q = %.6g after max_stages = %d stages; the samples are from the tempered posterior prior·L^q, not the posterior (raise max_stages, or check the likelihood's scale)", s.Q, m.cfg.MaxStages)
	}
	return rep, nil
}
