package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/run"
)

// kinfer report, kinfer run --verify and kinfer analyze take the run
// directory's lock, as a run does: while a run holds it (here the test
// holds it, as a run would) each fails at once with the lock's message
// naming the pid — on a folder a first run is writing, which has no
// summary.json yet, and on a folder with a previous run's files, whose
// report would otherwise be written as "complete" beside the new run's
// results. Once the lock is free the report is written.
func TestReadersTakeTheRunLock(t *testing.T) {
	dir := t.TempDir()
	p := writePriorDrawStudy(t, dir, "locked", 200, "")
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := kinfer(t, "run", p, "-o", out, "--workers", "1", "--no-report"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	fresh := filepath.Join(dir, "fresh")
	pid := "locked by another kinfer process (pid " + strconv.Itoa(os.Getpid()) + ")"
	for _, d := range []string{fresh, out} {
		lock, err := run.LockDir(d) // a run writing into d
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"report", d}, {"report", d, "-o", filepath.Join(dir, "elsewhere.html")}, {"run", "--verify", d}, {"analyze", d}} {
			code, stdout, stderr := kinfer(t, args...)
			if code != 1 || !strings.Contains(stderr, pid) {
				t.Errorf("kinfer %s while a run holds the lock: exit %d, want 1 and %q\n%s%s", strings.Join(args, " "), code, pid, stdout, stderr)
			}
		}
		for _, f := range []string{filepath.Join(d, "report.html"), filepath.Join(dir, "elsewhere.html"), filepath.Join(d, "analysis.json")} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s was written while the run held the lock", f)
			}
		}
		lock.Unlock()
	}
	if code, _, stderr := kinfer(t, "report", fresh); code != 1 || !strings.Contains(stderr, "summary.json") || strings.Contains(stderr, "locked") {
		t.Errorf("report of a folder without a run and no lock held: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := kinfer(t, "report", out); code != 0 {
		t.Errorf("report once the lock is free: exit %d\n%s%s", code, stdout, stderr)
	}
}
