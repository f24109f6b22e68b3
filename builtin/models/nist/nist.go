package nist

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
)

// MaxParams is the largest number of parameters of a StRD problem (ENSO's
// nine). The model always has b1 … b9; a problem with P < 9 parameters
// ignores b(P+1) … b9, which a study fixes ([fixed]).
const MaxParams = 9

// Bound is the magnitude of every parameter's bounds. The StRD problems
// are unconstrained; the host needs finite bounds, and ±1e9 holds every
// certified value and starting point (the largest is MGH10's start 1,
// b2 = 400 000) with room to spare.
const Bound = 1e9

func params() []abi.Param {
	ps := make([]abi.Param, MaxParams)
	for i := range ps {
		ps[i] = abi.Param{
			Name: fmt.Sprintf("b%d", i+1), Lower: -Bound, Upper: Bound, Default: 0,
			Doc: "parameter b" + fmt.Sprint(i+1) + " of the chosen problem (unused when the problem has fewer; fix it)",
		}
	}
	return ps
}

func choices() []string {
	out := make([]string, len(Problems))
	for i, p := range Problems {
		out[i] = p.Name
	}
	return out
}

// Spec is the self-description of the builtin nist model.
var Spec = abi.Spec{
	Kind:    abi.KindModel,
	Name:    "nist",
	Version: "1.0.0",
	Doc:     "the 27 NIST StRD nonlinear regression models (Misra1a ... Bennett5), one chosen by the setting problem; analytic Jacobian",
	Params:  params(),
	Conditions: []abi.Column{
		{Name: "x", Doc: "the predictor x (Nelson: x1)"},
		{Name: "x2", Doc: "Nelson's second predictor x2; ignored by the other 26 problems (give 0)"},
	},
	Outputs: []abi.Column{
		{Name: "y", Doc: "the response y (Nelson: log y, NIST's response for that problem)"},
	},
	Settings: []abi.Setting{
		{Name: "problem", Default: 0, Choices: choices(), Doc: "which StRD problem (NIST's names)"},
	},
	Capabilities: []abi.Capability{abi.CapJacobian, abi.CapRowsIndependent},
}

// Model is one StRD problem.
type Model struct {
	Problem Problem
}

// New builds the model from its settings (problem).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 1 {
		return nil, fmt.Errorf("nist: want 1 setting (problem), got %d", len(settings))
	}
	v := settings[0]
	if v != math.Trunc(v) || v < 0 || v >= float64(len(Problems)) {
		return nil, fmt.Errorf("nist: setting problem must be an index 0 to %d, got %g", len(Problems)-1, v)
	}
	return Model{Problem: Problems[int(v)]}, nil
}

// NewProblem returns the model of the named problem.
func NewProblem(name string) (Model, error) {
	i := ProblemIndex(name)
	if i < 0 {
		return Model{}, fmt.Errorf("nist: no problem %q (problems: %v)", name, choices())
	}
	return Model{Problem: Problems[i]}, nil
}

// Spec implements abi.Model.
func (Model) Spec() abi.Spec { return Spec }

// RowsIndependent implements abi.RowsIndependent: row k of y is f(θ, x_k).
func (Model) RowsIndependent() bool { return true }

// check refuses buffers of the wrong size.
func check(theta, x, y []float64, jac []float64, withJac bool) bool {
	if len(theta) != MaxParams || len(x)%2 != 0 || len(y) != len(x)/2 {
		return false
	}
	return !withJac || len(jac) == len(y)*MaxParams
}

// Eval implements abi.Model: y_k = f(θ, x_k, x2_k). A non-finite value is
// left for the host to flag (abi.NonFinite).
func (m Model) Eval(theta, x, y []float64) abi.Status {
	if !check(theta, x, y, nil, false) {
		return abi.Invalid
	}
	f := m.Problem.F
	for k := range y {
		y[k] = f(theta, x[2*k], x[2*k+1], nil)
	}
	return abi.OK
}

// Jacobian implements abi.Jacobian: row k holds ∂y_k/∂b1 … ∂y_k/∂b9, zero
// for the parameters the problem does not use.
func (m Model) Jacobian(theta, x, y, jac []float64) abi.Status {
	if !check(theta, x, y, jac, true) {
		return abi.Invalid
	}
	f := m.Problem.F
	for k := range y {
		row := jac[k*MaxParams : (k+1)*MaxParams]
		clear(row)
		y[k] = f(theta, x[2*k], x[2*k+1], row)
	}
	return abi.OK
}
