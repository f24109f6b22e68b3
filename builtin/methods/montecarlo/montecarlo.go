package montecarlo

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
	"github.com/kinfer/kinfer/builtin/stats"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// Spec describes the method.
var Spec = abi.Spec{
	Kind:    abi.KindMethod,
	Name:    "montecarlo",
	Version: "1.0.0",
	Doc:     "Monte Carlo propagation: prior draws evaluated in batches, one model output per draw (quantity) as the quantity of interest; stops when the running mean and coefficient of variation over the last 10 % of draws stay within 2 % of the final ones (Lin et al. 2010); percentiles in summary.json",
	Settings: []abi.Setting{
		{Name: "batch", Default: 50, Doc: "prior draws per batch (evaluated in parallel by the host's workers)"},
		{Name: "min_samples", Default: 1000, Doc: "draws before the stopping rule is tried"},
		{Name: "max_samples", Default: 20000, Doc: "stop here even if the rule does not hold (converged false)"},
		{Name: "output", Default: 0, Doc: "the old way, without quantity: index of the quantity of interest in a point's residual vector (a Gaussian term against 0 with σ 1 makes it the model output)"},
		{Name: "window", Default: 0.1, Doc: "fraction of the last draws over which the rule is checked (Lin 2010: 10 %)"},
		{Name: "tol", Default: 0.02, Doc: "relative tolerance of the running mean and coefficient of variation against the final ones (Lin 2010: 2 %)"},
		{Name: "quantity", Default: -1, Output: true, Doc: "the model output that is the quantity of interest, read from the model's outputs (no likelihood needed); when given, output is ignored"},
		{Name: "condition", Default: 0, Doc: "with quantity: the condition row the output is read at (0: the first row of the first [[data]] table, or of [conditions])"},
	},
	Capabilities: []abi.Capability{abi.CapCheckpoint, abi.CapPropagation, abi.CapPriorDraws},
}

// Config is the validated settings.
type Config struct {
	Batch      int     `json:"batch"`
	MinSamples int     `json:"min_samples"`
	MaxSamples int     `json:"max_samples"`
	Output     int     `json:"output"`
	Window     float64 `json:"window"`
	Tol        float64 `json:"tol"`
	// Quantity is the index of the model output read (abi.WantOutputs),
	// −1 for the old way (residual Output).
	Quantity  int `json:"quantity"`
	Condition int `json:"condition"`
}

// Bounds of the whole-number settings: a batch of more than maxBatch
// points, a run of more than maxSamples samples (the memory budget refuses
// far fewer) or an index beyond maxIndex is refused as out of range.
const (
	maxBatch   = 1 << 20
	maxSamples = 1 << 40
	maxIndex   = 1 << 30
)

// New builds the method from its settings (Spec.Settings order).
func New(settings []float64) (abi.Method, error) {
	if len(settings) != len(Spec.Settings) {
		return nil, fmt.Errorf("montecarlo: want %d settings (batch, min_samples, max_samples, output, window, tol, quantity, condition), got %d", len(Spec.Settings), len(settings))
	}
	// Counts are whole numbers, checked before any conversion (int of a
	// float beyond the int range is not that number).
	var c Config
	ints := []struct {
		dst    *int
		i      int
		lo, hi int
	}{
		{&c.Batch, 0, 1, maxBatch},
		{&c.MinSamples, 1, 10, maxSamples},
		{&c.MaxSamples, 2, 10, maxSamples},
		{&c.Output, 3, 0, maxIndex},
		{&c.Quantity, 6, -1, maxIndex}, // −1: none, the old way
		{&c.Condition, 7, 0, maxIndex},
	}
	for _, s := range ints {
		v, err := mcmc.WholeSetting("montecarlo", Spec.Settings[s.i].Name, settings[s.i], s.lo, s.hi)
		if err != nil {
			return nil, err
		}
		*s.dst = v
	}
	c.Window, c.Tol = settings[4], settings[5]
	switch {
	case c.MaxSamples < c.MinSamples:
		return nil, fmt.Errorf("montecarlo: max_samples %d below min_samples %d", c.MaxSamples, c.MinSamples)
	case !(c.Window > 0 && c.Window < 1):
		return nil, fmt.Errorf("montecarlo: window must be in (0, 1), got %g", c.Window)
	case !(c.Tol > 0) || math.IsInf(c.Tol, 1):
		return nil, fmt.Errorf("montecarlo: tol must be finite and > 0, got %g", c.Tol)
	}
	return &Method{cfg: c}, nil
}

// state is everything a run needs to continue (the checkpoint).
type state struct {
	Format   int         `json:"format"`
	Config   Config      `json:"config"`
	D        int         `json:"d"`
	Seed     uint64      `json:"seed"`
	Values   []float64   `json:"values"`
	Draws    [][]float64 `json:"draws"`
	LogPrior []float64   `json:"log_prior"`
	// LogLik is each kept draw's log likelihood with quantity (the old way
	// reports −½·value² instead and leaves it empty).
	LogLik    []float64 `json:"log_lik,omitempty"`
	Failed    int       `json:"failed"`
	Converged bool      `json:"converged"`
	Done      bool      `json:"done"`
}

const stateFormat = 1

// Method is the Monte Carlo propagation method.
type Method struct {
	cfg    Config
	st     state
	inited bool
	m      int    // outputs per condition row (with quantity)
	name   string // the quantity's name (with quantity)
	column string // its samples.csv column (with quantity)
}

// Spec implements abi.Method.
func (m *Method) Spec() abi.Spec { return Spec }

// Init implements abi.Method.
func (m *Method) Init(p abi.Problem) error {
	if q := m.cfg.Quantity; q >= 0 {
		if q >= len(p.OutputNames) {
			return fmt.Errorf("montecarlo: quantity %d, but the model has %d outputs (%s)", q, len(p.OutputNames), strings.Join(p.OutputNames, ", "))
		}
		if m.cfg.Condition >= p.OutputRows {
			return fmt.Errorf("montecarlo: condition %d, but the study has %d condition rows (0 to %d: the rows of its [[data]] tables in order, or of its [conditions] table)", m.cfg.Condition, p.OutputRows, p.OutputRows-1)
		}
		m.m, m.name, m.column = len(p.OutputNames), p.OutputNames[q], p.OutputNames[q]
		taken := map[string]bool{"log_prior": true, "log_likelihood": true}
		for _, par := range p.Params {
			taken[par.Name] = true
		}
		for taken[m.column] {
			m.column = "quantity_" + m.column
		}
	} else if p.Residuals <= m.cfg.Output && p.Likelihoods == 0 {
		return fmt.Errorf("montecarlo: the study has no [[likelihood]]: name the quantity of interest, quantity = \"<output>\" (outputs: %s)", strings.Join(p.OutputNames, ", "))
	} else if p.Residuals <= m.cfg.Output {
		return fmt.Errorf("montecarlo: output %d, but a point has %d residuals (name the quantity of interest instead, quantity = \"<output>\")", m.cfg.Output, p.Residuals)
	}
	if err := mcmc.CheckMemory("montecarlo", p, memoryNeed(m.cfg.MaxSamples, len(p.Params)),
		fmt.Sprintf("max_samples = %d draws of %d parameters", m.cfg.MaxSamples, len(p.Params))); err != nil {
		return err
	}
	m.st = state{Format: stateFormat, Config: m.cfg, D: len(p.Params), Seed: p.Seed}
	m.inited = true
	return nil
}

// memoryNeed is the planned live memory of n draws of d parameters: each
// draw's θ (its own slice: d values, a header and allocation rounding)
// and its value, log prior and log likelihood, twice (the slices grow by
// doubling); the report's samples (a header per draw and its quantity);
// and the saved state's JSON text (about 25 bytes a number). Measured
// (audit 9): 8 million draws of 2 parameters peaked at 2.4 GB, about 300
// bytes a draw with the collector's headroom; this plans 349 for d = 2,
// which CheckMemory doubles for that headroom.
func memoryNeed(n, d int) float64 {
	perDraw := 2*float64(8*d+40+3*8) + 64 + 25*float64(d+3)
	return float64(n) * perDraw
}

// Ask implements abi.Method: the next batch of prior draws.
func (m *Method) Ask() (abi.Batch, error) {
	if !m.inited {
		return abi.Batch{}, fmt.Errorf("montecarlo: Ask before Init")
	}
	if m.st.Done {
		return abi.Batch{}, fmt.Errorf("montecarlo: Ask after Done")
	}
	n := m.cfg.Batch
	if left := m.cfg.MaxSamples - len(m.st.Values) - m.st.Failed; left < n {
		n = left
	}
	if m.cfg.Quantity >= 0 {
		return abi.Batch{Draw: n, Want: abi.WantOutputs}, nil
	}
	return abi.Batch{Draw: n, Want: abi.WantResiduals}, nil
}

// Tell implements abi.Method.
func (m *Method) Tell(res []abi.Result) error {
	if !m.inited || m.st.Done {
		return fmt.Errorf("montecarlo: Tell out of turn")
	}
	for _, r := range res {
		v, ok := m.value(r)
		if !ok {
			m.st.Failed++
			continue
		}
		m.st.Values = append(m.st.Values, v)
		if m.cfg.Quantity >= 0 {
			m.st.LogLik = append(m.st.LogLik, r.LogLik)
		}
		m.st.Draws = append(m.st.Draws, append([]float64(nil), r.Theta...))
		m.st.LogPrior = append(m.st.LogPrior, r.LogPrior)
	}
	n := len(m.st.Values)
	// min_samples counts draws, failed ones too, as max_samples does
	// (audit 10: with failed draws and min_samples = max_samples the rule
	// was never tried).
	if n+m.st.Failed >= m.cfg.MinSamples {
		if ok, _ := Rule(m.st.Values, m.cfg.Window, m.cfg.Tol); ok {
			m.st.Converged, m.st.Done = true, true
		}
	}
	if n+m.st.Failed >= m.cfg.MaxSamples {
		m.st.Done = true
	}
	return nil
}

// value is a result's quantity of interest, and whether it has one: with
// quantity, output Quantity at row Condition of r.Outputs; else entry
// Output of r.Residuals.
func (m *Method) value(r abi.Result) (float64, bool) {
	if r.Status != abi.OK {
		return 0, false
	}
	var v []float64
	i := m.cfg.Output
	if m.cfg.Quantity >= 0 {
		v, i = r.Outputs, m.cfg.Condition*m.m+m.cfg.Quantity
	} else {
		v = r.Residuals
	}
	if i >= len(v) || math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
		return 0, false
	}
	return v[i], true
}

// Done implements abi.Method.
func (m *Method) Done() bool { return m.inited && m.st.Done }

// Running returns the running mean and coefficient of variation
// (100·sd/mean, sd with n − 1) after each of the first 2, 3, …, n values
// (index k holds the statistics of v[:k+1]; index 0 has cv 0).
func Running(v []float64) (mean, cv []float64) {
	mean = make([]float64, len(v))
	cv = make([]float64, len(v))
	// On v/sc (stats.Scale): the sums of squares of values beyond 2^500
	// overflow; cv is a ratio, the mean is scaled back.
	sc := stats.Scale(v)
	defer func() {
		for i := range mean {
			mean[i] *= sc
		}
	}()
	var m, s2 float64 // Welford
	for i, x := range v {
		x /= sc
		d := x - m
		m += d / float64(i+1)
		s2 += d * (x - m)
		mean[i] = m
		if i > 0 && m != 0 {
			cv[i] = 100 * math.Sqrt(s2/float64(i)) / math.Abs(m)
		}
	}
	return mean, cv
}

// Rule is Lin et al. (2010)'s stopping rule on the values v: over the last
// window·n values, the running mean and coefficient of variation are all
// within tol (relative) of the final mean and coefficient of variation.
// It returns whether the rule holds and the largest relative deviation
// found (of either statistic). A running mean equal to the final one
// deviates by 0 (a constant quantity converges at once). When the final
// mean is 0 to within 1e-9 of the standard deviation, where relative
// deviations and the coefficient of variation are undefined, the mean's
// deviations are taken relative to the standard deviation and the
// coefficient of variation is not used.
func Rule(v []float64, window, tol float64) (bool, float64) {
	n := len(v)
	if n < 10 {
		return false, math.Inf(1)
	}
	mean, cv := Running(v)
	fm, fc := mean[n-1], cv[n-1]
	scale, useCV := math.Abs(fm), true
	if sd := stats.SD(v); scale <= 1e-9*sd {
		scale, useCV = sd, false
	}
	start := n - int(math.Ceil(window*float64(n)))
	if n-max(start, 1) < 2 {
		// A window of fewer than 2 earlier running values checks
		// nothing (audit 16: window 1e-9 claimed convergence at
		// min_samples); not yet.
		return false, math.Inf(1)
	}
	var worst float64
	for k := max(start, 1); k < n; k++ {
		dm := 0.0
		if d := math.Abs(mean[k] - fm); d > 0 {
			dm = d / scale
		}
		dc := 0.0
		if useCV && fc != 0 {
			dc = math.Abs(cv[k]-fc) / fc
		}
		worst = math.Max(worst, math.Max(dm, dc))
	}
	return worst <= tol, worst
}

// Percentiles reported in summary.json.
var Percentiles = []float64{5, 10, 25, 50, 75, 90, 95}

// Summary are the statistics of the values.
type Summary struct {
	Quantity   string             `json:"quantity,omitempty"`
	Condition  int                `json:"condition,omitempty"`
	N          int                `json:"n"`
	Failed     int                `json:"failed"`
	Converged  bool               `json:"converged"`
	RuleDev    float64            `json:"rule_largest_relative_deviation"`
	Mean       float64            `json:"mean"`
	SD         float64            `json:"sd"`
	CV         float64            `json:"cv_percent"`
	Min        float64            `json:"min"`
	Max        float64            `json:"max"`
	Pct        map[string]float64 `json:"percentiles"`
	Span1090   float64            `json:"span_10_90"`
	HistEdges  []float64          `json:"histogram_edges"`
	HistCounts []int              `json:"histogram_counts"`
	// Values are the quantity per draw, up to MaxReportValues of them;
	// beyond, they are left out (ValuesLeftOut counts them): with quantity
	// they are samples.csv's column, and a report beyond 16 MiB would not
	// fit in summary.json.
	Values        []float64 `json:"values,omitempty"`
	ValuesLeftOut int       `json:"values_left_out,omitempty"`
}

// MaxReportValues is the most values the report lists (about 6 MB of
// JSON).
const MaxReportValues = 250_000

// Summarise computes the summary of values v (failed counts evaluations
// left out) with the stopping rule's window and tolerance.
func Summarise(v []float64, failed int, window, tol float64) Summary {
	s := Summary{N: len(v), Failed: failed, Pct: map[string]float64{}, Values: v}
	if len(v) == 0 {
		// No value: no statistic (NaN, null in JSON), never 0 ± 0.
		nan := math.NaN()
		s.RuleDev, s.Mean, s.SD, s.CV, s.Min, s.Max, s.Span1090 = nan, nan, nan, nan, nan, nan, nan
		return s
	}
	s.Converged, s.RuleDev = Rule(v, window, tol)
	s.Mean, s.SD = stats.MeanSD(v)
	if s.Mean != 0 {
		s.CV = 100 * s.SD / math.Abs(s.Mean)
	}
	x := append([]float64(nil), v...)
	sort.Float64s(x)
	s.Min, s.Max = x[0], x[len(x)-1]
	for _, p := range Percentiles {
		s.Pct[fmt.Sprintf("p%g", p)] = stat.Quantile(p/100, stat.Empirical, x, nil)
	}
	s.Span1090 = s.Pct["p90"] - s.Pct["p10"]
	const bins = 20
	s.HistEdges = make([]float64, bins+1)
	s.HistCounts = make([]int, bins)
	w := s.Max/bins - s.Min/bins // without overflow beyond ±MaxFloat64
	for i := range s.HistEdges {
		s.HistEdges[i] = s.Min + float64(i)*w
		if math.IsInf(s.HistEdges[i], 0) { // beyond MaxFloat64 by rounding
			f := float64(i) / bins
			s.HistEdges[i] = (1-f)*s.Min + f*s.Max
		}
	}
	for _, y := range x {
		// t is NaN or ∞ when the values span more than the float64
		// range (w = ∞): those go to the edge bins, never to an index
		// int() cannot represent.
		b := bins - 1
		// Halved: y − Min overflows for values spanning more than
		// MaxFloat64; halving is exact.
		if t := (y/2 - s.Min/2) / (w / 2); w > 0 && t < bins-1 {
			b = 0
			if t > 0 {
				b = int(t)
			}
		}
		s.HistCounts[b]++
	}
	return s
}

// Report implements abi.Method: the draws as samples, the statistics in
// Extra. With quantity the samples carry the quantity as an extra column
// named after the output ("quantity_" prepended while the name is taken by
// a parameter); the old way they carry none.
func (m *Method) Report() (abi.Report, error) {
	if !m.inited {
		return abi.Report{}, fmt.Errorf("montecarlo: Report before Init")
	}
	samples := make([]abi.Sample, len(m.st.Draws))
	for i, d := range m.st.Draws {
		ll := -0.5 * m.st.Values[i] * m.st.Values[i] // the old way: the Gaussian term's
		if m.cfg.Quantity >= 0 {
			ll = m.st.LogLik[i]
		}
		samples[i] = abi.Sample{Theta: d, LogPrior: m.st.LogPrior[i], LogLik: ll}
		if m.cfg.Quantity >= 0 {
			samples[i].Extra = m.st.Values[i : i+1 : i+1]
		}
	}
	if m.st.Done && len(m.st.Values) == 0 {
		return abi.Report{}, fmt.Errorf("montecarlo: every one of the %d draws failed, so there is no value to propagate; see summary.json's status_counts and, for a plugin, evaluation_failures (its kinfer_last_error); a built-in model writes no message: its domain is in its package documentation (builtin/models/NAME/doc.go)", m.st.Failed)
	}
	if len(m.st.Values) == 0 {
		// Stopped before any value: no statistics (they would all be NaN,
		// which JSON cannot hold; review).
		return abi.Report{Samples: samples, Extra: map[string]any{"stopped": true, "warnings": []any{
			fmt.Sprintf("the run stopped before any value was computed (%d draws failed)", m.st.Failed)}}}, nil
	}
	s := Summarise(m.st.Values, m.st.Failed, m.cfg.Window, m.cfg.Tol)
	s.Converged = m.st.Converged
	s.Quantity, s.Condition = m.name, m.cfg.Condition
	var warn []any
	if len(s.Values) > MaxReportValues {
		s.ValuesLeftOut, s.Values = len(s.Values), nil
		where := "samples.csv's column " + m.column
		if m.cfg.Quantity < 0 {
			where = "samples.csv's log_likelihood, −½·value²"
		}
		warn = append(warn, fmt.Sprintf("the %d values are more than the report lists (%d): they are left out of it (values_left_out); they are in %s", s.ValuesLeftOut, MaxReportValues, where))
	}
	rep := abi.Report{Samples: samples, Extra: map[string]any{"montecarlo": s}}
	if m.st.Done && !m.st.Converged {
		warn = append(warn, fmt.Sprintf("the stopping rule did not hold by max_samples = %d (the mean and CV of the last %g of the values within %g of the final ones; largest deviation %.3g): the percentiles are not converged", m.cfg.MaxSamples, m.cfg.Window, m.cfg.Tol, s.RuleDev))
	}
	if m.st.Failed > 0 {
		warn = append(warn, fmt.Sprintf("%d of %d draws failed and are left out: the statistics are of the draws the model could evaluate", m.st.Failed, m.st.Failed+len(m.st.Values)))
	}
	if !m.st.Done {
		// Stopped early (Ctrl-C, a fault; ABI.md §6.3): the draws so far.
		rep.Extra["stopped"] = true
		warn = append(warn, fmt.Sprintf("the run stopped after %d of at least %d draws: the statistics are of the draws so far, and the stopping rule was not applied", len(m.st.Values)+m.st.Failed, m.cfg.MinSamples))
	}
	if len(warn) > 0 {
		rep.Extra["warnings"] = warn
	}
	if m.cfg.Quantity >= 0 {
		rep.Columns = []string{m.column}
	}
	return rep, nil
}

// SaveState implements abi.Checkpointer.
func (m *Method) SaveState() ([]byte, error) {
	if !m.inited {
		return nil, fmt.Errorf("montecarlo: SaveState before Init")
	}
	return json.Marshal(&m.st)
}

// LoadState implements abi.Checkpointer: the state must come from a run
// with the same settings, dimension and seed.
func (m *Method) LoadState(b []byte) error {
	if !m.inited {
		return fmt.Errorf("montecarlo: LoadState before Init")
	}
	var s state
	if err := strictjson.Decode(b, &s, strictjson.Lenient); err != nil {
		return fmt.Errorf("montecarlo: checkpoint: %w", err)
	}
	switch {
	case s.Format != stateFormat:
		return fmt.Errorf("montecarlo: checkpoint format %d, this version reads %d", s.Format, stateFormat)
	case s.Config != m.st.Config:
		return fmt.Errorf("montecarlo: checkpoint settings %+v differ from this run's %+v", s.Config, m.st.Config)
	case s.D != m.st.D || s.Seed != m.st.Seed:
		return fmt.Errorf("montecarlo: checkpoint of dimension %d, seed %d; this run %d, %d", s.D, s.Seed, m.st.D, m.st.Seed)
	case len(s.Draws) != len(s.Values) || len(s.LogPrior) != len(s.Values):
		return fmt.Errorf("montecarlo: checkpoint damaged: %d values, %d draws, %d log priors", len(s.Values), len(s.Draws), len(s.LogPrior))
	case s.Config.Quantity >= 0 && len(s.LogLik) != len(s.Values):
		return fmt.Errorf("montecarlo: checkpoint damaged: %d values, %d log likelihoods", len(s.Values), len(s.LogLik))
	}
	for _, d := range s.Draws {
		if len(d) != s.D {
			return fmt.Errorf("montecarlo: checkpoint damaged: a draw of length %d, dimension %d", len(d), s.D)
		}
	}
	m.st = s
	return nil
}
