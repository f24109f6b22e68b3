package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A new run with --no-report into a directory that holds a previous run's
// report.html removes it, as it removes analysis.json (known audit 8m:
// the seed-1 run's report stayed beside the seed-5 run's summary).
func TestNoReportRemovesStaleReport(t *testing.T) {
	dir := t.TempDir()
	p := writePriorDrawStudy(t, dir, "stale", 200, "")
	out := filepath.Join(dir, "out")
	if code, o, e := kinfer(t, "run", p, "-o", out); code != 0 {
		t.Fatalf("run: %s %s", o, e)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Fatalf("the first run wrote no report: %v", err)
	}
	if code, o, e := kinfer(t, "analyze", out); code != 0 {
		t.Fatalf("analyze: %s %s", o, e)
	}
	if code, o, e := kinfer(t, "run", p, "-o", out, "--seed", "5", "--no-report"); code != 0 {
		t.Fatalf("second run: %s %s", o, e)
	}
	for _, name := range []string{"report.html", "analysis.json"} {
		if _, err := os.Lstat(filepath.Join(out, name)); err == nil {
			t.Errorf("the previous run's %s is still in %s", name, out)
		}
	}
}
