package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// verify re-runs the complete run in dir from its provenance (study file,
// seed; workers do not change results; the memory budget is the run's
// unless --memory-budget is given) into a temporary directory and
// compares samples.csv byte for byte. It refuses when an input changed
// since (its sha256 differs). Identical: nil; different: an error saying
// at which line.
func verify(ctx context.Context, dir string, f runFlags, budget int64, stdout, stderr io.Writer) error {
	// Locked before anything is read: a run writing into dir (a first
	// one, with no summary.json yet, too) fails --verify at once.
	lock, err := lockRunDir(dir, "--verify: ")
	if err != nil {
		return err
	}
	defer lock.Unlock()
	var sum run.Summary
	if err := run.ReadRecord(filepath.Join(dir, "summary.json"), run.MaxSummaryBytes, &sum); err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	p := sum.Provenance
	if p == nil || len(p.Inputs) == 0 {
		return fmt.Errorf("--verify: %s has no provenance record (written by an older kinfer?)", filepath.Join(dir, "summary.json"))
	}
	if !sum.Complete {
		return fmt.Errorf("--verify: the run in %s did not complete (%s); only a complete run can be verified", dir, sum.Error)
	}
	// A run records its study and inputs by absolute paths; relative ones
	// would resolve against wherever --verify runs, and the re-run's
	// references would then match a record naming other plugins (hostile
	// 25).
	if !filepath.IsAbs(sum.StudyFile) {
		return fmt.Errorf("--verify: %s names its study by the relative path %q: not a record kinfer writes (edited?)", filepath.Join(dir, "summary.json"), guesttext.Escape(sum.StudyFile))
	}
	for _, in := range p.Inputs {
		if !filepath.IsAbs(in.Path) {
			return fmt.Errorf("--verify: %s names its input %q by a relative path: not a record kinfer writes (edited?)", filepath.Join(dir, "summary.json"), guesttext.Escape(in.Path))
		}
	}
	if err := inputsUnchanged(p.Inputs); err != nil {
		return err
	}
	// The files compared after the re-run are checked before it: regular
	// files (a named pipe would block the comparison, /dev/zero never end).
	for _, name := range []string{"samples.csv", run.ParquetFile} {
		f, err := safefile.Open(filepath.Join(dir, name), maxCompared)
		if errors.Is(err, fs.ErrNotExist) && name == run.ParquetFile {
			continue // a run made before kinfer wrote it
		}
		if err != nil {
			return fmt.Errorf("--verify: %w", err)
		}
		f.Close()
	}
	now := run.BuildInfo()
	for _, d := range []struct{ what, then, now string }{
		{"kinfer version", p.Kinfer, now.Kinfer}, {"kinfer revision", p.VCSRevision, now.VCSRevision},
		{"Go", p.Go, now.Go}, {"wazero", p.Wazero, now.Wazero}, {"platform", p.Platform, now.Platform},
	} {
		if d.then != d.now {
			fmt.Fprintf(stdout, "note: the run was made with %s %s, this is %s: a difference may come from that\n", d.what, d.then, d.now)
		}
	}

	// A stage of a multi-stage study re-runs with the values it inherited.
	if f.previous, err = readStageStart(dir); err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	tmp, err := os.MkdirTemp("", "kinfer-verify-")
	if err != nil {
		return err
	}
	tlock, err := run.LockDir(tmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "re-running %s with seed %d into %s\n", guesttext.Escape(sum.StudyFile), p.Seed, tmp) // a record's path: escaped (audit 13)
	f.verify = ""
	if budget == 0 {
		// What the run was allowed (it does not change results), within
		// this machine's default: the record may claim any amount.
		budget = sum.MemoryBudget
		if def := run.DefaultMemoryBudget(); budget <= 0 || budget > def {
			if budget > def {
				fmt.Fprintf(stdout, "note: the run's memory budget was %s; the re-run plans within this machine's %s (--memory-budget sets it)\n",
					run.FormatBytes(budget), run.FormatBytes(def))
			}
			budget = def
		}
	}
	f.noReport = true // only samples.csv is compared
	f.ignoreTrust = ignoreTrust(f.trustStudy, "kinfer run --verify")
	_, _, err = execute(ctx, sum.StudyFile, tmp, tlock, int64(p.Seed), budget, f, stderr)
	tlock.Unlock()
	if err != nil && ctx.Err() != nil {
		// Interrupted: nothing to inspect, and a verify re-runs from the
		// start anyway; the scratch run goes (audit 10: 116 MB left).
		os.RemoveAll(tmp)
		return fmt.Errorf("--verify: interrupted (%v); the re-run's scratch folder is removed", context.Cause(ctx))
	}
	if err != nil {
		// A re-run refused before it wrote anything (a study that does
		// not load, a plugin it may not trust) leaves no folder behind
		// (hostile 25: one holding only kinfer.lock, "its outputs").
		if ents, rerr := os.ReadDir(tmp); rerr == nil && len(ents) <= 1 && (len(ents) == 0 || ents[0].Name() == run.LockFile) {
			os.RemoveAll(tmp)
			return fmt.Errorf("--verify: the re-run failed before it wrote anything: %w", err)
		}
		return fmt.Errorf("--verify: the re-run failed (its outputs are in %s): %w", tmp, err)
	}
	// The re-run read its inputs again: they must still be the recorded
	// ones (a study that names other files than before has another digest,
	// but a file could change while the re-run loads it).
	var again run.Summary
	_ = run.ReadRecord(filepath.Join(tmp, "summary.json"), run.MaxSummaryBytes, &again)
	if again.Provenance == nil || !sameInputs(p.Inputs, again.Provenance.Inputs) {
		return fmt.Errorf("--verify: the re-run's inputs differ from the recorded ones (see %s and %s)", filepath.Join(dir, "summary.json"), filepath.Join(tmp, "summary.json"))
	}
	line, err := firstDifference(filepath.Join(dir, "samples.csv"), filepath.Join(tmp, "samples.csv"))
	if err != nil {
		return err
	}
	if line > 0 {
		return fmt.Errorf("--verify: samples.csv differs at line %d: %s against the re-run's %s (kept)",
			line, filepath.Join(dir, "samples.csv"), filepath.Join(tmp, "samples.csv"))
	}
	// samples.parquet holds the same samples; a run made before kinfer
	// wrote it has none to compare.
	if _, err := os.Lstat(filepath.Join(dir, run.ParquetFile)); err == nil {
		if line, err := firstDifference(filepath.Join(dir, run.ParquetFile), filepath.Join(tmp, run.ParquetFile)); err != nil || line > 0 {
			return fmt.Errorf("--verify: samples.csv is identical but %s differs from the re-run's %s (kept)",
				filepath.Join(dir, run.ParquetFile), filepath.Join(tmp, run.ParquetFile))
		}
	}
	// The record's results derive from the samples and the best point:
	// the re-run's must be the same numbers (audit 15: a summary.json
	// whose posterior mean and best point were forged passed as
	// identical, and report printed them).
	if key := differentResults(filepath.Join(dir, "summary.json"), filepath.Join(tmp, "summary.json")); key != "" {
		return fmt.Errorf("--verify: samples.csv is identical but summary.json's %s differs from the re-run's (%s against %s, kept): the record was edited, or written by another kinfer",
			key, filepath.Join(dir, "summary.json"), filepath.Join(tmp, "summary.json"))
	}
	os.RemoveAll(tmp)
	fmt.Fprintf(stdout, "identical: the re-run reproduces %s byte for byte (%d samples) and the results in its summary.json (statistics, best point, tallies, method report)\n", filepath.Join(dir, "samples.csv"), sum.Samples)
	return nil
}

// differentResults names the first of summary.json's results (the
// parameters' statistics, the best point, the sample count) that differ
// between the records a and b, or "" when they agree.
func differentResults(a, b string) string {
	var ra, rb map[string]any
	if run.ReadRecord(a, run.MaxSummaryBytes, &ra) != nil || run.ReadRecord(b, run.MaxSummaryBytes, &rb) != nil {
		return "record (unreadable)"
	}
	// Every deterministic result: what ran (study, model, method,
	// likelihoods, whether it completed), the statistics, the best point,
	// the tallies and the method's report (R̂, ESS, acceptance, evidence,
	// …; audits 16 and 17: forged diagnostics and a forged method name
	// passed). Not the times, workers or provenance, nor non_finite_from,
	// which a remote run does not collect from its workers (review 17).
	// A plugin's reference is recorded as the run resolved it, relative
	// or absolute with the study's path (review 19: a false "differs";
	// author 22: "plugin.toml" from the study's folder): a relative one
	// matches an absolute one that ends with it (sameRef). Its identity is
	// also in provenance.inputs' digests, checked before.
	for _, k := range []string{"model", "method", "likelihoods"} {
		if !sameRefs(ra[k], rb[k]) {
			return k
		}
	}
	for _, k := range []string{"study", "complete", "error", "params", "best", "samples", "evaluations", "failed_evaluations", "status_counts", "method_report", "transform"} {
		if !reflect.DeepEqual(ra[k], rb[k]) {
			return k
		}
	}
	return ""
}

// sameRefs compares summary.json's component references (a string, or
// a list of them as likelihoods are) with sameRef.
func sameRefs(a, b any) bool {
	if la, ok := a.([]any); ok {
		lb, ok := b.([]any)
		if !ok || len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !sameRefs(la[i], lb[i]) {
				return false
			}
		}
		return true
	}
	sa, ok1 := a.(string)
	sb, ok2 := b.(string)
	if !ok1 || !ok2 {
		return reflect.DeepEqual(a, b)
	}
	if sa == sb {
		return true
	}
	// A likelihood is "REF on DATASET": the same dataset, then the refs.
	for i := strings.Index(sa, " on "); i >= 0; {
		if strings.HasSuffix(sb, sa[i:]) && sameRef(sa[:i], sb[:len(sb)-len(sa)+i]) {
			return true
		}
		k := strings.Index(sa[i+1:], " on ")
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return sameRef(sa, sb)
}

// sameRef tells whether two references name the same plugin: equal once
// cleaned, or one relative (to wherever its run started) and the other
// ending with it past its leading "..": "plugin.toml" and
// "/home/u/demo/plugin.toml".
func sameRef(a, b string) bool {
	if strings.HasPrefix(a, "builtin:") || strings.HasPrefix(b, "builtin:") {
		return a == b
	}
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b {
		return true
	}
	if filepath.IsAbs(a) == filepath.IsAbs(b) {
		return false
	}
	if filepath.IsAbs(a) {
		a, b = b, a
	}
	for strings.HasPrefix(a, ".."+string(filepath.Separator)) {
		a = a[3:]
	}
	return a != "" && strings.HasSuffix(b, string(filepath.Separator)+a)
}

// inputsUnchanged checks every recorded input against its file now.
func inputsUnchanged(ins []run.Input) error {
	if changed := run.ChangedInputs(ins); len(changed) > 0 {
		return fmt.Errorf("--verify: cannot verify: inputs changed since the run:\n  %s", strings.Join(changed, "\n  "))
	}
	return nil
}

func sameInputs(a, b []run.Input) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Role != b[i].Role || a[i].SHA256 != b[i].SHA256 {
			return false
		}
	}
	return true
}

// maxCompared bounds the sample files --verify compares: it only refuses
// what is not a file of samples (a sparse file of a terabyte).
const maxCompared = 1 << 40

// firstDifference returns the first line (1-based) at which the files
// differ, 0 when they are identical; a file that ends first differs at the
// line after its last. Both must be regular files (safefile.Open); they
// are compared in blocks, so that a line of any length costs no memory.
func firstDifference(a, b string) (int, error) {
	fa, err := safefile.Open(a, maxCompared)
	if err != nil {
		return 0, err
	}
	defer fa.Close()
	fb, err := safefile.Open(b, maxCompared)
	if err != nil {
		return 0, err
	}
	defer fb.Close()
	ra, rb := safefile.Limit(fa, a, maxCompared), safefile.Limit(fb, b, maxCompared)
	ba, bb := make([]byte, 1<<16), make([]byte, 1<<16)
	line := 1
	for {
		na, errA := io.ReadFull(ra, ba)
		nb, errB := io.ReadFull(rb, bb)
		n := min(na, nb)
		if !bytes.Equal(ba[:n], bb[:n]) {
			i := 0
			for ba[i] == bb[i] {
				i++
			}
			return line + bytes.Count(ba[:i], []byte{'\n'}), nil
		}
		line += bytes.Count(ba[:n], []byte{'\n'})
		if na != nb {
			return line, nil
		}
		endA := errA == io.EOF || errA == io.ErrUnexpectedEOF
		endB := errB == io.EOF || errB == io.ErrUnexpectedEOF
		switch {
		case errA != nil && !endA:
			return 0, errA
		case errB != nil && !endB:
			return 0, errB
		case endA && endB:
			return 0, nil
		case endA || endB: // one ended on a block's end, the other goes on
			return line, nil
		}
	}
}
