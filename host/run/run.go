package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// priorStream is the PCG stream id of the host's prior draws ("prior").
const priorStream = 0x7072696f72

// Options configure a run.
type Options struct {
	// RemoveStale names files of an earlier run in OutDir that this run
	// removes once it has checked that none of them is one of its inputs
	// (outputFiles must name them).
	RemoveStale []string
	OutDir      string
	Workers     int
	Progress    io.Writer // nil: no progress
	// MaxBatches bounds the ask/tell loop (0: no bound); a guard against a
	// method that never finishes.
	MaxBatches int
	// Resume continues the run from OutDir's checkpoint.
	Resume bool
	// NoReport is recorded in run.json (the run was started with
	// --no-report), so that a resume writes no report either.
	NoReport bool
	// CheckpointEvery is the least time between checkpoints of a method that
	// can save its state (0: DefaultCheckpointEvery; negative: after every
	// batch). A run that stops early always writes one.
	CheckpointEvery time.Duration
	// MemoryBudget is the memory, in bytes, the method's settings and the
	// host's batches may plan for (abi.Problem.MemoryBudget; 0:
	// DefaultMemoryBudget()).
	MemoryBudget int64
	// Lock is the caller's lock on OutDir (LockDir); nil: Run takes it and
	// releases it when it returns.
	Lock *DirLock
	// Remote evaluates the method's batches on remote workers (host/remote)
	// instead of on Workers goroutines of this process; results are the
	// same bit for bit. If it has a Status() string method, the progress
	// line shows it (the workers seen and their throughput); if it has an
	// OnProgress(func()) method, it is given a function that refreshes
	// the line, to call during a batch from Evaluate's goroutine.
	Remote target.Remote
}

// MaxDraw bounds the prior draws one batch may ask for (10 million points
// of 100 parameters are 8 GB); the memory budget may bound them further.
const MaxDraw = 10_000_000

// DefaultCheckpointEvery is the default least time between checkpoints.
const DefaultCheckpointEvery = 30 * time.Second

// CanCheckpoint reports whether a run of m can save its state and be
// resumed.
func CanCheckpoint(m abi.Method) bool {
	_, ok := m.(abi.Checkpointer)
	return ok
}

// runner is one run's host state.
type runner struct {
	heapChecked bool // the first batch was checked with the live heap (checkBatch)
	s           *study.Study
	o           Options
	t           *target.Target
	pcg         *rand.PCG
	rng         *rand.Rand
	best        abi.Result
	start       time.Time

	cp     abi.Checkpointer // nil: the method cannot save its state
	stream abi.SampleStream // nil: samples come from Report
	jn     *journal
	taken  []abi.Sample // the streamed samples, in the method's coordinates

	prog       *progress
	hash       string
	budget     int64
	prevWall   float64
	batches    int
	startsUsed int
	// lastBatch is how long the previous batch's evaluation took (0:
	// none yet), for evaluate's choice of a direct call.
	lastBatch time.Duration
	lastSave  time.Time
}

func (r *runner) method() string { return r.s.MethodInfo.Label() }

// Run runs s's method to completion and writes summary.json and
// samples.csv into o.OutDir, which it holds locked. On a plugin fault or
// cancellation it still writes what was computed (summary.json has
// "complete": false and the error; samples.csv the samples so far of a
// streaming method) and returns the error. run.json records the run's
// state throughout.
func Run(ctx context.Context, s *study.Study, o Options) (*Summary, error) {
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.Lock == nil {
		l, err := LockDir(o.OutDir)
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	}
	ins, err := Inputs(s)
	if err != nil {
		return nil, err
	}
	if err := NotOverInputs(o.OutDir, outputFiles, ins); err != nil {
		return nil, err
	}
	if err := NotRemovedInputs(o.OutDir, ins); err != nil {
		return nil, err
	}
	removeStaleTemps(o.OutDir)
	for _, name := range o.RemoveStale {
		if slices.Contains(outputFiles, name) {
			os.Remove(filepath.Join(o.OutDir, name))
		}
	}
	r := &runner{s: s, o: o, t: target.New(s, o.Workers), start: time.Now(),
		best: abi.Result{LogPrior: math.Inf(-1), LogLik: math.Inf(-1)},
		hash: studyHash(ins), budget: o.MemoryBudget, lastSave: time.Now()}
	if r.budget <= 0 {
		r.budget = DefaultMemoryBudget()
	}
	r.t.LimitFused(r.budget)
	r.t.Remote = o.Remote
	r.prog = newProgress(o.Progress, r.start)
	if st, ok := o.Remote.(interface{ Status() string }); ok {
		r.prog.status = st.Status
	}
	if op, ok := o.Remote.(interface{ OnProgress(func()) }); ok {
		// Refresh the line during a long remote batch (the evaluations
		// are counted when the batch is complete).
		op.OnProgress(func() { r.prog.update(r.t.Counts(), r.s.Method) })
	}
	r.pcg = rand.NewPCG(s.Seed, priorStream)
	r.rng = rand.New(r.pcg)
	r.cp, _ = s.Method.(abi.Checkpointer)
	r.stream, _ = s.Method.(abi.SampleStream)

	// Refusals that need no evaluation come before the directory is
	// touched: a previous run's results there stay as they were.
	if err := r.preflight(); err != nil {
		return nil, err
	}
	setupErr := r.setup(ctx)
	if setupErr != nil && o.Resume {
		// A refused resume leaves the stopped run's files as they were.
		r.jn.close()
		return nil, setupErr
	}
	var ie *initError
	if errors.As(setupErr, &ie) {
		// A method refusing its problem (settings beyond the memory
		// budget, annealing's unbounded box): nothing was evaluated and
		// nothing is written, so a previous run in the directory stays.
		sum := summarize(s, r.t, o.Workers, abi.Report{}, nil, r.best, time.Since(r.start))
		sum.MemoryBudget, sum.Error = r.budget, ie.Error()
		return sum, ie
	}
	// They described the previous samples: a run with --no-report, or one
	// interrupted before its report, must not leave them beside its own.
	os.Remove(filepath.Join(o.OutDir, AnalysisFile))
	os.Remove(filepath.Join(o.OutDir, ReportFile))
	abs, _ := filepath.Abs(s.Path)
	rs := &RunState{State: StateRunning, PID: os.Getpid(), StudyFile: abs, Seed: s.Seed, Method: s.MethodInfo.Ref,
		CanCheckpoint: r.cp != nil, Started: time.Now().UTC().Format(time.RFC3339), NoReport: o.NoReport}
	if o.Resume {
		if old, _ := ReadRunState(o.OutDir); old != nil {
			rs.Started, rs.Resumes = old.Started, old.Resumes+1
		}
	}
	if err := writeRunState(o.OutDir, rs); err != nil {
		return nil, err
	}

	loopErr, stoppedInEval, rngAtAsk, startsAtAsk := setupErr, false, []byte(nil), 0
	if setupErr == nil {
		loopErr, stoppedInEval, rngAtAsk, startsAtAsk = r.loop(ctx)
	}
	// A run stopped during an evaluation keeps a checkpoint: the method's
	// state with the batch in flight still pending (abi.Checkpointer allows
	// a save between Ask and Tell) and the prior stream as it was before
	// that batch, so a resumed run asks the same batch again. A complete
	// run removes it.
	if stoppedInEval {
		if err := r.save(r.batches, rngAtAsk, startsAtAsk); err != nil {
			loopErr = errors.Join(loopErr, err)
		}
	}
	if err := r.jn.close(); err != nil && loopErr == nil {
		loopErr = err
	}
	r.prog.done(r.t.Counts())

	rep, repErr := s.Method.Report()
	if repErr != nil && !errors.Is(loopErr, repErr) {
		// Also after a stop: a method that could not give its samples
		// says why (audit 5: only "interrupted" was recorded); not the
		// fault that already ended the loop, which a faulted plugin
		// method's Report returns again.
		loopErr = errors.Join(loopErr, fmt.Errorf("method %s: report: %w", r.method(), repErr))
	}
	samples := rep.Samples
	var extra []string // the method's extra sample columns
	if r.stream != nil {
		samples = r.taken
	} else {
		extra = rep.Columns
		for i, smp := range samples {
			if len(smp.Theta) != len(s.XParams) {
				loopErr = errors.Join(loopErr, fmt.Errorf("method %s: report: sample %d has %d values, want %d", r.method(), i+1, len(smp.Theta), len(s.XParams)))
				samples = nil
				break
			}
			if err := r.inBounds(i+1, smp); err != nil {
				loopErr = errors.Join(loopErr, err)
				samples = nil
				break
			}
		}
		if err := checkColumns(s, extra, samples); err != nil {
			loopErr = errors.Join(loopErr, fmt.Errorf("method %s: %w", r.method(), err))
			samples, extra = nil, nil
		}
	}
	// A method that ends without an error, with no samples, after every
	// evaluation failed has no result: that is the run's error (with the
	// plugins' reasons), not a complete run of 0 samples.
	if loopErr == nil && len(samples) == 0 {
		if c := r.t.Counts(); c.Evaluations > 0 && c.Failed == c.Evaluations {
			loopErr = allFailed(r.method(), c, r.t.EvaluationFailures())
		}
	}
	// The method works in x when the study has transforms; samples.csv and
	// summary.json report the model's θ = T(x). best stays in x until
	// summarize (the checkpoint keeps it as the method saw it).
	if s.Transformed() {
		out := make([]abi.Sample, len(samples))
		for i, smp := range samples {
			out[i] = smp
			if len(smp.Theta) == len(s.Free) {
				out[i].Theta = s.Forward(smp.Theta)
			}
		}
		samples = out
	}
	wall := time.Duration((r.prevWall + time.Since(r.start).Seconds()) * float64(time.Second))
	sum := summarize(s, r.t, o.Workers, rep, samples, r.best, wall)
	if o.Resume {
		// The plugins' own tallies start again with the process, the
		// run's (status_counts) are restored: say which these are
		// (review 16: a resumed run's failures looked fewer).
		const since = " (plugin calls since the run was last resumed; status_counts counts the whole run)"
		if sum.EvaluationFailures != "" {
			sum.EvaluationFailures += since
		}
		if sum.DerivativeFailures != "" {
			sum.DerivativeFailures += since
		}
		if sum.BatchFaults != "" {
			sum.BatchFaults += since
		}
	}
	sum.Provenance = provenance(s, ins)
	sum.MemoryBudget = r.budget
	if rs, ok := o.Remote.(interface{ Summary() any }); ok {
		sum.Remote = rs.Summary()
	}
	sum.Complete = loopErr == nil
	if loopErr != nil {
		sum.Error = loopErr.Error()
	}
	if s.InitFile != "" {
		sum.InitFile, sum.InitRows = s.InitFile, len(s.Starts)
		// A built-in method takes the rows only as its first prior draws,
		// and so does a plugin but a least-squares one, which gets them
		// all through kinfer_method_problem too and may start from them
		// without drawing (audit 10): what it used is unknown. (Audit 20:
		// every plugin was counted unknown, rows left unused unsaid.)
		if strings.HasPrefix(s.MethodInfo.Ref, "builtin:") || !s.MethodInfo.Spec.Has(abi.CapLeastSquares) {
			sum.InitRowsUsed = r.startsUsed
		} else {
			sum.InitRowsUsed = -1
		}
	}
	werr := writeOutputs(o.OutDir, s, sum, extra, samples)
	// The checkpoint goes only once the outputs are written: a run whose
	// samples.csv could not be written (a full disk) is stopped, not
	// complete, and --resume continues it from a checkpoint of the method
	// at its end (written now: a run shorter than --checkpoint-every had
	// none), which only reports again.
	if werr != nil && loopErr == nil && r.cp != nil && !stoppedInEval {
		prior, _ := r.pcg.MarshalBinary()
		if err := r.save(r.batches, prior, r.startsUsed); err != nil {
			werr = errors.Join(werr, err)
		}
	}
	if (sum.Complete && werr == nil) || r.cp == nil || errors.Is(loopErr, ErrAllFailed) {
		removeCheckpoint(o.OutDir)
	}
	rs.State, rs.Error = StateComplete, ""
	if !sum.Complete {
		rs.State, rs.Error = StateStopped, sum.Error
	} else if werr != nil {
		rs.State, rs.Error = StateStopped, "writing the outputs: "+werr.Error()
	}
	werr = errors.Join(werr, writeRunState(o.OutDir, rs))
	if werr != nil {
		return sum, errors.Join(loopErr, werr)
	}
	return sum, loopErr
}

// ErrAllFailed: the method ended with no samples after every evaluation
// failed; a resume would end the same way.
var ErrAllFailed = errors.New("no samples: every evaluation failed")

// allFailed is ErrAllFailed for method with the counts by status and the
// plugins' last messages (note, may be empty).
func allFailed(method string, c target.Counts, note string) error {
	var st []string
	for k, v := range c.ByStatus {
		st = append(st, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(st)
	if note != "" {
		note = "; points failed in a plugin: " + note
	}
	return fmt.Errorf("method %s ended with %w (%d of %d: %s)%s", method, ErrAllFailed, c.Failed, c.Evaluations, strings.Join(st, ", "), note)
}

// ErrNotThisRun: a checkpoint whose content no run of this study wrote
// (a best point that does not evaluate to itself, journal samples outside
// the study's bounds); a resume would refuse it again.
var ErrNotThisRun = errors.New("run the study again, into this -o or another")

// ErrStateRefused: the method refused its saved state on --resume, which
// it would do again: the run must start afresh.
var ErrStateRefused = errors.New("the method cannot restore this checkpoint; run the study again, into this -o or another")

// errOverBudget marks a checkpoint refused only for the memory budget
// (its text is empty, it only tags): a larger --memory-budget resumes it.
var errOverBudget = errors.New("")

// resumable reports whether a refused checkpoint might resume after all:
// refused for the memory budget or a permission, not for its content.
func resumable(err error) bool {
	return errors.Is(err, errOverBudget) || errors.Is(err, fs.ErrPermission)
}

// ErrBadCheckpoint: the checkpoint or its journal is damaged or
// inconsistent (a tally out of range, a journal shorter than its count):
// resuming again fails the same way, so no --resume hint (audit 7).
var ErrBadCheckpoint = errors.New("the checkpoint cannot be resumed; run the study again, into this -o or another")

// outputFiles are the files a run writes into its directory.
var outputFiles = []string{"summary.json", "samples.csv", ParquetFile, StateFile, CheckpointFile, JournalFile, AnalysisFile, ReportFile, StagesFile, "stage_start.json"}

// OutputFiles are the names of the files a run writes into its directory.
func OutputFiles() []string { return slices.Clone(outputFiles) }

// NotOverInputs refuses a command whose outputs, the files names in dir,
// would replace one of its inputs ins: a dataset named samples.csv in the
// folder a run writes to (a run into the study's own folder), or
// design.csv for kinfer design; found by path or as the same file.
func NotOverInputs(dir string, names []string, ins []Input) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		if in, ok := Clobbers(filepath.Join(abs, name), ins); ok {
			return fmt.Errorf("the outputs would write %s over the %s %s: rename that file, or write into another -o (%w)", name, in.Role, in.Path, ErrOverInputs)
		}
	}
	return nil
}

// ErrOverInputs: a run's outputs would replace or remove one of its
// inputs; running again fails the same way.
var ErrOverInputs = errors.New("the inputs are kept")

// outputPatterns are the other names a run writes and removes in its
// directory: the method's saved states and WriteAtomic's temporaries
// (removed when stale).
var outputPatterns = []string{stateFilePrefix + "*.state", ".*" + tmpInfix + "*"}

// NotRemovedInputs refuses a run whose directory holds one of its inputs
// under a name the run removes (audit 9: a data file named
// checkpoint.x.state was read, then deleted with the checkpoint; one named
// .samples.csv.tmp-1 was deleted as a stale temporary before the study
// loaded).
func NotRemovedInputs(dir string, ins []Input) error {
	for _, in := range ins {
		if !sameDir(filepath.Dir(in.Path), dir) {
			continue
		}
		for _, pat := range outputPatterns {
			if ok, _ := filepath.Match(pat, filepath.Base(in.Path)); ok {
				return fmt.Errorf("the run removes files named %s in %s, and the %s %s is one: rename that file, or write into another -o (%w)", pat, dir, in.Role, in.Path, ErrOverInputs)
			}
		}
	}
	return nil
}

// sameDir reports whether a and b are one folder.
func sameDir(a, b string) bool {
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	if aa == ab {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// removeStaleTemps removes WriteAtomic's temporaries left in dir by a run
// that was killed while writing.
func removeStaleTemps(dir string) {
	stale, _ := filepath.Glob(filepath.Join(dir, ".*"+tmpInfix+"*"))
	for _, s := range stale {
		os.Remove(s)
	}
}

// Clobbers returns the first of ins that writing target would replace:
// the same path (absolute), or the same file reached another way (a hard
// link, another path to its folder).
func Clobbers(target string, ins []Input) (Input, bool) {
	at, _ := filepath.Abs(target)
	ft, terr := os.Stat(target)
	for _, in := range ins {
		ai, _ := filepath.Abs(in.Path)
		if ai == at {
			return in, true
		}
		if terr != nil {
			continue
		}
		if fi, err := os.Stat(in.Path); err == nil && os.SameFile(ft, fi) {
			return in, true
		}
	}
	return Input{}, false
}

// preflight is Preflight with the run's budget.
func (r *runner) preflight() error { return Preflight(r.s, r.budget) }

// Preflight refuses a run that cannot do anything useful, before it
// writes anything: plugins whose memory limits exceed the memory budget
// (0: DefaultMemoryBudget), and likelihood terms that observe nothing.
// kinfer validate runs it too.
func Preflight(s *study.Study, budget int64) error {
	if budget <= 0 {
		budget = DefaultMemoryBudget()
	}
	if need := s.PluginBytes(); need > budget {
		// Only a plugin that asks for more than the default memory is
		// refused (with the default, every instance stays small however
		// many workers a big machine has).
		var parts []string
		big := false
		for _, p := range s.PluginMemory {
			parts = append(parts, fmt.Sprintf("[%s] plugin %s: memory_mib %d × %d instances", p.Table, p.Name, p.MiB, p.Instances))
			big = big || p.MiB > manifest.DefaultMemoryMiB
		}
		if big {
			return fmt.Errorf("the study's plugins may take about %s of host memory (%s; ×%d, since a growing memory is copied), more than the memory budget of %s: lower memory_mib in the manifest or --workers, or raise --memory-budget",
				FormatBytes(need), strings.Join(parts, "; "), study.PluginGrowFactor, FormatBytes(budget))
		}
	}
	if len(s.Terms) > 0 && s.ObservedResiduals() == 0 {
		// A likelihood that does not need σ may be a constraint on the
		// predictions alone, reading no observation.
		for _, t := range s.Terms {
			if t.Component.Spec.Has(abi.CapSigmaFree) {
				return nil
			}
		}
		return ErrNoObservations
	}
	return nil
}

// ErrNoObservations: the study's likelihood terms observe nothing (a
// study for kinfer design, whose data files give condition rows only).
var ErrNoObservations = errors.New("the study's likelihood terms have no observed value (every cell of their output columns is empty or nan): the run would fit nothing; fill the data files' output columns")

// directBelow: a batch after one quicker than this is evaluated directly.
const directBelow = 100 * time.Millisecond

// evaluate is r.t.Evaluate, abandoned target.Grace after ctx is done
// (the run then stops as if stopped before the batch: its checkpoint and
// partial results are those of the batches before, and a resume asks the
// batch again). While batches are quick (the previous one took less than
// directBelow) it calls Evaluate directly: a stop is then seen within a
// batch anyway, and handing every batch to another goroutine cost a cheap
// model's run about 10 % of its time.
func (r *runner) evaluate(ctx context.Context, pts [][]float64, want abi.Want) ([]abi.Result, error) {
	start := time.Now()
	defer func() { r.lastBatch = time.Since(start) }()
	if r.lastBatch > 0 && r.lastBatch < directBelow {
		return r.t.Evaluate(ctx, pts, want)
	}
	nanos := r.t.ModelNanos()
	res, err := target.Await(ctx, func() ([]abi.Result, error) { return r.t.Evaluate(ctx, pts, want) })
	if errors.Is(err, target.ErrAbandoned) {
		// The batch's results are never used: nor is its model time (the
		// abandoned evaluations may still add theirs before the process
		// exits, after the records are written).
		r.t.SetModelNanos(nanos)
		why := "a built-in model's evaluation cannot be interrupted"
		if r.t.Remote != nil {
			why = "the remote workers did not answer"
		}
		return nil, fmt.Errorf("%w (%s): the run stops without them", err, why)
	}
	return res, err
}

// checkBest evaluates a checkpoint's best point and refuses it unless its
// status, log prior and log likelihood are that evaluation's (to 1e-9
// relative: a least-squares method's log likelihood is summed from the
// residuals).
func (r *runner) checkBest(ctx context.Context, b abi.Result) error {
	return r.checkPoints(ctx, "best point", []abi.Result{b})
}

// checkPoints evaluates points a checkpoint holds (its best, a method's
// held chain positions) and refuses any whose status, log prior or log
// likelihood the study does not give (to 1e-9).
func (r *runner) checkPoints(ctx context.Context, what string, pts []abi.Result) error {
	i, got, err := FirstMismatch(ctx, r.s, r.t, pts)
	if err != nil {
		return fmt.Errorf("evaluating its %s: %w", what, err)
	}
	if i >= 0 {
		b := pts[i]
		return fmt.Errorf("its %s %v has status %v, log prior %g and log likelihood %g, but evaluates to %v, %g and %g: the checkpoint was not written by this study (%w)",
			what, b.Theta, b.Status, b.LogPrior, b.LogLik, got.Status, got.LogPrior, got.LogLik, ErrNotThisRun)
	}
	return nil
}

// FirstMismatch evaluates recorded points (a checkpoint's best, a
// stage's best) on t and returns the index of the first whose status, log
// prior or log likelihood the evaluation does not give, to 1e-9 relative
// (a least-squares method's log likelihood is summed from the residuals,
// so it is evaluated with them), and that evaluation; -1 when all agree.
func FirstMismatch(ctx context.Context, s *study.Study, t *target.Target, pts []abi.Result) (int, abi.Result, error) {
	want := abi.WantLogTarget
	if s.MethodInfo.Spec.Has(abi.CapLeastSquares) {
		want |= abi.WantResiduals
	}
	thetas := make([][]float64, len(pts))
	for i, p := range pts {
		thetas[i] = p.Theta
	}
	res, err := t.Evaluate(ctx, thetas, want)
	if err != nil {
		return -1, abi.Result{}, err
	}
	same := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	}
	for i, b := range pts {
		if got := res[i]; got.Status != b.Status || !same(got.LogPrior, b.LogPrior) || !same(got.LogLik, b.LogLik) {
			return i, got, nil
		}
	}
	return -1, abi.Result{}, nil
}

// journalChecked is how many of a resumed journal's samples are evaluated
// again (evenly spaced, the last included).
const journalChecked = 32

// checkJournal checks a resumed journal's samples, every one a point the
// run evaluated: none may beat the checkpoint's best (re-evaluated
// before), and journalChecked of them, evenly spaced, must evaluate to
// their recorded log prior and log likelihood (audit 16: 100 000 rows
// moved to another θ with a log likelihood of −100, better than the
// run's best, were resumed into samples.csv).
func (r *runner) checkJournal(ctx context.Context, smp []abi.Sample, best *abi.Result) error {
	if best == nil {
		return fmt.Errorf("%d samples but no best point in the checkpoint: not a journal this run wrote (%w)", len(smp), ErrBadCheckpoint)
	}
	lsq := r.s.MethodInfo.Spec.Has(abi.CapLeastSquares)
	tol := func(v float64) float64 { return 1e-9 * math.Max(1, math.Abs(v)) }
	for i, x := range smp {
		res := abi.Result{Theta: x.Theta, Status: abi.OK, LogPrior: x.LogPrior, LogLik: x.LogLik}
		if lsq && x.LogLik > best.LogLik+tol(best.LogLik) || !lsq && res.LogTarget() > best.LogTarget()+tol(best.LogTarget()) {
			return fmt.Errorf("sample %d has log prior %g and log likelihood %g, better than the run's best point (%g, %g): not a point this run evaluated (%w)",
				i+1, x.LogPrior, x.LogLik, best.LogPrior, best.LogLik, ErrNotThisRun)
		}
	}
	n := min(journalChecked, len(smp))
	pts := make([]abi.Result, n)
	for k := range n {
		i := len(smp) - 1 - k*(len(smp)-1)/max(n-1, 1)
		pts[k] = abi.Result{Theta: smp[i].Theta, Status: abi.OK, LogPrior: smp[i].LogPrior, LogLik: smp[i].LogLik}
	}
	return r.checkPoints(ctx, "journal sample", pts)
}

// Optimiser tells whether a run's rows are an optimiser's end points, one
// per start, rather than draws: kinfer's optimisers, a least-squares
// method, or a plugin whose report has a cost trace or a trajectory.
// method is summary.json's ("builtin:adam", or a plugin's manifest path),
// report its method_report (report, whose study may not reload, passes
// leastSquares false and knows a least-squares method by its cost trace).
func Optimiser(method string, leastSquares bool, report any) bool {
	switch method {
	case "builtin:adam", "builtin:anneal", "builtin:levmar", "builtin:gaussnewton":
		return true
	}
	if leastSquares {
		return true
	}
	m, _ := report.(map[string]any)
	return m["trace_cost"] != nil || m["trajectory"] != nil
}

// better reports whether x beats the best point so far by the method's
// objective: the log target, or for a least-squares method (which uses the
// prior only as its box and for its starts) the log likelihood, C − ½‖r‖²
// — so that with a normal prior, best is the fit the method returns and
// not an iterate with a higher prior density on its way there.
func (r *runner) better(x abi.Result) bool {
	if r.s.MethodInfo.Spec.Has(abi.CapLeastSquares) {
		return x.LogLik > r.best.LogLik || (x.LogLik == r.best.LogLik && x.LogTarget() > r.best.LogTarget())
	}
	return x.LogTarget() > r.best.LogTarget()
}

// loop is the ask/tell loop. It returns the error that ended it, whether
// that happened during an evaluation, and the prior stream and initial
// points used as they were before the batch in flight.
func (r *runner) loop(ctx context.Context) (err error, stoppedInEval bool, rngAtAsk []byte, startsAtAsk int) {
	s, o := r.s, r.o
	every := o.CheckpointEvery
	if every == 0 {
		every = DefaultCheckpointEvery
	}
	for ; !s.Method.Done(); r.batches++ {
		// rngAtAsk is the prior stream's state before the current batch's
		// draws: a run stopped mid-batch resumes by asking that batch again.
		rngAtAsk, _ = r.pcg.MarshalBinary()
		startsAtAsk = r.startsUsed
		if o.MaxBatches > 0 && r.batches >= o.MaxBatches {
			return fmt.Errorf("method %s did not finish within %d batches", r.method(), o.MaxBatches), false, rngAtAsk, startsAtAsk
		}
		b, err := s.Method.Ask()
		if err != nil {
			return fmt.Errorf("method %s: ask: %w", r.method(), err), false, rngAtAsk, startsAtAsk
		}
		if err := r.checkBatch(b); err != nil {
			return err, false, rngAtAsk, startsAtAsk
		}
		pts := b.Points
		if len(pts) == 0 {
			if pts, r.startsUsed, err = draw(s, r.t, r.rng, b.Draw, r.startsUsed); err != nil {
				return err, false, rngAtAsk, startsAtAsk
			}
		}
		res, err := r.evaluate(ctx, pts, b.Want)
		if err != nil {
			if ctx.Err() != nil {
				if err.Error() == context.Canceled.Error() {
					// Stopped between calls: nothing more to say than the
					// stop (audit 7: "interrupted by SIGINT (context
					// canceled)").
					err = context.Cause(ctx)
				} else {
					err = fmt.Errorf("%w (%v)", context.Cause(ctx), err)
				}
			}
			return err, true, rngAtAsk, startsAtAsk
		}
		for _, x := range res {
			if x.Status == abi.OK && r.better(x) {
				// Only what summary.json and the checkpoint need.
				r.best = abi.Result{Theta: append([]float64(nil), x.Theta...), Status: x.Status, LogPrior: x.LogPrior, LogLik: x.LogLik}
			}
		}
		if err := s.Method.Tell(res); err != nil {
			if note := r.t.DerivativeFailures(); note != "" {
				// The method saw points without a Jacobian or gradient;
				// the reason is the model's (ABI.md §3: the host adds the
				// guest's message).
				err = fmt.Errorf("%w; the model's derivatives failed: %s", err, note)
			}
			if note := r.t.EvaluationFailures(); note != "" {
				// The method found no usable point: the plugin that
				// failed them says why.
				err = fmt.Errorf("%w; points failed in a plugin: %s", err, note)
			}
			if from := r.t.Counts().NonFiniteFrom; len(from) > 0 {
				// Which component made the values NaN or ±Inf (author 22:
				// the method's advice named the prior and the model, for a
				// likelihood that did not skip a missing observation).
				keys := slices.Sorted(maps.Keys(from))
				srcs := make([]string, len(keys))
				for i, k := range keys {
					srcs[i] = fmt.Sprintf("%d from %s", from[k], k)
				}
				err = fmt.Errorf("%w; the non-finite values came from: %s", err, strings.Join(srcs, ", "))
			}
			return fmt.Errorf("method %s: tell: %w", r.method(), err), false, rngAtAsk, startsAtAsk
		}
		if err := r.take(); err != nil {
			return err, false, rngAtAsk, startsAtAsk
		}
		r.prog.update(r.t.Counts(), s.Method)
		if r.cp != nil && time.Since(r.lastSave) >= every {
			rs, _ := r.pcg.MarshalBinary()
			if err := r.save(r.batches+1, rs, r.startsUsed); err != nil {
				return err, false, rngAtAsk, startsAtAsk
			}
		}
	}
	// A plugin method's Done is true also after a fault in
	// kinfer_method_done (a value other than 0 or 1): name that call, not
	// the report that returns the fault again (audit 6).
	if f, ok := s.Method.(interface{ Fault() error }); ok {
		if err := f.Fault(); err != nil {
			return fmt.Errorf("method %s: done: %w", r.method(), err), false, rngAtAsk, startsAtAsk
		}
	}
	return nil, false, rngAtAsk, startsAtAsk
}

// InitMethod initialises the study's method with the problem a run gives
// it (abi.Problem: the parameters in the method's coordinates, the starts,
// the residual and output layout, the prior's box, the memory budget).
// kinfer validate calls it too, so that what a method's Init refuses (a
// box annealing cannot wrap, settings beyond the budget) is said there.
func InitMethod(s *study.Study, t *target.Target, budget int64) error {
	if budget <= 0 {
		budget = DefaultMemoryBudget()
	}
	starts, err := s.ProblemStarts()
	if err != nil {
		return err
	}
	R, _ := s.ResidualCount()
	outs := make([]string, len(s.ModelInfo.Spec.Outputs))
	for i, o := range s.ModelInfo.Spec.Outputs {
		outs[i] = o.Name
	}
	p := abi.Problem{Params: s.XParams, Seed: s.Seed, MemoryBudget: budget, Residuals: R, Observations: s.ObservedResiduals(), Starts: starts,
		OutputNames: outs, OutputRows: t.OutputRows(), Likelihoods: len(s.Terms), PriorBox: s.PriorBox()}
	if err := s.Method.Init(p); err != nil {
		return s.LocateMethodError(fmt.Errorf("method %s: init: %w", s.MethodInfo.Label(), err))
	}
	return nil
}

// SaveError is a checkpoint the method could not save its state for
// (kinfer_method_save's empty or oversized state, or a fault): the run
// stops there with its partial results, and no checkpoint is written.
type SaveError struct{ error }

func (e *SaveError) Unwrap() error { return e.error }

// initError is a method's refusal of its problem (InitMethod) in setup.
type initError struct{ error }

func (e *initError) Unwrap() error { return e.error }

// IsInitRefusal reports whether err is a method's refusal of its problem
// at Init (settings beyond the memory budget, annealing's unbounded box):
// nothing was evaluated and nothing written, so there is no partial
// result to print or report (audit 6: "STOPPED (partial results)" and a
// failed report for such a run).
func IsInitRefusal(err error) bool {
	var ie *initError
	return errors.As(err, &ie)
}

// setup initialises the method and either restores it from the checkpoint
// (Options.Resume) or starts a new run in OutDir.
func (r *runner) setup(ctx context.Context) error {
	s := r.s
	// Init before anything in the directory changes: a method refusing its
	// problem leaves a previous run's results and checkpoint as they were.
	if err := InitMethod(s, r.t, r.budget); err != nil {
		return &initError{err}
	}
	if r.o.Resume {
		return r.resume(ctx)
	}
	// A new run in this directory: the previous run's checkpoint is not
	// this run's.
	removeCheckpoint(r.o.OutDir)
	if r.stream != nil {
		var err error
		if r.jn, err = createJournal(r.o.OutDir, len(s.XParams)); err != nil {
			return err
		}
	}
	return nil
}

// checkBatch refuses a malformed batch or one whose evaluation would not
// fit in the memory budget.
func (r *runner) checkBatch(b abi.Batch) error {
	s, d := r.s, len(r.s.Free)
	n := len(b.Points)
	if n == 0 {
		if b.Draw <= 0 {
			return fmt.Errorf("method %s asked for an empty batch while not done", r.method())
		}
		if b.Draw > MaxDraw {
			return fmt.Errorf("method %s asked for %d prior draws in one batch (at most %d)", r.method(), b.Draw, MaxDraw)
		}
		n = b.Draw
	}
	for i, p := range b.Points {
		if len(p) != d {
			return fmt.Errorf("method %s: point %d has %d values, want %d", r.method(), i, len(p), d)
		}
	}
	need := batchBytes(s, n, b.Want)
	if need > r.budget {
		return fmt.Errorf("method %s asked for a batch of %d points whose evaluation needs about %s, more than the memory budget of %s",
			r.method(), n, FormatBytes(need), FormatBytes(r.budget))
	}
	if !r.heapChecked {
		// The first batch also counts what is already live (the method's
		// own arrays, the data), twice for the collector: the method's
		// plan and the batch were each within the budget but not
		// together (audit 5: tmcmc planned at 927 MiB peaked at 1.68 GB
		// under a 1 GiB budget). Only the first: later, the live heap
		// would make a refusal depend on when the collector last ran.
		r.heapChecked = true
		live := liveHeap()
		if need+gcFactor*live > r.budget {
			return fmt.Errorf("method %s asked for a first batch of %d points whose evaluation needs about %s besides the %s the run already holds (twice, for the collector), more than the memory budget of %s: lower the method's settings or raise --memory-budget",
				r.method(), n, FormatBytes(need), FormatBytes(live), FormatBytes(r.budget))
		}
	}
	return nil
}

// gcFactor is the collector's headroom: the heap grows to twice what was
// live before a collection (as mcmc.GCFactor, which host/run cannot
// import).
const gcFactor = 2

// liveHeap is the heap that was live after the last collection, in bytes
// (runtime/metrics), after a collection now.
func liveHeap() int64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(sample[0].Value.Uint64())
}

// batchBytes estimates the host memory of evaluating n points: each point
// (drawn or transformed) and its result with what is wanted — gradient d
// values, residuals R, Jacobian R·d, R the study's observed values plus
// its soft constraints' residuals, outputs rows·m — and, for residuals,
// the model's outputs rows·m they come from, for a Jacobian the model's
// rows·m·d and the method's own copy of the R·d Jacobian (a least-squares
// method factorises it); all twice, for the collector's headroom (as
// mcmc.GCFactor). Without the model's arrays and the method's copy a
// 5-million-row least-squares batch took 3× its estimate.
func batchBytes(s *study.Study, n int, want abi.Want) int64 {
	d := int64(len(s.Free))
	var res int64
	for _, t := range s.Terms {
		res += int64(len(t.Obs))
	}
	for _, c := range s.Constraints {
		res += int64(c.Len())
	}
	rows := int64(0)
	for _, ds := range s.Data {
		rows += int64(ds.K)
	}
	ym := rows * int64(len(s.ModelInfo.Spec.Outputs)) // the model's outputs of one point
	per := 3*8*d + 256                                // the point, its θ, the result's copy, headers
	if want&abi.WantGradient != 0 {
		per += 8 * d
	}
	if want&(abi.WantResiduals|abi.WantJacobian) != 0 {
		per += 8 * (res + ym)
	}
	if want&abi.WantJacobian != 0 {
		per += 8 * (2*res*d + ym*d)
	}
	if want&abi.WantOutputs != 0 {
		per += 8 * ym
	}
	per *= gcFactor
	if per > 0 && int64(n) > math.MaxInt64/per {
		return math.MaxInt64
	}
	return int64(n) * per
}

// inBounds refuses sample k (counted from 1) outside the study's bounds
// (the method's coordinates): a sample is a point of the target, so one
// outside comes from a method state no run of this study made (audit 5:
// another study's state, resumed, gave a complete run outside the prior).
func (r *runner) inBounds(k int, x abi.Sample) error {
	if j := r.outside(x.Theta); j >= 0 {
		p := r.s.XParams[j]
		return fmt.Errorf("method %s: sample %d has %s = %g, outside the study's [%g, %g] (a method state from another study?) (%w)", r.method(), k, p.Name, x.Theta[j], p.Lower, p.Upper, ErrNotThisRun)
	}
	return nil
}

// outside is the index of the first value of θ outside the study's
// bounds (the method's coordinates), or −1.
func (r *runner) outside(theta []float64) int {
	for j, v := range theta {
		if p := r.s.XParams[j]; !(v >= p.Lower && v <= p.Upper) {
			return j
		}
	}
	return -1
}

// take appends a streaming method's new samples to the journal.
func (r *runner) take() error {
	if r.stream == nil {
		return nil
	}
	smp := r.stream.TakeSamples()
	d := len(r.s.XParams)
	for i, x := range smp {
		if len(x.Theta) != d {
			return fmt.Errorf("method %s: sample %d has %d values, want %d", r.method(), len(r.taken)+i+1, len(x.Theta), d)
		}
		if err := r.inBounds(len(r.taken)+i+1, x); err != nil {
			return err
		}
	}
	if err := r.jn.append(smp); err != nil {
		return err
	}
	r.taken = append(r.taken, smp...)
	return nil
}

// save writes a checkpoint after completed batches, with the prior stream
// state rs and used initial points.
func (r *runner) save(completed int, rs []byte, used int) error {
	if r.cp == nil {
		return nil
	}
	st, err := r.cp.SaveState()
	if err != nil {
		return &SaveError{fmt.Errorf("method %s: save state: %w", r.method(), err)}
	}
	journaled := -1
	if r.jn != nil {
		if err := r.jn.flush(); err != nil {
			return err
		}
		journaled = r.jn.n
	}
	name, sum, err := saveMethodState(r.o.OutDir, st)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(r.s.Path)
	c := &checkpoint{Kinfer: Version, StudyFile: abs, StudyHash: r.hash, Seed: r.s.Seed, Batches: completed,
		WallSeconds: r.prevWall + time.Since(r.start).Seconds(), PriorRNG: rs, StartsUsed: used, Counts: r.t.Counts(),
		MethodState: name, MethodSHA256: sum, JournalSamples: journaled}
	if !math.IsInf(r.best.LogTarget(), -1) {
		b := r.best
		c.Best = &b
	}
	r.lastSave = time.Now()
	return writeCheckpoint(r.o.OutDir, c)
}

// resume restores the method, the journal and the host state from OutDir's
// checkpoint.
func (r *runner) resume(ctx context.Context) error {
	s := r.s
	if r.cp == nil {
		return fmt.Errorf("--resume: method %s cannot save its state", r.method())
	}
	c, st, err := readCheckpoint(r.o.OutDir, s, r.hash, r.budget)
	if err != nil {
		if errors.Is(err, ErrOtherInputs) || errors.Is(err, ErrNotThisRun) || resumable(err) {
			return err
		}
		return fmt.Errorf("%w (%w)", err, ErrBadCheckpoint)
	}
	if err := r.cp.LoadState(st); err != nil {
		var we interface{ Deterministic() bool }
		if errors.As(err, &we) && !we.Deterministic() {
			// A plugin's load stopped by the wall clock or the stop: a
			// resume may well succeed.
			return fmt.Errorf("method %s: load state: %w", r.method(), err)
		}
		return fmt.Errorf("method %s: load state: %w (%w)", r.method(), err, ErrStateRefused)
	}
	if r.stream != nil {
		if c.JournalSamples < 0 {
			return fmt.Errorf("--resume: %s has journal_samples = %d, no sample journal, but method %s streams its samples (%w)", CheckpointFile, c.JournalSamples, r.method(), ErrBadCheckpoint)
		}
		var restored []abi.Sample
		if r.jn, restored, err = openJournal(r.o.OutDir, len(s.XParams), c.JournalSamples, r.budget); err != nil {
			if resumable(err) {
				return err
			}
			return fmt.Errorf("%w (%w)", err, ErrBadCheckpoint)
		}
		// Every journal sample is a point this study evaluated, so inside
		// its bounds (audit 5: another study's journal and state, same d
		// and seed, were resumed into a "complete" run outside the prior).
		for i, smp := range restored {
			if j := r.outside(smp.Theta); j >= 0 {
				p := s.XParams[j]
				return fmt.Errorf("--resume: sample %d of %s has %s = %g, outside the study's [%g, %g]: the journal is not this study's (%w)", i+1, JournalFile, p.Name, smp.Theta[j], p.Lower, p.Upper, ErrNotThisRun)
			}
			// As a method's samples (ABI.md §6.3): a log prior or log
			// likelihood of NaN or +∞ is no evaluation's (audit 15: a
			// journal edited to hold them was resumed into samples.csv).
			for _, v := range []struct {
				name string
				v    float64
			}{{"log prior", smp.LogPrior}, {"log likelihood", smp.LogLik}} {
				if math.IsNaN(v.v) || math.IsInf(v.v, 1) {
					return fmt.Errorf("--resume: sample %d of %s has %s %g, which no evaluation gives: the journal is damaged (%w)", i+1, JournalFile, v.name, v.v, ErrBadCheckpoint)
				}
			}
		}
		if err := r.stream.RestoreSamples(restored); err != nil {
			// The journal does not match the method's state: resuming
			// again would fail again.
			return fmt.Errorf("method %s: restore samples: %w (%w)", r.method(), err, ErrBadCheckpoint)
		}
		r.taken = restored
	}
	if err := r.pcg.UnmarshalBinary(c.PriorRNG); err != nil {
		// A damaged record: named, and not worth resuming again (audit 16).
		return fmt.Errorf("%s: prior_rng: the prior stream's state does not decode (%v) (%w)", filepath.Join(r.o.OutDir, CheckpointFile), err, ErrBadCheckpoint)
	}
	if hp, ok := s.Method.(abi.HeldPoints); ok {
		// So are the method's held points (a sampler's chain positions):
		// a state edited to put a chain on a forged log likelihood wrote
		// 136 595 rows of it (audit 15).
		if pts := hp.HeldPoints(); len(pts) > 0 {
			if err := r.checkPoints(ctx, "method's held point", pts); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(r.o.OutDir, CheckpointFile), err)
			}
		}
	}
	if c.Best != nil {
		// The best point is evaluated again (before the tallies are
		// restored, so it is not counted): a checkpoint is read as input,
		// and a planted best (outside the bounds, log likelihood 1e300)
		// once became the run's, and a next stage's start (audit 5).
		if err := r.checkBest(ctx, *c.Best); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(r.o.OutDir, CheckpointFile), err)
		}
	}
	if r.jn != nil && len(r.taken) > 0 {
		if err := r.checkJournal(ctx, r.taken, c.Best); err != nil {
			return fmt.Errorf("--resume: %s: %w", filepath.Join(r.o.OutDir, JournalFile), err)
		}
	}
	if r.jn != nil {
		if err := r.jn.trim(); err != nil {
			return err
		}
	}
	r.t.SetCounts(c.Counts)
	if c.Best != nil {
		r.best = *c.Best
	}
	r.batches, r.prevWall, r.startsUsed = c.Batches, c.WallSeconds, c.StartsUsed
	return nil
}

// writeOutputs writes summary.json, samples.csv and samples.parquet (the
// same samples, columnar), each atomically. The two sample files are
// written concurrently from the same (read-only) samples: on a second core
// the Parquet file, a third of the CSV's work, adds no wall time.
//
// The samples are written first: when they cannot be (a full disk),
// summary.json says the run is not complete, with the error.
func writeOutputs(dir string, s *study.Study, sum *Summary, extra []string, samples []abi.Sample) error {
	perr := make(chan error, 1)
	go func() { perr <- writeParquet(parquetPath(dir), s, extra, samples) }()
	cerr := writeSamples(filepath.Join(dir, "samples.csv"), s, extra, samples)
	err := errors.Join(cerr, <-perr)
	if err != nil {
		sum.Complete = false
		msg := "writing the samples: " + err.Error()
		if sum.Error != "" {
			msg = sum.Error + "; " + msg
		}
		sum.Error = msg
	}
	return errors.Join(err, writeJSON(filepath.Join(dir, "summary.json"), sum))
}

// draw answers a method's request for n prior draws: first the study's
// unused initial points (in x when the study has transforms), then draws
// from the prior's stream. It returns the points and the new count of
// initial points used. A method that needs genuine prior draws
// (abi.Spec.NeedsPriorDraws) gets no initial points (a later stage's start
// from the stage before, for one).
func draw(s *study.Study, t *target.Target, rng *rand.Rand, n, used int) ([][]float64, int, error) {
	take := min(n, len(s.Starts)-used)
	if s.MethodInfo.Spec.NeedsPriorDraws() {
		take = 0
	}
	pts := make([][]float64, 0, n)
	for k := 0; k < take; k++ {
		x := append([]float64(nil), s.Starts[used+k]...)
		if s.Transformed() {
			var err error
			if x, err = s.Inverse(x); err != nil {
				return nil, used, fmt.Errorf("initial point %d: %w", used+k+1, err)
			}
		}
		pts = append(pts, x)
	}
	rest, err := t.DrawPrior(rng, n-take)
	if err != nil {
		return nil, used, err
	}
	return append(pts, rest...), used + take, nil
}
