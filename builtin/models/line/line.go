package line

import (
	"fmt"
	"time"

	"github.com/kinfer/kinfer/abi"
)

// Spec is the self-description of the line model.
var Spec = abi.Spec{
	Kind:    abi.KindModel,
	Name:    "line",
	Version: "1.0.0",
	Doc:     "straight line y = a + b*x with a configurable cost per evaluation (for overhead and scaling measurements)",
	Params: []abi.Param{
		{Name: "a", Unit: "1", Lower: -1e6, Upper: 1e6, Default: 0, Doc: "intercept"},
		{Name: "b", Unit: "1", Lower: -1e6, Upper: 1e6, Default: 1, Doc: "slope"},
	},
	Conditions: []abi.Column{{Name: "x", Unit: "1", Doc: "abscissa"}},
	Outputs:    []abi.Column{{Name: "y", Unit: "1", Doc: "a + b*x"}},
	Settings: []abi.Setting{
		{Name: "cost_ms", Unit: "ms", Default: 0, Doc: "time one evaluation takes, ≥ 0"},
		{Name: "wait", Default: 0, Choices: []string{"spin", "sleep"}, Doc: "spin: keep a core busy for cost_ms; sleep: leave it idle"},
	},
	Capabilities: []abi.Capability{abi.CapJacobian},
}

// Model is the line with its cost.
type Model struct {
	Cost  time.Duration
	Sleep bool
}

// New builds the model from its settings (cost_ms, wait).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 2 {
		return nil, fmt.Errorf("line: want 2 settings (cost_ms, wait), got %d", len(settings))
	}
	if !(settings[0] >= 0 && settings[0] <= 3.6e6) {
		return nil, fmt.Errorf("line: cost_ms must be in [0, 3600000], got %g", settings[0])
	}
	return Model{Cost: time.Duration(settings[0] * float64(time.Millisecond)), Sleep: settings[1] == 1}, nil
}

// Spec implements abi.Model.
func (Model) Spec() abi.Spec { return Spec }

// spend lets the evaluation's cost pass.
func (m Model) spend() {
	if m.Cost <= 0 {
		return
	}
	if m.Sleep {
		time.Sleep(m.Cost)
		return
	}
	for start := time.Now(); time.Since(start) < m.Cost; {
	}
}

// Eval implements abi.Model: y[i] = a + b·x[i].
func (m Model) Eval(theta, x, y []float64) abi.Status {
	for i, xi := range x {
		y[i] = theta[0] + theta[1]*xi
	}
	m.spend()
	return abi.OK
}

// Jacobian implements abi.Jacobian: row i is (1, x[i]).
func (m Model) Jacobian(theta, x, y, jac []float64) abi.Status {
	for i, xi := range x {
		y[i] = theta[0] + theta[1]*xi
		jac[2*i], jac[2*i+1] = 1, xi
	}
	m.spend()
	return abi.OK
}
