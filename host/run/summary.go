package run

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/stats"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/internal/guesttext"
	"strings"
)

// ParamSummary is the marginal summary of one parameter over the samples.
type ParamSummary struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	Mean F      `json:"mean"`
	SD   F      `json:"sd"`
	P05  F      `json:"p05"`
	P50  F      `json:"p50"`
	P95  F      `json:"p95"`
}

// Best is the evaluated point with the highest log target.
type Best struct {
	Theta     map[string]float64 `json:"theta"`
	LogTarget F                  `json:"log_target"`
	LogPrior  F                  `json:"log_prior"`
	LogLik    F                  `json:"log_likelihood"`
}

// Summary is summary.json (docs/OUTPUTS.md).
type Summary struct {
	Kinfer            string         `json:"kinfer"`
	Study             string         `json:"study"`
	StudyFile         string         `json:"study_file"`
	Model             string         `json:"model"`
	Method            string         `json:"method"`
	Likelihoods       []string       `json:"likelihoods"`
	Seed              uint64         `json:"seed"`
	Workers           int            `json:"workers"`
	GoMaxProcs        int            `json:"gomaxprocs"`
	Evaluations       int            `json:"evaluations"`
	FailedEvaluations int            `json:"failed_evaluations"`
	StatusCounts      map[string]int `json:"status_counts"`
	// NonFiniteFrom splits status_counts' non-finite by the component
	// that gave the NaN or +∞ ("model", or "likelihood NAME (COMPONENT)").
	NonFiniteFrom map[string]int `json:"non_finite_from,omitempty"`
	GradientMode  string         `json:"gradient_mode,omitempty"`
	// JacobianMode, Jacobians and JacobianEvaluations describe the
	// residual Jacobians a least-squares method asked for; Residuals is
	// the length of a point's residual vector (terms, then constraints).
	JacobianMode        string `json:"jacobian_mode,omitempty"`
	Jacobians           int    `json:"jacobians,omitempty"`
	JacobianEvaluations int    `json:"jacobian_evaluations,omitempty"`
	Residuals           int    `json:"residuals,omitempty"`
	// JacobianFailures and GradientFailures count the points of status ok
	// whose residual Jacobian or gradient could not be computed;
	// DerivativeFailures says which model export failed, with which
	// status, how often, and the plugin's last kinfer_last_error message.
	JacobianFailures   int    `json:"jacobian_failures,omitempty"`
	GradientFailures   int    `json:"gradient_failures,omitempty"`
	DerivativeFailures string `json:"derivative_failures,omitempty"`
	// EvaluationFailures says which plugin failed points (status 1 or 2),
	// with its last kinfer_last_error message (ABI.md §3).
	EvaluationFailures string `json:"evaluation_failures,omitempty"`
	// BatchFaults says which batched model calls faulted while their
	// points then each succeeded alone (target.BatchFaults).
	BatchFaults string `json:"batch_faults,omitempty"`
	// Constraints are the study's soft constraints, with their number of
	// residuals.
	Constraints       []ConstraintSummary `json:"constraints,omitempty"`
	WallSeconds       F                   `json:"wall_seconds"`
	ModelSeconds      F                   `json:"model_seconds"` // inside model calls, summed over workers
	EvalsPerSecond    F                   `json:"evaluations_per_second"`
	OutsideModelShare F                   `json:"outside_model_share"` // 1 − model_seconds/(wall_seconds·workers)
	Samples           int                 `json:"samples"`
	Params            []ParamSummary      `json:"params"`
	Best              *Best               `json:"best"`
	MethodReport      any                 `json:"method_report"`
	Fixed             map[string]float64  `json:"fixed,omitempty"`
	Transform         *TransformSummary   `json:"transform,omitempty"`
	// PriorWarnings: priors the model's bounds cut for the most part.
	PriorWarnings []string `json:"prior_warnings,omitempty"`
	// BoundWarnings: parameters whose posterior band lies against a bound.
	BoundWarnings []string `json:"bound_warnings,omitempty"`
	// InitFile, InitRows and InitRowsUsed: the study's init file, its
	// rows, and for a built-in method how many of them its prior draws
	// took (the rest were never run: a warning says so); −1 for a method
	// plugin, which gets every row as abi.Problem.Starts.
	InitFile     string `json:"init_file,omitempty"`
	InitRows     int    `json:"init_rows,omitempty"`
	InitRowsUsed int    `json:"init_rows_used,omitempty"`
	// Certified: the plugins certify = true checked before the run, with
	// the checks they passed.
	Certified []string `json:"certified,omitempty"`
	// MemoryBudget is the budget the run planned within (bytes).
	MemoryBudget int64       `json:"memory_budget"`
	Provenance   *Provenance `json:"provenance"`
	// Remote describes a run evaluated on remote workers (kinfer run
	// --nats; host/remote): the server, the run's id, the workers that
	// returned results and the chunks' delivery figures.
	Remote   any    `json:"remote,omitempty"`
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
}

// Status is how the run ended, as the console and report.html say it:
// "done", "FAILED (every evaluation failed)" for a run whose method ended
// with no samples because every evaluation failed (ErrAllFailed), else
// "STOPPED (partial results)".
func (s *Summary) Status() string {
	switch {
	case s.Complete:
		return "done"
	case s.Samples == 0 && strings.Contains(s.Error, ErrAllFailed.Error()):
		return "FAILED (every evaluation failed)"
	}
	return "STOPPED (partial results)"
}

// ConstraintSummary is one soft constraint in summary.json.
type ConstraintSummary struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Residuals int    `json:"residuals"`
}

// TransformSummary is summary.json's "transform" block: the study's
// reparameterisations and what they mean for the results.
type TransformSummary struct {
	Transforms []map[string]any `json:"transforms"`
	// XBounds are the bounds of the coordinates the method explored, by
	// parameter name.
	XBounds map[string][2]F `json:"x_bounds"`
	Note    string          `json:"note"`
	// Warnings: parts of a prior's support the transforms cannot reach.
	Warnings []string `json:"warnings,omitempty"`
	// StandardErrors are a least-squares method's standard errors
	// (method_report.statistics, which are of x) carried to θ by the delta
	// method: sqrt(diag(J Σx Jᵀ)), J = ∂θ/∂x at the best start's x.
	StandardErrors map[string]F `json:"standard_errors_theta,omitempty"`
}

// transformNote states the convention of the transformed target.
const transformNote = "the method explored x with theta = T(x); the log target at x is log prior + log likelihood of theta, " +
	"without the log-Jacobian of T: right for an optimiser (the same optimum in theta), but a sampler's draws follow " +
	"p(T(x)) L(T(x)) in x, which is not the posterior of theta. samples.csv, params and best report theta; method_report is in x."

// summarize builds summary.json from the run's tallies, the method's
// report and the samples (in θ).
func summarize(s *study.Study, t *target.Target, workers int, rep abi.Report, samples []abi.Sample, best abi.Result, wall time.Duration) *Summary {
	c := t.Counts()
	studyFile, err := filepath.Abs(s.Path)
	if err != nil {
		studyFile = s.Path
	}
	sum := &Summary{
		Kinfer: Version, Study: s.Name, StudyFile: studyFile,
		Model: s.ModelInfo.Ref, Method: s.MethodInfo.Ref,
		Seed: s.Seed, Workers: workers, GoMaxProcs: runtime.GOMAXPROCS(0),
		Evaluations: c.Evaluations, FailedEvaluations: c.Failed, StatusCounts: c.ByStatus, NonFiniteFrom: c.NonFiniteFrom,
		WallSeconds: F(wall.Seconds()), Samples: len(samples), MethodReport: boundReport(jsonSafe(rep.Extra)),
	}
	sum.ModelSeconds = F(c.ModelSeconds)
	if w := wall.Seconds(); w > 0 {
		sum.EvalsPerSecond = F(float64(c.Evaluations) / w)
		sum.OutsideModelShare = F(1 - c.ModelSeconds/(w*float64(workers)))
	}
	if c.Gradients > 0 {
		sum.GradientMode = t.GradientMode()
	}
	if c.Jacobians > 0 || c.JacobianEvals > 0 {
		sum.JacobianMode, sum.Jacobians, sum.JacobianEvaluations = t.JacobianMode(), c.Jacobians, c.JacobianEvals
	}
	sum.JacobianFailures, sum.GradientFailures = c.JacobianFailures, c.GradientFailures
	sum.DerivativeFailures = guesttext.Escape(t.DerivativeFailures())
	sum.EvaluationFailures = guesttext.Escape(t.EvaluationFailures())
	sum.BatchFaults = guesttext.Escape(t.BatchFaults())
	if s.MethodInfo.Spec.Has(abi.CapLeastSquares) || c.Jacobians > 0 {
		sum.Residuals = t.Residuals()
	}
	for _, k := range s.Constraints {
		sum.Constraints = append(sum.Constraints, ConstraintSummary{Name: k.Name, Kind: k.Kind, Residuals: k.Len()})
	}
	for _, term := range s.Terms {
		sum.Likelihoods = append(sum.Likelihoods, term.Component.Ref+" on "+term.Data.Name)
	}
	col := make([]float64, len(samples))
	for j, p := range s.Free {
		for i, smp := range samples {
			col[i] = smp.Theta[j]
		}
		nan := F(math.NaN())
		ps := ParamSummary{Name: p.Name, Unit: p.Unit, Mean: nan, SD: nan, P05: nan, P50: nan, P95: nan}
		if len(col) > 0 {
			st := stats.Summarize(col)
			ps.Mean, ps.SD, ps.P05, ps.P50, ps.P95 = F(st.Mean), F(st.SD), F(st.P05), F(st.P50), F(st.P95)
			// A sampler's whole central band against one bound: the bound,
			// not the data, decides where the posterior is (audit 4: a
			// prior cut by the model's bounds, the posterior a spike on
			// the bound, no warning; levmar warns of its own).
			// The band must also pile against the bound (its near end
			// closer to it than a tenth of its width), and the bound must
			// cut the prior where its density is not zero: a well
			// identified 0.096 ± 0.004 on a box [0, 1e9], or a lognormal
			// prior's draws near its own 0, are not decided by the bound
			// (audit 5: warned on every lognormal positive parameter).
			// One row (an optimiser's single start, anneal's best) has no
			// band: it is warned when it is on a finite bound itself, to
			// 1e-10 of the bound's magnitude, as least squares' at_bound
			// (audit 21: adam with starts = 1 ended on the bound with no
			// warning, the same study with 3 starts warned; review 22: 1e-10
			// of the range put 0.096 "on" the bound 0 of a box [0, 1e9]).
			if !s.MethodInfo.Spec.Has(abi.CapLeastSquares) {
				w, band := p.Upper-p.Lower, st.P95-st.P05
				for _, b := range []struct {
					side  string
					value float64
				}{{"lower", p.Lower}, {"upper", p.Upper}} {
					if j < len(s.Priors) && math.IsInf(s.Priors[j].LogPdf(b.value), -1) {
						continue // the prior's density vanishes there: not a cut
					}
					near := math.Min(math.Abs(st.P05-b.value), math.Abs(st.P95-b.value))
					switch {
					case len(col) == 1 && !math.IsInf(b.value, 0) && math.Abs(col[0]-b.value) <= 1e-10*math.Max(1, math.Abs(b.value)):
						sum.BoundWarnings = append(sum.BoundWarnings, fmt.Sprintf("%s: the run's one row is on the %s bound %g: the bound, not the data, decides it (widen the model's bounds or the prior if the data point beyond)",
							p.Name, b.side, b.value))
					case len(col) > 1 && w > 0 && !math.IsInf(w, 0) && math.Abs(st.P05-b.value) <= 0.01*w && math.Abs(st.P95-b.value) <= 0.01*w && near <= 0.1*band:
						sum.BoundWarnings = append(sum.BoundWarnings, fmt.Sprintf("%s: the samples' 5–95 %% band [%.6g, %.6g] lies against the %s bound %g: the bound, not the data, decides it (widen the model's bounds or the prior if the data point beyond)",
							p.Name, st.P05, st.P95, b.side, b.value))
					}
				}
			}
		}
		sum.Params = append(sum.Params, ps)
	}
	if !math.IsInf(best.LogTarget(), -1) {
		b := &Best{Theta: map[string]float64{}, LogTarget: F(best.LogTarget()), LogPrior: F(best.LogPrior), LogLik: F(best.LogLik)}
		th := best.Theta
		if s.Transformed() {
			th = s.Forward(th)
		}
		for j, p := range s.Free {
			b.Theta[p.Name] = th[j]
		}
		sum.Best = b
	}
	sum.PriorWarnings, sum.Certified = s.PriorWarnings, s.Certified
	if s.Transformed() {
		ts := &TransformSummary{XBounds: map[string][2]F{}, Note: transformNote, Warnings: s.TransformWarnings}
		for _, tr := range s.Transforms {
			ts.Transforms = append(ts.Transforms, tr.Describe(s.Free))
			for _, j := range tr.Idx {
				ts.XBounds[s.XParams[j].Name] = [2]F{F(s.XParams[j].Lower), F(s.XParams[j].Upper)}
			}
		}
		ts.StandardErrors = thetaStandardErrors(s, rep.Extra)
		sum.Transform = ts
	}
	spec := s.ModelInfo.Spec
	for i, p := range spec.Params {
		free := false
		for _, fi := range s.FreeIdx {
			free = free || fi == i
		}
		if !free {
			if sum.Fixed == nil {
				sum.Fixed = map[string]float64{}
			}
			sum.Fixed[p.Name] = s.Base[i]
		}
	}
	return sum
}

// writeJSON writes v indented, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// F is a float64 that marshals NaN and ±Inf (not representable in JSON) as
// null.
type F float64

// MarshalJSON implements json.Marshaler.
func (f F) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// jsonSafe returns v with every non-finite float (in maps, slices,
// arrays and structs, however nested) replaced by nil, so a method's
// free-form report always marshals. A struct holding a non-finite float
// becomes a map of its JSON fields (encoding/json's names, "-" and
// omitempty); one without keeps its own encoding.
// boundReport is report, or, when its JSON is over MaxReportBytes, a
// small report saying it was left out (audit 9: adam with trace_every = 1
// on 100 starts wrote a 258 MiB summary.json that kinfer report, analyze
// and --verify then refused; the built-in methods refuse such settings at
// Init, this is the net for the rest). The samples are in samples.csv.
func boundReport(report any) any {
	b, err := json.Marshal(report)
	if err != nil || len(b) <= MaxReportBytes {
		return report
	}
	msg := fmt.Sprintf("the method's report has %s of JSON, more than the %s a report may have in summary.json: it is left out (the samples are in samples.csv); lower the settings that make it grow (traces, starts, chains, max_samples)",
		formatMiB(len(b)), formatMiB(MaxReportBytes))
	return map[string]any{"report_left_out_bytes": len(b), "warnings": []any{msg}}
}

func formatMiB(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func jsonSafe(v any) any {
	return clean(reflect.ValueOf(v))
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func clean(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		if v.Kind() == reflect.Interface || (!v.Type().Implements(jsonMarshaler) && nonFinite(v.Elem())) {
			return clean(v.Elem())
		}
	case reflect.Struct:
		if v.Type().Implements(jsonMarshaler) || reflect.PointerTo(v.Type()).Implements(jsonMarshaler) || !nonFinite(v) {
			return v.Interface()
		}
		out := map[string]any{}
		cleanFields(v, out)
		return out
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case reflect.Map:
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			out[fmt.Sprint(it.Key().Interface())] = clean(it.Value())
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = clean(v.Index(i))
		}
		return out
	}
	if !v.CanInterface() {
		// A field promoted from an unexported embedded type.
		switch v.Kind() {
		case reflect.Bool:
			return v.Bool()
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return v.Int()
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return v.Uint()
		case reflect.String:
			return v.String()
		}
		return nil
	}
	return v.Interface()
}

// writeSamples writes samples.csv atomically: the free parameters' names,
// then log_prior and log_likelihood, then the method's extra columns; one row per sample, full precision
// (the format of dataset.Write, row by row so that no second copy of the
// samples is built).
func writeSamples(path string, s *study.Study, extra []string, samples []abi.Sample) error {
	cols := sampleColumns(s, extra)
	return WriteAtomic(path, func(w io.Writer) error {
		return encodeSamples(w, cols, samples)
	})
}

// encodeSamples writes the header (CSV-quoted as needed) and one row per
// sample. The numbers are appended straight into one buffer
// (strconv.AppendFloat, shortest exact form) instead of through
// csv.Writer's per-field strings: a number never needs quoting, and the
// writer was most of a short Metropolis run's time.
func encodeSamples(w io.Writer, cols []string, samples []abi.Sample) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write(cols); err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	var line []byte
	for _, smp := range samples {
		line = line[:0]
		for _, v := range smp.Theta {
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
			line = append(line, ',')
		}
		line = strconv.AppendFloat(line, smp.LogPrior, 'g', -1, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, smp.LogLik, 'g', -1, 64)
		for _, v := range smp.Extra {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// UnmarshalJSON implements json.Unmarshaler: null (a non-finite number
// written by MarshalJSON) reads back as NaN.
func (f *F) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = F(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = F(v)
	return nil
}

// cleanFields adds the exported fields of struct v to out under their JSON
// names, cleaned; an embedded struct without a name of its own adds its
// fields.
func cleanFields(v reflect.Value, out map[string]any) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			cleanFields(fv, out) // promoted, even from an unexported type
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && fv.IsZero() {
			continue
		}
		out[name] = clean(fv)
	}
}

// nonFinite reports whether v holds a NaN or ±Inf float anywhere.
func nonFinite(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return math.IsNaN(f) || math.IsInf(f, 0)
	case reflect.Interface, reflect.Pointer:
		return !v.IsNil() && nonFinite(v.Elem())
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if nonFinite(it.Value()) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if nonFinite(v.Index(i)) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); (f.IsExported() || f.Anonymous) && nonFinite(v.Field(i)) {
				return true
			}
		}
	}
	return false
}

// thetaStandardErrors carries a least-squares report's covariance of x
// (statistics.covariance, at best.theta, both in x) to standard errors of
// θ = T(x) by the delta method, exact to first order: Σθ = J Σx Jᵀ with
// J = ∂θ/∂x, whose rows are the pullbacks of θ's unit vectors. nil when
// the report has no covariance (not least squares, or rank-deficient).
func thetaStandardErrors(s *study.Study, extra map[string]any) map[string]F {
	st, _ := extra["statistics"].(map[string]any)
	bst, _ := extra["best"].(map[string]any)
	cov := floatMatrix(st["covariance"])
	var x []float64
	if row := floatMatrix([]any{bst["theta"]}); len(row) == 1 {
		x = row[0]
	}
	d := len(s.Free)
	if len(cov) != d || len(x) != d {
		return nil
	}
	jac := make([][]float64, d) // jac[i] = ∂θ_i/∂x
	for i := range d {
		e := make([]float64, d)
		e[i] = 1
		jac[i] = s.PullBack(x, e)
	}
	out := map[string]F{}
	for i, p := range s.Free {
		v := 0.0
		for k := range d {
			if len(cov[k]) != d {
				return nil
			}
			for l := range d {
				v += jac[i][k] * cov[k][l] * jac[i][l]
			}
		}
		out[p.Name] = F(math.Sqrt(v))
	}
	return out
}

// floatMatrix reads a matrix of a method's report: [][]float64 from a
// built-in method, or nested lists from a plugin's JSON (a null entry is
// NaN). nil when v is not a list of lists of numbers.
func floatMatrix(v any) [][]float64 {
	var rows []any
	switch m := v.(type) {
	case [][]float64:
		return m
	case []any:
		rows = m
	default:
		return nil
	}
	out := make([][]float64, len(rows))
	for i, r := range rows {
		switch row := r.(type) {
		case []float64:
			out[i] = row
		case []any:
			for _, c := range row {
				f, ok := c.(float64)
				if !ok {
					if c != nil {
						return nil
					}
					f = math.NaN()
				}
				out[i] = append(out[i], f)
			}
		default:
			return nil
		}
	}
	return out
}

// StandardError is a least-squares method's standard error of one
// parameter at its best start (method_report.statistics): NaN where the
// report has null, and whether the parameter ends on a bound (where it
// does not hold).
type StandardError struct {
	Name    string
	Value   float64
	AtBound bool
}

// ThetaStandardErrors are StandardErrors(report) as standard errors of
// θ: with a [transform] (tr not nil) the method's are of x, and
// summary.json's delta-method values (transform.standard_errors_theta)
// replace them. ok is false when tr has no such values: the x ones are
// returned, for a caller to label or refuse.
func ThetaStandardErrors(report any, tr *TransformSummary) (ses []StandardError, ok bool) {
	ses = StandardErrors(report)
	if tr == nil {
		return ses, true
	}
	if len(tr.StandardErrors) != len(ses) {
		return ses, false
	}
	for i, e := range ses {
		ses[i].Value = float64(tr.StandardErrors[e.Name])
	}
	return ses, true
}

// Resolution is the spread a table's locations of parameter name must
// resolve (sigfig.Digits): the samples' sd, or, when larger, the best
// start's standard error of θ (ThetaStandardErrors). An optimiser's starts
// that agree to 1e-11 differ by convergence noise far below the
// estimate's uncertainty; resolving it printed 13 digits beside a
// standard error of 79 (audit 15).
func Resolution(name string, sd float64, ses []StandardError, ofTheta bool) float64 {
	if !ofTheta {
		return sd
	}
	for _, e := range ses {
		if e.Name == name && e.Value > 0 && !math.IsInf(e.Value, 0) && !(e.Value <= sd) {
			return e.Value
		}
	}
	return sd
}

// StandardErrors reads statistics.params, standard_errors and at_bound of
// a method report as summary.json holds it (decoded, or as jsonSafe left
// it); nil when it has none. The console and report.html print them.
func StandardErrors(report any) []StandardError {
	m, _ := report.(map[string]any)
	st, _ := m["statistics"].(map[string]any)
	names, _ := st["params"].([]any)
	ses, _ := st["standard_errors"].([]any)
	if len(names) == 0 || len(ses) != len(names) {
		return nil
	}
	at := map[string]bool{}
	if ab, ok := st["at_bound"].([]any); ok {
		for _, e := range ab {
			if n, ok := e.(string); ok {
				at[n] = true
			}
		}
	}
	out := make([]StandardError, 0, len(names))
	for i, e := range names {
		n, ok := e.(string)
		if !ok {
			continue
		}
		v, ok := ses[i].(float64)
		if !ok {
			v = math.NaN() // null: not finite
		}
		out = append(out, StandardError{Name: n, Value: v, AtBound: at[n]})
	}
	return out
}

// Warning is one thing a reader of a run must not miss: what it is about
// ("method builtin:tmcmc", "[transform]", "[prior]", "bounds", "") and
// its text (a method's is the plugin's, unescaped).
type Warning struct{ About, Text string }

// Warnings are the run's warnings in the order kinfer run prints them
// after its table and report.html shows them at its top: derivatives that
// failed at points of status ok (in a complete run; a stopped run's error
// carries them), the method report's "warnings", the transform's, the
// priors' and the bounds', and the note of a sampler run under
// [transform] (its samples are not the posterior of θ). One list, so the
// terminal and the report cannot disagree (audit 6: the report showed
// the method's warnings alone).
func (s *Summary) Warnings() []Warning {
	var ws []Warning
	if (s.DerivativeFailures != "" || s.JacobianFailures > 0 || s.GradientFailures > 0) && s.Complete {
		// Without a message the failures were finite-difference steps or
		// a built-in model's.
		why := s.DerivativeFailures
		if why == "" {
			why = "a difference step or the model's derivative failed (summary.json jacobian_failures, gradient_failures)"
		}
		ws = append(ws, Warning{"", fmt.Sprintf("%d Jacobians and %d gradients could not be computed at points of status ok: %s",
			s.JacobianFailures, s.GradientFailures, why)})
	}
	if s.BatchFaults != "" {
		ws = append(ws, Warning{"model " + s.Model, s.BatchFaults})
	}
	for _, m := range MethodWarnings(s.MethodReport) {
		ws = append(ws, Warning{"method " + s.Method, m})
	}
	if s.Transform != nil {
		for _, m := range s.Transform.Warnings {
			ws = append(ws, Warning{"[transform]", m})
		}
	}
	for _, m := range s.PriorWarnings {
		ws = append(ws, Warning{"[prior]", m})
	}
	for _, m := range s.BoundWarnings {
		ws = append(ws, Warning{"bounds", m})
	}
	if s.Complete && s.InitRowsUsed >= 0 && s.InitRowsUsed < s.InitRows {
		left := fmt.Sprintf("rows %d–%d were", s.InitRowsUsed+1, s.InitRows)
		if s.InitRowsUsed+1 == s.InitRows {
			left = fmt.Sprintf("row %d was", s.InitRows)
		}
		ws = append(ws, Warning{"init", fmt.Sprintf("the method asked for %d prior draw(s), so only %d of the %d rows of %s were run (%s not): to start from every row, set starts = %d (levmar, gaussnewton, adam) or chains = %d (metropolis; anneal runs one start)",
			s.InitRowsUsed, s.InitRowsUsed, s.InitRows, s.InitFile, left, s.InitRows, s.InitRows)})
	}
	if s.Transform != nil && (s.Method == "builtin:tmcmc" || s.Method == "builtin:metropolis") {
		ws = append(ws, Warning{"[transform] with the sampler " + s.Method, s.Transform.Note})
	}
	return ws
}

// MethodWarnings are the strings of a method report's "warnings" list (a
// method says there what a user must not miss, e.g. a biased variant).
func MethodWarnings(report any) []string {
	m, _ := report.(map[string]any)
	ws, _ := m["warnings"].([]any)
	var out []string
	for _, w := range ws {
		if s, ok := w.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
