package hostile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The report on samples gonum/plot cannot draw, on a folder a run is
// writing, and with -o naming the run's own files or inputs.

// spanSamples puts one sample at 1e308 and one at −1e308 into the first
// column (k) of out/samples.csv: the column's span hi − lo overflows
// float64.
func spanSamples(t *testing.T, dir string) {
	p := filepath.Join(dir, "out", "samples.csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 8 {
		t.Fatalf("%s has %d lines", p, len(lines))
	}
	for i, v := range map[int]string{5: "1e308", 6: "-1e308"} {
		_, rest, _ := strings.Cut(lines[i], ",")
		lines[i] = v + "," + rest
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reportWritten checks that report.html was written and no temporary file
// was left behind.
func reportWritten(t *testing.T, dir string, _ result) {
	if st, err := os.Stat(filepath.Join(dir, "out", "report.html")); err != nil || st.Size() == 0 {
		t.Errorf("report.html not written: %v", err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "out", ".report.html.tmp-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// slowLine is a run whose every evaluation sleeps 10 minutes: it holds
// its folder's lock until the case kills it.
const slowLine = `name = "slow"
[model]
use = "line"
cost_ms = 600000
wait = "sleep"
[[data]]
name = "d"
file = "slow.csv"
[[likelihood]]
use = "gaussian"
sigma = 1.0
[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }
[method]
use = "metropolis"
chains = 2
`

// runningInto starts a new run (slowLine, --no-report) into the case's
// folder out, a previous run's, and waits until it holds the lock (its
// pid in out/kinfer.lock); the run is killed when the case ends.
func runningInto(t *testing.T, dir string) {
	os.WriteFile(filepath.Join(dir, "slow.toml"), []byte(slowLine), 0o644)
	os.WriteFile(filepath.Join(dir, "slow.csv"), []byte("x,y\n0,1\n1,2\n"), 0o644)
	cmd := exec.Command(kinferBin, "run", "slow.toml", "-o", "out", "--workers", "1", "--no-report")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheDir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	want := strconv.Itoa(cmd.Process.Pid)
	for start := time.Now(); time.Since(start) < workDeadline; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(dir, "out", "kinfer.lock")); strings.TrimSpace(string(b)) == want {
			return
		}
	}
	t.Fatalf("the run (pid %s) did not take the lock of out", want)
}

func report3Cases() []hcase {
	w := func(s ...string) []string { return s }
	span := rundirCase("report-samples-span-beyond-float64", false, []string{"report", "out"}, 0,
		// With the run's study, values outside its bounds are no samples of
		// the run (audit 12); host/report's TestSamplesBeyondFloat64Span
		// keeps the histogram's own guard covered.
		w("report:", "1e+308 is not a sample of this run", "no sample figures"), spanSamples)
	span.check = reportWritten
	// A report (or --verify) during a new run into a used folder read the
	// previous run's files as "complete" and left its report.html beside
	// the new run's results.
	locked := "is locked by another kinfer process (pid"
	during := rundirCase("report-during-a-run", false, []string{"report", "out"}, 1, w(locked), runningInto)
	during.check = func(t *testing.T, dir string, r result) {
		// The new run removes the previous run's report.html; the report
		// refused must not have written one.
		if st, err := os.Stat(filepath.Join(dir, "out", "report.html")); err == nil && st.ModTime().After(time.Now().Add(-r.elapsed-time.Second)) {
			t.Errorf("report.html was written during the run (%v)", st.ModTime())
		}
	}
	verify := rundirCase("report-verify-during-a-run", false, []string{"run", "--verify", "out"}, 1, w(locked), runningInto)
	cs := []hcase{span, during, verify}
	// -o naming the run's own files or its inputs: refused, the file kept.
	for _, c := range []struct{ name, target, want string }{
		{"report-o-samples-csv", "out/samples.csv", "one of the run's files"},
		{"report-o-summary-json", "out/summary.json", "one of the run's files"},
		{"report-o-study", "study.toml", "the run's input study"},
		{"report-o-data", "d.csv", "the run's input data"},
	} {
		target := c.target
		k := rundirCase(c.name, false, []string{"report", "out", "-o", target}, 1, w(target, c.want, "would replace it"))
		k.check = func(t *testing.T, dir string, _ result) {
			b, err := os.ReadFile(filepath.Join(dir, target))
			if err != nil || strings.Contains(string(b), "<!DOCTYPE html>") {
				t.Errorf("%s was replaced by the report (%v)", target, err)
			}
		}
		cs = append(cs, k)
	}
	return cs
}
