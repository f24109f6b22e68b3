package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/kinfer/kinfer/host/report"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// trustStudyDoc is the help of --trust-study (report, analyze, run
// --verify).
const trustStudyDoc = "honour trusted = true in the study the run directory names (off: a run directory may come from elsewhere, so a plugin of its study that needs trusted = true is refused)"

// ignoreTrust is study.Options.IgnoreTrust for a command reading a run
// directory: "" with --trust-study, else why and how to lift it.
func ignoreTrust(trust bool, cmd string) string {
	if trust {
		return ""
	}
	return cmd + " reads a run directory, which may come from elsewhere; if you trust the study it names, pass --trust-study"
}

func cmdReport(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("o", "", "the HTML `FILE` to write (default RUN_DIR/report.html); not one of the run's files or inputs")
	figs := fs.String("figures", "", "also write every figure as SVG and PNG into this `DIR`")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel workers for the model evaluations of the fit figures")
	maxSamples := fs.Int("max-samples", 2000, "at most this many samples (evenly spaced) in histograms, the corner plot and traces; at most 100000 (each costs about 1.4 kB of figures)")
	maxPred := fs.Int("predictive", 100, "posterior samples evaluated for the posterior-predictive band of the fit figures")
	trust := fs.Bool("trust-study", false, trustStudyDoc)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	// The figures hold about 1.4 kB per drawn sample (SVG and PNG, the
	// corner plot and traces): 2.4 million passed 3.5 GB (audit 10).
	if *maxSamples > maxReportSamples {
		return usageError{fmt.Errorf("--max-samples must be at most %d (about %d MB of figures), got %d", maxReportSamples, maxReportSamples*1400>>20, *maxSamples)}
	}
	// 0 and negatives were taken as "not given" (the defaults; audit 9).
	for _, c := range []struct {
		name string
		v    int
	}{{"--max-samples", *maxSamples}, {"--predictive", *maxPred}} {
		if c.v < 1 {
			return usageError{fmt.Errorf("%s must be ≥ 1, got %d", c.name, c.v)}
		}
	}
	dir := pos[0]
	// A run writing into the folder would change its files under the
	// report (or leave a report of its previous run beside its results).
	lock, err := lockRunDir(dir, "")
	if err != nil {
		return err
	}
	defer lock.Unlock()
	// SIGINT and SIGTERM stop the report between figures, leaving no
	// temporary file (audit 10: the default disposition left one).
	ctx, stop := interruptible(os.Stderr, "stopping the report")
	defer stop()
	rt, err := newRuntime(ctx, nil)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	prev, err := readStageStart(dir) // a stage of a multi-stage study
	if err != nil {
		return err
	}
	path, r, err := report.Write(ctx, dir, *out, report.Options{Runtime: rt, Workers: max(*workers, 1), MaxSamples: *maxSamples, MaxPredictive: *maxPred, Previous: prev, IgnoreTrust: ignoreTrust(*trust, "kinfer report")})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%d figures)\n", path, len(r.Figures()))
	for _, n := range r.Notes {
		fmt.Fprintf(stdout, "  note: %s\n", guesttext.Escape(n)) // notes quote paths from the run's records
	}
	if *figs != "" {
		files, err := r.WriteFigures(ctx, *figs, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "figures: %d files in %s\n", len(files), *figs)
	}
	return nil
}

// lockRunDir locks dir, a run's output directory that a command reads
// (kinfer report, analyze, run --verify), against a run writing into it
// (run.LockToRead): such a run fails the command at once with the lock's
// message, also on a folder that has no summary.json yet (a first run
// into it). A folder without summary.json that no run holds is not a
// run's: an error naming it, prefixed with prefix.
func lockRunDir(dir, prefix string) (*run.DirLock, error) {
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		if _, lerr := os.Lstat(filepath.Join(dir, run.LockFile)); lerr == nil {
			l, lerr := run.LockToRead(dir)
			if errors.Is(lerr, run.ErrLocked) {
				return nil, lerr
			}
			l.Unlock()
		}
		return nil, fmt.Errorf("%s%w (%s)", prefix, err, run.NotARun(dir))
	}
	return run.LockToRead(dir)
}

// maxReportSamples bounds report --max-samples.
const maxReportSamples = 100_000
