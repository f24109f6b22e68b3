package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kinfer/kinfer/builtin/prior"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

// A second lock on a locked directory fails at once, naming the directory
// and the holder's pid; a run on it fails the same way without writing.
func TestLockedDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
	s := loadQuickstart(t)
	defer s.Close()
	if _, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 1}); !errors.Is(err, ErrLocked) {
		t.Fatalf("run on a locked directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(err) {
		t.Fatal("a refused run wrote summary.json")
	}
	l.Unlock()
	l2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

// Two runs started together on one directory: one runs, the other is
// refused, and samples.csv is the uninterrupted run's.
func TestConcurrentRunsOneDirectory(t *testing.T) {
	straight := t.TempDir()
	if _, err := Run(context.Background(), loadQuickstart(t), Options{OutDir: straight, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	want := read(t, filepath.Join(straight, "samples.csv"))
	dir := t.TempDir()
	errs := make(chan error, 2)
	for range 2 {
		s := loadQuickstart(t)
		go func() {
			_, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 1})
			s.Close()
			errs <- err
		}()
	}
	e1, e2 := <-errs, <-errs
	if (e1 == nil) == (e2 == nil) {
		t.Fatalf("want one run and one refusal, got %v and %v", e1, e2)
	}
	if e := errors.Join(e1, e2); !errors.Is(e, ErrLocked) {
		t.Fatalf("refusal %v", e)
	}
	if got := read(t, filepath.Join(dir, "samples.csv")); string(got) != string(want) {
		t.Fatal("samples.csv differs from an uninterrupted run's")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A checkpoint costs what is new: late in a Metropolis run,
// checkpoint.json and the method's state are a few kB (the
// 4 × 4000 kept draws so far would be ≈ 1 MB of JSON), and the journal
// holds exactly the draws the checkpoint counts.
func TestCheckpointDoesNotGrowWithSamples(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	s := loadQuickstart(t)
	defer s.Close()
	s.Model = &cancelAfter{Model: s.Model, n: 4 * 6000, cancel: cancel}
	if _, err := Run(ctx, s, Options{OutDir: dir, Workers: 2}); err == nil {
		t.Fatal("want a cancelled run")
	}
	var c checkpoint
	b := read(t, filepath.Join(dir, CheckpointFile))
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	const maxCheckpoint, maxState = 4 << 10, 16 << 10
	st, err := os.Stat(filepath.Join(dir, c.MethodState))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxCheckpoint || st.Size() > maxState {
		t.Errorf("checkpoint.json %d bytes (want ≤ %d), method state %d bytes (want ≤ %d)", len(b), maxCheckpoint, st.Size(), maxState)
	}
	if c.JournalSamples < 4*3900 {
		t.Fatalf("journal counts %d draws, want ≈ 4 × 4000", c.JournalSamples)
	}
	js, err := os.Stat(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(journalHeader + c.JournalSamples*4*8); js.Size() != want {
		t.Errorf("journal %d bytes, want %d (header + %d records of 4 values)", js.Size(), want, c.JournalSamples)
	}
	// The stopped run's samples.csv has the draws so far.
	rows := strings.Count(string(read(t, filepath.Join(dir, "samples.csv"))), "\n") - 1
	if rows != c.JournalSamples {
		t.Errorf("stopped run's samples.csv has %d rows, want the %d draws so far", rows, c.JournalSamples)
	}
	// and samples.parquet the same draws.
	checkParquetMatchesCSV(t, dir)
	left, _ := filepath.Glob(filepath.Join(dir, stateFilePrefix+"*.state"))
	if len(left) != 1 {
		t.Errorf("method state files %v, want only the checkpoint's", left)
	}
}

// An unchanged method state is not written again.
func TestUnchangedStateNotRewritten(t *testing.T) {
	dir := t.TempDir()
	n1, _, err := saveMethodState(dir, []byte("state"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.Stat(filepath.Join(dir, n1))
	n2, _, err := saveMethodState(dir, []byte("state"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.Stat(filepath.Join(dir, n2))
	if n1 != n2 || !os.SameFile(a, b) {
		t.Fatal("the same state was written again")
	}
}

// noCheckpoint hides a method's optional capabilities: a method that can
// neither save its state nor stream its samples.
type noCheckpoint struct{ abi.Method }

// run.json says how a run ended, and --resume explains a run that left no
// checkpoint instead of claiming it completed.
func TestRunStateAndResumeInfo(t *testing.T) {
	dir := t.TempDir()
	s := loadQuickstart(t)
	if _, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if st, _ := ReadRunState(dir); st == nil || st.State != StateComplete || !st.CanCheckpoint {
		t.Fatalf("run.json after a complete run: %+v", st)
	}
	if _, _, err := ResumeInfo(dir); err == nil || !strings.Contains(err.Error(), "completed") {
		t.Fatalf("resume after completion: %v", err)
	}

	// A method that cannot checkpoint, stopped: no checkpoint, and
	// --resume says so.
	dir = t.TempDir()
	s = loadQuickstart(t)
	ctx, cancel := context.WithCancel(context.Background())
	s.Method = noCheckpoint{s.Method}
	s.Model = &cancelAfter{Model: s.Model, n: 5000, cancel: cancel}
	if _, err := Run(ctx, s, Options{OutDir: dir, Workers: 2, CheckpointEvery: -1}); err == nil {
		t.Fatal("want a cancelled run")
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); !os.IsNotExist(err) {
		t.Fatal("a method that cannot checkpoint left a checkpoint")
	}
	st, _ := ReadRunState(dir)
	if st == nil || st.State != StateStopped || st.CanCheckpoint || !strings.Contains(st.Error, "context canceled") {
		t.Fatalf("run.json after a stop: %+v", st)
	}
	_, _, err := ResumeInfo(dir)
	if err == nil || !strings.Contains(err.Error(), "was stopped (") || !strings.Contains(err.Error(), "its method builtin:metropolis cannot checkpoint; run it again: kinfer run") {
		t.Fatalf("resume of a stopped run without checkpoint: %v", err)
	}
	// A killed run leaves run.json "running".
	st.State = StateRunning
	writeRunState(dir, st)
	if _, _, err := ResumeInfo(dir); err == nil || !strings.Contains(err.Error(), "was killed while running (pid") || !strings.Contains(err.Error(), "cannot checkpoint") {
		t.Fatalf("resume of a killed run: %v", err)
	}
	// A run stopped while its study was loading.
	if err := WriteUnloaded(dir, "../../examples/quickstart/study.toml", -1, errors.New("interrupted by SIGINT while loading the study")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ResumeInfo(dir); err == nil || !strings.Contains(err.Error(), "was stopped (interrupted by SIGINT while loading the study) before its study was loaded; run it again") {
		t.Fatalf("resume of a run stopped while loading: %v", err)
	}
	var sum Summary
	json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &sum)
	if sum.Complete || sum.Study != "ligament-quickstart" || sum.Seed != 1 || sum.Provenance == nil || len(sum.Provenance.Inputs) != 1 {
		t.Fatalf("summary of a run stopped while loading: %+v", sum)
	}
	for _, f := range []string{"samples.csv", ParquetFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Fatalf("the previous run's %s was kept beside the new run's summary", f)
		}
	}
	if _, _, err := ResumeInfo(t.TempDir()); err == nil || !strings.Contains(err.Error(), "holds no kinfer run") {
		t.Fatalf("resume of an empty directory: %v", err)
	}
}

// A refused resume leaves the stopped run's outputs as they were.
func TestRefusedResumeKeepsOutputs(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	s := loadQuickstart(t)
	s.Model = &cancelAfter{Model: s.Model, n: 12000, cancel: cancel}
	Run(ctx, s, Options{OutDir: dir, Workers: 1})
	s.Close()
	before := read(t, filepath.Join(dir, "samples.csv"))
	s2 := loadQuickstart(t)
	defer s2.Close()
	s2.Seed = 2
	if _, err := Run(context.Background(), s2, Options{OutDir: dir, Workers: 1, Resume: true}); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Fatalf("resume with another seed: %v", err)
	}
	if string(read(t, filepath.Join(dir, "samples.csv"))) != string(before) || len(before) < 1000 {
		t.Fatal("a refused resume rewrote samples.csv")
	}
}

// Settings beyond the memory budget are refused at Init, before any
// evaluation, with a summary returned (and nothing written over the
// directory); so is a batch of prior draws whose evaluation would exceed
// it.
func TestMemoryBudgetRefusals(t *testing.T) {
	dir := t.TempDir()
	s := loadQuickstart(t)
	defer s.Close()
	sum, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 1, MemoryBudget: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "init: metropolis: chains × samples = 4 × 5000") || !strings.Contains(err.Error(), "memory budget of 1 MiB") {
		t.Fatalf("run: %v", err)
	}
	if sum.Evaluations != 0 || sum.Complete || sum.MemoryBudget != 1<<20 {
		t.Fatalf("summary %+v", sum)
	}
	s2 := loadQuickstart(t)
	defer s2.Close()
	s2.Method = &drawMany{n: 1_000_000}
	if _, err := Run(context.Background(), s2, Options{OutDir: t.TempDir(), Workers: 1, MemoryBudget: 64 << 20}); err == nil ||
		!strings.Contains(err.Error(), "batch of 1000000 points") || !strings.Contains(err.Error(), "memory budget of 64 MiB") {
		t.Fatalf("huge draw: %v", err)
	}
}

// The first batch counts what the run already holds: a batch that fits
// the budget alone is refused when the live heap (here 96 MiB of ballast,
// as a method's own arrays would be) and it do not fit together (audit 5:
// tmcmc's plan and its first batch each fit, and peaked at 1.7× the
// budget).
func TestFirstBatchCountsLiveHeap(t *testing.T) {
	ballast := make([]byte, 96<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	s := loadQuickstart(t)
	defer s.Close()
	s.Method = &drawMany{n: 1000}
	_, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Workers: 1, MemoryBudget: 128 << 20})
	if err == nil || !strings.Contains(err.Error(), "first batch of 1000 points") || !strings.Contains(err.Error(), "the run already holds") {
		t.Fatalf("run: %v", err)
	}
	runtime.KeepAlive(ballast)
}

// drawMany asks for n prior draws and never finishes.
type drawMany struct {
	abi.Method
	n int
}

func (m *drawMany) Init(abi.Problem) error  { return nil }
func (m *drawMany) Done() bool              { return false }
func (m *drawMany) Ask() (abi.Batch, error) { return abi.Batch{Draw: m.n}, nil }
func (m *drawMany) Report() (abi.Report, error) {
	return abi.Report{}, errors.New("not done")
}

// summary.json records the inputs by sha256 and the program that ran.
func TestProvenance(t *testing.T) {
	dir := t.TempDir()
	s := loadQuickstart(t)
	defer s.Close()
	sum, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := sum.Provenance
	if p == nil || p.Go == "" || p.Seed != 1 || p.VCSRevision == "" || p.Wazero == "" {
		t.Fatalf("provenance %+v", p)
	}
	roles := map[string]string{}
	for _, in := range p.Inputs {
		roles[in.Role] = in.SHA256
	}
	data, _ := FileSHA256("../../examples/quickstart/force_length.csv")
	studyFile, _ := FileSHA256("../../examples/quickstart/study.toml")
	if len(p.Inputs) != 2 || roles["study"] != studyFile || roles["data pull-test"] != data {
		t.Fatalf("inputs %+v", p.Inputs)
	}
	var m map[string]any
	json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &m)
	if _, ok := m["provenance"].(map[string]any)["inputs"]; !ok {
		t.Fatal("summary.json has no provenance inputs")
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512 MiB": 512 << 20, "2G": 2 << 30, "1e9": 1e9, "1048576": 1 << 20, "1.5k": 1536} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1G", "0", "3 parsecs", "1e30"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	if s := FormatBytes(3 << 30); s != "3 GiB" {
		t.Errorf("FormatBytes: %s", s)
	}
	if b := DefaultMemoryBudget(); b <= 0 || b > MaxDefaultMemoryBudget {
		t.Errorf("default budget %d", b)
	}
}

// allNaN is a model whose every evaluation is non-finite.
type allNaN struct{ abi.Model }

func (m allNaN) Eval(theta, x, y []float64) abi.Status {
	st := m.Model.Eval(theta, x, y)
	y[0] = math.NaN()
	return st
}

// drawOnce asks one batch of prior draws, then is done with no samples
// and no error — what a sampling-importance-resampling method does when
// every weight is 0.
type drawOnce struct {
	abi.Method
	asked bool
}

func (m *drawOnce) Init(abi.Problem) error      { return nil }
func (m *drawOnce) Done() bool                  { return m.asked }
func (m *drawOnce) Ask() (abi.Batch, error)     { m.asked = true; return abi.Batch{Draw: 7}, nil }
func (m *drawOnce) Tell([]abi.Result) error     { return nil }
func (m *drawOnce) Report() (abi.Report, error) { return abi.Report{}, nil }

// A method that ends with no samples after every evaluation failed is not
// a complete run of 0 samples: the run fails with ErrAllFailed and the
// counts by status, summary.json says so, and its status reads FAILED
// (audit 4, newcomer #2: it said "done", exit 0).
func TestAllFailedIsAnError(t *testing.T) {
	dir := t.TempDir()
	s := loadQuickstart(t)
	defer s.Close()
	s.Model = allNaN{s.Model}
	s.Method = &drawOnce{}
	sum, err := Run(context.Background(), s, Options{OutDir: dir, Workers: 1})
	if !errors.Is(err, ErrAllFailed) || !strings.Contains(err.Error(), "7 of 7: non-finite 7") {
		t.Fatalf("run: %v", err)
	}
	if sum.Complete || sum.Samples != 0 || !strings.Contains(sum.Error, ErrAllFailed.Error()) || !strings.HasPrefix(sum.Status(), "FAILED") {
		t.Fatalf("summary: complete %v, %d samples, error %q, status %q", sum.Complete, sum.Samples, sum.Error, sum.Status())
	}
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err == nil {
		t.Error("a checkpoint is left: a resume would end the same way")
	}
	if _, _, err := ResumeInfo(dir); err == nil || !strings.Contains(err.Error(), "every evaluation failed") || !strings.Contains(err.Error(), "fix the model") {
		t.Errorf("--resume: %v", err)
	}
}

// fixedSamples asks one prior draw, then reports samples at the given
// points.
type fixedSamples struct {
	drawOnce
	pts [][]float64
}

func (m *fixedSamples) Report() (abi.Report, error) {
	var r abi.Report
	for _, p := range m.pts {
		r.Samples = append(r.Samples, abi.Sample{Theta: p})
	}
	return r, nil
}

// A posterior whose whole 5–95 % band lies against a bound is warned about
// (audit 4: a spike on the model's bound passed as a result); one inside
// is not.
func TestBandAgainstBoundWarned(t *testing.T) {
	s := loadQuickstart(t)
	defer s.Close()
	hi := s.Free[0].Upper
	var pts [][]float64
	for i := range 50 {
		pts = append(pts, []float64{hi - 1e-3*float64(i), 0.01 * float64(i%5)})
	}
	s.Method = &fixedSamples{pts: pts}
	sum, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.BoundWarnings) != 1 || !strings.Contains(sum.BoundWarnings[0], s.Free[0].Name+": the samples' 5–95 % band") || !strings.Contains(sum.BoundWarnings[0], "upper bound") {
		t.Errorf("warnings %q", sum.BoundWarnings)
	}

	// Within 1 % of the range of the bound, but 1000 band widths from it:
	// the data decide (audit 5: 0.096 ± 0.004 on a box [0, 1e9] warned).
	pts = pts[:0]
	for i := range 50 {
		pts = append(pts, []float64{hi - 50 - 1e-3*float64(i), 0.01 * float64(i%5)})
	}
	s.Method = &fixedSamples{pts: pts}
	if sum, err = Run(context.Background(), s, Options{OutDir: t.TempDir(), Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if len(sum.BoundWarnings) != 0 {
		t.Errorf("a band 50 from the bound, 0.05 wide: warnings %q", sum.BoundWarnings)
	}

	// Piled against a lower bound where the prior's density vanishes (a
	// lognormal's 0): the prior, not a cut, puts them there.
	s.Free[0].Lower, s.XParams[0].Lower = 0, 0
	pts = pts[:0]
	for i := range 50 {
		pts = append(pts, []float64{1e-5 + 1e-3*float64(i), 0.01 * float64(i%5)})
	}
	s.Method = &fixedSamples{pts: pts}
	for _, c := range []struct {
		prior prior.Dist
		warn  int
	}{{must(prior.NewUniform(0, hi)), 1}, {must(prior.NewLogNormal(0, 1)), 0}} {
		s.Priors[0] = c.prior
		if sum, err = Run(context.Background(), s, Options{OutDir: t.TempDir(), Workers: 1}); err != nil {
			t.Fatal(err)
		}
		if len(sum.BoundWarnings) != c.warn {
			t.Errorf("against 0 with prior %s: warnings %q, want %d", c.prior, sum.BoundWarnings, c.warn)
		}
	}
}

// A run of one row (adam with starts = 1) has no band: its row on a bound
// is warned, a row near it is not (audit 21: adam's single start ended on
// the bound unwarned, the same study with 3 starts warned).
func TestOneRowOnBoundWarned(t *testing.T) {
	s := loadQuickstart(t)
	defer s.Close()
	hi, mid := s.Free[0].Upper, (s.Free[1].Lower+s.Free[1].Upper)/2
	for _, c := range []struct {
		x    float64
		warn int
	}{{hi, 1}, {hi - 1e-3*(hi-s.Free[0].Lower), 0}, {hi * (1 - 1e-9), 0}} {
		s.Method = &fixedSamples{pts: [][]float64{{c.x, mid}}}
		sum, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.BoundWarnings) != c.warn || c.warn == 1 && !strings.Contains(sum.BoundWarnings[0], s.Free[0].Name+": the run's one row is on the upper bound") {
			t.Errorf("one row at %g (upper bound %g): warnings %q, want %d", c.x, hi, sum.BoundWarnings, c.warn)
		}
	}
	// A box [0, 1e9]: a row at 0.05 is not on the bound 0 (review 23: 1e-10
	// of the range, 0.1, put it there), a row at 0 is.
	s.Free[0].Lower, s.Free[0].Upper = 0, 1e9
	s.XParams[0].Lower, s.XParams[0].Upper = 0, 1e9
	s.Priors[0] = must(prior.NewUniform(0, 1e9))
	for _, c := range []struct {
		x    float64
		warn int
	}{{0.05, 0}, {0, 1}} {
		s.Method = &fixedSamples{pts: [][]float64{{c.x, mid}}}
		sum, err := Run(context.Background(), s, Options{OutDir: t.TempDir(), Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.BoundWarnings) != c.warn {
			t.Errorf("one row at %g of [0, 1e9]: warnings %q, want %d", c.x, sum.BoundWarnings, c.warn)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
