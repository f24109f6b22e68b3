package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinfer/kinfer/host/run"
)

// reportSections returns the section titles of a report.html and its
// number of figures.
func reportSections(t *testing.T, path string) ([]string, int) {
	t.Helper()
	b := mustRead(t, path)
	var secs []string
	for _, m := range regexp.MustCompile(`<h2[^>]*>([^<]*)</h2>`).FindAllSubmatch(b, -1) {
		secs = append(secs, string(m[1]))
	}
	return secs, bytes.Count(b, []byte(`<img class="kinfer-figure"`))
}

func hasAll(have []string, want ...string) string {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return w
		}
	}
	return ""
}

// kinfer run writes report.html with the figures that apply to the
// run's method: TMCMC (the README's quickstart-tmcmc, unchanged): the
// posterior marginals of both parameters, the corner plot, the stage
// convergence and the model fit; Metropolis: traces per parameter too;
// Levenberg–Marquardt: the loss curve and the fit, no posterior. Every
// figure is a data: URI (no network). --no-report writes none.
func TestRunWritesReport(t *testing.T) {
	cases := []struct {
		study   string
		args    []string
		want    []string
		notWant []string
		figures int
	}{
		{"../../examples/quickstart-tmcmc/study.toml", nil,
			[]string{"Posterior marginals", "Corner plot", "TMCMC stage convergence", "Model fit", "Method diagnostics", "Provenance", "Study"},
			[]string{"MCMC traces", "Optimiser loss"}, 2 + 1 + 1 + 1},
		{"../../examples/quickstart/study.toml", nil,
			[]string{"Posterior marginals", "Corner plot", "MCMC traces", "Model fit"},
			[]string{"TMCMC stage convergence", "Optimiser loss"}, 2 + 1 + 2 + 1},
		{"../../examples/nist-misra1a/study.toml", nil,
			[]string{"Optimiser loss", "Model fit"},
			[]string{"Posterior marginals", "Corner plot", "MCMC traces"}, 1 + 1},
	}
	for _, c := range cases {
		t.Run(filepath.Base(filepath.Dir(c.study)), func(t *testing.T) {
			out := t.TempDir()
			code, o, e := kinfer(t, append([]string{"run", c.study, "-o", out}, c.args...)...)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s\n%s", code, o, e)
			}
			path := filepath.Join(out, "report.html")
			if !strings.Contains(o, "report: "+path) {
				t.Errorf("run does not name the report:\n%s", o)
			}
			secs, n := reportSections(t, path)
			if w := hasAll(secs, c.want...); w != "" {
				t.Errorf("no section %q in %v", w, secs)
			}
			for _, w := range c.notWant {
				if hasAll(secs, w) == "" {
					t.Errorf("section %q does not apply to this method: %v", w, secs)
				}
			}
			if n != c.figures {
				t.Errorf("%d figures, want %d", n, c.figures)
			}
			html := string(mustRead(t, path))
			for _, bad := range []string{"http://", "https://", "<link", "src=\"/", "src=\"file:"} {
				if i := strings.Index(html, bad); i >= 0 && !strings.Contains(html[max(0, i-40):i], "xmlns") {
					// (SVG namespaces are names, not fetched; they live inside the base64 data.)
					t.Errorf("report refers outside itself: %q", html[max(0, i-40):min(len(html), i+60)])
				}
			}
		})
	}
	out := t.TempDir()
	if code, o, e := kinfer(t, "run", "../../examples/quickstart-tmcmc/study.toml", "-o", out, "--no-report"); code != 0 {
		t.Fatalf("run --no-report: %s %s", o, e)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); !os.IsNotExist(err) {
		t.Errorf("--no-report wrote report.html (%v)", err)
	}
}

// kinfer report writes the report where -o says and every figure as a
// well-formed SVG and a decodable PNG with --figures; a directory that
// is not a run's is refused.
func TestReportCommand(t *testing.T) {
	out := t.TempDir()
	if code, o, e := kinfer(t, "run", "../../examples/quickstart-tmcmc/study.toml", "-o", out, "--no-report"); code != 0 {
		t.Fatalf("run: %s %s", o, e)
	}
	file := filepath.Join(t.TempDir(), "r.html")
	figs := filepath.Join(t.TempDir(), "figs")
	code, o, e := kinfer(t, "report", out, "-o", file, "--figures", figs)
	if code != 0 {
		t.Fatalf("report: exit %d %s %s", code, o, e)
	}
	if _, n := reportSections(t, file); n != 5 {
		t.Errorf("%d figures, want 5", n)
	}
	ents, _ := os.ReadDir(figs)
	if len(ents) != 10 {
		t.Errorf("%d figure files, want 5 SVG + 5 PNG", len(ents))
	}
	for _, en := range ents {
		p := filepath.Join(figs, en.Name())
		switch filepath.Ext(p) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(mustRead(t, p)))
			if err != nil || img.Bounds().Dx() < 100 || img.Bounds().Dy() < 100 {
				t.Errorf("%s: %v", p, err)
			}
		case ".svg":
			d := xml.NewDecoder(bytes.NewReader(mustRead(t, p)))
			for {
				_, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
			}
		}
	}
	if code, _, e := kinfer(t, "report", t.TempDir()); code != 1 || !strings.Contains(e, "run's output directory") {
		t.Errorf("report on an empty directory: exit %d %s", code, e)
	}
}

// chromium finds Debian's chromium; CI must have it (.ci/run installs
// it), a developer's machine may not.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed, and CI must run the browser test (.ci/run installs Debian's chromium)")
	}
	t.Skip("chromium not installed (apt-get install chromium): the report is not checked in a browser")
	return ""
}

var checkRE = regexp.MustCompile(`<p id="kinfer-check" data-figures="(\d+)" data-loaded="(\d+)" data-broken="(\d+)" data-errors="(\d+)">([^<]*)</p>`)

// openReport opens path in headless Chromium, keeps a screenshot as shot
// and returns the check's result (figures, loaded, broken, errors, text)
// and the page's console messages.
func openReport(t *testing.T, bin, path, shot string) (nums [4]int, text string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--disable-gpu", "--no-sandbox",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=10000", "--window-size=1280,4200",
		"--screenshot="+shot, "--dump-dom", "file://"+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, ln := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(ln, ":CONSOLE") {
			console = append(console, ln)
		}
	}
	m := checkRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("the page's figure check did not run (no #kinfer-check with its result in the DOM):\n%.2000s", stdout.String())
	}
	for i := range nums {
		nums[i], _ = strconv.Atoi(m[i+1])
	}
	return nums, m[5], console
}

// The report of kinfer run examples/quickstart-tmcmc/study.toml (and of
// the Metropolis quickstart, with traces) opens in headless Chromium with
// every figure decoded and nothing on the console; a screenshot is kept
// in the test's artifact directory (go test -artifacts). A report with
// one figure corrupted is caught: the check is not vacuous.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium (≈ 10 s a page)")
	}
	bin := chromium(t)
	art := t.ArtifactDir()
	for _, c := range []struct{ name, study string }{
		{"quickstart-tmcmc", "../../examples/quickstart-tmcmc/study.toml"},
		{"quickstart-metropolis", "../../examples/quickstart/study.toml"},
	} {
		out := t.TempDir()
		if code, o, e := kinfer(t, "run", c.study, "-o", out); code != 0 {
			t.Fatalf("%s: run: %s %s", c.name, o, e)
		}
		path, _ := filepath.Abs(filepath.Join(out, "report.html"))
		shot := filepath.Join(art, c.name+".png")
		nums, text, console := openReport(t, bin, path, shot)
		_, want := reportSections(t, path)
		if nums[0] != want || nums[1] != want || nums[2] != 0 || nums[3] != 0 || text != fmt.Sprintf("kinfer-figures-ok %d", want) {
			t.Errorf("%s: figures %d, loaded %d, broken %d, errors %d (want %d loaded): %s", c.name, nums[0], nums[1], nums[2], nums[3], want, text)
		}
		if len(console) > 0 {
			t.Errorf("%s: console messages:\n%s", c.name, strings.Join(console, "\n"))
		}
		if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
			t.Errorf("%s: no screenshot (%v)", c.name, err)
		}
		t.Logf("%s: %s; screenshot %s", c.name, text, shot)
		if c.name != "quickstart-tmcmc" {
			continue
		}
		// The negative control: one figure's data replaced by bytes that
		// are no image.
		b := mustRead(t, path)
		i := bytes.Index(b, []byte(`src="data:`)) + len(`src="`)
		if i < len(`src="`) {
			t.Fatal("no figure data in the report")
		}
		bad := append([]byte(nil), b[:i]...)
		bad = append(bad, "data:image/svg+xml;base64,"+base64.StdEncoding.EncodeToString([]byte("<svg nonsense"))...)
		j := bytes.IndexByte(b[i:], '"')
		bad = append(bad, b[i+j:]...)
		badPath := filepath.Join(out, "broken.html")
		os.WriteFile(badPath, bad, 0o644)
		nums, text, console = openReport(t, bin, badPath, filepath.Join(t.TempDir(), "broken.png"))
		if nums[2] != 1 || !strings.HasPrefix(text, "BROKEN FIGURES: ") || len(console) == 0 {
			t.Errorf("a corrupted figure went unnoticed: broken %d, %q, console %q", nums[2], text, console)
		}
	}
}

// Every command named in kinfer's usage answers --help (and -h) with exit
// 0, its synopsis, and each of its flags with a description (or says it
// has none); the list of commands is read from the usage text, so a new
// command is covered when it is documented there.
func TestEveryCommandHelp(t *testing.T) {
	cmds := map[string]bool{}
	for _, ln := range strings.Split(usage, "\n") {
		f := strings.Fields(ln)
		if strings.HasPrefix(ln, "  kinfer ") && len(f) >= 2 {
			cmds[f[1]] = true
		}
	}
	for _, must := range []string{"run", "analyze", "report", "design", "train", "combine", "score", "worker", "validate", "inspect", "list", "build", "new", "version"} {
		if !cmds[must] {
			t.Errorf("usage does not name %q", must)
		}
	}
	flagLine := regexp.MustCompile(`^  -[a-z][a-z-]*( [A-Za-z]+)?$`)
	for c := range cmds {
		for _, h := range []string{"--help", "-h"} {
			code, o, e := kinfer(t, c, h)
			if code != 0 || e != "" {
				t.Errorf("kinfer %s %s: exit %d, stderr %q", c, h, code, e)
				continue
			}
			if !strings.HasPrefix(o, "usage: kinfer "+c) {
				t.Errorf("kinfer %s %s: no synopsis:\n%s", c, h, o)
			}
			lines := strings.Split(o, "\n")
			nflags := 0
			for i, ln := range lines {
				if flagLine.MatchString(ln) {
					nflags++
					if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "    \t") || len(strings.TrimSpace(lines[i+1])) < 10 {
						t.Errorf("kinfer %s --help: flag %q has no description", c, strings.TrimSpace(ln))
					}
				}
			}
			if nflags == 0 && !strings.Contains(o, "takes no flags") {
				t.Errorf("kinfer %s --help: neither flags nor \"takes no flags\":\n%s", c, o)
			}
		}
	}
}

// A stopped run prints no table of NaN: with no samples it says why there
// is nothing to summarise, and a statistic that does not exist (the sd of
// one sample) is "-".
func TestSummaryTableHasNoNaN(t *testing.T) {
	nan := run.F(math.NaN())
	stopped := &run.Summary{Study: "s", Samples: 0, Complete: false,
		Params: []run.ParamSummary{{Name: "k", Mean: nan, SD: nan, P05: nan, P50: nan, P95: nan}}}
	var b strings.Builder
	printSummary(&b, stopped, "out", false)
	if strings.Contains(b.String(), "NaN") || !strings.Contains(b.String(), "stopped before its method produced any") {
		t.Errorf("stopped run:\n%s", b.String())
	}
	one := &run.Summary{Study: "s", Samples: 1, Complete: true,
		Params: []run.ParamSummary{{Name: "k", Mean: 2, SD: nan, P05: 2, P50: 2, P95: 2}}}
	b.Reset()
	printSummary(&b, one, "out", false)
	if strings.Contains(b.String(), "NaN") || !strings.Contains(b.String(), "  -  ") && !strings.Contains(b.String(), " - ") {
		t.Errorf("one sample:\n%s", b.String())
	}
}

// A data file separated by tabs or semicolons (a spreadsheet's export) is
// refused by kinfer run with the study's line and key and the format
// expected, before anything runs.
func TestRunRefusesNonCommaData(t *testing.T) {
	for sep, name := range map[string]string{"\t": "tabs", ";": "semicolons"} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte("length_mm"+sep+"force_N\n28"+sep+"1\n29"+sep+"2\n"), 0o644)
		st := strings.Replace(string(mustRead(t, "../../examples/quickstart-tmcmc/study.toml")), "../quickstart/force_length.csv", "d.csv", 1)
		os.WriteFile(filepath.Join(dir, "study.toml"), []byte(st), 0o644)
		code, _, e := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", filepath.Join(dir, "out"))
		if code != 1 || !strings.Contains(e, "a comma-separated file is expected") || !strings.Contains(e, "separated by "+name) || !strings.Contains(e, `key "data[0].file"`) {
			t.Errorf("%s: exit %d, %s", name, code, e)
		}
	}
}

// A dataset of many rows: the fit figure draws at most 5 000 of them,
// evenly spaced, and says so (audit 4: 10⁶ rows drawn whole made a 133 MB
// report.html).
func TestReportFitThinsRows(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := range 12000 {
		x := float64(i) / 100
		fmt.Fprintf(&b, "%g,%g\n", x, 1+2*x+0.01*float64(i%7-3))
	}
	study := "name = \"big\"\nseed = 1\n[model]\nuse = \"line\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[[likelihood]]\nuse = \"gaussian\"\nsigma = 0.1\n" +
		"[prior]\na = { uniform = [-10.0, 10.0] }\nb = { uniform = [-10.0, 10.0] }\n[method]\nuse = \"levmar\"\nstarts = 1\n"
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, o, e := kinfer(t, "run", filepath.Join(dir, "study.toml"), "-o", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, o, e)
	}
	html := string(mustRead(t, filepath.Join(out, "report.html")))
	if !strings.Contains(html, "d: 5000 of 12000 rows, evenly spaced in x") {
		t.Errorf("the fit figure does not say it drew 5000 of the 12000 rows")
	}
}

// The run's table prints a narrow posterior's location with the digits
// that resolve its sd (audit 8: 100000.23 ± 0.16 printed as 100000 in
// the mean, p05, p50 and p95 columns).
func TestSummaryTableNarrowPosterior(t *testing.T) {
	s := &run.Summary{Study: "s", Samples: 2000, Complete: true,
		Params: []run.ParamSummary{{Name: "a", Mean: 100000.228, SD: 0.158741, P05: 99999.962, P50: 100000.231, P95: 100000.484}}}
	var b strings.Builder
	printSummary(&b, s, "out", false)
	if !regexp.MustCompile(`(?m)^a +100000\.23 +0\.158741 +99999\.96 +100000\.23 +100000\.48$`).MatchString(b.String()) {
		t.Errorf("table:\n%s", b.String())
	}
}

// Counts of 0 or below are refused, not taken for the defaults (audit 9:
// report --max-samples -1 drew 2000, analyze --predictive 0 evaluated
// 1000).
func TestReportAnalyzeCountsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "x", "--max-samples", "-1"}, "--max-samples must be ≥ 1, got -1"},
		{[]string{"report", "x", "--max-samples", "0"}, "--max-samples must be ≥ 1, got 0"},
		{[]string{"report", "x", "--predictive", "-7"}, "--predictive must be ≥ 1, got -7"},
		{[]string{"analyze", "x", "--predictive", "0"}, "--predictive must be ≥ 1, got 0"},
		// The figures' memory grows with it (audit 10: 2.4 million passed 3.5 GB).
		{[]string{"report", "x", "--max-samples", "2400000"}, "--max-samples must be at most 100000"},
	} {
		if code, _, e := kinfer(t, c.args...); code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, e)
		}
	}
}

// Standard errors print six a line (docs 24: 300 parameters made one line
// of 9 000 characters); a short list stays on one line.
func TestStandardErrorsWrapped(t *testing.T) {
	stats := func(n int) any {
		names, ses := make([]any, n), make([]any, n)
		for i := range n {
			names[i], ses[i] = fmt.Sprintf("p%d", i), 1.5
		}
		return map[string]any{"statistics": map[string]any{"params": names, "standard_errors": ses}}
	}
	if got := standardErrors(stats(2), nil); got != "p0 1.5, p1 1.5" {
		t.Errorf("two: %q", got)
	}
	got := standardErrors(stats(13), nil)
	if strings.Count(got, "\n") != 2 || !strings.Contains(got, "p5 1.5,\n  p6 1.5") {
		t.Errorf("thirteen: %q", got)
	}
}

// A run that an error stopped holds back its method's notes and says the
// error follows; one a signal stopped shows them (author 22, review 23:
// told by the run's context, not its error text).
func TestMethodNotesHeldBackOnError(t *testing.T) {
	s := &run.Summary{Study: "s", Method: "builtin:metropolis", Complete: false, Error: "plugin p: kinfer_model_eval trapped",
		MethodReport: map[string]any{"warnings": []any{"run longer"}}}
	var b strings.Builder
	printSummary(&b, s, "out", true)
	if strings.Contains(b.String(), "run longer") || !strings.Contains(b.String(), "the run stopped on the error below; the method's 1 note(s)") {
		t.Errorf("stopped by an error:\n%s", b.String())
	}
	b.Reset()
	printSummary(&b, s, "out", false)
	if !strings.Contains(b.String(), "WARNING (method builtin:metropolis): run longer") {
		t.Errorf("stopped by a signal:\n%s", b.String())
	}
}
