package abi

// Model is y = f(θ, X): it evaluates one parameter vector θ (length d, in the
// order of Spec().Params) at all K conditions of a dataset at once.
//
// x holds the K×c conditions row-major (c = len(Spec().Conditions)); the
// model writes the K×m outputs row-major into y (m = len(Spec().Outputs)).
// A θ for which the model has no solution returns Failed or Invalid; the
// contents of y are then ignored. Eval must be safe for concurrent use: the
// host calls it from several workers at once.
type Model interface {
	Spec() Spec
	Eval(theta, x, y []float64) Status
}

// Jacobian is the optional full-Jacobian capability of a model
// (CapJacobian). It writes y as Eval does and jac, the (K·m)×d row-major
// matrix ∂y/∂θ.
type Jacobian interface {
	Jacobian(theta, x, y, jac []float64) Status
}

// VJP is the optional vector–Jacobian-product capability of a model
// (CapVJP). Given a cotangent v of length K·m it writes y as Eval does and
// g = vᵀ·∂y/∂θ (length d).
type VJP interface {
	VJP(theta, x, v, y, g []float64) Status
}

// Likelihood is log p(Y_obs | Y_model) for one dataset. m is the number of
// outputs the term sees (the columns of one row) and y, obs and sigma are
// K×m row-major, K = len(y)/m; sigma is the per-value scale the study
// assigns (a dataset's σ columns or a per-output constant). obs and sigma
// may hold NaN where a value is unobserved: a likelihood that reads obs
// MUST skip a NaN observation (it adds nothing to logL, and its gy and r
// entries are 0). It returns the log-likelihood and a status; a non-OK
// status makes the point's log target −∞. The host always passes m ≥ 1 and
// len(y) a multiple of m. Implementations must be safe for concurrent use.
type Likelihood interface {
	Spec() Spec
	LogLikelihood(m int, y, obs, sigma []float64) (float64, Status)
}

// GradY is the optional likelihood capability (CapGradY) that also returns
// gy = ∂logL/∂y (K×m), the cotangent a gradient method chains through a
// model's VJP or Jacobian.
type GradY interface {
	LogLikelihoodGrad(m int, y, obs, sigma, gy []float64) (float64, Status)
}

// Residuals is the optional likelihood capability (CapResiduals) that writes
// r (length K·m) such that logL = const − ½‖r‖², for least-squares methods.
type Residuals interface {
	Residuals(m int, y, obs, sigma, r []float64) Status
}

// ResidualSlopes is the optional capability of a likelihood with Residuals
// whose residual i depends on value i only (r_i = r(y_i, obs_i, σ_i), as
// the Gaussian's (y_i − obs_i)/σ_i): it writes r as Residuals does and
// s_i = ∂r_i/∂y_i (0 where obs_i is missing). The host chains it with a
// model's Jacobian, ∂r/∂θ = diag(s)·∂y/∂θ, instead of differencing the
// whole target. It is a Go-only capability (a WASM likelihood's residuals
// are differenced through θ).
type ResidualSlopes interface {
	ResidualSlopes(m int, y, obs, sigma, r, s []float64) Status
}

// Want says what a method needs evaluated for each point of a batch.
type Want uint32

const (
	// WantLogTarget: log prior and log likelihood (always provided).
	WantLogTarget Want = 1 << iota
	// WantGradient: ∇θ of the log target.
	WantGradient
	// WantResiduals: the residuals of all likelihood terms, then of the
	// study's soft constraints (Problem.Residuals values).
	WantResiduals
	// WantJacobian: ∂residuals/∂θ (implies WantResiduals).
	WantJacobian
	// WantOutputs: the model's outputs at the point (Result.Outputs), all
	// Problem.OutputNames at every one of the Problem.OutputRows condition
	// rows, for a method that reads what the model predicts rather than
	// how well it fits (Monte Carlo propagation). A method plugin asks for
	// it with capability CapPropagation (ABI.md §6.5, want bit 4).
	WantOutputs
)

// PriorBoxTail is the prior mass outside Problem.PriorBox, half below and
// half above.
const PriorBoxTail = 1e-6

// Problem is what the host tells a method when the run starts.
//
// In a method plugin (the Go SDK's sdk/go/method) the Problem is built
// from what ABI v1 passes (ABI.md §6.3–6.5), which is less: Params have
// the bounds only, named theta0, theta1, … with the bounds' midpoints as
// defaults, unless the method is least-squares (kinfer_method_problem
// gives the names, the defaults and Starts); Starts is empty for any
// other plugin (the study's init rows come as its first prior draws);
// MemoryBudget is 0, and a plugin's limit is its manifest's memory_mib,
// which a method that plans its memory should compare against (audit 20).
// kinfer inspect --certify drives a method with three parameters on
// [−3, 3] (ABI.md §8).
type Problem struct {
	// Params are the free parameters in θ order, with their bounds.
	Params []Param
	// Seed is the study seed. All of a method's randomness must flow from it
	// so that a run is reproducible whatever the number of workers.
	Seed uint64
	// MemoryBudget is the most memory, in bytes, the method may plan to
	// hold (0: DefaultMemoryBudget). A method whose settings need more —
	// samples kept for its report, a population, traces — refuses at Init,
	// naming the settings and the bytes needed against the budget, instead
	// of running out of memory later. Memory proportional to the output
	// grows as the output is produced, never preallocated.
	MemoryBudget int64
	// Residuals is the length R of a point's residual vector
	// (Result.Residuals): every likelihood term's K·m residuals in study
	// order, then the study's soft constraints. 0 when some term cannot
	// give residuals (the study then refuses a method that lists
	// CapLeastSquares).
	Residuals int
	// Observations is how many of the Residuals are observations: the
	// likelihood terms' observed values, without the unobserved ones
	// (whose residual is always 0) and without the soft constraints. A
	// least-squares fit has Observations − len(Params) degrees of freedom.
	// 0 when not known (a method then counts all Residuals).
	Observations int
	// PriorBox is, per parameter, an interval [lo, hi] inside its bounds
	// that holds all but PriorBoxTail of the prior's mass (the prior cut to
	// the bounds): the bounds themselves for a uniform prior, but ±5 sd for
	// a normal prior inside bounds of ±1e9. A method that sizes a first
	// step or a search box from the bounds uses it instead. nil when not
	// known (ABI v1 does not pass it to a plugin); a parameter the study
	// transforms has its bounds (in x) here.
	PriorBox [][2]float64
	// Starts are initial points in the method's coordinates, each inside
	// the bounds of Params: the study's init rows, or without an init file
	// one point, the parameters' defaults clamped to their bounds. Never
	// empty when the host builds the Problem. (The init rows are also
	// served as the first prior draws, as before.)
	Starts [][]float64
	// OutputNames are the model's outputs in order (its Spec().Outputs),
	// the columns of Result.Outputs.
	OutputNames []string
	// OutputRows is the number of condition rows of Result.Outputs: every
	// [[data]] table's rows, dataset after dataset in study order, or,
	// for a study without [[data]], the rows of its [conditions] table
	// (one row for a model without condition columns).
	OutputRows int
	// Likelihoods is the number of the study's likelihood terms; 0 for a
	// propagation study without [[likelihood]] (every point's LogLik is
	// then 0 plus its soft constraints' terms), which the host allows only
	// for a method with capability CapPropagation.
	Likelihoods int
}

// DefaultMemoryBudget is the budget a method assumes when Problem's is 0.
const DefaultMemoryBudget int64 = 4 << 30

// Budget is p.MemoryBudget, or DefaultMemoryBudget when it is not set.
func (p Problem) Budget() int64 {
	if p.MemoryBudget > 0 {
		return p.MemoryBudget
	}
	return DefaultMemoryBudget
}

// Batch is what a method asks the host to evaluate.
type Batch struct {
	// Points to evaluate, each of length d. Leave empty to ask for Draw
	// points from the prior instead.
	Points [][]float64
	// Draw asks the host to draw this many points from the prior (its own
	// deterministic stream) and evaluate them; Tell receives the points it
	// drew in Result.Theta. Used for initial populations.
	Draw int
	// Want is what is needed for every point of the batch.
	Want Want
}

// Len is the number of points in the batch.
func (b Batch) Len() int {
	if len(b.Points) > 0 {
		return len(b.Points)
	}
	return b.Draw
}

// Result is the evaluation of one point of a batch, in batch order.
type Result struct {
	Theta    []float64
	Status   Status
	LogPrior float64
	// LogLik is Σ over likelihood terms; −∞ when Status is not OK.
	LogLik float64
	// Grad is ∇θ(LogPrior+LogLik) when WantGradient was asked.
	Grad []float64
	// Residuals (length Problem.Residuals) when WantResiduals or
	// WantJacobian was asked and Status is OK: LogLik = C − ½‖Residuals‖²
	// with C constant in θ. Finite (a non-finite residual makes the point
	// NonFinite). nil for a point whose Status is not OK.
	Residuals []float64
	// Jacobian is ∂Residuals/∂θ, len(Residuals)×d row-major, in the
	// method's coordinates, when WantJacobian was asked. nil when Status
	// is not OK or the host could not compute it (a finite-difference
	// step failed): a method treats such a point as failed.
	Jacobian []float64
	// Outputs are the model's outputs at the point when WantOutputs was
	// asked and Status is OK: Problem.OutputRows × len(Problem.OutputNames)
	// row-major (row r, output j at r·m + j), the rows of every dataset in
	// study order. Finite (a non-finite output makes the point NonFinite,
	// a model failure its status). nil for a point whose Status is not OK.
	Outputs []float64
}

// LogTarget is LogPrior + LogLik.
func (r Result) LogTarget() float64 { return r.LogPrior + r.LogLik }

// Sample is one row of a method's output: a posterior draw for a sampler,
// an iterate for an optimiser.
type Sample struct {
	Theta    []float64
	LogPrior float64
	LogLik   float64
	// Extra are the sample's values of Report.Columns, in their order
	// (nil when the method names no columns).
	Extra []float64
}

// Report is what a method leaves when it is done.
type Report struct {
	// Samples are written to samples.csv and summarised in summary.json.
	Samples []Sample
	// Columns name values per sample that samples.csv and samples.parquet
	// carry after log_likelihood (Sample.Extra: every sample has one value
	// per column), such as montecarlo's quantity of interest. Names are
	// unique, and neither a free parameter's nor log_prior or
	// log_likelihood. Not for a SampleStream method (its journal holds the
	// parameters and the two log densities only).
	Columns []string
	// Extra is the method-specific block of summary.json (acceptance rates,
	// stage diagnostics, evidence...). It must marshal to JSON.
	Extra map[string]any
}

// Method is a sampler or optimiser, driven by the host: Ask returns the next
// batch (a zero-length batch while Done is false is an error), Tell hands
// back its results in batch order, and Report is called once Done is true.
// A method never evaluates anything itself, so one host loop gives every
// method parallel workers, instance pools, progress and checkpoints.
type Method interface {
	Spec() Spec
	Init(p Problem) error
	Ask() (Batch, error)
	Tell(results []Result) error
	Done() bool
	Report() (Report, error)
}

// Checkpointer is the optional capability of a method whose state can be
// saved and restored into a freshly constructed method of the same
// configuration (after Init), continuing the run exactly. SaveState may be
// called between any two calls, also between Ask and Tell: a method restored
// from such a state must return the same batch from its next Ask (the host
// re-evaluates it; prior draws come from the host's stream, restored to its
// state before that batch). A state is never empty: a WASM method's empty
// state means it cannot save (ABI.md §6.3).
type Checkpointer interface {
	SaveState() ([]byte, error)
	LoadState([]byte) error
}

// SampleStream is the optional capability of a method whose samples grow
// with the run (a sampler's kept draws). The host takes the new samples
// after every Tell and appends them to a journal in the output directory,
// so that a checkpoint costs what is new, not the whole run: SaveState
// leaves out every sample TakeSamples has returned. On resume the host
// calls RestoreSamples after LoadState with the samples taken before that
// checkpoint. The host writes samples.csv from the taken samples, in the
// order taken, and ignores Report.Samples.
type SampleStream interface {
	// TakeSamples returns the samples produced since the previous call (none
	// is an empty slice), in output order. The host does not modify them.
	TakeSamples() []Sample
	// RestoreSamples gives back, after LoadState, every sample TakeSamples
	// had returned when the state was saved, in the order returned. It
	// refuses a count that does not match the state.
	RestoreSamples([]Sample) error
}

// HeldPoints is implemented by a method whose restored state carries
// evaluated points it builds on: a sampler's current chain positions, with
// the log prior and log likelihood it was told for each. After LoadState
// the host evaluates them again and refuses a state whose values no
// evaluation of the study gives (a tampered or foreign state would seed
// the resumed run with them, and a chain would sit on a forged value).
type HeldPoints interface {
	// HeldPoints returns the points with Status OK, LogPrior and LogLik as
	// the state holds them (nil when there are none yet).
	HeldPoints() []Result
}

// Constructor builds a configured component from its setting values, given
// in the order of its Spec().Settings (see SettingValues). Built-ins register
// one per model, likelihood and method.
type Constructor[T any] func(settings []float64) (T, error)

// BatchModel is the optional capability of a model to evaluate several θ in
// one call; the host prefers it when present. WASM models implement it so a
// worker's whole chunk crosses the sandbox boundary once. thetas[i] is
// evaluated into ys[i] (K×m) with its status in status[i].
type BatchModel interface {
	EvalBatch(thetas [][]float64, x []float64, ys [][]float64, status []Status)
}

// Faulter is implemented by components that can fail as a whole (a plugin
// that trapped or timed out). When an evaluation returns Timeout or Trap the
// host asks Fault for the error to stop the run with.
type Faulter interface {
	Fault() error
}

// BatchLikelihood is the optional likelihood capability (CapBatch) of
// evaluating the outputs of several points against the same data in one
// call: ll[i] and status[i] are LogLikelihood(m, ys[i], obs, sigma) for
// each i. The host prefers it when present; a WASM likelihood then
// crosses the sandbox boundary once per chunk of points instead of once
// per point.
type BatchLikelihood interface {
	LogLikelihoodBatch(m int, ys [][]float64, obs, sigma []float64, ll []float64, status []Status)
}

// RowsIndependent is the optional capability of a model whose rows do not
// interact: row k of y depends on θ and row k of x only. Precisely, when
// RowsIndependent returns true, Eval on any contiguous block of the rows
// of x writes, for those rows, exactly (bit for bit) what Eval on all the
// rows writes, and returns OK on every block if and only if it does on
// the whole (otherwise the first failing block's status in row order is
// the whole's); its VJP (and EvalPullback's Pull) on the whole equals the
// sum of those on the blocks up to rounding. The host may then split one
// θ's rows across its workers, in fixed blocks whose boundaries do not
// depend on the number of workers, and sum the blocks' gradients in block
// order, so a result stays the same whatever the number of workers. A
// method rather than a marker so that an adapter can forward a plugin's
// declaration.
type RowsIndependent interface {
	RowsIndependent() bool
}

// Pullbacker is the optional capability of a model to evaluate y and keep
// what its VJP needs, so that the host's gradient — y first, then the
// likelihood's cotangent v = ∂logL/∂y, which depends on all of y, then
// vᵀ·∂y/∂θ — runs the model's forward pass once, not twice (Eval, then a
// VJP that recomputes y). EvalPullback writes y as Eval does (bit for
// bit) and returns, with status OK, a Pullback for the same θ and x; with
// any other status it returns a nil Pullback and y is ignored. It must be
// safe for concurrent use, like Eval; each Pullback belongs to one
// goroutine. What it keeps grows with the number of rows (for the builtin
// arm ≈ 1.2 KB per row): the host holds at most one per worker at a time.
type Pullbacker interface {
	EvalPullback(theta, x, y []float64) (Pullback, Status)
}

// Pullback is the backward pass of one EvalPullback call. Pull writes
// g = vᵀ·∂y/∂θ (length d) for a cotangent v (K·m, like y), the result the
// model's VJP would give for (θ, x, v) — bit for bit when the model's VJP
// computes it the same way, which the model documents; it may be called
// more than once, with the VJP's statuses (Invalid for mismatched lengths
// or a non-finite v, Failed where the VJP fails; g is then all zero).
// Release hands the kept state back to the model; the Pullback must not
// be used after it.
type Pullback interface {
	Pull(v, g []float64) Status
	Release()
}

// TapePullbacker is Pullbacker in the stateless form a plugin serves
// through capability pullback (ABI.md §6.1, CapPullback): the kept state
// is a tape of values handed to the caller, so that the backward pass can
// run anywhere (for a plugin: on any instance) from θ, x and the tape.
// EvalTape writes y as Eval does (bit for bit) and returns, with status
// OK, the tape (appended to tape[:0], whose storage it may reuse); with
// any other status y and the tape are ignored. PullTape writes
// g = vᵀ·∂y/∂θ from the same θ and x and that tape, the g the model's VJP
// gives (bit for bit when it computes it the same way), with the VJP's
// statuses (Invalid for mismatched lengths or a non-finite v; g is then
// all zero).
type TapePullbacker interface {
	EvalTape(theta, x, y, tape []float64) ([]float64, Status)
	PullTape(theta, x, tape, v, g []float64) Status
}
