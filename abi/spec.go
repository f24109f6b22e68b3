package abi

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Version is the ABI version this package describes. A plugin's
// kinfer_abi_version export must return it; the host refuses any other.
const Version = 1

// Kind names the role of a component.
type Kind string

const (
	KindModel      Kind = "model"
	KindLikelihood Kind = "likelihood"
	KindMethod     Kind = "method"
)

// Capability names an optional feature of a component.
type Capability = string

const (
	// CapJacobian: the model returns the full Jacobian ∂y/∂θ.
	CapJacobian Capability = "jacobian"
	// CapVJP: the model returns the vector–Jacobian product vᵀ·∂y/∂θ.
	CapVJP Capability = "vjp"
	// CapGradY: the likelihood returns ∂logL/∂y.
	CapGradY Capability = "grad_y"
	// CapResiduals: the likelihood returns residuals r with
	// logL = const − ½‖r‖².
	CapResiduals Capability = "residuals"
	// CapCheckpoint: the method can save and restore its state.
	CapCheckpoint Capability = "checkpoint"
)

// Param describes one model parameter θ_i.
type Param struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit,omitempty"`
	Lower   float64 `json:"lower"`
	Upper   float64 `json:"upper"`
	Default float64 `json:"default"`
	Doc     string  `json:"doc,omitempty"`
}

// Column describes one condition (input) or output column of a dataset.
type Column struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	Doc  string `json:"doc,omitempty"`
}

// Setting is a named numeric configuration value of a component, fixed for a
// whole study (a reference length, a likelihood's degrees of freedom, a
// sampler's chain count). Values come from the study file; Default is used
// when the study gives none, unless Required is set.
type Setting struct {
	Name     string  `json:"name"`
	Unit     string  `json:"unit,omitempty"`
	Default  float64 `json:"default"`
	Required bool    `json:"required,omitempty"`
	// Choices makes an enumerated setting: the study names one of them and
	// the value passed is its index (0, 1, ...).
	Choices []string `json:"choices,omitempty"`
	// Output makes a method's setting name one of the study model's
	// outputs: the study writes an output name and the value passed is its
	// index in the model's Spec().Outputs (0, 1, ...). Default −1 stands
	// for "none named". Methods only (montecarlo's quantity).
	Output bool   `json:"output,omitempty"`
	Doc    string `json:"doc,omitempty"`
}

// Spec is the self-description of a model, likelihood or method. It is what
// a plugin's kinfer_describe export returns as JSON (see ABI.md).
type Spec struct {
	Kind         Kind         `json:"kind"`
	Name         string       `json:"name"`
	Version      string       `json:"version,omitempty"`
	Doc          string       `json:"doc,omitempty"`
	Params       []Param      `json:"params,omitempty"`     // models only
	Conditions   []Column     `json:"conditions,omitempty"` // models only
	Outputs      []Column     `json:"outputs,omitempty"`    // models only
	Settings     []Setting    `json:"settings,omitempty"`
	Capabilities []Capability `json:"capabilities,omitempty"`
}

// Has reports whether the spec lists capability c.
func (s Spec) Has(c Capability) bool {
	for _, x := range s.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

// ParamIndex returns the index of the named parameter, or -1.
func (s Spec) ParamIndex(name string) int {
	for i, p := range s.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// ReservedSettingNames are the keys a study file's component table uses for
// itself ([model], [[likelihood]], [method]: which component, which data,
// which outputs, ...). A setting may not take one of these names, or the
// study could not tell it from the key (ABI.md §4).
var ReservedSettingNames = []string{"use", "plugin", "data", "sigma", "outputs", "trusted", "certify"}

// ReservedParamNames are samples.csv's own columns beside the parameters:
// a parameter may not take one of these names (ABI.md §4).
var ReservedParamNames = []string{"log_prior", "log_likelihood"}

// Validate checks the internal consistency of a spec: a known kind, a name,
// unique non-empty names in each list, finite ordered parameter bounds with
// the default inside them, params, conditions and outputs only in a model
// (which needs at least one param and one output), setting names that are
// not ReservedSettingNames, and a setting with choices whose default is the
// index of one of them.
func (s Spec) Validate() error {
	switch s.Kind {
	case KindModel, KindLikelihood, KindMethod:
	default:
		return fmt.Errorf("spec: unknown kind %q (want model, likelihood or method)", s.Kind)
	}
	if s.Name == "" {
		return fmt.Errorf("spec: empty name")
	}
	if s.Kind != KindModel {
		for _, l := range []struct {
			key string
			n   int
		}{{"params", len(s.Params)}, {"conditions", len(s.Conditions)}, {"outputs", len(s.Outputs)}} {
			if l.n > 0 {
				return fmt.Errorf("spec %s: a %s has no %s (only a model does), got %d", s.Name, s.Kind, l.key, l.n)
			}
		}
	}
	seen := map[string]bool{}
	check := func(list, name string) error {
		if name == "" {
			return fmt.Errorf("spec %s: empty name in %s", s.Name, list)
		}
		if strings.IndexFunc(name, badRune) >= 0 {
			return fmt.Errorf("spec %s: %s name %q has a control character", s.Name, list, name)
		}
		// Headers of data files and of the run's own samples.csv are read
		// with surrounding white space and a byte-order mark trimmed: such
		// a name could never be matched.
		if strings.TrimSpace(name) != name || strings.HasPrefix(name, "\uFEFF") {
			return fmt.Errorf("spec %s: %s name %q begins or ends with white space or a byte-order mark (data and samples headers are read trimmed, so it could not be matched)", s.Name, list, name)
		}
		if seen[list+"/"+name] {
			return fmt.Errorf("spec %s: duplicate %s name %q", s.Name, list, name)
		}
		seen[list+"/"+name] = true
		return nil
	}
	for _, p := range s.Params {
		if err := check("param", p.Name); err != nil {
			return err
		}
		for _, r := range ReservedParamNames {
			if p.Name == r {
				return fmt.Errorf("spec %s: param %q has a name samples.csv reserves for its own columns (%v)", s.Name, p.Name, ReservedParamNames)
			}
		}
		if math.IsNaN(p.Lower) || math.IsNaN(p.Upper) || !(p.Lower < p.Upper) {
			return fmt.Errorf("spec %s: param %q has bounds [%g, %g]; want lower < upper", s.Name, p.Name, p.Lower, p.Upper)
		}
		if math.IsInf(p.Lower, 0) || math.IsInf(p.Upper, 0) {
			return fmt.Errorf("spec %s: param %q has bounds [%g, %g]; want finite bounds", s.Name, p.Name, p.Lower, p.Upper)
		}
		if !(p.Lower <= p.Default && p.Default <= p.Upper) {
			hint := ""
			if p.Default == 0 {
				// Audit 21: the implicit 0 of a missing default read as a
				// value the author had given.
				hint = " (a param without \"default\" has the default 0, ABI.md §4: give one inside the bounds)"
			}
			return fmt.Errorf("spec %s: param %q has default %g outside its bounds [%g, %g]%s", s.Name, p.Name, p.Default, p.Lower, p.Upper, hint)
		}
	}
	for _, c := range s.Conditions {
		if err := check("condition", c.Name); err != nil {
			return err
		}
	}
	for _, c := range s.Outputs {
		if err := check("output", c.Name); err != nil {
			return err
		}
	}
	// A dataset's columns are matched to conditions and outputs by name,
	// and sigma_<output> is that output's σ column: a name with two
	// meanings would read one column twice.
	for _, c := range s.Conditions {
		if seen["output/"+c.Name] {
			return fmt.Errorf("spec %s: %q is both a condition and an output; a dataset column has one meaning", s.Name, c.Name)
		}
	}
	for _, l := range []struct {
		list string
		cols []Column
	}{{"condition", s.Conditions}, {"output", s.Outputs}} {
		for _, c := range l.cols {
			if o, ok := strings.CutPrefix(c.Name, "sigma_"); ok && seen["output/"+o] {
				return fmt.Errorf("spec %s: %s %q would be read as the σ column of output %q (a dataset's sigma_<output> column); rename it", s.Name, l.list, c.Name, o)
			}
		}
	}
	for _, c := range s.Settings {
		if err := check("setting", c.Name); err != nil {
			return err
		}
		for _, r := range ReservedSettingNames {
			if c.Name == r {
				return fmt.Errorf("spec %s: setting %q has a name the study reserves (%v)", s.Name, c.Name, ReservedSettingNames)
			}
		}
		if c.Output {
			switch {
			case s.Kind != KindMethod:
				return fmt.Errorf("spec %s: setting %q names a model output (output = true), which only a method's setting may", s.Name, c.Name)
			case len(c.Choices) > 0:
				return fmt.Errorf("spec %s: setting %q has both choices and output = true", s.Name, c.Name)
			case c.Default != math.Trunc(c.Default) || c.Default < -1:
				return fmt.Errorf("spec %s: setting %q names a model output; its default %g must be −1 (none) or an index ≥ 0", s.Name, c.Name, c.Default)
			}
		}
		if len(c.Choices) > 0 {
			d := c.Default
			if d != math.Trunc(d) || d < 0 || d >= float64(len(c.Choices)) {
				return fmt.Errorf("spec %s: setting %q has default %g; with choices %v the default is an index, 0 to %d", s.Name, c.Name, d, c.Choices, len(c.Choices)-1)
			}
			for i, ch := range c.Choices {
				if ch == "" {
					return fmt.Errorf("spec %s: setting %q has an empty choice (index %d)", s.Name, c.Name, i)
				}
				if strings.IndexFunc(ch, badRune) >= 0 {
					return fmt.Errorf("spec %s: setting %q has choice %q with a control character", s.Name, c.Name, ch)
				}
				for _, prev := range c.Choices[:i] {
					if prev == ch {
						return fmt.Errorf("spec %s: setting %q lists choice %q twice", s.Name, c.Name, ch)
					}
				}
			}
		}
	}
	if s.Kind == KindModel && (len(s.Params) == 0 || len(s.Outputs) == 0) {
		return fmt.Errorf("spec %s: a model needs at least one param and one output", s.Name)
	}
	return nil
}

// Status is the outcome of one evaluation. Model failure is a status, never a
// crash: the host counts failures and gives the point a log target of −∞.
type Status int32

const (
	// OK: the outputs are valid.
	OK Status = 0
	// Failed: the model has no solution at θ (no equilibrium, a solver that
	// did not converge). Reported by the model.
	Failed Status = 1
	// Invalid: θ or the conditions are outside the model's domain. Reported
	// by the model.
	Invalid Status = 2
	// NonFinite: the model returned NaN or ±Inf. Assigned by the host.
	NonFinite Status = 3
	// Timeout: the call exceeded the plugin's timeout_ms. Assigned by the host.
	Timeout Status = 4
	// Trap: the plugin trapped or returned a malformed result. Assigned by the
	// host.
	Trap Status = 5
	// OutOfSupport: the prior density is zero at θ, so the model was not
	// evaluated. Assigned by the host; not counted as a failure.
	OutOfSupport Status = 6
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Invalid:
		return "invalid"
	case NonFinite:
		return "non-finite"
	case Timeout:
		return "timeout"
	case Trap:
		return "trap"
	case OutOfSupport:
		return "out-of-support"
	}
	return fmt.Sprintf("status(%d)", int32(s))
}

// SettingValues resolves the values of a spec's settings from a name→value
// map: unknown names are an error, missing names take their default, and a
// missing required setting is an error. The result is in the
// order of specs.
func SettingValues(specs []Setting, given map[string]float64) ([]float64, error) {
	out := make([]float64, len(specs))
	known := map[string]bool{}
	for i, s := range specs {
		known[s.Name] = true
		v, ok := given[s.Name]
		if !ok {
			if s.Required {
				return nil, fmt.Errorf("setting %q is required", s.Name)
			}
			v = s.Default
		}
		out[i] = v
	}
	for name := range given {
		if !known[name] {
			names := make([]string, len(specs))
			for i, s := range specs {
				names[i] = s.Name
			}
			return nil, fmt.Errorf("unknown setting %q (known: %v)", name, names)
		}
	}
	return out, nil
}

// CapSigmaFree: the likelihood does not use σ (a normalised loss, a
// constraint on predictions), so a study need not give one.
const CapSigmaFree Capability = "sigma_free"

// CapBatch: the likelihood evaluates the outputs of several points against
// the same data in one call (BatchLikelihood; for a WASM likelihood the
// export kinfer_likelihood_eval_batch).
const CapBatch Capability = "batch"

// CapRowsIndependent: the model's rows do not interact (RowsIndependent):
// the host may evaluate one θ's rows in blocks on several workers. A
// declaration, with no export of its own.
const CapRowsIndependent Capability = "rows_independent"

// CapLeastSquares: the method minimises ½‖r‖², the study's residuals, and
// asks for residuals and their Jacobian (WantResiduals, WantJacobian). The
// study refuses such a method when a likelihood term cannot give
// residuals (CapResiduals). For a WASM method the exports
// kinfer_method_problem and kinfer_method_tell_lsq (ABI.md §6.4).
const CapLeastSquares Capability = "least_squares"

// CapPropagation: the method reads the model's outputs (WantOutputs) and
// can run on a propagation study, one without [[likelihood]] and possibly
// without [[data]] (docs/STUDY.md). A study without [[likelihood]] is
// refused for any other method. For a WASM method the exports
// kinfer_method_outputs and kinfer_method_tell_outputs (ABI.md §6.5).
const CapPropagation Capability = "propagation"

// CapPriorDraws: the method's requests for prior draws must be answered
// with genuine draws from the prior (a TMCMC population, whose evidence
// estimate assumes them; a Monte Carlo propagation): the host never hands
// it the study's initial points as its first draws, and refuses a study
// with an init file for it. A declaration, with no export of its own.
// CapPropagation implies it.
const CapPriorDraws Capability = "prior_draws"

// NeedsPriorDraws reports whether a method with spec s must get genuine
// prior draws (CapPriorDraws or CapPropagation).
func (s Spec) NeedsPriorDraws() bool { return s.Has(CapPriorDraws) || s.Has(CapPropagation) }

// CapPullback: the model evaluates y and keeps what its backward pass
// needs, handing it to the host, so that a gradient takes one forward pass
// (for a WASM model the exports kinfer_model_forward and
// kinfer_model_pullback, ABI.md §6.1; the host then serves the model as an
// abi.Pullbacker, and as an abi.VJP when the model has no VJP of its own).
const CapPullback Capability = "pullback"

// badRune: a control character or a bidirectional control (which would
// reorder what a terminal shows), refused in names and choices.
func badRune(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }
