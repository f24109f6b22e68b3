package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/kinfer/kinfer/host/remote"
	"github.com/kinfer/kinfer/host/report"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// loadGrace is how long an interrupted run waits for the study's loading
// (plugin compilation and instantiation) to notice the interrupt before it
// gives up on it: the process then exits without it.
const loadGrace = 300 * time.Millisecond

// missingDirs lists dir and those of its ancestors that do not exist, the
// deepest first: the folders a run into dir would make.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			return out
		}
		out = append(out, d)
		up := filepath.Dir(d)
		if up == d {
			return out
		}
		d = up
	}
}

// errAbandoned: the study's loading did not return after an interrupt; its
// goroutine, the runtime and the study are left to the process exit.
var errAbandoned = errors.New("abandoned")

// runFlags are kinfer run's flags.
type runFlags struct {
	out, resume, verify, budget string
	seed                        int64
	workers                     int
	verbose                     bool
	noReport                    bool // --no-report: no report.html at the end
	// removeStale: files of an earlier run in the directory that this
	// run removes once its inputs are checked (run.Options.RemoveStale).
	removeStale []string
	every       time.Duration
	everySet    bool
	previous    map[string]float64       // a multi-stage study's previous stage's result
	loaded      func(*study.Study) error // called once the study is loaded (a stage records what it used)
	trustStudy  bool                     // --trust-study: with --verify, honour the study's trusted = true
	ignoreTrust string                   // study.Options.IgnoreTrust of the load
	nats        remote.Config            // URL set: evaluate on remote workers
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.out, "o", "", "output directory (default out/<study name>)")
	fs.Int64Var(&f.seed, "seed", 0, "override the study's seed (≥ 0; default: the study's own)")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel evaluation workers (results do not depend on them)")
	fs.BoolVar(&f.verbose, "verbose", false, "show plugin log lines and the run's phases on stderr")
	fs.StringVar(&f.resume, "resume", "", "continue the stopped run whose output directory this is")
	fs.StringVar(&f.verify, "verify", "", "re-run the complete run whose output directory this is (same study, data, plugins and seed) and say whether samples.csv is byte-identical")
	fs.DurationVar(&f.every, "checkpoint-every", run.DefaultCheckpointEvery, "least time between checkpoints (refused for a method that cannot checkpoint)")
	fs.BoolVar(&f.trustStudy, "trust-study", false, "with --resume or --verify: "+trustStudyDoc)
	natsFlags(fs, &f.nats, "evaluate on the workers of this NATS server (kinfer worker --nats URL; see docs/DISTRIBUTED.md) instead of on this machine")
	fs.StringVar(&f.budget, "memory-budget", "", "memory the method's settings may plan for, e.g. 8GiB (default: half the physical memory, at most 16 GiB)")
	fs.BoolVar(&f.noReport, "no-report", false, "do not write report.html (figures and diagnostics, see kinfer report) at the end of the run")
	npos := 1
	for _, a := range args {
		for _, name := range []string{"resume", "verify"} {
			if a == "--"+name || a == "-"+name || strings.HasPrefix(a, "--"+name+"=") || strings.HasPrefix(a, "-"+name+"=") {
				npos = 0
			}
		}
	}
	pos, err := parse(fs, args, npos)
	if err != nil {
		return err
	}
	seedSet := false
	fs.Visit(func(fl *flag.Flag) {
		f.everySet = f.everySet || fl.Name == "checkpoint-every"
		seedSet = seedSet || fl.Name == "seed"
	})
	if seedSet && f.seed < 0 {
		// −1 is "not given" below; a negative seed was silently ignored.
		return usageError{fmt.Errorf("--seed must be ≥ 0, got %d", f.seed)}
	}
	if !seedSet {
		// The flag's default is 0 so that --help shows none (it showed
		// "default -1", which --seed refuses: audit 21); not given is −1.
		f.seed = -1
	}
	if f.everySet && f.every <= 0 {
		return usageError{fmt.Errorf("--checkpoint-every must be a positive duration (e.g. 30s), got %v", f.every)}
	}
	if err := checkWorkers(f.workers); err != nil {
		return err
	}
	if err := checkNATSFlags(f.nats); err != nil {
		return err
	}
	var budget int64
	if f.budget != "" {
		if budget, err = run.ParseBytes(f.budget); err != nil {
			return usageError{fmt.Errorf("--memory-budget: %w", err)}
		}
	}
	if f.resume != "" && f.verify != "" {
		return usageError{errors.New("--resume and --verify exclude each other")}
	}
	if (f.resume != "" || f.verify != "") && (f.out != "" || f.seed >= 0) {
		return usageError{fmt.Errorf("--resume and --verify take the output directory; -o and --seed come from its run")}
	}
	if f.trustStudy && f.resume == "" && f.verify == "" {
		return usageError{fmt.Errorf("--trust-study is for --resume and --verify, which load the study a run directory names (a run of STUDY.toml honours its trusted = true)")}
	}

	ctx, stop := interruptible(stderr, "stopping (the partial results are written, and a checkpoint if the method can save its state)")
	defer stop()
	if f.verify != "" {
		return verify(ctx, f.verify, f, budget, stdout, stderr)
	}

	var studyFile, dir string
	seed := f.seed
	if f.resume != "" {
		dir = f.resume
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("--resume: %s is not a run's output directory (%v)", dir, err)
		}
		// The study is the one the directory names (review 22: a forged
		// directory's study lifted the limits for --resume still).
		f.ignoreTrust = ignoreTrust(f.trustStudy, "kinfer run --resume")
	} else {
		studyFile = pos[0]
		if isModule(studyFile) || isManifest(studyFile) {
			return fmt.Errorf("%s is a plugin (a module or its plugin.toml), not a study: a study names it in its [model], [[likelihood]] or [method] table (plugin = \"…/plugin.toml\"); kinfer new model NAME writes a plugin with a study beside it", studyFile)
		}
		sf, d, err := study.Decode(studyFile)
		if err != nil {
			return err
		}
		multi, err := sf.IsMultiStage(d)
		if err != nil {
			return err
		}
		// The output folder is printed on the run's lines and recorded:
		// a line feed or other control character in it would forge lines
		// (audit 13).
		if f.out != "" && !guesttext.Clean(f.out) {
			return usageError{fmt.Errorf("-o %s: the folder's name has a control character, a line or paragraph separator, a bidirectional control or invalid UTF-8", guesttext.Escape(f.out))}
		}
		if dir = f.out; dir == "" {
			// The name makes the folder: checked before the folder is
			// made (a 300-byte name failed at mkdir; audit 4).
			if err := study.CheckName(d, sf.Name); err != nil {
				return err
			}
			dir = filepath.Join("out", sf.Name)
		}
		if multi {
			return runStages(ctx, studyFile, sf, dir, seed, budget, f, stdout, stderr)
		}
	}
	// The directory is locked before anything else: a second run (or
	// resume) on it fails at once.
	created := missingDirs(dir)
	_, lockErr := os.Lstat(filepath.Join(dir, run.LockFile))
	lock, err := run.LockDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		lock.Unlock()
		// A run that wrote nothing (its study did not load, or was
		// refused) leaves no lock file and no directory it made behind.
		if _, err := os.Lstat(filepath.Join(dir, "summary.json")); os.IsNotExist(err) {
			if os.IsNotExist(lockErr) {
				os.Remove(filepath.Join(dir, run.LockFile))
			}
			for _, d := range created {
				os.Remove(d) // only when empty
			}
		}
	}()
	if f.resume == "" {
		// A single study run into a folder that held a stage of a
		// multi-stage study: that stage's inherited values are not this
		// run's (--verify, analyze and report would load them). The run
		// removes the file once its inputs are checked (audit 9: a data
		// file named stage_start.json was deleted before the study loaded).
		f.removeStale = []string{StageStartFile}
	}
	if f.resume != "" {
		sf, sd, err := run.ResumeInfo(dir)
		if err != nil {
			return err
		}
		studyFile, seed = sf, int64(sd)
		// A stage of a multi-stage study resumes with the values it
		// inherited (its stage_start.json).
		if f.previous, err = readStageStart(dir); err != nil {
			return err
		}
		// A run started with --no-report is resumed without a report too.
		if st, _ := run.ReadRunState(dir); st != nil && st.NoReport {
			f.noReport = true
		}
	}
	sum, rep, err := execute(ctx, studyFile, dir, lock, seed, budget, f, stderr)
	if sum != nil {
		printSummary(stdout, sum, dir, err != nil && ctx.Err() == nil)
	}
	if rep != "" {
		fmt.Fprintf(stdout, "report: %s\n", rep)
	}
	return withNATS(explain(ctx, err, dir), dir, f.nats)
}

// withNATS adds --nats to the resume hint of a remote run's error: the
// hint's command alone finishes the run on this machine (audit 10).
// Credentials are left out of the message.
func withNATS(err error, dir string, nc remote.Config) error {
	hint := "kinfer run --resume " + dir + ")"
	if err == nil || nc.URL == "" || !strings.Contains(err.Error(), hint) {
		return err
	}
	return errors.New(strings.Replace(err.Error(), hint, "kinfer run --resume "+dir+" --nats "+nc.PublicURL()+", with the server's credentials)", 1))
}

// interruptible returns a context that the first SIGINT or SIGTERM
// cancels (the run stops, interrupting plugin calls in progress, and
// writes its partial results and checkpoint); a second signal exits at
// once.
// repeatWindow: a second signal sooner than this after the first is taken
// as the same stop, not as the second that exits at once.
const repeatWindow = 250 * time.Millisecond

func interruptible(stderr io.Writer, stopping string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(sigs, stopSignals()...)
	go func() {
		select {
		case sig := <-sigs:
			cancel(fmt.Errorf("interrupted by %s", signalName(sig)))
			fmt.Fprintf(stderr, "kinfer: %s: %s; a second signal exits at once\n", signalName(sig), stopping)
		case <-done:
			return
		}
		// A repeat within repeatWindow is the same stop delivered twice
		// (`timeout` signals the process and then its process group).
		first := time.Now()
		for {
			select {
			case sig := <-sigs:
				if time.Since(first) < repeatWindow {
					continue
				}
				fmt.Fprintf(stderr, "kinfer: %s again: exiting at once\n", signalName(sig))
				os.Exit(130)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// stopSignals are the signals that stop kinfer cleanly: SIGINT, SIGTERM
// and SIGHUP, which a terminal or ssh session that closes sends (audit
// 18: the run lost everything it computed) — unless SIGHUP is ignored, as
// nohup starts a command: asking for it would undo that (review 19).
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// execute loads the study (interruptibly) and runs it into dir, which the
// caller has locked. seed ≥ 0 overrides the study's.
//
// Unless f.noReport, it then writes dir/report.html (host/report) with the
// loaded study, and returns its path; a report that fails is a warning on
// stderr, not the run's error.
func execute(ctx context.Context, studyFile, dir string, lock *run.DirLock, seed, budget int64, f runFlags, stderr io.Writer) (*run.Summary, string, error) {
	var plog io.Writer
	if f.verbose {
		plog = stderr
	}
	phase := func(format string, args ...any) {
		if f.verbose {
			fmt.Fprintf(stderr, "kinfer: "+format+"\n", args...)
		}
	}
	rt, err := newRuntime(ctx, plog)
	if err != nil {
		return nil, "", err
	}
	phase("loading %s", studyFile)
	planBudget := budget
	if planBudget <= 0 {
		planBudget = run.DefaultMemoryBudget()
	}
	s, err := loadInterruptible(ctx, studyFile, study.Options{Workers: f.workers, Runtime: rt, Interrupt: ctx, Previous: f.previous, MemoryBudget: planBudget, IgnoreTrust: f.ignoreTrust})
	if err != errAbandoned {
		defer rt.Close(context.Background())
	}
	if err != nil {
		if ctx.Err() != nil && f.resume == "" {
			// Interrupted while loading: the run stops with what it has,
			// nothing computed yet.
			cause := fmt.Errorf("%w while loading the study", context.Cause(ctx))
			if werr := run.WriteUnloaded(dir, studyFile, seed, cause); werr != nil {
				return nil, "", errors.Join(cause, werr)
			}
			return nil, "", cause
		}
		return nil, "", err
	}
	defer s.Close()
	if f.loaded != nil {
		if err := f.loaded(s); err != nil {
			return nil, "", err
		}
	}
	if f.everySet && !run.CanCheckpoint(s.Method) {
		return nil, "", fmt.Errorf("--checkpoint-every: method %s (%s) cannot save its state (its spec has no %q capability), so no checkpoint can be written; run without --checkpoint-every (the run then has no checkpoints and cannot be resumed)",
			s.MethodInfo.Label(), s.MethodInfo.Ref, "checkpoint")
	}
	if seed >= 0 {
		s.Seed = uint64(seed)
	}
	var prog io.Writer
	if fl, ok := stderr.(*os.File); ok && run.IsTerminal(fl) {
		prog = stderr
	}
	o := run.Options{OutDir: dir, Workers: f.workers, Progress: prog, NoReport: f.noReport,
		Resume: f.resume != "", CheckpointEvery: f.every, MemoryBudget: budget, Lock: lock, RemoveStale: f.removeStale}
	if f.nats.URL != "" {
		c, err := remote.Dial(ctx, f.nats, s, f.previous, stderr)
		if err != nil {
			return nil, "", err
		}
		defer func() {
			// The run's chunks left on the server are withdrawn; if the
			// server cannot be reached, say so (remote 24: 107 chunks
			// stayed queued for the next worker, without a word).
			if err := c.Close(); err != nil {
				fmt.Fprintf(stderr, "kinfer: remote run %s: its chunks or results could not be withdrawn from the server (%s); chunks left there are evaluated by the next worker for nobody: purge them with `nats stream purge KINFER_WORK --subject kinfer.work.%s` and `nats stream purge KINFER_RESULTS --subject kinfer.result.%s`\n",
					c.RunID(), guesttext.Escape(err.Error()), c.RunID(), c.RunID())
			}
		}()
		o.Remote = c
		fmt.Fprintf(stderr, "kinfer: remote run %s: chunks on subject kinfer.work.%s of %s\n", c.RunID(), c.RunID(), c.Summary().(remote.RunSummary).Server)
		phase("running method %s on the workers of %s (run %s) into %s", s.MethodInfo.Ref, f.nats.PublicURL(), c.RunID(), dir)
	} else {
		phase("running method %s on %d workers into %s", s.MethodInfo.Ref, f.workers, dir)
	}
	sum, err := run.Run(ctx, s, o)
	if run.IsInitRefusal(err) {
		return nil, "", err // nothing ran, nothing was written: the error alone
	}
	if sum == nil || f.noReport || ctx.Err() != nil {
		return sum, "", err
	}
	phase("writing %s", filepath.Join(dir, report.FileName))
	path, _, rerr := report.Write(ctx, dir, "", report.Options{Study: s, Workers: f.workers})
	if rerr != nil {
		fmt.Fprintf(stderr, "kinfer run: report.html was not written: %v\n", rerr)
		path = ""
	}
	return sum, path, err
}

// loadInterruptible loads the study; once ctx is cancelled it waits at
// most loadGrace for the loading to return (host/wasm stops compiling and
// instantiating on the interrupt) and otherwise returns errAbandoned.
func loadInterruptible(ctx context.Context, path string, o study.Options) (*study.Study, error) {
	type result struct {
		s   *study.Study
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := study.Load(context.Background(), path, o)
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-ch:
		if r.err == nil {
			return r.s, nil // the run itself stops at once
		}
		return nil, r.err
	case <-time.After(loadGrace):
		return nil, errAbandoned
	}
}

// explain turns a run's error into the CLI's message: an interrupt says
// so, and an error after which a checkpoint exists says how to continue —
// unless the fault is deterministic (a plugin trap, a malformed result),
// which a resume would meet again.
func explain(ctx context.Context, err error, dir string) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		msg := fmt.Sprintf("%v; partial results written to %s", context.Cause(ctx), dir)
		// The checkpoint of the stop failed: say so, and why (audit 15:
		// only summary.json's error said it).
		if se := (*run.SaveError)(nil); errors.As(err, &se) {
			msg += "; no checkpoint was written: " + se.Error()
		}
		err = errors.New(msg)
	}
	var we interface{ Deterministic() bool } // a plugin fault, local (wasm.Error) or on a worker (remote.WorkerError)
	if errors.As(err, &we) && we.Deterministic() || errors.Is(err, run.ErrOtherInputs) || errors.Is(err, run.ErrStateRefused) || errors.Is(err, run.ErrNotThisRun) || errors.Is(err, run.ErrBadCheckpoint) || errors.Is(err, run.ErrAllFailed) || errors.Is(err, run.ErrOverInputs) {
		return err // running again would stop the same way
	}
	if _, serr := os.Stat(filepath.Join(dir, run.CheckpointFile)); serr == nil {
		if se := (*run.SaveError)(nil); errors.As(err, &se) {
			// A later save failed; the earlier checkpoint stands (audit 21:
			// the resume then failed again at its next checkpoint, unhinted).
			return fmt.Errorf("%w\n(the run can continue from its last checkpoint, before the failed save: kinfer run --resume %s; a state that grows with the run fails again at its next checkpoint: resume with a --checkpoint-every longer than what remains of the run; the default is %v)", err, dir, run.DefaultCheckpointEvery)
		}
		err = fmt.Errorf("%w\n(the run can continue where it stopped: kinfer run --resume %s)", err, dir)
	}
	return err
}

// maxWorkers bounds --workers: each worker holds its own buffers (and a
// plugin instance of up to memory_mib), so 1e9 workers exhausted memory
// before any work.
const maxWorkers = 1024

// checkWorkers refuses a --workers value outside [1, maxWorkers].
func checkWorkers(n int) error {
	if n < 1 || n > maxWorkers {
		return usageError{fmt.Errorf("--workers must be in [1, %d], got %d", maxWorkers, n)}
	}
	return nil
}
