package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/analysis"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/internal/sigfig"
	"gonum.org/v1/gonum/stat/distuv"
)

// WeightColumn is the samples.csv column that, when present, weights the
// samples in the truth check (no built-in method writes one today: their
// samples are equally weighted).
const WeightColumn = "weight"

// TruthValue is one entry of a truth file.
type TruthValue struct {
	Name  string
	Value float64
	Line  int // line of the key in the file
}

// MaxTruthBytes bounds a truth file (a number per parameter).
const MaxTruthBytes = 1 << 20

// ReadTruth reads a truth file: one JSON object mapping parameter names to
// numbers, e.g. {"k": 5200, "eps_r": 0.04}. Errors name the file and line:
// a missing file, invalid JSON, a value that is not a number, a key given
// twice.
func ReadTruth(path string) ([]TruthValue, error) {
	b, err := safefile.ReadFile(path, MaxTruthBytes)
	if err != nil {
		return nil, fmt.Errorf("--truth: %w", err)
	}
	// line counts on from the previous offset: the offsets asked for
	// grow, and counting from the start each time is quadratic in a file
	// of many keys.
	lastOff, lastLine := 0, 1
	line := func(off int64) int {
		o := min(int(off), len(b))
		if o < lastOff {
			return 1 + bytes.Count(b[:o], []byte{'\n'})
		}
		lastLine += bytes.Count(b[lastOff:o], []byte{'\n'})
		lastOff = o
		return lastLine
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	bad := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// The Decoder's offset is not from the start of the file;
			// json.Valid's scan of the whole file (json.Unmarshal's first
			// step) gives it, after the offending byte.
			var whole struct{}
			if err := json.Unmarshal(b, &whole); errors.As(err, &se) {
				return fmt.Errorf("%s:%d: invalid JSON: %v", path, line(se.Offset-1), err)
			}
			return fmt.Errorf("%s:%d: invalid JSON: %v", path, line(dec.InputOffset()), err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s: invalid JSON: unexpected end of the file", path)
		}
		return fmt.Errorf("%s:%d: invalid JSON: %v", path, line(dec.InputOffset()), err)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, bad(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%s:%d: want a JSON object {\"param\": value, ...}, got %v", path, line(dec.InputOffset()), tok)
	}
	var out []TruthValue
	seen := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		name := tok.(string) // inside an object, Token returns keys as strings
		at := line(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad(err)
		}
		var val any
		if c := raw[0]; c == '-' || c >= '0' && c <= '9' { // only a number is decoded: not a list of a million objects
			vd := json.NewDecoder(bytes.NewReader(raw))
			vd.UseNumber()
			_ = vd.Decode(&val) // raw is one valid JSON value
		}
		num, isNum := val.(json.Number)
		if len(raw) > 64 {
			raw = append(raw[:64:64], "…"...)
		}
		if !isNum {
			return nil, fmt.Errorf("%s:%d: %q: value %s is not a number", path, at, name, raw)
		}
		v, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s:%d: %q: value %s is not a finite float64", path, at, name, num)
		}
		if l, dup := seen[name]; dup {
			return nil, fmt.Errorf("%s:%d: %q given twice (first on line %d)", path, at, name, l)
		}
		seen[name] = at
		out = append(out, TruthValue{Name: name, Value: v, Line: at})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, bad(err)
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, bad(err)
		}
		return nil, fmt.Errorf("%s:%d: unexpected %v after the object", path, line(dec.InputOffset()), tok)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no parameters (want {\"param\": value, ...})", path)
	}
	return out, nil
}

// TruthReport is the truth check in analysis.json.
type TruthReport struct {
	File string `json:"file"`
	// Band is the central band's percentiles, [0.05, 0.95].
	Band [2]float64 `json:"band"`
	// Weighted says whether samples.csv had a weight column.
	Weighted bool `json:"weighted"`
	// Inside of Checked parameters have their truth in the band.
	Inside  int          `json:"inside"`
	Checked int          `json:"checked"`
	Params  []TruthParam `json:"params"`
	// Skipped are the free parameters the file gives no truth for.
	Skipped []string `json:"skipped"`
	// Unchecked are the free parameters that have a truth but no band to
	// check it against, each with the reason (a least-squares estimate on
	// a bound or without a standard error; an optimiser's end points).
	Unchecked []string `json:"unchecked,omitempty"`
	// theta is the truth of every free parameter in the study's order,
	// nil unless the file gives them all (then AtTruth is computed).
	theta []float64
	// Fixed are truth keys naming parameters the study fixes (not sampled).
	Fixed []FixedTruth `json:"fixed,omitempty"`
	// AtTruth is the log target at the truth, when every free parameter
	// has one.
	AtTruth *AtTruth `json:"at_truth,omitempty"`
	// Basis says where the band comes from: "samples" (the samples'
	// percentiles), "standard errors" (a least-squares fit: estimate ±
	// z₀.₉₅·standard error, the percentile Φ((truth − estimate)/SE)), or
	// "none" (an optimiser without standard errors: its rows are its
	// starts' end points, not a posterior; nothing is checked).
	Basis string `json:"basis"`
	Note  string `json:"note,omitempty"`
}

// Estimate is a least-squares estimate of a parameter with its standard
// error (summary.json's best point and method statistics).
type Estimate struct {
	Value, SE float64
	AtBound   bool
}

// AtTruth compares the log target at the truth with the samples'.
type AtTruth struct {
	Status        string  `json:"status"` // the evaluation's status (ok, failed, …)
	LogPrior      float64 `json:"log_prior"`
	LogLikelihood float64 `json:"log_likelihood"`
	LogTarget     float64 `json:"log_target"`
	// SamplesBelow is the (weighted) fraction of samples whose log target
	// (samples.csv's log_prior + log_likelihood) is below the truth's.
	SamplesBelow float64 `json:"samples_below"`
	// SamplesMax is the largest log target among the samples.
	SamplesMax float64 `json:"samples_max"`
}

// TruthParam is one free parameter's check.
type TruthParam struct {
	Name       string  `json:"name"`
	Unit       string  `json:"unit,omitempty"`
	Truth      float64 `json:"truth"`
	P05        float64 `json:"p05"`
	P95        float64 `json:"p95"`
	Percentile float64 `json:"percentile"` // weighted fraction of samples below the truth
	Inside     bool    `json:"inside"`     // p05 ≤ truth ≤ p95
}

// FixedTruth is a truth given for a fixed parameter.
type FixedTruth struct {
	Name  string  `json:"name"`
	Truth float64 `json:"truth"`
	Fixed float64 `json:"fixed"` // the study's value
}

// checkTruth checks the truths against the samples (rows over the free
// parameters free, weights nil for equal weights). all are the model's
// parameters and base the full parameter vector with the fixed values; a
// truth naming none of them is an error.
//
// With est (a least-squares run), a parameter's band is its estimate ±
// z₀.₉₅·SE instead of the samples' (the starts' end points); one without
// a finite standard error, or on a bound, is skipped. With noBand (an
// optimiser without standard errors) nothing is checked, noBand says why.
func checkTruth(file string, truths []TruthValue, free, all []abi.Param, base []float64, samples [][]float64, weights []float64, est map[string]Estimate, noBand string) (*TruthReport, error) {
	freeIdx := map[string]int{}
	for j, p := range free {
		freeIdx[p.Name] = j
	}
	allIdx := map[string]int{}
	for i, p := range all {
		allIdx[p.Name] = i
	}
	r := &TruthReport{File: file, Band: [2]float64{analysis.SpreadLow, analysis.SpreadHigh}, Weighted: weights != nil, Skipped: []string{}, Basis: "samples"}
	switch {
	case noBand != "":
		r.Basis, r.Note = "none", noBand
	case est != nil:
		r.Basis = "standard errors"
		r.Note = "a least-squares fit: the band is the estimate ± 1.645 standard errors (normal approximation), the percentile Φ((truth − estimate)/SE); samples.csv holds the starts' end points, not a posterior"
	}
	given := map[string]float64{}
	for _, tv := range truths {
		if _, ok := freeIdx[tv.Name]; ok {
			given[tv.Name] = tv.Value
			continue
		}
		if i, ok := allIdx[tv.Name]; ok {
			r.Fixed = append(r.Fixed, FixedTruth{Name: tv.Name, Truth: tv.Value, Fixed: base[i]})
			continue
		}
		names := make([]string, len(all))
		for i, p := range all {
			names[i] = p.Name
		}
		return nil, fmt.Errorf("%s:%d: %q is not a parameter of the run's model (parameters: %s)", file, tv.Line, tv.Name, strings.Join(names, ", "))
	}
	col := make([]float64, len(samples))
	r.theta = make([]float64, len(free))
	for j, p := range free {
		t, ok := given[p.Name]
		if !ok {
			r.Skipped = append(r.Skipped, p.Name)
			r.theta = nil
			continue
		}
		if r.theta != nil {
			r.theta[j] = t
		}
		if r.Basis == "none" {
			r.Unchecked = append(r.Unchecked, p.Name+" (no band: "+r.Note+")")
			continue
		}
		var c analysis.Truth
		if r.Basis == "standard errors" {
			e, ok := est[p.Name]
			switch {
			case ok && e.AtBound:
				r.Unchecked = append(r.Unchecked, p.Name+" (its estimate is on a bound, where the standard error does not hold)")
				continue
			case !ok || !(e.SE > 0) || math.IsInf(e.SE, 0):
				r.Unchecked = append(r.Unchecked, p.Name+" (no usable standard error)")
				continue
			}
			z := distuv.UnitNormal.Quantile(analysis.SpreadHigh)
			c = analysis.Truth{P05: e.Value - z*e.SE, P95: e.Value + z*e.SE, Percentile: distuv.UnitNormal.CDF((t - e.Value) / e.SE)}
			c.Inside = c.P05 <= t && t <= c.P95
		} else {
			for i := range samples {
				col[i] = samples[i][j]
			}
			var err error
			if c, err = analysis.CheckTruth(col, weights, t); err != nil {
				return nil, fmt.Errorf("analyze: truth of %s: %w", p.Name, err)
			}
		}
		r.Params = append(r.Params, TruthParam{Name: p.Name, Unit: p.Unit, Truth: t, P05: c.P05, P95: c.P95, Percentile: c.Percentile, Inside: c.Inside})
		r.Checked++
		if c.Inside {
			r.Inside++
		}
	}
	slices.SortStableFunc(r.Fixed, func(a, b FixedTruth) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// atTruthText is the line of the log target at the truth, if any.
func (r *TruthReport) atTruthText(b *strings.Builder) {
	if at := r.AtTruth; at != nil {
		fmt.Fprintf(b, "log target at the truth: %.6g (%s; log prior %.6g, log likelihood %.6g), above %.1f %% of the samples' (their largest %.6g)\n",
			at.LogTarget, at.Status, at.LogPrior, at.LogLikelihood, 100*at.SamplesBelow, at.SamplesMax)
		// The fixed parameters stay at the study's values there (audit
		// 18: −0.42 "at the truth" of noise-free data, the bones at their
		// perturbed start, with no word of it).
		differ := 0
		for _, f := range r.Fixed {
			if f.Truth != f.Fixed {
				differ++
			}
		}
		if differ > 0 {
			fmt.Fprintf(b, "(with the study's fixed values: %d of the truths given for fixed parameters differ from them and were not used, listed below)\n", differ)
		}
	}
	for _, f := range r.Fixed {
		fmt.Fprintf(b, "not sampled (fixed in the study): %s, truth %.6g, fixed at %.6g\n", f.Name, f.Truth, f.Fixed)
	}
}

// text renders the truth check for the terminal.
func (r *TruthReport) text(b *strings.Builder) {
	w := ""
	if r.Weighted {
		w = ", weighted by samples.csv's weight column"
	}
	if r.Basis == "none" {
		fmt.Fprintf(b, "\ntruth (%s): not checked: %s\n", r.File, r.Note)
		r.atTruthText(b)
		return
	}
	if r.Basis == "standard errors" {
		w = ", from the estimate and its standard errors"
	}
	fmt.Fprintf(b, "\ntruth (%s)%s: %d of %d inside the central 90 %% band (p05–p95)\n", r.File, w, r.Inside, r.Checked)
	if r.Note != "" {
		fmt.Fprintf(b, "(%s)\n", r.Note)
	}
	fmt.Fprintf(b, "%-16s %12s %12s %12s %10s  %s\n", "param", "truth", "p05", "p95", "percentile", "inside")
	for _, p := range r.Params {
		in := "yes"
		if !p.Inside {
			in = "NO"
			if p.Truth < p.P05 {
				in += " (below)"
			} else {
				in += " (above)"
			}
		}
		band := func(v float64) string { return sigfig.Format(v, 5, p.P95-p.P05) }
		fmt.Fprintf(b, "%-16s %12s %12s %12s %9.1f%%  %s\n", p.Name, band(p.Truth), band(p.P05), band(p.P95), 100*p.Percentile, in)
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(b, "skipped (no truth given): %s\n", strings.Join(r.Skipped, ", "))
	}
	if len(r.Unchecked) > 0 {
		fmt.Fprintf(b, "not checked: %s\n", strings.Join(r.Unchecked, ", "))
	}
	r.atTruthText(b)
}

// atTruth evaluates the log target at the truth θ (over the free
// parameters, in model order) and ranks it among the samples' log targets
// lt (weights w, nil for equal).
func atTruth(ctx context.Context, s *study.Study, workers int, theta, lt, w []float64) (*AtTruth, error) {
	x := theta
	if s.Transformed() {
		var err error
		if x, err = s.Inverse(theta); err != nil {
			return nil, fmt.Errorf("analyze: the truth is outside the study's transforms: %w", err)
		}
	}
	res, err := target.New(s, workers).Evaluate(ctx, [][]float64{x}, abi.WantLogTarget)
	if err != nil {
		return nil, fmt.Errorf("analyze: evaluating the truth: %w", err)
	}
	r := res[0]
	at := &AtTruth{Status: r.Status.String(), LogPrior: r.LogPrior, LogLikelihood: r.LogLik, LogTarget: r.LogPrior + r.LogLik, SamplesMax: math.Inf(-1)}
	var below, total float64
	for i, v := range lt {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		total += wi
		if v < at.LogTarget {
			below += wi
		}
		if wi > 0 && v > at.SamplesMax {
			at.SamplesMax = v
		}
	}
	at.SamplesBelow = below / total
	return at, nil
}

// MarshalJSON writes non-finite numbers (the log target of a truth whose
// evaluation failed is −∞) as null, as summary.json does.
func (a AtTruth) MarshalJSON() ([]byte, error) {
	num := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	return json.Marshal(map[string]any{
		"status": a.Status, "log_prior": num(a.LogPrior), "log_likelihood": num(a.LogLikelihood),
		"log_target": num(a.LogTarget), "samples_below": num(a.SamplesBelow), "samples_max": num(a.SamplesMax),
	})
}
