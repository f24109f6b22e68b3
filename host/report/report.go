package report

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/dataset"
	"github.com/kinfer/kinfer/host/figures"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/host/tomlx"
	"github.com/kinfer/kinfer/host/wasm"
	"github.com/kinfer/kinfer/internal/plainfloat"
)

// FileName is the report's default file name in the run directory.
const FileName = run.ReportFile

// Options configure Build.
type Options struct {
	// Runtime loads the study's plugins when the study is reloaded (for
	// the priors and the model fit); nil skips the reload.
	Runtime *wasm.Runtime
	// Study is the run's study, already loaded (kinfer run passes its
	// own): it is used instead of reloading the study file, and not closed.
	Study   *study.Study
	Workers int
	// Previous are the values a stage of a multi-stage study inherited
	// (study.Options.Previous): a reloaded study gets them.
	Previous map[string]float64
	// MaxSamples bounds the samples drawn in histograms, the corner plot
	// and traces (evenly spaced; 0: 2000).
	MaxSamples int
	// MaxPredictive bounds the samples evaluated for the
	// posterior-predictive band (0: 100).
	MaxPredictive int
	// MaxCorner bounds the parameters of the corner plot (0: 8).
	MaxCorner int
	// MaxOutputs bounds the fit figures per dataset (0: 12).
	MaxOutputs int
	// IgnoreTrust is study.Options.IgnoreTrust for a reloaded study.
	IgnoreTrust string
}

func (o *Options) defaults() {
	if o.MaxSamples <= 0 {
		o.MaxSamples = 2000
	}
	if o.MaxPredictive <= 0 {
		o.MaxPredictive = 100
	}
	if o.MaxCorner <= 0 {
		o.MaxCorner = 8
	}
	if o.MaxOutputs <= 0 {
		o.MaxOutputs = 12
	}
	o.Workers = max(o.Workers, 1)
}

// Section groups the figures of one kind, with a table of name–value
// rows when it has one (the quantity of interest's statistics).
type Section struct {
	Title, Note string
	Table       [][2]string
	Figures     []*figures.Figure
}

// Report is a run's report: what it read and the figures it drew.
type Report struct {
	Dir       string
	Summary   *run.Summary
	Method    string // the method's name (builtin:tmcmc → tmcmc)
	StudyText string // the study file, "" when unreadable
	Sections  []Section
	// Notes say what was left out and why (a study that no longer loads,
	// a figure that could not be drawn).
	Notes []string

	names    []string          // free parameters, samples.csv's order
	nrows    int               // data rows of samples.csv
	rows     map[int][]float64 // the rows the figures use, by index: the free parameters' values
	report   map[string]any
	analysis map[string]any
}

// Figures lists every figure of the report, section by section.
func (r *Report) Figures() []*figures.Figure {
	var out []*figures.Figure
	for _, s := range r.Sections {
		out = append(out, s.Figures...)
	}
	return out
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *Report) add(title, note string, figs ...*figures.Figure) {
	if len(figs) > 0 {
		r.Sections = append(r.Sections, Section{Title: title, Note: note, Figures: figs})
	}
}

// Build reads the run in dir and draws its figures.
func Build(ctx context.Context, dir string, o Options) (*Report, error) {
	o.defaults()
	r := &Report{Dir: dir, Summary: &run.Summary{}}
	if err := run.ReadRecord(filepath.Join(dir, "summary.json"), run.MaxSummaryBytes, r.Summary); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("report: %w (%s)", err, run.NotARun(dir))
		}
		return nil, fmt.Errorf("report: %w", err)
	}
	r.report, _ = r.Summary.MethodReport.(map[string]any)
	r.Method = r.Summary.Method
	if m, ok := strings.CutPrefix(r.Method, "builtin:"); ok {
		r.Method = m
	}
	r.StudyText = studyText(r.Summary)
	if err := run.ReadRecord(filepath.Join(dir, run.AnalysisFile), run.MaxAnalysisBytes, &r.analysis); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.note("%v", err)
		r.analysis = nil
	}
	for _, p := range r.Summary.Params {
		r.names = append(r.names, p.Name)
	}
	if err := r.readSamples(o); err != nil {
		r.note("samples.csv: %v", err)
	}

	// The study, reloaded for its priors and the model fit.
	s := o.Study
	var err error
	if s == nil && o.Runtime != nil && r.Summary.StudyFile != "" && r.StudyText == "" {
		// Not the study the run recorded (changed since, or a summary.json
		// from elsewhere naming any file): its priors and model would not
		// be the run's, and a study names data and plugins to load.
		why := run.StudyMismatch(r.Summary.StudyFile, r.Summary.Provenance)
		if why == "" {
			why = "unreadable, or its sha256 differs from the provenance's"
		}
		r.note("the study %s is not the one the run recorded (%s): no prior densities and no model fit", r.Summary.StudyFile, why)
	} else if s == nil && o.Runtime != nil && r.Summary.StudyFile != "" {
		s, err = study.Load(ctx, r.Summary.StudyFile, study.Options{Workers: o.Workers, Runtime: o.Runtime, Previous: o.Previous, MemoryBudget: run.DefaultMemoryBudget(), IgnoreTrust: o.IgnoreTrust})
		if err != nil {
			r.note("the study %s did not load again (%v): no prior densities and no model fit", r.Summary.StudyFile, err)
			s = nil
		} else {
			defer s.Close()
		}
	}
	// The fit figures evaluate the reloaded model on the reloaded data:
	// with a data file, an init file or a plugin changed since the run
	// they would draw the run's posterior against other data (or through
	// another model). The study file itself is checked above.
	// With the study: its samples lie in its bounds, as analyze checks
	// (audit 12: a header with its columns swapped drew eps_r's values
	// as k's, far outside k's bounds).
	if s != nil && !s.Transformed() && r.nrows > 0 {
		if err := r.samplesInBounds(s); err != nil {
			r.note("%v: no sample figures", err)
			r.rows, r.nrows = nil, 0
		}
	}
	fitOK := true
	if s != nil && o.Study == nil {
		if changed := changedInputs(r.Summary); len(changed) > 0 {
			fitOK = false
			r.note("inputs changed since the run: %s; no model fit (it would draw the run's posterior against other data or another model)", strings.Join(changed, "; "))
		} else if loaded, err := run.Inputs(s); err != nil {
			fitOK = false
			r.note("the study's inputs cannot be read (%v): no model fit", err)
		} else if extra := run.UnrecordedInputs(loaded, r.Summary.Provenance.Inputs); len(extra) > 0 {
			// A record edited to name another copy of the study, or
			// without an input's entry (audit 10).
			fitOK = false
			r.note("the study loads inputs the run did not record: %s; no model fit", strings.Join(extra, "; "))
		}
	}

	if r.propagation() != nil {
		r.quantity(s)
	}
	sampler := r.isSampler()
	if sampler && r.nrows > 0 {
		r.posterior(s, o)
	}
	if r.Method == "tmcmc" || r.report["stages"] != nil {
		r.stages()
	}
	if r.report["rhat"] != nil || r.Method == "metropolis" {
		r.traces(o)
	}
	r.losses()
	if s != nil && fitOK {
		if err := r.fit(ctx, s, o, sampler); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			r.note("model fit: %v", err)
		}
	}
	return r, nil
}

// isSampler tells a run whose samples are draws of a posterior from one
// whose samples are an optimiser's final points (one per start).
func (r *Report) isSampler() bool {
	switch r.Method {
	case "tmcmc", "metropolis":
		return true
	}
	// The study may not have reloaded: a least-squares plugin is known by
	// its report's cost trace.
	if run.Optimiser(r.Summary.Method, false, r.report) {
		return false
	}
	if r.propagation() != nil {
		return true // draws of the prior
	}
	return r.Summary.Samples >= 50 // a plugin sampler: many rows
}

// propagation is the method report's montecarlo block — kinfer's
// montecarlo, or a propagation plugin reporting the same block (as
// host/testdata/plugins/mcprop) —, nil for any other method.
func (r *Report) propagation() map[string]any {
	m, _ := r.report["montecarlo"].(map[string]any)
	return m
}

// quantity is the section of a propagation run's result, the quantity of
// interest: its statistics (method_report.montecarlo) as a table and its
// histogram (histogram_edges, histogram_counts) with the mean and the
// 5th, 50th and 95th percentiles.
func (r *Report) quantity(s *study.Study) {
	mc := r.propagation()
	name, _ := mc["quantity"].(string)
	label := name
	if name == "" {
		label = "quantity of interest" // montecarlo's `output`: no name
	} else if s != nil {
		for _, out := range s.ModelInfo.Spec.Outputs {
			if out.Name == name && out.Unit != "" {
				label += " [" + out.Unit + "]"
			}
		}
	}
	sec := Section{Title: "Quantity of interest"}
	row := func(k, v string) { sec.Table = append(sec.Table, [2]string{k, v}) }
	if name != "" {
		row("quantity", name)
	}
	if c, ok := mc["condition"]; ok {
		row("condition row", g(num(c)))
	}
	row("values", g(num(mc["n"])))
	row("failed draws", g(num(mc["failed"])))
	conv := "—"
	if b, ok := mc["converged"].(bool); ok {
		conv = fmt.Sprint(b)
	}
	row("converged", fmt.Sprintf("%s (largest relative deviation of the stopping rule %s)", conv, g(num(mc["rule_largest_relative_deviation"]))))
	for _, k := range []string{"mean", "sd", "cv_percent", "min", "max"} {
		row(strings.ReplaceAll(k, "_percent", " %"), g(num(mc[k])))
	}
	pct, _ := mc["percentiles"].(map[string]any)
	keys := make([]string, 0, len(pct))
	for k := range pct {
		keys = append(keys, k)
	}
	level := func(k string) float64 { v, _ := strconv.ParseFloat(strings.TrimPrefix(k, "p"), 64); return v }
	sort.Slice(keys, func(a, b int) bool { return level(keys[a]) < level(keys[b]) })
	for _, k := range keys {
		row(k, g(num(pct[k])))
	}
	if v, ok := mc["span_10_90"]; ok {
		row("span p10–p90", g(num(v)))
	}
	sec.Note = fmt.Sprintf("The result of the propagation: the model output %s over the prior draws (summary.json method_report.montecarlo; the percentiles are empirical, the order statistic at ⌈p·n⌉).", label)
	edges, counts := floats(mc["histogram_edges"]), floats(mc["histogram_counts"])
	var marks []figures.Mark
	for _, k := range []string{"p5", "p50", "p95"} {
		if v, ok := pct[k]; ok {
			marks = append(marks, figures.Mark{X: num(v), Name: k, Color: figures.Color(3)})
		}
	}
	marks = append(marks, figures.Mark{X: num(mc["mean"]), Name: "mean", Solid: true})
	if len(edges) >= 2 && edges[0] == edges[len(edges)-1] {
		// Every draw gave the same value: nothing to bin (review 11:
		// this was a note about unordered edges).
		sec.Note += fmt.Sprintf(" It is constant, %s at every draw: no histogram.", g(edges[0]))
		r.Sections = append(r.Sections, sec)
		return
	}
	p, err := figures.Binned("quantity of interest: "+label, label, edges, counts, marks...)
	if err != nil {
		r.note("histogram of the quantity of interest: %v", err)
	} else {
		sec.Figures = []*figures.Figure{figures.Single("quantity", p, 6*vg.Inch, 3.5*vg.Inch)}
		sec.Note += fmt.Sprintf(" Its histogram (%d bins, density) with p5, p50 and p95 dashed and the mean solid.", len(counts))
	}
	r.Sections = append(r.Sections, sec)
}

// floats is a JSON list of numbers (nil for anything else; NaN for an
// element that is not a number).
func floats(v any) []float64 {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]float64, len(l))
	for i, e := range l {
		out[i] = num(e)
	}
	return out
}

// wanted is the set of samples.csv rows the figures use out of n: the
// posterior's and the fit's evenly spaced rows and, for a method with
// chains, the traces' rows of the first chains.
func (r *Report) wanted(n int, o Options) map[int]bool {
	keep := map[int]bool{}
	for _, i := range figures.Thin(n, o.MaxSamples) {
		keep[i] = true
	}
	for _, i := range figures.Thin(n, o.MaxPredictive) {
		keep[i] = true
	}
	chains, show, idx := r.traceRows(n, o)
	for _, s := range idx {
		for c := range show {
			keep[s*chains+c] = true
		}
	}
	return keep
}

// traceRows are the steps drawn of each of the first show chains (row
// i of samples.csv is chain i mod chains).
func (r *Report) traceRows(n int, o Options) (chains, show int, steps []int) {
	chains = max(1, int(num(r.report["chains"])))
	show = min(chains, 4)
	per := n / chains
	if per < 2 {
		return chains, show, nil
	}
	return chains, show, figures.Thin(per, max(2, o.MaxSamples/show))
}

// readSamples reads the rows of samples.csv that the figures use, in one
// streaming pass: a run may have millions of rows, and the report must
// stay cheap. The number of data rows must be summary.json's.
func (r *Report) readSamples(o Options) error {
	path := filepath.Join(r.Dir, "samples.csv")
	// Only a missing or empty regular file has no samples: a named pipe or
	// a device (/dev/zero) in its place is named by scan's refusal (audit
	// 5: "no samples").
	if st, err := os.Stat(path); err != nil && errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		return errors.New("no samples")
	}
	n := max(r.Summary.Samples, 0) // the record's count; the file's is checked below
	got, err := r.scan(path, r.wanted(n, o))
	if err != nil {
		return err
	}
	// A file cut short, or with another count than the record's, is not
	// the run's samples (run.CheckSamples).
	if err := run.CheckSamples(path, got, r.Summary.Samples); err != nil {
		r.rows = nil
		return err
	}
	r.nrows = n
	return nil
}

// studyText is the text of the run's study file, to be shown in the
// report, when it is the study the run recorded: a regular file of a
// study's size whose sha256 is the provenance's. A summary.json from
// elsewhere may name any file (a private key would end up in a report
// that is then shared); such a file is not read into the report.
func studyText(sum *run.Summary) string {
	// Its path too: a copy of the study elsewhere has the same sha256 but
	// resolves its data files beside it (audit 9).
	if sum.StudyFile == "" || run.StudyMismatch(sum.StudyFile, sum.Provenance) != "" {
		return ""
	}
	want := ""
	for _, in := range sum.Provenance.Inputs {
		if in.Role == "study" {
			want = in.SHA256
		}
	}
	b, err := safefile.ReadFile(sum.StudyFile, tomlx.MaxBytes)
	if err != nil || want == "" {
		return ""
	}
	if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != want {
		return ""
	}
	return string(b)
}

// changedInputs lists the run's recorded inputs, other than the study
// file, that differ from their files now (run.ChangedInputs); a summary
// without a provenance record has nothing to compare.
func changedInputs(sum *run.Summary) []string {
	if sum.Provenance == nil {
		return nil
	}
	var ins []run.Input
	for _, in := range sum.Provenance.Inputs {
		if in.Role != "study" {
			ins = append(ins, in)
		}
	}
	return run.ChangedInputs(ins)
}

// samplesInBounds refuses a kept row of samples.csv with a value outside
// its parameter's bounds in the study (not this run's samples).
func (r *Report) samplesInBounds(s *study.Study) error {
	rows := make([]int, 0, len(r.rows))
	for i := range r.rows {
		rows = append(rows, i)
	}
	sort.Ints(rows)
	byName := map[string]abi.Param{}
	for _, p := range s.Free {
		byName[p.Name] = p
	}
	for _, i := range rows {
		for j, v := range r.rows[i] {
			p, ok := byName[r.names[j]]
			if ok && !(v >= p.Lower && v <= p.Upper) {
				return fmt.Errorf("%s:%d: column %s: %g is not a sample of this run (outside the parameter's bounds [%g, %g])", filepath.Join(r.Dir, "samples.csv"), i+2, p.Name, v, p.Lower, p.Upper)
			}
		}
	}
	return nil
}

// maxSamplesBytes bounds samples.csv: it only refuses what is not a file
// of samples (a sparse file of a terabyte); the rows are streamed.
const maxSamplesBytes = 1 << 40

// scan reads the rows in keep into r.rows and returns the number of data
// rows.
func (r *Report) scan(path string, keep map[int]bool) (int, error) {
	f, err := safefile.Open(path, maxSamplesBytes)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), dataset.MaxLineBytes)
	// A line is split as CSV (quoted fields, as a spreadsheet saves the
	// file), and a byte-order mark dropped: what kinfer analyze reads.
	split := func(line string) ([]string, error) {
		cr := csv.NewReader(strings.NewReader(line))
		cr.FieldsPerRecord = -1
		return cr.Read()
	}
	if !sc.Scan() {
		if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
			return 0, fmt.Errorf("%s: the header is a line longer than %d bytes, the most accepted", path, dataset.MaxLineBytes)
		} else if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return 0, fmt.Errorf("%s: no header", path)
	}
	header, err := split(strings.TrimPrefix(strings.TrimRight(sc.Text(), "\r"), "\uFEFF"))
	if err != nil {
		return 0, fmt.Errorf("%s:1: %v", path, err)
	}
	for k := range header {
		header[k] = strings.TrimSpace(header[k])
	}
	col := make([]int, len(r.names))
	for j, name := range r.names {
		if col[j] = slices.Index(header, name); col[j] < 0 {
			return 0, fmt.Errorf("%s: no column %s", path, name)
		}
	}
	r.rows = map[int][]float64{}
	i := 0
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if keep[i] {
			fields, err := split(line)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: %v", path, i+2, err)
			}
			if len(fields) != len(header) {
				return 0, fmt.Errorf("%s:%d: %d fields, the header has %d", path, i+2, len(fields), len(header))
			}
			v := make([]float64, len(col))
			for j, c := range col {
				if v[j], err = plainfloat.Parse(strings.TrimSpace(fields[c])); err != nil {
					return 0, fmt.Errorf("%s:%d: column %s: %v", path, i+2, r.names[j], err)
				}
				if math.IsNaN(v[j]) || math.IsInf(v[j], 0) {
					return 0, fmt.Errorf("%s:%d: column %s: %g is not a sample value (a run writes finite parameter values)", path, i+2, r.names[j], v[j])
				}
			}
			r.rows[i] = v
		}
		i++
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return 0, fmt.Errorf("%s:%d: a line longer than %d bytes, the most accepted", path, i+2, dataset.MaxLineBytes)
	} else if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return i, nil
}

// column is parameter j over the rows idx.
func (r *Report) column(j int, idx []int) []float64 {
	out := make([]float64, len(idx))
	for k, i := range idx {
		out[k] = math.NaN()
		if v, ok := r.rows[i]; ok {
			out[k] = v[j]
		}
	}
	return out
}

const (
	panelW = 4 * vg.Inch
	panelH = 3 * vg.Inch
)

// posterior draws the marginal histograms with the priors and the corner
// plot.
func (r *Report) posterior(s *study.Study, o Options) {
	n := r.nrows
	idx := figures.Thin(n, o.MaxSamples)
	title, section := "posterior", "Posterior marginals"
	if r.propagation() != nil {
		title, section = "prior draws", "Prior draws"
	}
	var hists []*figures.Figure
	cols := make([][]float64, len(r.names))
	for j, name := range r.names {
		col := r.column(j, idx)
		cols[j] = col
		var dens func(float64) float64
		dname := ""
		lower, upper := math.Inf(-1), math.Inf(1)
		if s != nil {
			if k := slices.IndexFunc(s.Free, func(p abi.Param) bool { return p.Name == name }); k >= 0 && k < len(s.Priors) {
				var err error
				var mass float64
				if dens, lower, upper, mass, err = truncatedPrior(s.Priors[k], s.Free[k]); err != nil {
					r.note("prior density of %s: %v", name, err)
				} else {
					dname = "prior " + priorName(s.Priors[k])
					if mass < 1-1e-6 { // the bounds cut a visible part
						dname += fmt.Sprintf(" in [%s, %s]", g(lower), g(upper))
					}
				}
			}
		}
		var marks []figures.Mark
		// A propagation run's "best" is the prior draw of the highest
		// log target, which with uniform priors and no data is a tie
		// among all draws: not drawn (audit 19).
		if r.Summary.Best != nil && r.propagation() == nil {
			if v, ok := r.Summary.Best.Theta[name]; ok {
				marks = append(marks, figures.Mark{X: v, Name: "best point"})
			}
		}
		if v, ok := r.truth()[name]; ok {
			// A truth far outside the samples would stretch the axis until
			// the histogram vanished (audit 17: k = 1e12): drawn only
			// within two ranges of the samples, else said.
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, x := range col {
				lo, hi = min(lo, x), max(hi, x)
			}
			span := hi - lo
			if span == 0 {
				span = math.Max(math.Abs(lo), 1) * 0.1
			}
			if v >= lo-2*span && v <= hi+2*span {
				marks = append(marks, figures.Mark{X: v, Name: "truth", Color: figures.Color(2), Solid: true})
			} else {
				r.note("the truth of %s, %s, lies far outside its samples' range [%s, %s]: not drawn in its histogram", name, g(v), g(lo), g(hi))
			}
		}
		label := name
		if u := r.Summary.Params[j].Unit; u != "" {
			label += " [" + u + "]"
		}
		p, err := figures.HistogramWithin(title+" of "+name, label, col, 0, dens, dname, lower, upper, marks...)
		if err != nil {
			r.note("histogram of %s: %v", name, err)
			continue
		}
		hists = append(hists, figures.Single("posterior-"+name, p, panelW, panelH))
	}
	note := fmt.Sprintf("Marginal posterior histograms (density, %d of %d samples) with the prior's density truncated to the model's bounds (the prior the run samples: zero outside them, divided by the prior's probability inside) over the same range; the dashed line is the best point.", len(idx), n)
	if r.propagation() != nil {
		note = fmt.Sprintf("A propagation run: its samples are draws of the prior (the uncertain inputs), not a posterior. Histograms of the draws (density, %d of %d) with the prior's density truncated to the model's bounds, which they should follow.", len(idx), n)
	}
	if len(r.truth()) > 0 {
		note += " The solid green line is the true value (analysis.json, kinfer analyze --truth)."
	}
	r.add(section, note, hists...)
	if d := len(r.names); d >= 2 {
		k := min(d, o.MaxCorner)
		size := max(1.4*vg.Inch, min(2.2*vg.Inch, 11*vg.Inch/vg.Length(k)))
		f, err := figures.Corner("corner", r.names[:k], cols[:k], o.MaxSamples, size)
		if err != nil {
			r.note("corner plot: %v", err)
			return
		}
		// The columns are the drawn samples already: the caption counts
		// them against the run's (audit 12: "2000 of 2000" for 32 000).
		f.Title = fmt.Sprintf("corner plot (%d of %d samples)", len(idx), n)
		cn := fmt.Sprintf("Pairwise scatter of the samples (%d of %d) below the diagonal, marginals on it.", len(idx), n)
		if k < d {
			cn += fmt.Sprintf(" The first %d of the %d free parameters.", k, d)
		}
		r.add("Corner plot", cn, f)
	}
}

// truth is analysis.json's truth per parameter (kinfer analyze --truth),
// empty without one.
func (r *Report) truth() map[string]float64 {
	out := map[string]float64{}
	tr, _ := r.analysis["truth"].(map[string]any)
	ps, _ := tr["params"].([]any)
	for _, e := range ps {
		m, _ := e.(map[string]any)
		if name, ok := m["name"].(string); ok && finite(num(m["truth"])) {
			out[name] = num(m["truth"])
		}
	}
	return out
}

func priorName(d prior.Dist) string { return d.String() }

// truncatedPrior is the density of the prior d of parameter p truncated
// to p's bounds — the prior a run samples (STUDY.md: the model's bounds
// truncate the prior): d's density divided by its mass inside the bounds
// (prior.Truncate), 0 outside — with the interval it is drawn over (the
// bounds cut to d's support) and the mass.
func truncatedPrior(d prior.Dist, p abi.Param) (func(float64) float64, float64, float64, float64, error) {
	_, mass, err := prior.Truncate(d, p.Lower, p.Upper)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	if !(mass > 0) {
		return nil, 0, 0, 0, fmt.Errorf("prior %s has no probability in [%g, %g] in float64", d, p.Lower, p.Upper)
	}
	slo, shi := d.Support()
	lo, hi := math.Max(p.Lower, slo), math.Min(p.Upper, shi)
	logMass := math.Log(mass)
	return func(x float64) float64 {
		if x < lo || x > hi {
			return 0
		}
		return math.Exp(d.LogPdf(x) - logMass)
	}, lo, hi, mass, nil
}

// stages draws the TMCMC stage convergence.
func (r *Report) stages() {
	list, _ := r.report["stages"].([]any)
	if len(list) == 0 {
		return
	}
	n := len(list)
	x := make([]float64, n)
	q, acc, logS, cum := nan(n), nan(n), nan(n), nan(n)
	var cdf [][]float64 // per parameter
	total := 0.0
	for i, e := range list {
		m, _ := e.(map[string]any)
		x[i] = float64(i + 1)
		q[i] = num(m["q"])
		acc[i] = num(m["acceptance_rate"])
		logS[i] = num(m["log_S"])
		total += logS[i]
		cum[i] = total
		c, _ := m["cdf_rmse"].([]any)
		for j, v := range c {
			for len(cdf) <= j {
				cdf = append(cdf, nan(n))
			}
			cdf[j][i] = num(v)
		}
	}
	var panels []*plot.Plot
	add := func(p *plot.Plot, err error) {
		if err != nil {
			r.note("stage convergence: %v", err)
			return
		}
		figures.Small(p)
		panels = append(panels, p)
	}
	add(figures.Lines("tempering exponent q", "stage", "q", true, []figures.Series{{X: x, Y: q}}))
	add(figures.Lines("acceptance rate", "stage", "acceptance", false, []figures.Series{{X: x, Y: acc}}))
	ev := "log evidence Σ log S"
	if le := num(r.report["log_evidence"]); finite(le) {
		ev = fmt.Sprintf("log evidence: %.4g ± %.2g", le, num(r.report["log_evidence_se"]))
	}
	add(figures.Lines(ev, "stage", "Σ log S_j", false, []figures.Series{{X: x, Y: cum}}))
	if len(cdf) > 0 {
		var ss []figures.Series
		many := len(cdf) > 10 // then thin grey lines, with their mean and maximum
		mean, mx := make([]float64, n), make([]float64, n)
		for j, c := range cdf {
			name := fmt.Sprint(j)
			if j < len(r.names) {
				name = r.names[j]
			}
			s := figures.Series{Name: name, X: x, Y: c, Thin: true}
			if many {
				s.Name, s.Color = "", color.NRGBA{0xb0, 0xb0, 0xb0, 0xff}
			}
			ss = append(ss, s)
			for i, v := range c {
				mean[i] += v / float64(len(cdf))
				mx[i] = math.Max(mx[i], v)
			}
		}
		if many {
			ss = append(ss, figures.Series{Name: "mean", X: x, Y: mean, Color: figures.Color(0)},
				figures.Series{Name: "max", X: x, Y: mx, Color: figures.Color(3)})
		}
		add(figures.Lines("change of the marginal CDFs", "stage", "CDF RMSE", true, ss))
	}
	if len(panels) == 0 {
		return
	}
	grid := [][]*plot.Plot{panels[:min(2, len(panels))]}
	if len(panels) > 2 {
		grid = append(grid, panels[2:])
	}
	f := figures.Grid("tmcmc-stages", "TMCMC stage convergence", grid, 8*vg.Inch, 6*vg.Inch)
	r.add("TMCMC stage convergence",
		fmt.Sprintf("%d stages: the tempering exponent q_j (1 at the last stage), the acceptance rate of the MCMC moves, the log evidence accumulated over the stages (Ching & Chen 2007) and the RMSE between each parameter's marginal CDF before and after the stage (Bartsoen et al. 2023, Fig. 7).", n), f)
}

// traces draws each parameter's value along each chain (metropolis: row
// i of samples.csv is chain i mod chains).
func (r *Report) traces(o Options) {
	chains, show, idx := r.traceRows(r.nrows, o)
	if len(idx) == 0 {
		return
	}
	per := r.nrows / chains
	var figs []*figures.Figure
	for j, name := range r.names {
		var ss []figures.Series
		for c := range show {
			x := make([]float64, len(idx))
			y := make([]float64, len(idx))
			for k, s := range idx {
				x[k] = float64(s)
				y[k] = math.NaN()
				if v, ok := r.rows[s*chains+c]; ok {
					y[k] = v[j]
				}
			}
			ss = append(ss, figures.Series{Name: fmt.Sprintf("chain %d", c), X: x, Y: y, Thin: true})
		}
		p, err := figures.Lines("trace of "+name, "kept step", name, false, ss)
		if err != nil {
			r.note("trace of %s: %v", name, err)
			continue
		}
		figs = append(figs, figures.Single("trace-"+name, p, panelW, panelH))
	}
	note := fmt.Sprintf("The kept draws of %d of the %d chains, step by step (%d of %d steps drawn).", show, chains, len(idx), per)
	if rh, ok := r.report["rhat"].([]any); ok && len(rh) == len(r.names) {
		var parts []string
		for j, v := range rh {
			parts = append(parts, fmt.Sprintf("%s %.4g", r.names[j], num(v)))
		}
		note += " Split-R̂: " + strings.Join(parts, ", ") + "."
	}
	r.add("MCMC traces", note, figs...)
}

// losses draws an optimiser's loss per start: adam's and anneal's
// trajectory (−log target), levmar's and gaussnewton's trace_cost (½‖r‖²).
func (r *Report) losses() {
	var ss []figures.Series
	ylabel, title := "", ""
	tr, ok := r.report["trajectory"].([]any)
	if m, one := r.report["trajectory"].(map[string]any); one {
		tr, ok = []any{m}, true // anneal: one run, one trajectory
	}
	if ok {
		ylabel, title = "−log target", "loss (−log target) per start"
		for k, e := range tr {
			m, _ := e.(map[string]any)
			it, _ := m["iteration"].([]any)
			var lt []any
			for _, key := range []string{"log_target", "best_log_target", "best"} {
				if v, ok := m[key].([]any); ok {
					lt = v
					break
				}
			}
			if len(it) == 0 || len(it) != len(lt) {
				continue
			}
			s := figures.Series{Name: fmt.Sprintf("start %d", k)}
			for i := range it {
				s.X = append(s.X, num(it[i]))
				s.Y = append(s.Y, -num(lt[i]))
			}
			ss = append(ss, s)
		}
	} else if tc, ok := r.report["trace_cost"].([]any); ok {
		ylabel, title = "cost ½‖r‖²", "cost per start"
		for k, e := range tc {
			c, _ := e.([]any)
			s := figures.Series{Name: fmt.Sprintf("start %d", k)}
			for i, v := range c {
				s.X = append(s.X, float64(i))
				s.Y = append(s.Y, num(v))
			}
			if len(s.X) > 0 {
				ss = append(ss, s)
			}
		}
	}
	if len(ss) == 0 {
		return
	}
	if len(ss) > 10 {
		for i := range ss {
			ss[i].Name, ss[i].Thin = "", true
		}
	}
	pos := true
	for _, s := range ss {
		for _, y := range s.Y {
			if finite(y) && y <= 0 {
				pos = false
			}
		}
	}
	p, err := figures.Lines(title, "iteration", ylabel, pos, ss)
	if err != nil {
		r.note("loss curve: %v", err)
		return
	}
	scale := "log"
	if !pos {
		scale = "linear (some values ≤ 0)"
	}
	r.add("Optimiser loss", fmt.Sprintf("The loss of each of the %d start(s) against the iteration; %s y axis.", len(ss), scale),
		figures.Single("loss", p, 6*vg.Inch, 3.5*vg.Inch))
}

// fit draws the model's outputs over the observations.
// Bounds of the model-fit figures: rows drawn per dataset, and model
// outputs held per dataset (samples × rows × outputs).
const (
	maxFitRows   = 5000
	maxFitValues = 25_000_000
)

func (r *Report) fit(ctx context.Context, s *study.Study, o Options, sampler bool) error {
	d := len(s.Free)
	var pts [][]float64
	if sampler && len(r.names) == d && r.nrows > 0 {
		for _, i := range figures.Thin(r.nrows, o.MaxPredictive) {
			if v, ok := r.rows[i]; ok {
				pts = append(pts, slices.Clone(v))
			}
		}
	} else if r.Summary.Best != nil && len(r.Summary.Best.Theta) > 0 {
		th := make([]float64, d)
		for j, p := range s.Free {
			v, ok := r.Summary.Best.Theta[p.Name]
			if !ok {
				return fmt.Errorf("the best point has no %s", p.Name)
			}
			th[j] = v
		}
		pts = [][]float64{th}
		sampler = false
	} else {
		return errors.New("no samples and no best point")
	}
	pred := "posterior" // the band's samples
	if r.propagation() != nil {
		pred = "prior"
	}
	spec := s.ModelInfo.Spec
	m := len(spec.Outputs)
	tg := target.New(s, o.Workers)
	var figs []*figures.Figure
	var thinned, cut []string
	for _, ds := range s.Data {
		// The outputs of every sample at every row are held at once: at
		// most maxFitValues of them (a dataset of 10⁶ rows takes fewer
		// samples for its band).
		dpts := pts
		if n := max(1, maxFitValues/max(1, ds.K*m)); len(dpts) > n {
			dpts = nil
			for _, i := range figures.Thin(len(pts), n) {
				dpts = append(dpts, pts[i])
			}
			thinned = append(thinned, fmt.Sprintf("%s: the band from %d of the %d samples", ds.Name, len(dpts), len(pts)))
		}
		ys, sts, err := tg.OutputsStoppable(ctx, dpts, ds)
		if err != nil {
			return err
		}
		var ok [][]float64
		for i, y := range ys {
			if sts[i] == abi.OK {
				ok = append(ok, y)
			}
		}
		if len(ok) == 0 {
			r.note("model fit on %s: no sample evaluated (status %v)", ds.Name, sts[0])
			continue
		}
		// x: the first condition whose values are in ascending order in
		// the file (a sweep: a length, an angle, a time), else the row (a
		// recorded trajectory, whose conditions go back and forth).
		xs := make([]float64, ds.K)
		xlabel := "row of " + ds.Name
		for k := range xs {
			xs[k] = float64(k)
		}
		c := len(spec.Conditions)
		for j := range c {
			asc := ds.K > 1
			for k := 1; k < ds.K && asc; k++ {
				asc = ds.X[k*c+j] >= ds.X[(k-1)*c+j]
			}
			if !asc {
				continue
			}
			for k := range xs {
				xs[k] = ds.X[k*c+j]
			}
			xlabel = spec.Conditions[j].Name
			if u := spec.Conditions[j].Unit; u != "" {
				xlabel += " [" + u + "]"
			}
			break
		}
		order := make([]int, ds.K)
		for k := range order {
			order[k] = k
		}
		sort.SliceStable(order, func(a, b int) bool { return xs[order[a]] < xs[order[b]] })
		// A dataset of 10⁶ rows drawn whole made a 133 MB report (audit
		// 4): at most maxFitRows rows, evenly spaced along x.
		if len(order) > maxFitRows {
			keep := figures.Thin(len(order), maxFitRows)
			sub := make([]int, len(keep))
			for i, k := range keep {
				sub[i] = order[k]
			}
			order = sub
			thinned = append(thinned, fmt.Sprintf("%s: %d of %d rows, evenly spaced in %s", ds.Name, len(order), ds.K, xlabel))
		}
		obs := observed(s, ds)
		shown := 0
		var left []string
		for oi, out := range spec.Outputs {
			ob, has := obs[out.Name]
			if !has {
				continue
			}
			if shown >= o.MaxOutputs {
				left = append(left, out.Name)
				continue
			}
			shown++
			X := make([]float64, len(order))
			med, lo, hi, Y := nan(len(order)), nan(len(order)), nan(len(order)), nan(len(order))
			col := make([]float64, len(ok))
			for k, row := range order {
				X[k] = xs[row]
				Y[k] = ob[row]
				for i, y := range ok {
					col[i] = y[row*m+oi]
				}
				q := figures.Quantiles(col, 0.05, 0.5, 0.95)
				lo[k], med[k], hi[k] = q[0], q[1], q[2]
			}
			model := figures.Series{Name: "best point", X: X, Y: med, Color: figures.Color(3)}
			if sampler {
				model.Name = fmt.Sprintf("%s median, 5–95 %% (%d samples)", pred, len(ok))
				model.Lo, model.Hi = lo, hi
			}
			ylabel := out.Name
			if out.Unit != "" {
				ylabel += " [" + out.Unit + "]"
			}
			p, err := figures.Lines(fmt.Sprintf("%s on %s", out.Name, ds.Name), xlabel, ylabel, false,
				[]figures.Series{{Name: "observed", X: X, Y: Y, Points: true, Color: figures.Black}, model})
			if err != nil {
				r.note("fit of %s on %s: %v", out.Name, ds.Name, err)
				continue
			}
			figs = append(figs, figures.Single("fit-"+ds.Name+"-"+out.Name, p, panelW, panelH))
		}
		// Said, not silently dropped (audit 19: 24 of 36 outputs left out).
		if len(left) > 0 {
			cut = append(cut, fmt.Sprintf("%s: the first %d of its %d observed outputs (not drawn: %s)", ds.Name, shown, shown+len(left), strings.Join(left, ", ")))
		}
	}
	note := "The model's outputs at the best point against the observed data."
	if sampler {
		note = fmt.Sprintf("Observed data (points) and the %s-predictive median with its 5–95 %% band of the model outputs, from %d evenly spaced samples (noise not added).", pred, len(pts))
	}
	if len(thinned) > 0 {
		note += " Drawn: " + strings.Join(thinned, "; ") + "."
	}
	if len(cut) > 0 {
		note += fmt.Sprintf(" At most %d outputs a dataset are drawn: %s.", o.MaxOutputs, strings.Join(cut, "; "))
	}
	r.add("Model fit", note, figs...)
	return nil
}

// observed returns each observed output of ds (by name), over its rows.
func observed(s *study.Study, ds *study.Dataset) map[string][]float64 {
	out := map[string][]float64{}
	for _, t := range s.Terms {
		if t.Data != ds {
			continue
		}
		for j, name := range t.Outputs {
			col := make([]float64, ds.K)
			any := false
			for k := range col {
				col[k] = t.Obs[k*len(t.Outputs)+j]
				any = any || finite(col[k])
			}
			if any {
				out[name] = col
			}
		}
	}
	return out
}

func nan(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return math.NaN()
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
