package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// StagesFile is the record of a multi-stage run in its output directory.
const StagesFile = run.StagesFile

// stageRecord is one stage in stages.json.
type stageRecord struct {
	Stage     int                `json:"stage"`
	StudyFile string             `json:"study_file"`
	Dir       string             `json:"dir"`
	LogTarget float64            `json:"log_target"`
	Theta     map[string]float64 `json:"theta"`
}

// stagesNotOverInputs refuses a multi-stage study whose outputs would
// replace one of its inputs before any stage runs, as a single run's
// (run.NotOverInputs): a stage's folder DIR/stage<i>-<name> holding an
// earlier stage's study or data under an output's name (samples.csv), or
// DIR/stages.json being the multi-stage file or a stage's study (audit 8:
// stage 2's samples.csv replaced stage 1's measured data).
func stagesNotOverInputs(studyFile string, sf *study.File, dir string) error {
	ins := []run.Input{{Role: "multi-stage study", Path: studyFile}}
	base := filepath.Dir(studyFile)
	abs := func(from, p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(from, p)
	}
	for i, st := range sf.Stages {
		path := abs(base, st)
		ins = append(ins, run.Input{Role: fmt.Sprintf("stage %d study", i+1), Path: path})
		f, _, err := study.Decode(path)
		if err != nil {
			continue // the stage's own load reports it
		}
		sdir := filepath.Dir(path)
		for _, d := range f.Data {
			if d.File != "" {
				ins = append(ins, run.Input{Role: fmt.Sprintf("stage %d data %s", i+1, d.Name), Path: abs(sdir, d.File)})
			}
		}
		if f.Init != "" {
			ins = append(ins, run.Input{Role: fmt.Sprintf("stage %d init", i+1), Path: abs(sdir, f.Init)})
		}
		for _, m := range append([]map[string]any{f.Model, f.Method}, f.Likelihood...) {
			if p, ok := m["plugin"].(string); ok {
				ins = append(ins, run.Input{Role: fmt.Sprintf("stage %d plugin manifest", i+1), Path: abs(sdir, p)})
			}
		}
	}
	for i, st := range sf.Stages {
		name := strings.TrimSuffix(filepath.Base(st), filepath.Ext(st))
		sdir := filepath.Join(dir, fmt.Sprintf("stage%d-%s", i+1, name))
		if err := run.NotOverInputs(sdir, run.OutputFiles(), ins); err != nil {
			return fmt.Errorf("stage %d (%s): %w", i+1, st, err)
		}
		// Nor names a stage removes there (its saved states, stale
		// temporaries: audit 10, stage 1's data deleted by stage 2).
		if err := run.NotRemovedInputs(sdir, ins); err != nil {
			return fmt.Errorf("stage %d (%s): %w", i+1, st, err)
		}
	}
	return run.NotOverInputs(dir, []string{StagesFile}, ins)
}

// runStages runs a multi-stage study (docs/STUDY.md, "Multi-stage
// studies"): stage i's study file runs into DIR/stage<i>-<file name>,
// starting from the best θ of stage i−1, whose values also fix every
// parameter stage i gives neither a prior nor a fixed value. A stage whose
// directory holds a complete summary.json is not run again, and a stage
// with a checkpoint resumes from it, so running the same command again
// continues a stopped multi-stage study between and within stages.
func runStages(ctx context.Context, studyFile string, sf *study.File, dir string, seed, budget int64, f runFlags, stdout, stderr io.Writer) error {
	if f.resume != "" || f.verify != "" {
		return usageError{fmt.Errorf("a multi-stage study resumes by running it again with the same -o; --resume and --verify take one stage's directory")}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Dir(studyFile)
	if err := stagesNotOverInputs(studyFile, sf, dir); err != nil {
		return err
	}
	var prev map[string]float64
	var records []stageRecord
	for i, st := range sf.Stages {
		path := st
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, st)
		}
		name := strings.TrimSuffix(filepath.Base(st), filepath.Ext(st))
		sdir := filepath.Join(dir, fmt.Sprintf("stage%d-%s", i+1, name))
		sum, err := readComplete(sdir)
		if err != nil {
			return err
		}
		// The stage's study file, decoded once (for its seed, and its
		// fixed values below); loading it reports a file that does not
		// decode.
		stf, _, derr := study.Decode(path)
		stSeed, checkSeed := stageSeeds(seed, sf.Seed, stf, derr)
		note, err := stageUpToDate(sdir, sum, prev, path, checkSeed)
		if err != nil {
			return fmt.Errorf("stage %d (%s): %w", i+1, st, err)
		}
		if note != "" {
			fmt.Fprintf(stdout, "note: stage %d (%s): %s\n", i+1, st, note)
		}
		if sum != nil {
			// Its best point is what the next stage starts from: evaluated
			// again, as a resumed checkpoint's is (audit 15: a best edited
			// outside the stage's prior was carried into stage 2).
			if err := checkStageBest(ctx, path, sdir, prev, sum, budget); err != nil {
				return fmt.Errorf("stage %d (%s): %s: %w", i+1, st, filepath.Join(sdir, "summary.json"), err)
			}
			fmt.Fprintf(stdout, "stage %d (%s): complete in %s, not run again\n", i+1, st, sdir)
		} else {
			fmt.Fprintf(stdout, "stage %d (%s) into %s\n", i+1, st, sdir)
			lock, err := run.LockDir(sdir)
			if err != nil {
				return err
			}
			if err := writeStageStart(sdir, prev); err != nil {
				lock.Unlock()
				return err
			}
			sf := f
			sf.previous = prev
			sf.loaded = func(s *study.Study) error {
				// Now that the stage's use of prev is known.
				return writeStageStartUsed(sdir, prev, s.PreviousUsed, s.PreviousMissing)
			}
			if _, err := os.Stat(filepath.Join(sdir, run.CheckpointFile)); err == nil {
				sf.resume = sdir
			}
			var rep string
			sum, rep, err = execute(ctx, path, sdir, lock, stSeed, budget, sf, stderr)
			lock.Unlock()
			if sum != nil {
				printSummary(stdout, sum, sdir, err != nil && ctx.Err() == nil)
			}
			if rep != "" {
				fmt.Fprintf(stdout, "report: %s\n", rep)
			}
			if err != nil {
				err = explain(ctx, err, sdir)
				if _, cerr := os.Lstat(filepath.Join(sdir, run.CheckpointFile)); cerr == nil {
					return fmt.Errorf("stage %d (%s): %w\n(run the same command again to continue the multi-stage study)", i+1, st, err)
				}
				return fmt.Errorf("stage %d (%s): %w", i+1, st, err)
			}
		}
		if sum.Best == nil {
			return fmt.Errorf("stage %d (%s): no point was evaluated successfully, so the next stage has no start", i+1, st)
		}
		// The stage's whole θ: what it inherited, its fixed values, its
		// best free values (summary.json's best holds the free ones).
		if derr != nil {
			return derr
		}
		// What it inherited is what its model took of prev (its
		// stage_start.json's used values), not all of prev: a parameter
		// this stage's model does not have is not carried to the next
		// stage, which starts it at its default (STUDY.md; audit 12: it
		// started and fixed values from two stages back). A record of an
		// older kinfer without used values carries all of prev.
		next := map[string]float64{}
		inherited := prev
		if used, err := readStageUsed(sdir); err == nil && used != nil {
			inherited = used
		}
		for k, v := range inherited {
			next[k] = v
		}
		for k, v := range stf.Fixed {
			next[k] = v
		}
		for k, v := range sum.Best.Theta {
			next[k] = v
		}
		prev = next
		records = append(records, stageRecord{Stage: i + 1, StudyFile: st, Dir: filepath.Base(sdir), LogTarget: float64(sum.Best.LogTarget), Theta: prev})
	}
	b, err := json.MarshalIndent(records, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "stages: %s\n", filepath.Join(dir, StagesFile))
	// Atomically, by rename: not through a symbolic link put in its place.
	return run.WriteAtomic(filepath.Join(dir, StagesFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// StageStartFile records in a stage's directory the values the stage
// inherited from the stage before it (none for the first), so that a
// later run of the multi-stage study can tell whether the results there
// still follow from the stages before.
const StageStartFile = "stage_start.json"

type stageStart struct {
	Previous map[string]float64 `json:"previous"`
	// Used are the values of Previous the stage used (the parameters it
	// left out, and its start when it starts from the stage before), and
	// Missing the free parameters it started at their defaults because the
	// stage before did not have them. Only these decide whether its
	// results still follow from the stage before. Used is absent (nil)
	// until the stage's study is loaded, or in a record of an older kinfer:
	// all of Previous is compared then.
	Used    map[string]float64 `json:"used"`
	Missing []string           `json:"missing,omitempty"`
}

// maxStageStartBytes bounds what is read of a stage_start.json.
const maxStageStartBytes = 16 << 20

func writeStageStart(dir string, prev map[string]float64) error {
	return writeStageRecord(dir, stageStart{Previous: prev})
}

// writeStageStartUsed rewrites dir's stage_start.json once the stage's
// study is loaded, with what it used of prev.
func writeStageStartUsed(dir string, prev, used map[string]float64, missing []string) error {
	if used == nil {
		used = map[string]float64{} // written as {}: nothing used, as opposed to not known
	}
	return writeStageRecord(dir, stageStart{Previous: prev, Used: used, Missing: missing})
}

func writeStageRecord(dir string, rec stageStart) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return run.WriteAtomic(filepath.Join(dir, StageStartFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// readStageStart returns the inherited values recorded in dir's
// stage_start.json: nil when dir is not a stage's directory.
func readStageStart(dir string) (map[string]float64, error) {
	var rec stageStart
	if err := run.ReadRecord(filepath.Join(dir, StageStartFile), maxStageStartBytes, &rec); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return rec.Previous, nil
}

// readStageUsed returns the inherited values dir's stage used, recorded
// in its stage_start.json once it loaded: nil when not recorded.
func readStageUsed(dir string) (map[string]float64, error) {
	var rec stageStart
	if err := run.ReadRecord(filepath.Join(dir, StageStartFile), maxStageStartBytes, &rec); err != nil {
		return nil, err
	}
	return rec.Used, nil
}

// stageUpToDate checks that what a stage's directory holds — a complete
// run (sum) or a stopped one with a checkpoint — was computed from the
// current inputs: the same values inherited from the stage before, and,
// for a complete run, the same files (study, data, initial points,
// plugins) as summary.json's provenance records. Such results are never
// silently reused or overwritten: the user removes the directory (and
// those of the later stages) to run the stage again.
//
// A stage directory written by a kinfer before stage_start.json existed
// has no record of its start: the first stage inherits nothing, so there
// is nothing to compare; for a later one the inherited values cannot be
// checked, which the returned note says (the inputs still are).
func stageUpToDate(dir string, sum *run.Summary, prev map[string]float64, studyPath string, seed int64) (note string, err error) {
	if sum == nil {
		if _, err := os.Lstat(filepath.Join(dir, run.CheckpointFile)); err != nil {
			return "", nil // nothing to continue: the stage runs afresh
		}
	}
	var changed []string
	var rec stageStart
	switch err := run.ReadRecord(filepath.Join(dir, StageStartFile), maxStageStartBytes, &rec); {
	case errors.Is(err, fs.ErrNotExist):
		if len(prev) > 0 {
			note = fmt.Sprintf("%s has no %s (written by an older kinfer): the values it inherited are not checked", dir, StageStartFile)
		}
	case err != nil:
		changed = append(changed, fmt.Sprintf("its start is unreadable (%v)", err))
	case rec.Used != nil:
		if d := usedDiff(rec.Used, rec.Missing, prev); d != "" {
			changed = append(changed, "the stage before it ended elsewhere: "+d)
		}
	default:
		if d := previousDiff(rec.Previous, prev); d != "" {
			changed = append(changed, "the stage before it ended elsewhere: "+d)
		}
	}
	if sum != nil && sum.Provenance != nil {
		changed = append(changed, run.ChangedInputs(sum.Provenance.Inputs)...)
		// The stage's study file as the multi-stage study names it now
		// (another file of the same name, or a copied project's edited
		// one), against the one its run read.
		for _, in := range sum.Provenance.Inputs {
			if in.Role != "study" {
				continue
			}
			if h, err := run.FileSHA256(studyPath); err == nil && h != in.SHA256 {
				changed = append(changed, fmt.Sprintf("study %s (sha256 %s now; the run read %s, sha256 %s)", studyPath, run.ShortHash(h), in.Path, run.ShortHash(in.SHA256)))
			}
		}
	}
	if sum != nil && seed >= 0 && uint64(seed) != sum.Seed {
		changed = append(changed, fmt.Sprintf("seed %d then, %d now", sum.Seed, seed))
	}
	if len(changed) == 0 {
		return note, nil
	}
	return "", fmt.Errorf("%s holds results computed from other inputs:\n  %s\nto run it again with the current inputs, run into another -o, or remove %s and the directories of the stages after it",
		dir, strings.Join(changed, "\n  "), dir)
}

// usedDiff describes the first differences between the values a stage
// used of the stage before it (used, and missing: the parameters it did
// not find there) and the values the stage before ended with now.
func usedDiff(used map[string]float64, missing []string, now map[string]float64) string {
	then := map[string]float64{}
	cur := map[string]float64{}
	for k, v := range used {
		then[k] = v
		if w, ok := now[k]; ok {
			cur[k] = w
		}
	}
	for _, k := range missing {
		if w, ok := now[k]; ok {
			cur[k] = w
		}
	}
	return previousDiff(then, cur)
}

// previousDiff describes the first differences between the inherited
// values then and now ("" when equal).
func previousDiff(then, now map[string]float64) string {
	var d []string
	for k, v := range now {
		if w, ok := then[k]; !ok {
			d = append(d, fmt.Sprintf("%s = %g now, not inherited then", k, v))
		} else if w != v {
			d = append(d, fmt.Sprintf("%s = %g then, %g now", k, w, v))
		}
	}
	for k, w := range then {
		if _, ok := now[k]; !ok {
			d = append(d, fmt.Sprintf("%s = %g then, not inherited now", k, w))
		}
	}
	sort.Strings(d)
	if len(d) > 4 {
		d = append(d[:4], fmt.Sprintf("and %d more", len(d)-4))
	}
	return strings.Join(d, "; ")
}

// readComplete returns a stage directory's summary when its run completed,
// nil when it did not run or stopped.
func readComplete(dir string) (*run.Summary, error) {
	var s run.Summary
	if err := run.ReadRecord(filepath.Join(dir, "summary.json"), run.MaxSummaryBytes, &s); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !s.Complete {
		return nil, nil
	}
	return &s, nil
}

// stageSeeds are a stage's seeds: the one to run it with (--seed when
// given, else the multi-stage file's for a stage without its own, else −1:
// the stage's own) and the one its run would record (the former, or the
// stage's own, or 1; −1 when the stage file does not decode).
func stageSeeds(override int64, top *int64, stf *study.File, derr error) (runSeed, recorded int64) {
	runSeed = override
	if runSeed < 0 && top != nil && !(derr == nil && stf.Seed != nil) {
		runSeed = *top
	}
	switch {
	case runSeed >= 0:
		return runSeed, runSeed
	case derr != nil:
		return runSeed, -1
	case stf.Seed != nil && *stf.Seed >= 0:
		return runSeed, *stf.Seed
	}
	return runSeed, 1
}

// checkStageBest evaluates a complete stage's recorded best point on its
// study (loaded with the values it inherited) and refuses a record whose
// log prior or log likelihood it does not give, to 1e-9, or whose best
// names other parameters than the study's free ones.
func checkStageBest(ctx context.Context, path, sdir string, prev map[string]float64, sum *run.Summary, budget int64) error {
	if sum.Best == nil {
		return nil
	}
	rt, err := newRuntime(ctx, nil)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	s, err := study.Load(ctx, path, study.Options{Workers: 1, Runtime: rt, Previous: prev, MemoryBudget: budget})
	if err != nil {
		return err
	}
	defer s.Close()
	theta := make([]float64, len(s.Free))
	for j, p := range s.Free {
		v, ok := sum.Best.Theta[p.Name]
		if !ok {
			return fmt.Errorf("its best point has no value of %s: not a record of this stage's study; run the stage again (remove its folder)", p.Name)
		}
		theta[j] = v
	}
	if len(sum.Best.Theta) != len(s.Free) {
		return fmt.Errorf("its best point has %d values, the stage's study %d free parameters: not a record of this stage's study; run the stage again (remove its folder)", len(sum.Best.Theta), len(s.Free))
	}
	x := theta
	if s.Transformed() {
		if x, err = s.Inverse(theta); err != nil {
			return fmt.Errorf("its best point: %v; run the stage again (remove its folder)", err)
		}
	}
	i, got, err := run.FirstMismatch(ctx, s, target.New(s, 1), []abi.Result{{Theta: x, Status: abi.OK, LogPrior: float64(sum.Best.LogPrior), LogLik: float64(sum.Best.LogLik)}})
	if err != nil {
		return fmt.Errorf("evaluating its best point: %w", err)
	}
	if i >= 0 {
		return fmt.Errorf("its best point %v has log prior %g and log likelihood %g, but evaluates to %v, %g and %g: not this stage's result; run the stage again (remove its folder)",
			sum.Best.Theta, float64(sum.Best.LogPrior), float64(sum.Best.LogLik), got.Status, got.LogPrior, got.LogLik)
	}
	// And it is the best: no sample the stage wrote beats it (audit 16:
	// a best replaced by a worse point with its true values passed).
	return noSampleBetter(filepath.Join(sdir, "samples.csv"), sum.Best, s.MethodInfo.Spec.Has(abi.CapLeastSquares))
}

// noSampleBetter refuses a best point that a row of the stage's
// samples.csv beats (by the log target, or for a least-squares method the
// log likelihood, as the run chose its best): every sample is a point the
// run evaluated, so none can.
func noSampleBetter(path string, best *run.Best, lsq bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<16))
	r.ReuseRecord = true
	hdr, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	lp, ll := slices.Index(hdr, "log_prior"), slices.Index(hdr, "log_likelihood")
	if lp < 0 || ll < 0 {
		return fmt.Errorf("%s: no log_prior and log_likelihood columns", path)
	}
	score := func(p, l float64) float64 {
		if lsq {
			return l
		}
		return p + l
	}
	top := score(float64(best.LogPrior), float64(best.LogLik))
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		p, e1 := strconv.ParseFloat(rec[lp], 64)
		l, e2 := strconv.ParseFloat(rec[ll], 64)
		if e1 != nil || e2 != nil {
			return fmt.Errorf("%s:%d: log_prior %q, log_likelihood %q: not numbers", path, line, rec[lp], rec[ll])
		}
		if v := score(p, l); v > top+1e-9*math.Max(1, math.Abs(top)) {
			return fmt.Errorf("its best point has log prior %g and log likelihood %g, but %s:%d has %g and %g, better: not this stage's best; run the stage again (remove its folder)",
				float64(best.LogPrior), float64(best.LogLik), path, line, p, l)
		}
	}
}
