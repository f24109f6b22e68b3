package run

import (
	"fmt"
	"math"
	"os"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// Size limits of the records a run directory holds, for reading one that
// may come from elsewhere (a colleague's run, a download, a remote
// worker's bundle): each is far above what a run writes (docs/OUTPUTS.md,
// "Reading a run directory").
const (
	// MaxRunStateBytes bounds run.json (a few hundred bytes, and the
	// error of a stopped run).
	MaxRunStateBytes = 1 << 20
	// MaxCheckpointBytes bounds checkpoint.json: counts, the prior
	// stream and the best point, whose residuals, Jacobian and outputs
	// are the only parts that grow (with the data).
	MaxCheckpointBytes = 128 << 20
	// MaxSummaryBytes bounds summary.json: its method report is at most
	// MaxReportBytes, the rest is per parameter.
	MaxSummaryBytes = 64 << 20
	// MaxReportBytes bounds a method's report in summary.json: a
	// plugin's report is refused beyond it (ABI.md §6), and a built-in
	// method's is left out beyond it (boundReport), so that a run's own
	// summary.json stays readable by report, analyze and --verify.
	MaxReportBytes = 16 << 20
	// MaxAnalysisBytes bounds analysis.json (per parameter and chain).
	MaxAnalysisBytes = 64 << 20
	// MinStateBytes and MaxStateBytes bound the file of a method's saved
	// state: a quarter of the memory budget (decoded, a list of numbers
	// takes up to 4 bytes per byte of text), within these. A plugin's
	// state is at most 64 MiB (ABI.md §6.3); a built-in method's may
	// hold every draw (montecarlo).
	MinStateBytes = 64 << 20
	MaxStateBytes = 4 << 30
	// MaxInputBytes bounds an input whose digest a run records or
	// --verify checks: the largest input kinfer reads is a data file (1
	// GiB, host/dataset).
	MaxInputBytes = 1 << 30
)

// ReadRecord decodes the JSON record at path (of at most max bytes, a
// regular file: not a named pipe, a device or a directory) into v, with
// every list bounded (its `maxlen` tag, else strictjson.DefaultMaxLen)
// and the decoded values at most 6 bytes per byte of text
// (strictjson.Lenient: lists of numbers, 4, pass; lists of empty objects
// or lists, 8 to 20 and more, do not). Unknown
// keys are ignored, as encoding/json does. Errors name the file; a
// missing file's error satisfies errors.Is(err, fs.ErrNotExist).
func ReadRecord(path string, max int64, v any) error {
	b, err := safefile.ReadFile(path, max)
	if err != nil {
		return err // safefile's errors name the file
	}
	if err := strictjson.Decode(b, v, strictjson.Lenient); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// StateLimit is the largest method state file a run with memory budget
// budget reads (MinStateBytes ≤ budget/4 ≤ MaxStateBytes).
func StateLimit(budget int64) int64 {
	return min(max(budget/4, MinStateBytes), MaxStateBytes)
}

// maxSeconds bounds a recorded time: a century, far from time.Duration's
// limit (292 years), which a run's wall time is added to.
const maxSeconds = 100 * 365.25 * 24 * 3600

// maxTally bounds every tally a checkpoint may hold.
const maxTally = 1 << 53

// checkCounts refuses tallies no run can have: negative counts or counts
// above maxTally, more failures than evaluations, a non-finite or
// negative time.
func checkCounts(c *checkpoint) error {
	n := c.Counts
	for _, f := range []struct {
		name string
		v    int
	}{{"batches", c.Batches}, {"starts_used", c.StartsUsed}, {"counts.Evaluations", n.Evaluations}, {"counts.Failed", n.Failed},
		{"counts.Gradients", n.Gradients}, {"counts.Jacobians", n.Jacobians}, {"counts.JacobianEvals", n.JacobianEvals},
		{"counts.JacobianFailures", n.JacobianFailures}, {"counts.GradientFailures", n.GradientFailures}} {
		if f.v < 0 {
			return fmt.Errorf("%s is %d, negative", f.name, f.v)
		}
		// No run counts 2^53 of anything; a larger tally would overflow
		// when the resumed run adds its own (audit 5: negative counts).
		if f.v > maxTally {
			return fmt.Errorf("%s is %d, more than any run counts (2^53)", f.name, f.v)
		}
	}
	known := map[string]bool{}
	for st := abi.OK; st <= abi.OutOfSupport; st++ {
		known[st.String()] = true
	}
	for k, v := range n.ByStatus {
		if !known[k] {
			return fmt.Errorf("counts.ByStatus has the unknown status %q", k)
		}
		if v < 0 || v > maxTally {
			return fmt.Errorf("counts.ByStatus[%q] is %d, outside [0, 2^53]", k, v)
		}
	}
	if c.Best != nil && (c.Best.Status < abi.OK || c.Best.Status > abi.OutOfSupport) {
		return fmt.Errorf("best.Status is %d, not a status", c.Best.Status)
	}
	if n.Failed > n.Evaluations {
		return fmt.Errorf("counts.Failed %d exceeds counts.Evaluations %d", n.Failed, n.Evaluations)
	}
	// The tallies count each point once (host/target): every status but
	// out-of-support is an evaluation, every one but ok a failed one
	// (audit 15: Evaluations edited to 0 gave a summary of 546 380
	// evaluations beside 1 607 998 ok).
	evals := 0
	for k, v := range n.ByStatus {
		if k != abi.OutOfSupport.String() {
			evals += v
		}
	}
	if evals != n.Evaluations || n.Evaluations-n.ByStatus[abi.OK.String()] != n.Failed {
		return fmt.Errorf("counts.Evaluations %d and counts.Failed %d do not match counts.ByStatus (%d evaluated, %d of them ok)", n.Evaluations, n.Failed, evals, n.ByStatus[abi.OK.String()])
	}
	if c.JournalSamples < -1 {
		return fmt.Errorf("journal_samples is %d (−1: no journal, else a count)", c.JournalSamples)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"wall_seconds", c.WallSeconds}, {"counts.ModelSeconds", n.ModelSeconds}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > maxSeconds {
			return fmt.Errorf("%s is %g (want 0 … %g)", f.name, f.v, float64(maxSeconds))
		}
	}
	return nil
}

// openRegular opens path for reading and writing without following a
// symbolic link in its last component (a link would lead the writes out
// of the run directory) and refuses anything but a regular file (a named
// pipe would block the reads).
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, 0o644)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("%s is a symbolic link, not a regular file", path)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is %s, not a regular file", path, safefile.Kind(st.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
