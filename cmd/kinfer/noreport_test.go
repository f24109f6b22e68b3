package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinfer/kinfer/host/run"
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

// A run started with --no-report and interrupted is resumed without a
// report too (run.json records the choice).
func TestResumeKeepsNoReport(t *testing.T) {
	dir := t.TempDir()
	study := strings.Replace(strings.Replace(slowLineStudy, "cost_ms = 600000", "cost_ms = 100", 1), "chains = 2\n", "chains = 2\nburn_in = 5\nsamples = 10\n", 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n1,2\n"), 0o644)
	out := filepath.Join(dir, "out")
	p := startKinfer(t, nil, "run", filepath.Join(dir, "study.toml"), "-o", out, "--no-report", "--verbose", "--workers", "1")
	p.waitLine(t, "kinfer: running", 20*time.Second)
	time.Sleep(500 * time.Millisecond)
	if _, code := p.signalAndWait(t, syscall.SIGINT); code <= 0 {
		t.Fatalf("interrupted run: exit %d\n%s", code, p.stderr.all.String())
	}
	st, err := run.ReadRunState(out)
	if err != nil || st == nil || !st.NoReport {
		t.Fatalf("run.json %+v (%v): want no_report", st, err)
	}
	if code, o, e := kinfer(t, "run", "--resume", out); code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, o, e)
	}
	if s := readSummary(t, out); !s.Complete {
		t.Fatal("the resumed run is not complete")
	}
	if _, err := os.Lstat(filepath.Join(out, "report.html")); err == nil {
		t.Error("the resume of a --no-report run wrote report.html")
	}
}
