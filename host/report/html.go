package report

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/kinfer/kinfer/internal/sigfig"
)

// Write builds the report of the run in dir and writes it to out
// (dir/report.html when out is ""), atomically. It returns the path.
func Write(ctx context.Context, dir, out string, o Options) (string, *Report, error) {
	if out == "" {
		out = filepath.Join(dir, FileName)
	}
	// Before the figures are drawn: -o /dev/stdout or a named pipe is
	// refused (WriteAtomic checks again when it writes).
	if err := safefile.CheckTarget(out); err != nil {
		return "", nil, err
	}
	// Before the figures are drawn too: the run's own files and its
	// inputs (summary.json's provenance) are refused as the target.
	// (A summary.json that does not read is Build's error; the run's
	// files are still refused by name.)
	var sum run.Summary
	_ = run.ReadRecord(filepath.Join(dir, "summary.json"), run.MaxSummaryBytes, &sum)
	if err := checkOutput(dir, out, &sum); err != nil {
		return "", nil, err
	}
	r, err := Build(ctx, dir, o)
	if err != nil {
		return "", nil, err
	}
	// An interruption while the page is drawn fails the write, which
	// removes its temporary file (audit 10: one was left behind).
	if err := run.WriteAtomic(out, func(w io.Writer) error {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		// Strings from plugins and records (a method report's keys,
		// hand-edited names) go into the page: its C0 controls are
		// escaped as on the terminal (audit 11: ESC and BEL in
		// report.html ran in a terminal that showed it).
		err := r.HTML(guesttext.Writer{W: w})
		if cerr := context.Cause(ctx); cerr != nil {
			return cerr
		}
		return err
	}); err != nil {
		return "", nil, err
	}
	return out, r, nil
}

// runFiles are the files of a run directory that a report must not
// replace: the run's outputs and records (summary.json, samples.csv,
// samples.parquet, run.json, the checkpoint, analysis.json, a stage's
// stage_start.json, a multi-stage run's stages.json, the lock).
var runFiles = map[string]bool{
	"summary.json": true, "samples.csv": true, run.ParquetFile: true, run.StateFile: true,
	run.CheckpointFile: true, run.JournalFile: true, run.AnalysisFile: true, run.LockFile: true,
	run.StagesFile: true, "stage_start.json": true,
}

// isRunFile tells whether name is one of runFiles or a checkpoint's
// method state (checkpoint.HASH.state).
func isRunFile(name string) bool {
	return runFiles[name] || strings.HasPrefix(name, "checkpoint.") && strings.HasSuffix(name, ".state")
}

// checkOutput refuses a report file out that would replace one of the
// run's own files in dir (by name in dir, existing or not, or the same
// file by os.SameFile: a hard link, another path to dir) or one of the
// inputs its provenance records (the study, a data file, an init file, a
// plugin's manifest or module; os.SameFile), naming it: `kinfer report
// DIR -o DIR/samples.csv` or `-o study.toml` is a slip that would leave
// HTML where the run's results or its inputs were.
// figuresNotOver refuses figure files (names, each as .svg and .png in
// figDir) that would replace one of the run's files or inputs, or one of
// keep.
func (r *Report) figuresNotOver(figDir string, names, keep []string) error {
	for _, name := range names {
		for _, ext := range []string{".svg", ".png"} {
			p := filepath.Join(figDir, name+ext)
			for _, k := range keep {
				if in, ok := run.Clobbers(p, []run.Input{{Role: "report", Path: k}}); ok {
					return fmt.Errorf("report: --figures %s: figure %s would replace %s, written by this command: choose another folder", figDir, name+ext, in.Path)
				}
			}
			if err := checkTarget(r.Dir, p, "--figures "+figDir+": "+p, "the figure", r.Summary); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkOutput(dir, out string, sum *run.Summary) error {
	return checkTarget(dir, out, "-o "+out, "the report", sum)
}

// checkTarget is checkOutput for the file out, named in messages as arg
// and written as what.
func checkTarget(dir, out, arg, what string, sum *run.Summary) error {
	refuse := func(which, path string) error {
		return fmt.Errorf("report: %s is %s (%s): %s would replace it; choose another file", arg, which, path, what)
	}
	ost, oerr := os.Stat(out)
	if dst, err := os.Stat(filepath.Dir(out)); err == nil {
		if rst, err := os.Stat(dir); err == nil && os.SameFile(dst, rst) && isRunFile(filepath.Base(out)) {
			return refuse("one of the run's files", filepath.Join(dir, filepath.Base(out)))
		}
	}
	if oerr != nil {
		return nil // a new file: neither the run's nor an input
	}
	if names, err := os.ReadDir(dir); err == nil {
		for _, e := range names {
			if !isRunFile(e.Name()) {
				continue
			}
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(ost, st) {
				return refuse("one of the run's files", filepath.Join(dir, e.Name()))
			}
		}
	}
	var ins []run.Input
	if sum.Provenance != nil {
		ins = sum.Provenance.Inputs
	}
	if sum.StudyFile != "" {
		ins = append(ins, run.Input{Role: "study", Path: sum.StudyFile})
	}
	if in, ok := run.Clobbers(out, ins); ok {
		return refuse("the run's input "+in.Role, in.Path)
	}
	return nil
}

// WriteFigures writes every figure as NAME.svg and NAME.png (96 dpi)
// into dir.
func (r *Report) WriteFigures(ctx context.Context, dir string, keep ...string) ([]string, error) {
	figs := r.Figures()
	used := map[string]bool{}
	names := make([]string, len(figs))
	for k, f := range figs {
		names[k] = fileName(f.Name, used)
	}
	// Before any is written: no figure over the run's files, its inputs
	// or keep (the report just written) (audit 11: a study named
	// corner.svg was replaced by the corner plot).
	if err := r.figuresNotOver(dir, names, keep); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for k, f := range figs {
		if err := context.Cause(ctx); err != nil {
			return files, fmt.Errorf("%w: %d of the %d figures written to %s", err, k, len(figs), dir)
		}
		name := names[k]
		svg, err := f.SVG()
		if err != nil {
			return files, err
		}
		png, err := f.PNG(96)
		if err != nil {
			return files, err
		}
		for ext, b := range map[string][]byte{".svg": svg, ".png": png} {
			p := filepath.Join(dir, name+ext)
			if err := run.WriteAtomic(p, func(w io.Writer) error {
				_, err := w.Write(b)
				return err
			}); err != nil {
				return files, err
			}
			files = append(files, p)
		}
	}
	sort.Strings(files)
	return files, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("/\\ :*?\"<>|", r) {
			return '_'
		}
		return r
	}, s)
}

// maxFileName bounds a figure's file name (without extension) in bytes:
// file systems allow 255, and a parameter's name has no limit.
const maxFileName = 120

// fileName is figure name's file name without extension: safeName of it,
// cut to maxFileName bytes with a hash of the whole name when longer, and
// made unique among used (compared without case, for file systems that
// ignore it) with a suffix -2, -3, …: two parameters "a/b" and "a_b" no
// longer write the same file.
func fileName(name string, used map[string]bool) string {
	base := safeName(name)
	if len(base) > maxFileName {
		h := sha256.Sum256([]byte(name))
		cut := maxFileName - 9
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut] + "-" + hex.EncodeToString(h[:4])
	}
	out := base
	for i := 2; used[strings.ToLower(out)]; i++ {
		out = fmt.Sprintf("%s-%d", base, i)
	}
	used[strings.ToLower(out)] = true
	return out
}

type htmlFigure struct {
	Name, Title string
	Src         template.URL
	Width       int // CSS pixels
}

type htmlSection struct {
	ID, Title, Note string
	Table           []kv
	Figures         []htmlFigure
}

type kv struct{ K, V string }

type paramRow struct {
	Name, Unit string
	Cells      []string
}

type page struct {
	Title, Status, Error string
	Complete             bool
	Warnings             []string
	Run                  []kv
	ParamCols            []string
	Params               []paramRow
	Method               []kv
	Sections             []htmlSection
	Notes                []string
	Provenance           []kv
	Inputs               []run.Input
	StudyFile, Study     string
	NFigures             int
}

// HTML writes the report as one self-contained HTML page: the figures
// are SVG documents inline as data: URIs, the only script is the check
// that every figure decoded (it writes its result into #kinfer-check and
// logs a console error for a broken figure).
func (r *Report) HTML(w io.Writer) error {
	s := r.Summary
	pg := page{Title: s.Study, Complete: s.Complete, Error: s.Error, StudyFile: s.StudyFile, Study: r.StudyText, Notes: r.Notes}
	pg.Status = "complete"
	if !s.Complete {
		pg.Status = s.Status()
	}
	// The warnings kinfer run prints (run.Summary.Warnings): a reader of
	// the report must not miss them either (audit 6: a sampler's run under
	// [transform] was shown as the posterior of θ without a word).
	for _, wn := range s.Warnings() {
		if wn.About != "" {
			wn.Text = "(" + wn.About + ") " + wn.Text
		}
		pg.Warnings = append(pg.Warnings, wn.Text)
	}
	pg.Run = []kv{
		{"study file", s.StudyFile}, {"model", s.Model}, {"method", s.Method},
		{"likelihoods", strings.Join(s.Likelihoods, "; ")},
		{"seed", fmt.Sprint(s.Seed)}, {"workers", fmt.Sprint(s.Workers)},
		{"evaluations", fmt.Sprintf("%d (%d failed)", s.Evaluations, s.FailedEvaluations)},
		{"status counts", statusCounts(s.StatusCounts)},
		{"wall time", fmt.Sprintf("%s s (%s evaluations/s)", g(float64(s.WallSeconds)), g(float64(s.EvalsPerSecond)))},
		{"samples", fmt.Sprint(s.Samples)},
	}
	if s.Best != nil {
		pg.Run = append(pg.Run, kv{"best log target", fmt.Sprintf("%s (log prior %s, log likelihood %s)", g(float64(s.Best.LogTarget)), g(float64(s.Best.LogPrior)), g(float64(s.Best.LogLik)))})
	}
	if len(s.Fixed) > 0 {
		pg.Run = append(pg.Run, kv{"fixed", fixed(s.Fixed)})
	}
	var tableNotes []string
	pg.ParamCols, pg.Params, tableNotes = r.paramTable()
	pg.Notes = append(slices.Clip(pg.Notes), tableNotes...)
	pg.Method = scalars(r.report)
	if p := s.Provenance; p != nil {
		pg.Provenance = []kv{{"kinfer", p.Kinfer}, {"revision", p.VCSRevision + " (modified: " + p.VCSModified + ")"},
			{"go", p.Go}, {"wazero", p.Wazero}, {"platform", p.Platform}, {"seed", fmt.Sprint(p.Seed)}}
		pg.Inputs = p.Inputs
	}
	for _, sec := range r.Sections {
		hs := htmlSection{ID: anchor(sec.Title), Title: sec.Title, Note: sec.Note}
		for _, row := range sec.Table {
			hs.Table = append(hs.Table, kv{row[0], row[1]})
		}
		for _, f := range sec.Figures {
			svg, err := f.SVG()
			if err != nil {
				pg.Notes = append(pg.Notes, err.Error())
				continue
			}
			hs.Figures = append(hs.Figures, htmlFigure{Name: f.Name, Title: f.Title,
				Src:   template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(svg)),
				Width: int(math.Round(f.W.Points() * 96 / 72))})
			pg.NFigures++
		}
		if len(hs.Figures) > 0 || len(hs.Table) > 0 {
			pg.Sections = append(pg.Sections, hs)
		}
	}
	return pageTemplate.Execute(w, pg)
}

// anchor is a section's id: "TMCMC stage convergence" → "tmcmc-stage-convergence".
func anchor(title string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, title), "-")
}

func g(x float64) string { return gDigits(x, 6) }

// gDigits is x with n significant digits, "—" when not finite.
func gDigits(x float64, n int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return sigfig.G(x, n)
}

func statusCounts(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func fixed(m map[string]float64) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s = %s", k, g(v)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// perParamLists are the method-report lists that hold one value per free
// parameter, in samples.csv's order: Metropolis's (builtin and the
// plugin of plugins/go/metropolis) split-R̂, ESS and proposal scale. A
// method may add its own under a name ending in PerParamSuffix. Other
// lists are per start (levmar's cost, evaluations_per_start), per chain
// (acceptance_per_chain) or per stage, whatever their length: a list
// whose length happens to equal the number of parameters is not a
// column (RATIONALE.md, "Why does the report's parameter table take
// only lists named per parameter?").
var perParamLists = map[string]bool{"rhat": true, "ess": true, "proposal_sd": true}

// PerParamSuffix ends the name of a method-report list with one value per
// free parameter (samples.csv's order) that the report shows as a column
// of its parameter table.
const PerParamSuffix = "_per_param"

// paramTable is summary.json's params, the best point, every
// per-parameter list of the method report (perParamLists, PerParamSuffix;
// a least-squares method's standard errors) and of analysis.json (the
// relative spread, the truth's percentile).
func (r *Report) paramTable() ([]string, []paramRow, []string) {
	cols := []string{"mean", "sd", "p05", "p50", "p95", "best"}
	one := r.Summary.Samples <= 1 // an optimiser's single final point
	if one {
		cols = []string{"value", "best"}
	}
	d := len(r.Summary.Params)
	var extra []string
	for k, v := range r.report {
		if !perParamLists[k] && !strings.HasSuffix(k, PerParamSuffix) {
			continue
		}
		if l, ok := v.([]any); ok && len(l) == d && d > 0 {
			if _, isNum := l[0].(float64); isNum || l[0] == nil {
				extra = append(extra, k)
			}
		}
	}
	sort.Strings(extra)
	cols = append(cols, extra...)
	var notes []string
	se, seNote := r.standardErrors()
	if se != nil {
		cols = append(cols, "standard error")
		if seNote != "" {
			notes = append(notes, seNote)
		}
	}
	var rel map[string]float64
	if ps, ok := r.analysis["params"].([]any); ok {
		rel = map[string]float64{}
		for _, e := range ps {
			m, _ := e.(map[string]any)
			if n, ok := m["name"].(string); ok {
				rel[n] = num(m["relative"])
			}
		}
		cols = append(cols, "spread/prior range (%)") // in percent, as kinfer analyze prints it
	}
	truth := r.truth()
	if len(truth) > 0 {
		cols = append(cols, "truth", "truth percentile (%)")
	}
	pct := map[string]float64{}
	if tr, ok := r.analysis["truth"].(map[string]any); ok {
		ps, _ := tr["params"].([]any)
		for _, e := range ps {
			m, _ := e.(map[string]any)
			if n, ok := m["name"].(string); ok {
				pct[n] = num(m["percentile"])
			}
		}
	}
	var rows []paramRow
	ses, ofTheta := run.ThetaStandardErrors(r.report, r.Summary.Transform)
	for j, p := range r.Summary.Params {
		best := math.NaN() // shown "—" for a propagation run (its "best" draw is a tie)
		if r.Summary.Best != nil && r.propagation() == nil {
			if v, ok := r.Summary.Best.Theta[p.Name]; ok {
				best = v
			}
		}
		row := paramRow{Name: p.Name, Unit: p.Unit}
		// The location columns (and the truth) with the digits that
		// resolve the sd, or an optimiser's standard error when larger
		// (sigfig); the sd itself with 6.
		res := run.Resolution(p.Name, float64(p.SD), ses, ofTheta)
		gn := func(v float64) string { return gDigits(v, sigfig.Digits(6, res, v)) }
		row.Cells = append(row.Cells, gn(float64(p.Mean)))
		if one {
			row.Cells = append(row.Cells, gn(best))
		} else {
			row.Cells = append(row.Cells, g(float64(p.SD)), gn(float64(p.P05)), gn(float64(p.P50)), gn(float64(p.P95)), gn(best))
		}
		for _, k := range extra {
			row.Cells = append(row.Cells, g(num(r.report[k].([]any)[j])))
		}
		if se != nil {
			c, ok := se[p.Name]
			if !ok {
				c = "—"
			}
			row.Cells = append(row.Cells, c)
		}
		if rel != nil {
			v, ok := rel[p.Name]
			if !ok {
				v = math.NaN()
			}
			row.Cells = append(row.Cells, g(100*v))
		}
		if len(truth) > 0 {
			v, ok := truth[p.Name]
			q, okq := pct[p.Name]
			if !ok {
				v = math.NaN()
			}
			if !okq {
				q = math.NaN()
			}
			row.Cells = append(row.Cells, gn(v), g(100*q))
		}
		rows = append(rows, row)
	}
	return cols, rows, notes
}

// standardErrors are a least-squares method's standard errors of the
// best start (method_report.statistics.standard_errors, named by
// statistics.params), as table cells by parameter: for a parameter
// transformed by [transform] (the method's statistics are in its
// coordinate x) summary.json's delta-method standard error of θ, or "—"
// when it has none (the note says so), "(at a bound)" added for a
// parameter in statistics.at_bound (its standard error does not hold
// there). nil when the report has none.
func (r *Report) standardErrors() (map[string]string, string) {
	ses := run.StandardErrors(r.report)
	if len(ses) == 0 {
		return nil, ""
	}
	out := map[string]string{}
	var inX []string
	for _, e := range ses {
		if tr := r.Summary.Transform; tr != nil {
			if _, ok := tr.XBounds[e.Name]; ok {
				if v, ok := tr.StandardErrors[e.Name]; ok {
					// Carried to θ by the delta method (summary.json).
					out[e.Name] = g(float64(v)) + " (delta method)"
					continue
				}
				out[e.Name] = "—"
				inX = append(inX, e.Name)
				continue
			}
		}
		c := g(e.Value)
		if e.AtBound {
			c += " (at a bound)"
		}
		out[e.Name] = c
	}
	note := ""
	if len(inX) > 0 {
		sort.Strings(inX)
		note = fmt.Sprintf("standard errors of %s are not shown: [transform] maps them, and the method's statistics are in its coordinates x (summary.json method_report.statistics.standard_errors), not in the parameters' units", strings.Join(inX, ", "))
	}
	return out, note
}

// scalars are the method report's numbers, strings and booleans.
func scalars(report map[string]any) []kv {
	var out []kv
	for k, v := range report {
		switch x := v.(type) {
		case float64:
			out = append(out, kv{k, g(x)})
		case string:
			out = append(out, kv{k, x})
		case bool:
			out = append(out, kv{k, fmt.Sprint(x)})
		case nil:
			out = append(out, kv{k, "—"})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].K < out[b].K })
	return out
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kinfer report: {{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1250px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; font-weight: bold; } .bad { color: #b42318; font-weight: bold; }
.warn { background: #fff4e5; border-left: 4px solid #f59e0b; padding: 0.3em 0.8em; margin: 0.3em 0; }
.figs { display: flex; flex-wrap: wrap; gap: 8px; }
figure { margin: 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.8em; color: #555; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.note { color: #444; font-size: 0.92em; }
#kinfer-check { font-size: 0.8em; color: #555; }
</style>
<script>
// Errors of scripts and of resources (a figure that does not decode fires
// "error" on its img, seen here in the capture phase) are collected for
// the check at the end of the page.
window.kinferErrors = [];
window.addEventListener("error", function (e) {
  var t = e.target;
  window.kinferErrors.push(t && t.tagName === "IMG" ? "figure " + t.alt + " did not load" : String(e.message));
}, true);
</script>
</head>
<body>
<h1>{{.Title}}</h1>
<p>kinfer run report — <span class="{{if .Complete}}ok{{else}}bad{{end}}">{{.Status}}</span>{{if .Error}}: {{.Error}}{{end}}</p>
{{range .Warnings}}<div class="warn">WARNING: {{.}}</div>
{{end}}
<p class="note">Contents: <a href="#run">run</a> · <a href="#parameters">parameters</a>{{range .Sections}} · <a href="#{{.ID}}">{{.Title}}</a>{{end}} · <a href="#method-diagnostics">method diagnostics</a> · <a href="#provenance">provenance</a> · <a href="#study">study</a></p>
<h2 id="run">Run</h2>
<table>{{range .Run}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>{{end}}</table>

<h2 id="parameters">Parameters</h2>
{{if .Params}}<table>
<tr><th>parameter</th><th>unit</th>{{range .ParamCols}}<th>{{.}}</th>{{end}}</tr>
{{range .Params}}<tr><td>{{.Name}}</td><td>{{.Unit}}</td>{{range .Cells}}<td class="n">{{.}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p class="note">No free parameters or no samples.</p>{{end}}

{{range .Sections}}<h2 id="{{.ID}}">{{.Title}}</h2>
<p class="note">{{.Note}}</p>
{{if .Table}}<table>{{range .Table}}<tr><th>{{.K}}</th><td class="n">{{.V}}</td></tr>{{end}}</table>{{end}}
<div class="figs">{{range .Figures}}<figure><img class="kinfer-figure" src="{{.Src}}" alt="{{.Name}}" width="{{.Width}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}</div>
{{end}}
{{if .Method}}<h2 id="method-diagnostics">Method diagnostics</h2>
<table>{{range .Method}}<tr><th>{{.K}}</th><td class="n">{{.V}}</td></tr>{{end}}</table>{{end}}

{{if .Notes}}<h2 id="notes">Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2 id="provenance">Provenance</h2>
<table>{{range .Provenance}}<tr><th>{{.K}}</th><td>{{.V}}</td></tr>{{end}}</table>
{{if .Inputs}}<table><tr><th>role</th><th>file</th><th>sha256</th></tr>
{{range .Inputs}}<tr><td>{{.Role}}</td><td>{{.Path}}</td><td><code>{{.SHA256}}</code></td></tr>
{{end}}</table>{{end}}

<h2 id="study">Study</h2>
<p class="note">{{.StudyFile}}</p>
{{if .Study}}<pre>{{.Study}}</pre>{{else}}<p class="note">The study file could not be read.</p>{{end}}

<p id="kinfer-check" data-figures="{{.NFigures}}">figures not checked</p>
<script>
// Every figure must have decoded: the browser test reads #kinfer-check.
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.kinfer-figure"), bad = [];
  for (var i = 0; i < imgs.length; i++) {
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) { bad.push(imgs[i].alt); }
  }
  var m = document.getElementById("kinfer-check"), errs = window.kinferErrors;
  m.setAttribute("data-loaded", String(imgs.length - bad.length));
  m.setAttribute("data-broken", String(bad.length));
  m.setAttribute("data-errors", String(errs.length));
  if (bad.length || errs.length) {
    m.textContent = "BROKEN FIGURES: " + bad.join(", ") + "; ERRORS: " + errs.join("; ");
    console.error("kinfer report: " + m.textContent);
  } else {
    m.textContent = "kinfer-figures-ok " + imgs.length;
  }
});
</script>
</body>
</html>
`))
