package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kinfer/kinfer/host/run"
)

// verify re-runs the complete run in dir from its provenance (study file,
// seed; workers do not change results; the memory budget is the run's
// unless --memory-budget is given) into a temporary directory and
// compares samples.csv byte for byte. It refuses when an input changed
// since (its sha256 differs). Identical: nil; different: an error saying
// at which line.
func verify(ctx context.Context, dir string, f runFlags, budget int64, stdout, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		return fmt.Errorf("--verify: %w (is %s a run's output directory?)", err, dir)
	}
	lock, err := run.LockDir(dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	var sum run.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("--verify: %s: %w", filepath.Join(dir, "summary.json"), err)
	}
	p := sum.Provenance
	if p == nil || len(p.Inputs) == 0 {
		return fmt.Errorf("--verify: %s has no provenance record (written by an older kinfer?)", filepath.Join(dir, "summary.json"))
	}
	if !sum.Complete {
		return fmt.Errorf("--verify: the run in %s did not complete (%s); only a complete run can be verified", dir, sum.Error)
	}
	if err := inputsUnchanged(p.Inputs); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "samples.csv")); err != nil {
		return fmt.Errorf("--verify: %w", err)
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

	tmp, err := os.MkdirTemp("", "kinfer-verify-")
	if err != nil {
		return err
	}
	tlock, err := run.LockDir(tmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "re-running %s with seed %d into %s\n", sum.StudyFile, p.Seed, tmp)
	f.verify = ""
	if budget == 0 {
		budget = sum.MemoryBudget // what the run was allowed (it does not change results)
	}
	f.noReport = true // only samples.csv is compared
	_, _, err = execute(ctx, sum.StudyFile, tmp, tlock, int64(p.Seed), budget, f, stderr)
	tlock.Unlock()
	if err != nil {
		return fmt.Errorf("--verify: the re-run failed (its outputs are in %s): %w", tmp, err)
	}
	// The re-run read its inputs again: they must still be the recorded
	// ones (a study that names other files than before has another digest,
	// but a file could change while the re-run loads it).
	var again run.Summary
	if b, err := os.ReadFile(filepath.Join(tmp, "summary.json")); err == nil {
		json.Unmarshal(b, &again)
	}
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
	if a, err := os.ReadFile(filepath.Join(dir, run.ParquetFile)); err == nil {
		if b, err := os.ReadFile(filepath.Join(tmp, run.ParquetFile)); err != nil || !bytes.Equal(a, b) {
			return fmt.Errorf("--verify: samples.csv is identical but %s differs from the re-run's %s (kept)",
				filepath.Join(dir, run.ParquetFile), filepath.Join(tmp, run.ParquetFile))
		}
	}
	os.RemoveAll(tmp)
	fmt.Fprintf(stdout, "identical: the re-run reproduces %s byte for byte (%d samples)\n", filepath.Join(dir, "samples.csv"), sum.Samples)
	return nil
}

// inputsUnchanged checks every recorded input against its file now.
func inputsUnchanged(ins []run.Input) error {
	var changed []string
	for _, in := range ins {
		h, err := run.FileSHA256(in.Path)
		switch {
		case err != nil:
			changed = append(changed, fmt.Sprintf("%s %s: %v", in.Role, in.Path, err))
		case h != in.SHA256:
			changed = append(changed, fmt.Sprintf("%s %s (sha256 %s then, %s now)", in.Role, in.Path, short(in.SHA256), short(h)))
		}
	}
	if len(changed) > 0 {
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

func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// firstDifference returns the first line (1-based) at which the files
// differ, 0 when they are identical; a file that ends first differs at the
// line after its last.
func firstDifference(a, b string) (int, error) {
	fa, err := os.Open(a)
	if err != nil {
		return 0, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return 0, err
	}
	defer fb.Close()
	ra, rb := bufio.NewReader(fa), bufio.NewReader(fb)
	for line := 1; ; line++ {
		la, errA := ra.ReadBytes('\n')
		lb, errB := rb.ReadBytes('\n')
		if !bytes.Equal(la, lb) {
			return line, nil
		}
		if errA != nil || errB != nil {
			if errors.Is(errA, io.EOF) && errors.Is(errB, io.EOF) {
				return 0, nil
			}
			if !errors.Is(errA, io.EOF) {
				return 0, errA
			}
			return 0, errB
		}
	}
}
