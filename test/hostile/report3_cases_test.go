package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func report3Cases() []hcase {
	w := func(s ...string) []string { return s }
	span := rundirCase("report-samples-span-beyond-float64", false, []string{"report", "out"}, 0,
		w("report:", "histogram of k", "wider than a float64 can hold"), spanSamples)
	span.check = reportWritten
	return []hcase{span}
}
