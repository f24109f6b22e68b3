package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The outputs of analyze, report, train, score and run, against inputs
// that changed under them or targets that are not files.

// otherData replaces the run's pull test by other data (a colleague's
// folder, a re-generated file): the run's recorded sha256 no longer
// matches.
func otherData(t *testing.T, dir string) {
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte("length_mm,force_N\n29,300\n30,200\n31,100\n32,10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// noFile checks that the case did not write name (in the case's folder).
func noFile(name string) func(t *testing.T, dir string, r result) {
	return func(t *testing.T, dir string, _ result) {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

func outputCases() []hcase {
	w := func(s ...string) []string { return s }
	cs := []hcase{
		// The data file replaced after the run: analyze compared the run's
		// posterior with the new data and reported it as the run's fit
		// (MAE 0.07 → 61 on the audit's line study); it refuses, naming
		// the file.
		func() hcase {
			c := rundirCase("output-analyze-data-replaced", false, []string{"analyze", "out"}, 1, w("inputs changed since the run", "d.csv", "sha256"), otherData)
			c.check = noFile("out/analysis.json")
			return c
		}(),
		// The unchanged run analyses, and analysis.json records what it
		// compared against.
		func() hcase {
			c := rundirCase("output-analyze-data-kept", false, []string{"analyze", "out"}, 0, w("written:"))
			c.check = func(t *testing.T, dir string, _ result) {
				b, _ := os.ReadFile(filepath.Join(dir, "out", "analysis.json"))
				if !strings.Contains(string(b), `"inputs"`) || !strings.Contains(string(b), "d.csv") {
					t.Errorf("analysis.json does not record its inputs:\n%s", clip(string(b)))
				}
			}
			return c
		}(),
		// The same through report: the fit figures are left out, with a
		// note in the report (the unchanged run draws them).
		func() hcase {
			c := rundirCase("output-report-data-replaced", false, []string{"report", "out"}, 0, w("inputs changed since the run", "d.csv"), otherData)
			c.check = func(t *testing.T, dir string, _ result) {
				b, _ := os.ReadFile(filepath.Join(dir, "out", "report.html"))
				html := string(b)
				if strings.Contains(html, ">Model fit</h2>") {
					t.Errorf("report.html draws the model fit against the replaced data")
				}
				if !strings.Contains(html, "inputs changed since the run") {
					t.Errorf("report.html does not say that the inputs changed (%d bytes)", len(b))
				}
			}
			return c
		}(),
		func() hcase {
			c := rundirCase("output-report-data-kept", false, []string{"report", "out"}, 0, w("report:"))
			c.check = func(t *testing.T, dir string, _ result) {
				b, _ := os.ReadFile(filepath.Join(dir, "out", "report.html"))
				if !strings.Contains(string(b), ">Model fit</h2>") {
					t.Errorf("report.html of the unchanged run has no model fit (%d bytes)", len(b))
				}
			}
			return c
		}(),
	}
	return cs
}
