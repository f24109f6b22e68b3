package twobardirect

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
)

func params() []abi.Param {
	units := [twobar.NParam]string{"N/m", "N m/rad", "N/m", "N m/rad"}
	docs := [twobar.NParam]string{"linear stiffness of spring element 1", "torsional stiffness of spring element 1",
		"linear stiffness of spring element 3", "torsional stiffness of spring element 3"}
	out := make([]abi.Param, twobar.NParam)
	for i := range out {
		p := twobar.PSol[i]
		out[i] = abi.Param{Name: twobar.ParamNames[i], Unit: units[i], Lower: 0, Upper: 100 * p, Default: p,
			Doc: docs[i] + " (Gouveia's p_sol is the default)"}
	}
	return out
}

func conditions() []abi.Column {
	var out []abi.Column
	for _, pre := range []string{"", "v", "a"} {
		out = append(out, twobar.CoordColumns(pre)...)
	}
	return out
}

// OutputNames are r_x2 … r_th5.
func OutputNames() []string {
	names := twobar.CoordNames("r_")
	return names[3:]
}

func outputs() []abi.Column {
	var out []abi.Column
	for i, n := range OutputNames() {
		u := "N"
		if i%3 == 2 {
			u = "N m"
		}
		out = append(out, abi.Column{Name: n, Unit: u, Doc: "equation-of-motion residual (observe 0)"})
	}
	return out
}

// Spec is the self-description of twobar-direct.
var Spec = abi.Spec{
	Kind:         abi.KindModel,
	Name:         "twobar-direct",
	Version:      "1.0.0",
	Doc:          "Gouveia's two flexible bars, direct identification (Eq. 11): equation-of-motion residual on the free coordinates at given q, qdot, qddot, as a function of the spring constants; exact Jacobian",
	Params:       params(),
	Conditions:   conditions(),
	Outputs:      outputs(),
	Capabilities: []abi.Capability{abi.CapJacobian, abi.CapRowsIndependent},
}

// Model is the direct two-bar model.
type Model struct{}

// New builds the model (it has no settings).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 0 {
		return nil, fmt.Errorf("twobar-direct: no settings, got %d", len(settings))
	}
	return Model{}, nil
}

// Spec implements abi.Model.
func (Model) Spec() abi.Spec { return Spec }

// RowsIndependent implements abi.RowsIndependent.
func (Model) RowsIndependent() bool { return true }

const (
	nc = 3 * twobar.NDof
	no = twobar.NFree
)

func (m Model) eval(theta, x, y []float64) abi.Status {
	if len(theta) != twobar.NParam || len(x)%nc != 0 || len(y) != len(x)/nc*no {
		return abi.Invalid
	}
	var p [twobar.NParam]float64
	copy(p[:], theta)
	sys, err := twobar.System(p)
	if err != nil {
		return abi.Failed
	}
	e := twobar.NewEval()
	n := twobar.NDof
	for k := 0; k < len(x)/nc; k++ {
		row := x[k*nc : (k+1)*nc]
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return abi.Invalid
			}
		}
		if err := twobar.DirectResidual(sys, e, row[:n], row[n:2*n], row[2*n:], y[k*no:(k+1)*no]); err != nil {
			return abi.Failed
		}
	}
	return abi.OK
}

// Eval implements abi.Model.
func (m Model) Eval(theta, x, y []float64) abi.Status { return m.eval(theta, x, y) }

// Jacobian implements abi.Jacobian. r is affine in p: column j is
// r(e_j) − r(0) exactly (up to rounding).
func (m Model) Jacobian(theta, x, y, jac []float64) abi.Status {
	d := twobar.NParam
	if len(jac) != len(y)*d {
		return abi.Invalid
	}
	if st := m.eval(theta, x, y); st != abi.OK {
		return st
	}
	y0 := make([]float64, len(y))
	yj := make([]float64, len(y))
	zero := make([]float64, d)
	if st := m.eval(zero, x, y0); st != abi.OK {
		return st
	}
	for j := 0; j < d; j++ {
		ej := make([]float64, d)
		ej[j] = 1
		if st := m.eval(ej, x, yj); st != abi.OK {
			return st
		}
		for i := range y {
			jac[i*d+j] = yj[i] - y0[i]
		}
	}
	return abi.OK
}
