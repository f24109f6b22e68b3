package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kinfer report -o FILE refuses a FILE that is one of the run folder's
// own files (by name there, existing or not, or the same file under
// another name: a hard link) or one of the inputs its provenance records
// (the study, a data file), naming it, and leaves the file as it was; any
// other file is written.
func TestReportRefusesRunFilesAndInputs(t *testing.T) {
	dir := t.TempDir()
	study := `name = "line"
seed = 1
[model]
use = "line"
[[data]]
name = "d"
file = "d.csv"
[[likelihood]]
use = "gaussian"
sigma = 0.5
[prior]
a = { uniform = [-5.0, 5.0] }
b = { uniform = [0.0, 5.0] }
[method]
use = "levmar"
`
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644)
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n0,1.1\n1,2.9\n2,5.2\n3,6.8\n"), 0o644)
	out := filepath.Join(dir, "out")
	if code, stdout, stderr := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", out, "--workers", "1", "--no-report"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	link := filepath.Join(dir, "samples-link.csv")
	if err := os.Link(filepath.Join(out, "samples.csv"), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, want string }{
		{filepath.Join(out, "samples.csv"), "one of the run's files"},
		{filepath.Join(out, "summary.json"), "one of the run's files"},
		{filepath.Join(out, "samples.parquet"), "one of the run's files"},
		{filepath.Join(out, "run.json"), "one of the run's files"},
		{filepath.Join(out, "checkpoint.json"), "one of the run's files"}, // not there: refused by name
		{filepath.Join(out, "checkpoint.0a1b.state"), "one of the run's files"},
		{filepath.Join(out, ".", "..", "out", "samples.csv"), "one of the run's files"},
		{link, "one of the run's files"},
		{filepath.Join(dir, "study.toml"), "the run's input study"},
		{filepath.Join(dir, "d.csv"), "the run's input data d"},
	} {
		before, berr := os.ReadFile(c.target)
		code, stdout, stderr := kinfer(t, "report", out, "-o", c.target)
		if code != 1 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "the report would replace it") {
			t.Errorf("report -o %s: exit %d, want 1 and %q\n%s%s", c.target, code, c.want, stdout, stderr)
		}
		after, aerr := os.ReadFile(c.target)
		if (berr == nil) != (aerr == nil) || !bytes.Equal(before, after) {
			t.Errorf("report -o %s changed it", c.target)
		}
	}
	for _, target := range []string{filepath.Join(out, "report.html"), filepath.Join(dir, "other.html"), filepath.Join(out, "samples.html")} {
		if code, stdout, stderr := kinfer(t, "report", out, "-o", target); code != 0 {
			t.Errorf("report -o %s: exit %d\n%s%s", target, code, stdout, stderr)
		}
	}
}

// --figures is checked like -o (audit 11): a study named corner.svg, or
// the report just written, is not replaced by a figure; nothing of the
// figures is written then.
func TestReportFiguresKeepInputs(t *testing.T) {
	dir := t.TempDir()
	study, out := quickstartRun(t, dir, "corner.svg", 50)
	if code, _, e := kinfer(t, "report", out, "--figures", dir); code == 0 || !strings.Contains(e, "is the run's input study") {
		t.Errorf("--figures over the study: exit %d, %s", code, e)
	}
	if b := mustRead(t, filepath.Join(dir, "corner.svg")); string(b) != study {
		t.Error("the study was replaced")
	}
	figs := filepath.Join(dir, "figs")
	os.MkdirAll(figs, 0o755)
	if code, _, e := kinfer(t, "report", out, "-o", filepath.Join(figs, "trace-k.svg"), "--figures", figs); code == 0 || !strings.Contains(e, "written by this command") {
		t.Errorf("--figures over the report: exit %d, %s", code, e)
	}
}
