package twobarindirect

import (
	"fmt"
	"math"
	"sort"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
)

func params() []abi.Param {
	units := [twobar.NParam]string{"N/m", "N m/rad", "N/m", "N m/rad"}
	out := make([]abi.Param, twobar.NParam)
	for i := range out {
		p := twobar.PSol[i]
		out[i] = abi.Param{Name: twobar.ParamNames[i], Unit: units[i], Lower: 0, Upper: 100 * p, Default: p,
			Doc: "spring constant (Gouveia's p_sol is the default)"}
	}
	return out
}

// OutputNames are x1 … th5, vx1 … vth5, ax1 … ath5.
func OutputNames() []string {
	var out []string
	for _, pre := range []string{"", "v", "a"} {
		out = append(out, twobar.CoordNames(pre)...)
	}
	return out
}

func outputs() []abi.Column {
	var out []abi.Column
	for _, pre := range []string{"", "v", "a"} {
		out = append(out, twobar.CoordColumns(pre)...)
	}
	return out
}

// Spec is the self-description of twobar-indirect.
var Spec = abi.Spec{
	Kind:       abi.KindModel,
	Name:       "twobar-indirect",
	Version:    "1.0.0",
	Doc:        "Gouveia's two flexible bars, indirect identification (Eq. 14-16): the HHT-alpha simulation of the release from pi/6 with the spring constants p, state at the rows' times",
	Params:     params(),
	Conditions: []abi.Column{{Name: "t", Unit: "s", Doc: "time after release"}},
	Outputs:    outputs(),
	Settings: []abi.Setting{
		{Name: "step", Unit: "s", Default: twobar.DefaultStep, Doc: "HHT-alpha step; every t must be a multiple"},
		{Name: "alpha", Default: twobar.DefaultAlpha, Doc: "HHT alpha in [-1/3, 0]"},
	},
}

// Model is the indirect two-bar model.
type Model struct {
	Opt twobar.Options
}

// New builds the model from its settings (step, alpha).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 2 {
		return nil, fmt.Errorf("twobar-indirect: want 2 settings (step, alpha), got %d", len(settings))
	}
	h, al := settings[0], settings[1]
	if !(h > 0 && h <= 0.1) {
		return nil, fmt.Errorf("twobar-indirect: setting step = %g s, want 0 < step <= 0.1", h)
	}
	if !(al >= -1.0/3 && al <= 0) {
		return nil, fmt.Errorf("twobar-indirect: setting alpha = %g, want it in [-1/3, 0]", al)
	}
	return Model{Opt: twobar.Options{Step: h, Alpha: al}}, nil
}

// Spec implements abi.Model.
func (Model) Spec() abi.Spec { return Spec }

const no = 3 * twobar.NDof

// Eval implements abi.Model.
func (m Model) Eval(theta, x, y []float64) abi.Status {
	K := len(x)
	if len(theta) != twobar.NParam || len(y) != K*no {
		return abi.Invalid
	}
	h := m.Opt.Step
	steps := make([]int, K)
	order := make([]int, K)
	for k, t := range x {
		s := t / h
		if !(t >= 0) || math.IsInf(t, 0) || math.Abs(s-math.Round(s)) > 1e-6 || s > MaxSteps {
			return abi.Invalid
		}
		steps[k], order[k] = int(math.Round(s)), k
	}
	sort.SliceStable(order, func(a, b int) bool { return steps[order[a]] < steps[order[b]] })
	var p [twobar.NParam]float64
	copy(p[:], theta)
	sm, err := twobar.NewSim(p, m.Opt)
	if err != nil {
		return abi.Failed
	}
	it := sm.It
	cur := 0
	n := twobar.NDof
	for _, k := range order {
		for cur < steps[k] {
			if err := it.Step(); err != nil {
				return abi.Failed
			}
			cur++
		}
		row := y[k*no : (k+1)*no]
		copy(row[:n], it.Q)
		copy(row[n:2*n], it.V)
		copy(row[2*n:], it.A)
	}
	return abi.OK
}

// MaxSteps bounds the integration of one evaluation (1000 s at the
// default step, about a minute of computing); a later t is Invalid.
const MaxSteps = 1e6
