package tkrcontact

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/contact/efound"
)

// Foundation choices (setting "foundation").
var FoundationNames = []string{"linear", "nonlinear"}

// poseNames are the conditions, and with suffix the offset parameters.
var poseNames = [6]string{"x", "y", "z", "alpha", "beta", "gamma"}
var poseUnits = [6]string{"mm", "mm", "mm", "deg", "deg", "deg"}

// OutputsPerSide are the output names of one side, prefixed med_ / lat_.
var OutputsPerSide = []string{"Fx_N", "Fy_N", "Fz_N", "Talpha_Nm", "Tbeta_Nm", "Tgamma_Nm", "copx_mm", "copy_mm", "copz_mm", "area_mm2"}

// sidePrefix names the sides in output order (efound.Medial, efound.Lateral).
var sidePrefix = [2]string{"med_", "lat_"}

// NumOutputs is the number of outputs per row.
var NumOutputs = 2 * len(OutputsPerSide)

// Spec is the self-description of the builtin tkrcontact model.
var Spec = func() abi.Spec {
	s := abi.Spec{
		Kind:    abi.KindModel,
		Name:    "tkrcontact",
		Version: "1.0.0",
		Doc:     "elastic-foundation contact of a knee replacement (Lin 2010 Sec. 2.3): medial and lateral loads and centre of pressure from the femoral pose",
		Params: []abi.Param{
			{Name: "E_MPa", Unit: "MPa", Lower: 10, Upper: 5000, Default: efound.DefaultE, Doc: "Young's modulus of the insert (Lin 2010: 463 MPa)"},
			{Name: "nu", Unit: "1", Lower: 0, Upper: 0.49, Default: efound.DefaultNu, Doc: "Poisson's ratio of the insert (Lin 2010: 0.46)"},
			{Name: "h_mm", Unit: "mm", Lower: 0.5, Upper: 20, Default: efound.DefaultH, Doc: "elastic layer thickness (not given by Lin 2010)"},
			{Name: "x0_mm", Unit: "mm", Lower: -20, Upper: 20, Default: 0, Doc: "pose offset added to every row's x (anterior)"},
			{Name: "y0_mm", Unit: "mm", Lower: -2, Upper: 2, Default: 0, Doc: "pose offset added to every row's y (superior; 0 = lift-off)"},
			{Name: "z0_mm", Unit: "mm", Lower: -10, Upper: 10, Default: 0, Doc: "pose offset added to every row's z (medial)"},
			{Name: "alpha0_deg", Unit: "deg", Lower: -10, Upper: 10, Default: 0, Doc: "pose offset added to every row's varus–valgus angle α"},
			{Name: "beta0_deg", Unit: "deg", Lower: -30, Upper: 30, Default: 0, Doc: "pose offset added to every row's internal–external angle β"},
			{Name: "gamma0_deg", Unit: "deg", Lower: -120, Upper: 120, Default: 0, Doc: "pose offset added to every row's flexion angle γ"},
		},
		Settings: []abi.Setting{
			{Name: "foundation", Default: 0, Choices: FoundationNames, Doc: "pressure law: linear p = K·d/h or nonlinear p = −K·ln(1 − d/h)"},
			{Name: "cell_mm", Unit: "mm", Default: 0.5, Doc: "element size of the insert mesh (each dish is 40 mm × 28 mm)"},
		},
		Capabilities: []abi.Capability{abi.CapRowsIndependent},
	}
	docs := [6]string{"anterior–posterior translation of the femoral origin", "superior–inferior translation from the lift-off pose (negative loads the insert)", "medial–lateral translation (+ medial)", "varus–valgus rotation α about the tibial x axis", "internal–external rotation β about the tibial y axis", "flexion γ about the femoral z axis"}
	for i, n := range poseNames {
		s.Conditions = append(s.Conditions, abi.Column{Name: n + "_" + poseUnits[i], Unit: poseUnits[i], Doc: docs[i]})
	}
	odoc := []string{"contact force on the femur along x", "along y", "along z", "contact torque on the femur about x at the femoral origin", "about y", "about z", "centre of pressure x (tibial frame)", "centre of pressure y", "centre of pressure z", "contact area"}
	ounit := []string{"N", "N", "N", "N·m", "N·m", "N·m", "mm", "mm", "mm", "mm²"}
	for k, side := range sidePrefix {
		for i, n := range OutputsPerSide {
			s.Outputs = append(s.Outputs, abi.Column{Name: side + n, Unit: ounit[i], Doc: efound.SideNames[k] + ": " + odoc[i]})
		}
	}
	return s
}()

// Model is the contact model with its mesh and pressure law fixed.
type Model struct {
	Cell      float64
	Nonlinear bool
}

// New builds the model from its settings (foundation, cell_mm).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 2 {
		return nil, fmt.Errorf("tkrcontact: want 2 settings (foundation, cell_mm), got %d", len(settings))
	}
	if settings[0] != 0 && settings[0] != 1 {
		return nil, fmt.Errorf("tkrcontact: foundation must be linear or nonlinear, got index %g", settings[0])
	}
	if !(settings[1] >= 0.05 && settings[1] <= 5) {
		return nil, fmt.Errorf("tkrcontact: cell_mm must be in [0.05, 5], got %g", settings[1])
	}
	return Model{Cell: settings[1], Nonlinear: settings[0] == 1}, nil
}

// Spec implements abi.Model.
func (Model) Spec() abi.Spec { return Spec }

// Knee returns the contact model at θ's material parameters.
func (m Model) Knee(theta []float64) efound.Knee {
	k := efound.DefaultKnee(m.Cell, m.Nonlinear)
	k.Foundation.E, k.Foundation.Nu, k.Foundation.H = theta[0], theta[1], theta[2]
	return k
}

const deg = math.Pi / 180

// Eval implements abi.Model: row i of x is a pose (x, y, z mm; α, β, γ deg)
// to which θ's offsets are added; row i of y the medial then lateral loads,
// CoP and area. A non-finite pose or material outside its domain is
// Invalid; a penetration through the nonlinear layer or a grazing element
// is Failed.
func (m Model) Eval(theta, x, y []float64) abi.Status {
	k := m.Knee(theta)
	if k.Foundation.Validate() != nil {
		return abi.Invalid
	}
	nout := NumOutputs
	for i := 0; i < len(x)/6; i++ {
		r := x[6*i : 6*i+6]
		p := efound.Pose{
			X: r[0] + theta[3], Y: r[1] + theta[4], Z: r[2] + theta[5],
			Alpha: (r[3] + theta[6]) * deg, Beta: (r[4] + theta[7]) * deg, Gamma: (r[5] + theta[8]) * deg,
		}
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return abi.Invalid
			}
		}
		l, err := k.Contact(p)
		if err != nil { // efound.ErrTooDeep, or an element normal missing the condyle
			return abi.Failed
		}
		out := y[nout*i : nout*i+nout]
		for s := 0; s < 2; s++ {
			o := out[s*len(OutputsPerSide):]
			o[0], o[1], o[2] = l[s].F[0], l[s].F[1], l[s].F[2]
			o[3], o[4], o[5] = l[s].T[0], l[s].T[1], l[s].T[2]
			o[6], o[7], o[8] = l[s].CoP[0], l[s].CoP[1], l[s].CoP[2]
			o[9] = l[s].Area
		}
	}
	return abi.OK
}

// RowsIndependent implements abi.RowsIndependent: each row is one pose.
func (Model) RowsIndependent() bool { return true }
