package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A run folder edited or damaged after its run (audit 9): a non-finite
// sample, a samples.csv cut inside its last row, a summary.json naming
// another copy of the study, one without its provenance record. kinfer
// analyze refuses each naming the file (and line); kinfer report says so
// in a note and draws no figure from such samples, and no model fit from
// such a study.
func TestDamagedRunFolders(t *testing.T) {
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(src, 0o755))
	study := strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), "burn_in = 2000", "burn_in = 200", 1)
	study = strings.Replace(study, "samples = 5000", "samples = 100", 1)
	must(os.WriteFile(filepath.Join(src, "study.toml"), []byte(study), 0o644))
	must(os.WriteFile(filepath.Join(src, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644))
	run := filepath.Join(tmp, "run")
	if code, _, e := kinfer(t, "run", filepath.Join(src, "study.toml"), "-o", run); code != 0 {
		t.Fatal(e)
	}
	samples := string(mustRead(t, filepath.Join(run, "samples.csv")))
	summary := string(mustRead(t, filepath.Join(run, "summary.json")))
	lines := strings.SplitAfter(samples, "\n")
	// Another copy of the study, its data doubled.
	other := filepath.Join(tmp, "other")
	must(os.MkdirAll(other, 0o755))
	must(os.WriteFile(filepath.Join(other, "study.toml"), []byte(study), 0o644))
	must(os.WriteFile(filepath.Join(other, "force_length.csv"), []byte("length_mm,force_N\n30,1\n31,2\n"), 0o644))
	absSrc, _ := filepath.Abs(filepath.Join(src, "study.toml"))
	absOther, _ := filepath.Abs(filepath.Join(other, "study.toml"))
	i := strings.Index(summary, `"provenance"`)
	noProv := summary[:i] + `"no_provenance"` + summary[i+len(`"provenance"`):]
	// The record without its data entry (audit 10).
	var rec map[string]any
	must(json.Unmarshal([]byte(summary), &rec))
	prov := rec["provenance"].(map[string]any)
	var kept []any
	for _, in := range prov["inputs"].([]any) {
		if !strings.HasPrefix(in.(map[string]any)["role"].(string), "data") {
			kept = append(kept, in)
		}
	}
	prov["inputs"] = kept
	noData, err := json.Marshal(rec)
	must(err)
	// A cell analyze refuses as text: report must not draw it either.
	under := lines[0] + "5_248" + lines[1][strings.Index(lines[1], ","):] + strings.Join(lines[2:], "")
	for _, c := range []struct {
		name, samples, summary string
		analyze, report        string
	}{
		{"nan", lines[0] + "NaN" + lines[1][strings.Index(lines[1], ","):] + strings.Join(lines[2:], ""), summary,
			`samples.csv:2: column "k": NaN is not a sample of this run`, `samples.csv:2: column k: NaN is not a sample value`},
		{"outside", lines[0] + "1e308" + lines[1][strings.Index(lines[1], ","):] + strings.Join(lines[2:], ""), summary,
			`samples.csv:2: column "k": 1e+308 is not a sample of this run`, ""},
		{"cut", samples[:len(samples)-5], summary,
			"samples.csv does not end with a line break: it was cut short", "samples.csv does not end with a line break"},
		{"short", strings.Join(lines[:len(lines)-3], ""), summary,
			"samples.csv has", "summary.json records"},
		{"study elsewhere", samples, strings.Replace(summary, `"study_file": "`+absSrc+`"`, `"study_file": "`+absOther+`"`, 1),
			"summary.json's study_file " + absOther + " is not the study its provenance records (" + absSrc + ")", "is not the study its provenance records"},
		{"no provenance", samples, noProv, "summary.json has no provenance record", "summary.json has no provenance record"},
		// Both paths edited to the copy: its data are not the record's.
		{"both paths elsewhere", samples, strings.ReplaceAll(summary, absSrc, absOther),
			"the study loads inputs the run did not record:\n  data pull-test " + filepath.Join(other, "force_length.csv"), "the study loads inputs the run did not record"},
		{"data entry removed", samples, string(noData), "the study loads inputs the run did not record", "the study loads inputs the run did not record"},
		{"negative count", samples, strings.Replace(summary, `"samples": `+sampleCount(summary), `"samples": -600`, 1), "summary.json records -600 samples", "summary.json records -600 samples"},
		{"null count", samples, strings.Replace(summary, `"samples": `+sampleCount(summary), `"samples": null`, 1), "summary.json records no sample count", ""},
		{"underscore", under, summary, `samples.csv:2: column "k"`, "samples.csv:2: column k: an underscore in a number"},
		// The parameter columns' names swapped (audit 12): eps_r's values
		// read as k's, outside k's bounds.
		{"swapped header", strings.Replace(samples, "k,eps_r", "eps_r,k", 1), summary, `column "k"`, "is not a sample of this run (outside the parameter's bounds"},
		// A path with terminal escapes in the record: shown escaped.
		{"escape", samples, strings.ReplaceAll(summary, absSrc, absSrc+`\u001b]0;pwned\u0007`), `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
	} {
		dir := filepath.Join(tmp, strings.ReplaceAll(c.name, " ", "-"))
		must(os.MkdirAll(dir, 0o755))
		must(os.WriteFile(filepath.Join(dir, "samples.csv"), []byte(c.samples), 0o644))
		must(os.WriteFile(filepath.Join(dir, "summary.json"), []byte(c.summary), 0o644))
		if code, _, e := kinfer(t, "analyze", dir, "--predictive", "5"); code == 0 || !strings.Contains(e, c.analyze) || strings.ContainsRune(e, 0x1b) {
			t.Errorf("%s: analyze exit %d, want %q in\n%s", c.name, code, c.analyze, e)
		}
		if c.report == "" {
			continue
		}
		if code, out, e := kinfer(t, "report", dir); code != 0 || !strings.Contains(out, c.report) || strings.ContainsRune(out+e, 0x1b) {
			t.Errorf("%s: report exit %d, want a note %q in\n%s\n%s", c.name, code, c.report, out, e)
		}
	}
}

// sampleCount is summary.json's "samples" value as written.
func sampleCount(summary string) string {
	return regexp.MustCompile(`"samples": (\d+)`).FindStringSubmatch(summary)[1]
}

// Commands do not write over their inputs (audit 10): analyze --truth
// naming the analysis.json it writes, train -o naming the design's
// recorded data file.
func TestAnalyzeTrainKeepTheirInputs(t *testing.T) {
	dir := t.TempDir()
	_, out := quickstartRun(t, dir, "study.toml", 100)
	data := mustRead(t, "../../examples/quickstart/force_length.csv")
	truth := []byte(`{"k": 5200, "eps_r": 0.039}`)
	os.WriteFile(filepath.Join(out, "analysis.json"), truth, 0o644)
	if code, _, e := kinfer(t, "analyze", out, "--truth", filepath.Join(out, "analysis.json")); code == 0 || !strings.Contains(e, "is the file the analysis is written to") {
		t.Errorf("analyze --truth over its output: exit %d, %s", code, e)
	}
	if b := mustRead(t, filepath.Join(out, "analysis.json")); string(b) != string(truth) {
		t.Error("the truth file was replaced")
	}
	design := filepath.Join(dir, "d")
	if code, _, e := kinfer(t, "design", filepath.Join(dir, "study.toml"), "-o", design, "--n", "16"); code != 0 {
		t.Fatal(e)
	}
	if code, _, e := kinfer(t, "train", design, "-o", filepath.Join(dir, "force_length.csv"), "--hidden", "4", "--members", "1", "--epochs", "1"); code == 0 || !strings.Contains(e, "would write over") {
		t.Errorf("train -o over the design's data: exit %d, %s", code, e)
	}
	if b := mustRead(t, filepath.Join(dir, "force_length.csv")); string(b) != string(data) {
		t.Error("the data file was replaced")
	}
}

// analyze holds samples.csv within a third of --memory-budget (audit 10:
// 64 MiB was accepted for 2.4 million rows and passed 5.8 times): a table
// over it is refused naming the flag.
func TestAnalyzeSamplesWithinBudget(t *testing.T) {
	dir := t.TempDir()
	_, out := quickstartRun(t, dir, "study.toml", 30000)
	// 120 000 rows of 4 columns: about 6.7 MB of table, over a third of 16 MiB.
	if code, _, e := kinfer(t, "analyze", out, "--memory-budget", "16MiB", "--predictive", "5"); code == 0 || !strings.Contains(e, "--memory-budget") {
		t.Errorf("exit %d, %s", code, e)
	}
	if code, _, e := kinfer(t, "analyze", out, "--memory-budget", "64MiB", "--predictive", "5"); code != 0 {
		t.Errorf("within 64 MiB: exit %d, %s", code, e)
	}
}

// train refuses design runs whose samples would not fit in the budget,
// before reading them (audit 10: the data alone passed a 256 MiB budget
// 8.6 times).
func TestTrainDesignsWithinBudget(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "study.toml"), mustRead(t, "../../examples/quickstart/study.toml"), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	design := filepath.Join(dir, "d")
	if code, _, e := kinfer(t, "design", filepath.Join(dir, "study.toml"), "-o", design, "--n", "16"); code != 0 {
		t.Fatal(e)
	}
	code, _, e := kinfer(t, "train", design, "-o", filepath.Join(dir, "s.json"), "--hidden", "4", "--members", "1", "--epochs", "1", "--memory-budget", "4KiB")
	if code == 0 || !strings.Contains(e, "design.csv files") || !strings.Contains(e, "more than the memory budget of 4 KiB") {
		t.Errorf("exit %d, %s", code, e)
	}
}

// A path from a run's record with terminal escapes: the lines that quote
// it (--verify's "re-running") show them escaped (audits 11, 13: only
// errors were); a folder named so is refused by run -o (below).
func TestSuccessLinesEscapePaths(t *testing.T) {
	dir := t.TempDir()
	_, out := quickstartRun(t, dir, "study.toml", 50)
	abs, _ := filepath.Abs(filepath.Join(dir, "study.toml"))
	p := filepath.Join(out, "summary.json")
	os.WriteFile(p, []byte(strings.ReplaceAll(string(mustRead(t, p)), abs, abs+`\u001b]0;pwned\u0007\n`)), 0o644)
	_, o, e := kinfer(t, "run", "--verify", out)
	if strings.ContainsRune(o+e, 0x1b) || !strings.Contains(o+e, `\x1b]0;pwned\x07\n`) {
		t.Errorf("verify printed the record's path raw:\n%s\n%s", o, e)
	}
}

// A run folder whose name holds a line feed would forge the run's output
// lines: refused (audit 13); a line separator too.
func TestOutputFolderWithLineFeedRefused(t *testing.T) {
	for _, name := range []string{"o\nidentical: forged", "o\u2028x"} {
		code, _, e := kinfer(t, "run", "../../examples/quickstart/study.toml", "-o", filepath.Join(t.TempDir(), name))
		if code != 2 || !strings.Contains(e, "the folder's name has a control character, a line or paragraph separator") {
			t.Errorf("%q: exit %d, %s", name, code, e)
		}
	}
}

// quickstartRun writes the quickstart study, with samples kept per chain,
// as dir/name and its data beside it, runs it into dir/out without a
// report, and returns the study's text and the run folder.
func quickstartRun(t *testing.T, dir, name string, samples int) (study, out string) {
	t.Helper()
	study = strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), "samples = 5000", fmt.Sprintf("samples = %d", samples), 1)
	os.WriteFile(filepath.Join(dir, name), []byte(study), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644)
	out = filepath.Join(dir, "out")
	if code, _, e := kinfer(t, "run", filepath.Join(dir, name), "-o", out, "--no-report"); code != 0 {
		t.Fatal(e)
	}
	return study, out
}
