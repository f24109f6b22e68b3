package ligament

import (
	"fmt"

	"github.com/kinfer/kinfer/abi"
)

// EpsL is ε_l, the toe-region parameter of Eq. 1 (Bartsoen 2023: "an
// experimentally fitted parameter equal to 0.03"); the toe ends at 2ε_l.
const EpsL = 0.03

// Spec is the self-description of the builtin ligament model.
var Spec = abi.Spec{
	Kind:    abi.KindModel,
	Name:    "ligament",
	Version: "1.0.0",
	Doc:     "Blankevoort ligament (Bartsoen 2023 Eq. 1-2): force and strain from length",
	Params: []abi.Param{
		{Name: "k", Unit: "N", Lower: 2000, Upper: 12000, Default: 5000, Doc: "linear stiffness, force per unit strain (Table 2)"},
		{Name: "eps_r", Unit: "1", Lower: -0.5, Upper: 0.4, Default: 0, Doc: "reference strain at the reference length (Table 2)"},
	},
	Conditions: []abi.Column{{Name: "length_mm", Unit: "mm", Doc: "current ligament length L"}},
	Outputs: []abi.Column{
		{Name: "force_N", Unit: "N", Doc: "ligament force F, Eq. 1"},
		{Name: "strain", Unit: "1", Doc: "ligament strain ε, Eq. 2"},
	},
	Settings: []abi.Setting{
		{Name: "ref_length_mm", Unit: "mm", Required: true, Doc: "reference length L_r (length at the reference position)"},
	},
	Capabilities: []abi.Capability{abi.CapJacobian, abi.CapRowsIndependent},
}

// Model is the ligament with its reference length fixed.
type Model struct {
	RefLength float64 // L_r [mm]
}

// New builds the model from its settings (ref_length_mm).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 1 {
		return nil, fmt.Errorf("ligament: want 1 setting (ref_length_mm), got %d", len(settings))
	}
	if !(settings[0] > 0) {
		return nil, fmt.Errorf("ligament: ref_length_mm must be > 0, got %g", settings[0])
	}
	return Model{RefLength: settings[0]}, nil
}

// Spec implements abi.Model.
func (Model) Spec() abi.Spec { return Spec }

// Strain is Eq. 2: ε = ((1+ε_r)·L − L_r)/L_r.
func Strain(epsR, L, Lr float64) float64 { return ((1+epsR)*L - Lr) / Lr }

// Force is Eq. 1: 0 for ε < 0; k·ε²/(4ε_l) for 0 ≤ ε ≤ 2ε_l; k·(ε − ε_l)
// above. It also returns dF/dε.
func Force(k, eps float64) (f, dfde float64) {
	switch {
	case eps < 0:
		return 0, 0
	case eps <= 2*EpsL:
		return 0.25 * k * eps * eps / EpsL, 0.5 * k * eps / EpsL
	default:
		return k * (eps - EpsL), k
	}
}

// Eval implements abi.Model: y[i] = (F, ε) at length x[i].
func (m Model) Eval(theta, x, y []float64) abi.Status {
	k, epsR := theta[0], theta[1]
	for i, L := range x {
		eps := Strain(epsR, L, m.RefLength)
		f, _ := Force(k, eps)
		y[2*i], y[2*i+1] = f, eps
	}
	return abi.OK
}

// Jacobian implements abi.Jacobian: rows (F_i, ε_i), columns (k, ε_r).
// ∂F/∂k = F/k (F is linear in k); ∂F/∂ε_r = dF/dε·L/L_r; ∂ε/∂ε_r = L/L_r.
func (m Model) Jacobian(theta, x, y, jac []float64) abi.Status {
	k, epsR := theta[0], theta[1]
	for i, L := range x {
		eps := Strain(epsR, L, m.RefLength)
		f, dfde := Force(k, eps)
		y[2*i], y[2*i+1] = f, eps
		dedr := L / m.RefLength
		r := jac[4*i : 4*i+4]
		r[0], r[1] = f/k, dfde*dedr
		r[2], r[3] = 0, dedr
	}
	return abi.OK
}

// RowsIndependent implements abi.RowsIndependent: each row's (F, ε)
// depends on θ and that row's length alone.
func (Model) RowsIndependent() bool { return true }
