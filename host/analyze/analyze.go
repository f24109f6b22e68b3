package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/analysis"
	"github.com/kinfer/kinfer/host/dataset"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/wasm"
	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/kinfer/kinfer/internal/sigfig"
	"golang.org/x/text/width"
)

// OutputFile is the analysis written next to the run's outputs.
const OutputFile = "analysis.json"

// Spread is one parameter's 5–95 % posterior spread (Bartsoen Table 5).
type Spread struct {
	Name   string `json:"name"`
	Unit   string `json:"unit,omitempty"`
	P05    run.F  `json:"p05"`
	P95    run.F  `json:"p95"`
	Spread run.F  `json:"spread"` // p95 − p05
	// PriorRange is the prior's range (analysis.PriorRange): upper − lower
	// of a uniform prior's (truncated) support; for a normal, lognormal or
	// truncated normal prior (q95 − q05)/0.9 of the prior truncated to the
	// bounds, the width of the uniform with the same central 90 %
	// interval. PriorRangeDef says which ("support", "central-90/0.9").
	PriorRange    run.F  `json:"prior_range"`
	PriorRangeDef string `json:"prior_range_def"`
	// Relative is spread / prior range; null in JSON when the range is
	// 0 or infinite (a prior narrower than rounding, say).
	Relative run.F `json:"relative"`
}

// Regression is one of Bartsoen's Eq. 9–11 fitted on the posterior samples
// of one ligament bundle: y on the predictors, with R² (Table 6) and the
// coefficients (Table 7).
type Regression struct {
	Bundle    string   `json:"bundle"`
	Equation  string   `json:"equation"` // "9", "10" or "11"
	Y         string   `json:"y"`
	X         []string `json:"x"`
	Coef      []run.F  `json:"coef"` // run.F: a NaN (a skipped fit) is written as null
	Intercept run.F    `json:"intercept"`
	R2        run.F    `json:"r2"`
	Skipped   string   `json:"skipped,omitempty"` // why the fit was not possible
}

// Analysis is analysis.json.
type Analysis struct {
	Study       string   `json:"study"`
	Samples     int      `json:"samples"`
	Params      []Spread `json:"params"`
	Predictive  []Fit    `json:"predictive"`
	PredSamples int      `json:"predictive_samples"` // samples evaluated for the predictive fit
	// PredictiveBasis says what the predictive fit evaluated when it is
	// not posterior samples: an optimiser's best row.
	PredictiveBasis string `json:"predictive_basis,omitempty"`
	// Note says how to read params for an optimiser's run.
	Note string `json:"note,omitempty"`
	// Regressions are Eq. 9–11 per bundle, for parameters named
	// k_<bundle>, epsr_<bundle> and xF_/yF_/xT_/yT_<bundle> (the knee).
	Regressions []Regression `json:"regressions,omitempty"`
	// Stages is Fig. 7: per TMCMC stage, how much the marginal CDFs moved
	// (the method's cdf_rmse per parameter, summarised).
	Stages []StageChange `json:"stages,omitempty"`
	// Inputs are the files the analysis reloaded (the study, its data,
	// init and plugins), each checked against the run's record: the
	// sha256 of each is the one the run had.
	Inputs []run.Input `json:"inputs,omitempty"`
	// Truth is the check against known true values (--truth FILE).
	Truth *TruthReport `json:"truth,omitempty"`
	// Stopped says the run did not complete (summary.json complete
	// false): its samples are a partial result, not a posterior sample,
	// and the note says which (audit 7: a TMCMC run stopped at q = 0.0066
	// passed a truth check with nothing to say so).
	Stopped     bool   `json:"stopped,omitempty"`
	StoppedNote string `json:"stopped_note,omitempty"`
}

// StageChange summarises one TMCMC stage's per-parameter CDF RMSE.
type StageChange struct {
	Stage    int    `json:"stage"`
	Q        run.F  `json:"q"`
	Mean     run.F  `json:"mean_cdf_rmse"`
	Max      run.F  `json:"max_cdf_rmse"`
	MaxParam string `json:"max_param"`
}

// Options configure Analyze.
type Options struct {
	Workers int
	// MaxPredictive bounds the samples evaluated for the posterior
	// predictive (0: 1000).
	MaxPredictive int
	Runtime       *wasm.Runtime
	// Truth is a truth file (ReadTruth) to check the samples against; ""
	// for none.
	Truth string
	// Previous are the values a stage of a multi-stage study inherited
	// (study.Options.Previous): the study reloads with them.
	Previous map[string]float64
	// MemoryBudget bounds the memory of samples.csv's table (a third
	// of it; 0: run.DefaultMemoryBudget()).
	MemoryBudget int64
	// IgnoreTrust is study.Options.IgnoreTrust for the reloaded study.
	IgnoreTrust string
}

// Analyze analyses the run in dir and writes dir/analysis.json.
func Analyze(ctx context.Context, dir string, o Options) (*Analysis, error) {
	var sum struct {
		Study        string          `json:"study"`
		StudyFile    string          `json:"study_file"`
		Samples      *int            `json:"samples"`
		Provenance   *run.Provenance `json:"provenance"`
		MethodReport struct {
			Stages []struct {
				Q       *float64   `json:"q"`
				CDFRMSE []*float64 `json:"cdf_rmse"`
			} `json:"stages"`
		} `json:"method_report"`
		Method    string                `json:"method"`
		Best      *run.Best             `json:"best"`
		Transform *run.TransformSummary `json:"transform"`
		Complete  bool                  `json:"complete"`
		Error     string                `json:"error"`
	}
	var raw struct {
		MethodReport any `json:"method_report"`
	}
	var truths []TruthValue
	if o.Truth != "" {
		// The analysis is written to dir/analysis.json: not over the
		// truth file (audit 10: --truth DIR/analysis.json was replaced).
		if _, same := run.Clobbers(filepath.Join(dir, OutputFile), []run.Input{{Role: "truth", Path: o.Truth}}); same {
			return nil, fmt.Errorf("analyze: --truth %s is the file the analysis is written to (%s): copy the truth elsewhere", o.Truth, filepath.Join(dir, OutputFile))
		}
	}
	if o.Truth != "" { // read first: a bad file fails before any work
		var err error
		if truths, err = ReadTruth(o.Truth); err != nil {
			return nil, err
		}
	}
	if err := run.ReadRecord(filepath.Join(dir, "summary.json"), run.MaxSummaryBytes, &sum); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("analyze: %w (%s)", err, run.NotARun(dir))
		}
		return nil, fmt.Errorf("analyze: %w", err)
	}
	// The method's report: its warnings, its standard errors, and whether
	// it is an optimiser (run.Optimiser reads a plugin's cost trace:
	// review 23, read only with --truth before).
	_ = run.ReadRecord(filepath.Join(dir, "summary.json"), run.MaxSummaryBytes, &raw)
	// The analysis reloads the study, its data and its plugins: inputs
	// changed since the run would compare the run's posterior with other
	// data (or another model) and report that as the run's fit.
	if why := run.StudyMismatch(sum.StudyFile, sum.Provenance); why != "" {
		return nil, fmt.Errorf("analyze: cannot analyse %s: %s (the analysis reloads the run's study and its data, and would compare the run's samples with another study's); run the study again (kinfer run STUDY -o ANOTHER_DIR)", dir, why)
	}
	if sum.Provenance != nil {
		if changed := run.ChangedInputs(sum.Provenance.Inputs); len(changed) > 0 {
			return nil, fmt.Errorf("analyze: cannot analyse %s: inputs changed since the run (the analysis reloads the study and its data, and would compare the run's samples with other ones):\n  %s\nrestore them, or run the study again (kinfer run STUDY -o ANOTHER_DIR)",
				dir, strings.Join(changed, "\n  "))
		}
	}
	budget := o.MemoryBudget
	if budget <= 0 {
		budget = run.DefaultMemoryBudget()
	}
	s, err := study.Load(ctx, sum.StudyFile, study.Options{Workers: max(o.Workers, 1), Runtime: o.Runtime, Previous: o.Previous, MemoryBudget: budget, IgnoreTrust: o.IgnoreTrust})
	if err != nil {
		return nil, fmt.Errorf("analyze: reloading the run's study: %w", err)
	}
	defer s.Close()
	// What the study loaded now must be what the run recorded: a record
	// edited to name another copy of the study, or without an input's
	// entry, would pass the checks above (audit 10).
	loaded, err := run.Inputs(s)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	if extra := run.UnrecordedInputs(loaded, sum.Provenance.Inputs); len(extra) > 0 {
		return nil, fmt.Errorf("analyze: cannot analyse %s: the study loads inputs the run did not record:\n  %s\nrun the study again (kinfer run STUDY -o ANOTHER_DIR)", dir, strings.Join(extra, "\n  "))
	}
	// The reloaded data (at most half the budget, study.Load) stays live
	// beside the samples and the predictive outputs, twice for the
	// collector: what is left is theirs (audit 13: 5.3 million rows took
	// 1.2 GB under a budget of 64 MiB).
	budget = max(budget-2*s.DataBytes(), 1)
	// The run's own samples may exceed a data file's bound (a run holds
	// them within its memory budget): read within this one's. The table
	// is a third of it: 2.4 million rows of 4 columns (a table of 134 MB)
	// peaked at 369 MB with the parse and the samples' copy (audit 10: a
	// budget of 64 MiB was passed 5.8 times).
	tbl, err := dataset.ReadOutput(filepath.Join(dir, "samples.csv"), budget/3)
	if err != nil {
		if errors.Is(err, dataset.ErrTooManyRows) {
			// Only a table past the memory budget is lifted by a larger one
			// (audit 5: the hint came with a FIFO, a missing file, a long line).
			return nil, fmt.Errorf("%w (kinfer analyze --memory-budget raises the memory it may take)", err)
		}
		return nil, err
	}
	if sum.Samples == nil {
		return nil, fmt.Errorf("analyze: summary.json records no sample count (samples): not a record a run writes (edited?)")
	}
	if err := run.CheckSamples(filepath.Join(dir, "samples.csv"), len(tbl.Rows), *sum.Samples); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	names := make([]string, len(s.Free))
	for i, p := range s.Free {
		names[i] = p.Name
	}
	flat, err := tbl.Matrix(names)
	if err != nil {
		return nil, fmt.Errorf("analyze: samples.csv does not match study %s (%v)", sum.StudyFile, err)
	}
	d := len(names)
	samples := make([][]float64, len(tbl.Rows))
	for i := range samples {
		samples[i] = flat[i*d : (i+1)*d]
		// Every run writes finite parameter values inside the study's
		// bounds (the run refuses a method's sample outside them; with
		// [transform], θ = T(x) may round just past a bound): anything
		// else is not this run's sample.
		for j, v := range samples[i] {
			p := s.Free[j]
			if math.IsNaN(v) || math.IsInf(v, 0) || !s.Transformed() && !(v >= p.Lower && v <= p.Upper) {
				return nil, fmt.Errorf("analyze: %w", tbl.Errorf(i, p.Name, "%g is not a sample of this run: its values are finite and lie in the parameter's bounds [%g, %g]", v, p.Lower, p.Upper))
			}
		}
	}
	a := &Analysis{Study: s.Name, Samples: len(samples)}
	if !sum.Complete {
		a.Stopped = true
		a.StoppedNote = "the run did not complete (" + sum.Error + "): its samples are the method's partial result, not a posterior sample"
		if ws := run.MethodWarnings(raw.MethodReport); len(ws) > 0 {
			a.StoppedNote += "; the method says: " + strings.Join(ws, "; ")
		}
	}
	if sum.Provenance != nil {
		a.Inputs = sum.Provenance.Inputs
	}
	col := make([]float64, len(samples))
	for j, p := range s.Free {
		for i := range samples {
			col[i] = samples[i][j]
		}
		sp, err := analysis.PercentileSpread(col, p.Lower, p.Upper)
		if err != nil {
			return nil, fmt.Errorf("analyze: %s: %w", p.Name, err)
		}
		r, def, err := analysis.PriorRange(s.Priors[j], p.Lower, p.Upper)
		if err != nil {
			return nil, fmt.Errorf("analyze: %s: the prior's range: %w", p.Name, err)
		}
		rel := math.NaN()
		if r > 0 && !math.IsInf(r, 0) {
			rel = sp.Absolute / r
		}
		a.Params = append(a.Params, Spread{Name: p.Name, Unit: p.Unit, P05: run.F(sp.P05), P95: run.F(sp.P95),
			Spread: run.F(sp.Absolute), PriorRange: run.F(r), PriorRangeDef: def, Relative: run.F(rel)})
	}
	if truths != nil {
		var w []float64
		if wi := weightIndex(tbl.Columns, s); wi >= 0 {
			w = make([]float64, len(tbl.Rows))
			for i, row := range tbl.Rows {
				w[i] = row[wi]
			}
		}
		est, noBand := fitEstimates(s, sum.Method, sum.Best, sum.Transform, raw.MethodReport)
		if a.Truth, err = checkTruth(o.Truth, truths, s.Free, s.ModelInfo.Spec.Params, s.Base, samples, w, est, noBand); err != nil {
			return nil, err
		}
		// A propagation's samples are prior draws: the band is the
		// prior's, not a posterior's (audit 14: said nothing).
		if s.MethodInfo.Spec.Has(abi.CapPropagation) || sum.Method == "builtin:montecarlo" {
			a.Truth.Basis = "prior draws"
			a.Truth.Note = "a propagation: samples.csv holds draws of the prior (the inputs' distributions), not a posterior, so the band is the prior's and says only whether the truth is plausible under it"
		}
		lp, ll := tbl.Index("log_prior"), tbl.Index("log_likelihood")
		if theta := a.Truth.theta; theta != nil && lp >= 0 && ll >= 0 {
			// Every free parameter has a truth, whether or not a band
			// checks it (audit 6: a least-squares estimate on a bound lost
			// the log target at the truth).
			lt := make([]float64, len(tbl.Rows))
			for i, row := range tbl.Rows {
				lt[i] = row[lp] + row[ll]
			}
			if a.Truth.AtTruth, err = atTruth(ctx, s, max(o.Workers, 1), theta, lt, w); err != nil {
				return nil, err
			}
		}
	}
	a.Regressions = regressions(names, samples)
	for j, st := range sum.MethodReport.Stages {
		if len(st.CDFRMSE) != len(names) {
			continue
		}
		sc := StageChange{Stage: j + 1, Q: run.F(math.NaN())}
		if st.Q != nil {
			sc.Q = run.F(*st.Q)
		}
		n, mean, mx := 0, 0.0, 0.0
		for i, r := range st.CDFRMSE {
			if r == nil {
				continue
			}
			mean += *r
			n++
			if *r > mx {
				mx, sc.MaxParam = *r, names[i]
			}
		}
		if n > 0 {
			sc.Mean, sc.Max = run.F(mean/float64(n)), run.F(mx)
			a.Stages = append(a.Stages, sc)
		}
	}
	maxPred := o.MaxPredictive
	if maxPred <= 0 {
		maxPred = 1000
	}
	// An optimiser's rows are its starts' end points: averaging a
	// diverged start's predictions into the fit reported ten times the
	// fit's error (audit 21: gaussnewton on NIST Eckerle4). Its fit is at
	// summary.json's best, the point report.html draws (a least-squares
	// method ranks by its likelihood alone, review 22).
	predFrom := samples
	if run.Optimiser(sum.Method, s.MethodInfo.Spec.Has(abi.CapLeastSquares), raw.MethodReport) && len(samples) > 0 {
		a.Note = fmt.Sprintf("%s is an optimiser: samples.csv holds its starts' end points, so p05, p95 and spread are over the starts, not a posterior", sum.Method)
		if best := bestTheta(sum.Best, s.Free); best != nil {
			predFrom = [][]float64{best}
			a.PredictiveBasis = "summary.json's best point, not an average over the starts"
			for i, row := range samples {
				if slices.Equal(row, best) {
					a.PredictiveBasis = fmt.Sprintf("the best start's end point (row %d of samples.csv, summary.json's best), not an average over the starts", i+1)
					break
				}
			}
		}
	}
	if a.Predictive, a.PredSamples, err = Predictive(ctx, s, predFrom, maxPred, max(o.Workers, 1), budget); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	return a, run.WriteAtomic(filepath.Join(dir, OutputFile), func(w io.Writer) error {
		_, err := w.Write(append(out, '\n'))
		return err
	})
}

// Text renders the analysis as a table for the terminal.
func (a *Analysis) Text() string {
	var b strings.Builder
	if a.Stopped {
		fmt.Fprintf(&b, "WARNING: %s\n", guesttext.Escape(a.StoppedNote))
	}
	fmt.Fprintf(&b, "%s: %d samples\n\n", a.Study, a.Samples)
	// Columns as wide as their widest cell (audit 18: a p05 of 15 digits
	// ran into its p95).
	rows := [][]string{{"param", "p05", "p95", "spread", "of prior"}}
	for _, p := range a.Params {
		rel := "-"
		if r := float64(p.Relative); !math.IsNaN(r) && !math.IsInf(r, 0) {
			rel = fmt.Sprintf("%.1f%%", 100*r)
		}
		rows = append(rows, []string{p.Name, sigfig.Format(float64(p.P05), 5, float64(p.Spread)), sigfig.Format(float64(p.P95), 5, float64(p.Spread)), fmt.Sprintf("%.5g", float64(p.Spread)), rel})
	}
	b.WriteString(table(rows, 1))
	if a.Note != "" {
		fmt.Fprintf(&b, "(%s)\n", a.Note)
	}
	if a.Truth != nil {
		a.Truth.text(&b)
	}
	if len(a.Predictive) == 0 {
		fmt.Fprintf(&b, "\nposterior-predictive fit: none (the study has no observed data)\n")
	} else {
		if a.PredictiveBasis != "" {
			fmt.Fprintf(&b, "\nfit at %s:\n", a.PredictiveBasis)
		} else {
			fmt.Fprintf(&b, "\nposterior-predictive fit (%d samples):\n", a.PredSamples)
		}
		rows := [][]string{{"dataset", "output", "n", "MAE", "RMSE", "max |error|", "unit"}}
		for _, f := range a.Predictive {
			unit := f.Unit
			if unit == "" {
				unit = "-"
			}
			rows = append(rows, []string{f.Dataset, f.Output, fmt.Sprint(f.N), fmt.Sprintf("%.5g", float64(f.MAE)), fmt.Sprintf("%.5g", float64(f.RMSE)), fmt.Sprintf("%.5g", float64(f.MaxAbs)), unit})
		}
		b.WriteString(table(rows, 2, 6))
	}
	if len(a.Stages) > 0 {
		fmt.Fprintf(&b, "\nmarginal CDF change per TMCMC stage (Bartsoen Fig. 7):\n%5s %10s %10s %10s  %s\n", "stage", "q", "mean RMSE", "max RMSE", "at")
		for _, st := range a.Stages {
			fmt.Fprintf(&b, "%5d %10.3g %10.4f %10.4f  %s\n", st.Stage, st.Q, st.Mean, st.Max, st.MaxParam)
		}
	}
	if len(a.Regressions) > 0 {
		fmt.Fprintf(&b, "\nlinear regressions (Bartsoen Eq. 9–11), R²:\n%-10s %10s %10s %10s\n", "bundle", "εr~attach", "k~attach", "k~εr")
		byBundle := map[string]map[string]float64{}
		var order []string
		for _, r := range a.Regressions {
			if byBundle[r.Bundle] == nil {
				byBundle[r.Bundle] = map[string]float64{}
				order = append(order, r.Bundle)
			}
			byBundle[r.Bundle][r.Equation] = float64(r.R2)
		}
		for _, bn := range order {
			fmt.Fprintf(&b, "%-10s", bn)
			for _, eq := range []string{"9", "10", "11"} {
				if v, ok := byBundle[bn][eq]; ok {
					fmt.Fprintf(&b, " %10.2f", v)
				} else {
					fmt.Fprintf(&b, " %10s", "-")
				}
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// table lays out rows (the first the header) in columns as wide as their
// widest cell, two spaces apart: columns before the first of left are
// left-aligned (names), from it on right-aligned (numbers), and columns
// from the second index of left on left-aligned again (units).
func table(rows [][]string, left ...int) string {
	width := map[int]int{}
	for _, r := range rows {
		for j, c := range r {
			width[j] = max(width[j], displayWidth(c))
		}
	}
	leftAligned := func(j int) bool { return j < left[0] || len(left) > 1 && j >= left[1] }
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for j, c := range r {
			if j > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-displayWidth(c))
			if leftAligned(j) {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// displayWidth is the columns a terminal gives s: combining marks and
// format characters none, East Asian wide and fullwidth characters
// (Unicode UAX #11, golang.org/x/text/width) two (review 19: a table
// aligned by runes misaligned such names).
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

// regressions fits Eq. 9 (ε_r on the attachments), Eq. 10 (k on the
// attachments) and Eq. 11 (k on ε_r) for every bundle b whose parameters
// k_b and epsr_b are free, with whichever of xF_b, yF_b, xT_b, yT_b are free
// as the attachments. ε_r is in percent, as in the paper's Table 7.
func regressions(names []string, samples [][]float64) []Regression {
	idx := map[string]int{}
	var bundles []string
	for i, n := range names {
		idx[n] = i
		if b, ok := strings.CutPrefix(n, "k_"); ok {
			bundles = append(bundles, b)
		}
	}
	column := func(i int, scale float64) []float64 {
		c := make([]float64, len(samples))
		for r, s := range samples {
			c[r] = scale * s[i]
		}
		return c
	}
	var out []Regression
	for _, b := range bundles {
		ki, okK := idx["k_"+b]
		ei, okE := idx["epsr_"+b]
		if !okK || !okE {
			continue
		}
		var attach []string
		var xs [][]float64
		for _, pre := range []string{"xF_", "yF_", "xT_", "yT_"} {
			if i, ok := idx[pre+b]; ok {
				attach = append(attach, pre+b)
				xs = append(xs, column(i, 1))
			}
		}
		fit := func(eq, y string, ycol []float64, x []string, xcol [][]float64) {
			r := Regression{Bundle: b, Equation: eq, Y: y, X: x}
			f, err := analysis.Regress(ycol, xcol...)
			if err != nil {
				r.Skipped, r.R2, r.Intercept = err.Error(), run.F(math.NaN()), run.F(math.NaN())
			} else {
				r.Intercept, r.R2 = run.F(f.Intercept), run.F(f.R2)
				for _, c := range f.Coef {
					r.Coef = append(r.Coef, run.F(c))
				}
			}
			out = append(out, r)
		}
		if len(attach) > 0 {
			fit("9", "epsr_"+b+" [%]", column(ei, 100), attach, xs)
			fit("10", "k_"+b, column(ki, 1), attach, xs)
		}
		fit("11", "k_"+b, column(ki, 1), []string{"epsr_" + b + " [%]"}, [][]float64{column(ei, 100)})
	}
	return out
}

// weightIndex is the index of samples.csv's weight column, or −1: a
// column WeightColumn that a method added after log_likelihood, and not a
// parameter (θ's columns come first) nor a model output (montecarlo's
// quantity of interest, named after it).
func weightIndex(cols []string, s *study.Study) int {
	ll := slices.Index(cols, "log_likelihood")
	wi := slices.Index(cols, WeightColumn)
	if ll < 0 || wi <= ll {
		return -1
	}
	for _, o := range s.ModelInfo.Spec.Outputs {
		if o.Name == WeightColumn {
			return -1
		}
	}
	return wi
}

// fitEstimates gives, for a run of an optimiser, what its truth check
// uses instead of the samples (which are its starts' end points, not a
// posterior): a least-squares method's estimates with their standard
// errors (of θ: through [transform] by the delta method), or, without
// them, the reason there is no band. A sampler's run gives nil, "".
func fitEstimates(s *study.Study, method string, best *run.Best, tr *run.TransformSummary, report any) (map[string]Estimate, string) {
	lsq := s.MethodInfo.Spec.Has(abi.CapLeastSquares)
	if !run.Optimiser(method, lsq, report) {
		return nil, ""
	}
	none := fmt.Sprintf("%s is an optimiser: samples.csv holds its starts' end points, not posterior samples, so there is no posterior band to check the truth against", method)
	ses, ofTheta := run.ThetaStandardErrors(report, tr)
	if !lsq || len(ses) == 0 || best == nil {
		return nil, none
	}
	if !ofTheta {
		return nil, none + " (the standard errors are of x, through [transform])"
	}
	est := map[string]Estimate{}
	for _, e := range ses {
		if v, ok := best.Theta[e.Name]; ok {
			est[e.Name] = Estimate{Value: v, SE: e.Value, AtBound: e.AtBound}
		}
	}
	return est, ""
}

// bestTheta is summary.json's best point as a row of the free parameters,
// or nil when it has none or lacks a parameter.
func bestTheta(b *run.Best, free []abi.Param) []float64 {
	if b == nil {
		return nil
	}
	th := make([]float64, len(free))
	for j, p := range free {
		v, ok := b.Theta[p.Name]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		th[j] = v
	}
	return th
}

func isWide(r rune) bool {
	k := width.LookupRune(r).Kind()
	return k == width.EastAsianWide || k == width.EastAsianFullwidth
}
