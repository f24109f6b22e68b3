package foot

import (
	"fmt"
	"math"
	"sync"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/bspline"
	fc "github.com/kinfer/kinfer/builtin/footcontact"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// Sizes of θ, a row of X and a row of y.
const (
	NCoef      = 25 // B-spline coefficients per deviation curve (Jackson 2016)
	Degree     = 3  // cubic B-splines
	NContact   = 2*fc.NElem + 4
	NParams    = NContact + 2*fc.NDoF*NCoef
	NConds     = 3 + 2*2*fc.NDoF
	NOutGRF    = 6
	NOutMarker = 3 * fc.NMarkers
	NOutFoot   = NOutGRF + NOutMarker + fc.NDoF
	NOut       = 2 * NOutFoot
)

// Index of parameters in θ.
const (
	IdxK   = 0
	IdxC   = fc.NElem
	IdxY0  = 2 * fc.NElem
	IdxMuS = IdxY0 + 1
	IdxMuD = IdxY0 + 2
	IdxMuV = IdxY0 + 3
	IdxDev = NContact
)

// Prefix is the per-foot prefix of names: "r_" and "l_".
var Prefix = [2]string{"r_", "l_"}

// DevIndex is the θ index of coefficient b of the deviation of DoF j of
// foot s (0 right, 1 left).
func DevIndex(s, j, b int) int { return IdxDev + (s*fc.NDoF+j)*NCoef + b }

// GRFNames are the ground reaction outputs of one foot, after its prefix.
var GRFNames = [NOutGRF]string{"grf_x", "grf_y", "grf_z", "cop_x", "cop_z", "tfree"}

func params() []abi.Param {
	ps := make([]abi.Param, 0, NParams)
	for i := 0; i < fc.NElem; i++ {
		ps = append(ps, abi.Param{Name: fmt.Sprintf("k_%02d", i+1), Unit: "N/m", Lower: 0, Upper: 20000, Default: 2600,
			Doc: fmt.Sprintf("Eq. 1 spring stiffness of element %d", i+1)})
	}
	for i := 0; i < fc.NElem; i++ {
		ps = append(ps, abi.Param{Name: fmt.Sprintf("c_%02d", i+1), Unit: "s/m", Lower: 0, Upper: 200, Default: 1,
			Doc: fmt.Sprintf("Eq. 1 nonlinear damping of element %d", i+1)})
	}
	ps = append(ps,
		abi.Param{Name: "y0", Unit: "m", Lower: -0.03, Upper: 0.03, Default: 0, Doc: "Eq. 1 common spring resting length"},
		abi.Param{Name: "mu_s", Lower: 0, Upper: 2, Default: 0.2, Doc: "Eq. 2 static friction coefficient"},
		abi.Param{Name: "mu_d", Lower: 0, Upper: 2, Default: 0.15, Doc: "Eq. 2 dynamic friction coefficient"},
		abi.Param{Name: "mu_v", Lower: 0, Upper: 1, Default: 0.005, Doc: "Eq. 2 viscous friction coefficient"},
	)
	for s := 0; s < 2; s++ {
		for j, d := range fc.DoFNames {
			unit, bound := "m", 0.05
			if j >= 3 {
				unit, bound = "rad", 0.5
			}
			for b := 0; b < NCoef; b++ {
				ps = append(ps, abi.Param{Name: fmt.Sprintf("%sdev_%s_%02d", Prefix[s], d, b+1), Unit: unit, Lower: -bound, Upper: bound,
					Doc: fmt.Sprintf("B-spline coefficient %d of the %s deviation of the %s foot", b+1, d, []string{"right", "left"}[s])})
			}
		}
	}
	return ps
}

func conditions() []abi.Column {
	cs := []abi.Column{
		{Name: "time", Unit: "s", Doc: "time of the frame"},
		{Name: "tau", Doc: "normalised time of the trial in [0, 1], the B-splines' argument"},
		{Name: "duration", Unit: "s", Doc: "the trial's duration T (dτ/dt = 1/T)"},
	}
	for s := 0; s < 2; s++ {
		for j, d := range fc.DoFNames {
			cs = append(cs, abi.Column{Name: Prefix[s] + d, Unit: dofUnit(j), Doc: "measured coordinate (e.g. inverse kinematics)"})
		}
		for j, d := range fc.DoFNames {
			cs = append(cs, abi.Column{Name: Prefix[s] + d + "_dot", Unit: dofUnit(j) + "/s", Doc: "its time derivative"})
		}
	}
	return cs
}

func dofUnit(j int) string {
	if j < 3 {
		return "m"
	}
	return "rad"
}

func outputs() []abi.Column {
	var os []abi.Column
	units := [NOutGRF]string{"N", "N", "N", "m", "m", "N·m"}
	docs := [NOutGRF]string{"AP ground reaction force", "vertical ground reaction force", "ML ground reaction force",
		"AP centre of pressure (the heel marker's where the vertical force is below 1 N)", "ML centre of pressure (likewise)", "free moment about the vertical (0 below 1 N)"}
	for s := 0; s < 2; s++ {
		for i, n := range GRFNames {
			os = append(os, abi.Column{Name: Prefix[s] + n, Unit: units[i], Doc: docs[i]})
		}
		for _, m := range fc.MarkerNames {
			for _, ax := range []string{"x", "y", "z"} {
				os = append(os, abi.Column{Name: Prefix[s] + m + "_" + ax, Unit: "m", Doc: "model marker position in the lab"})
			}
		}
		for j, d := range fc.DoFNames {
			os = append(os, abi.Column{Name: Prefix[s] + "dev_" + d, Unit: dofUnit(j), Doc: "deviation added to the measured coordinate"})
		}
	}
	return os
}

// Spec is the self-description of the builtin foot model.
var Spec = abi.Spec{
	Kind:       abi.KindModel,
	Name:       "foot",
	Version:    "1.0.0",
	Doc:        "two-segment foot-ground contact, both feet, 38 elements (Jackson 2016 Eq. 1-2), B-spline kinematic deviations",
	Params:     params(),
	Conditions: conditions(),
	Outputs:    outputs(),
	Settings: []abi.Setting{
		{Name: "foot_length", Unit: "m", Default: fc.DefaultDimensions.Length, Doc: "heel marker to toe-tip marker"},
		{Name: "foot_width", Unit: "m", Default: fc.DefaultDimensions.Width, Doc: "medial to lateral toe marker"},
		{Name: "marker_height", Unit: "m", Default: fc.DefaultDimensions.MarkerH, Doc: "heel and toe marker height above the sole"},
	},
	Capabilities: []abi.Capability{abi.CapJacobian, abi.CapRowsIndependent},
}

// Model is both feet with their geometry fixed.
type Model struct {
	Feet  [2]*fc.Foot
	Basis *bspline.Basis
	pool  sync.Pool // *scratch
}

type scratch struct {
	loads       fc.Loads
	b, db       []float64
	q, qd       [fc.NDoF]float64
	out, op, om [NOutFoot]float64
	dq          [2 * fc.NDoF][NOutGRF + NOutMarker]float64
}

// New builds the model from its settings (foot_length, foot_width,
// marker_height).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != 3 {
		return nil, fmt.Errorf("foot: want 3 settings (foot_length, foot_width, marker_height), got %d", len(settings))
	}
	d := fc.DefaultDimensions
	d.Length, d.Width, d.MarkerH = settings[0], settings[1], settings[2]
	return NewWith(d)
}

// NewWith builds the model for given foot dimensions.
func NewWith(d fc.Dimensions) (*Model, error) {
	m := &Model{}
	var err error
	for s, side := range []fc.Side{fc.Right, fc.Left} {
		if m.Feet[s], err = fc.NewFoot(side, d); err != nil {
			return nil, err
		}
	}
	if m.Basis, err = bspline.New(NCoef, Degree, 0, 1); err != nil {
		return nil, err
	}
	return m, nil
}

// Spec implements abi.Model.
func (*Model) Spec() abi.Spec { return Spec }

// RowsIndependent implements abi.RowsIndependent.
func (*Model) RowsIndependent() bool { return true }

// ContactParams unpacks the contact parameters of θ.
func ContactParams(theta []float64) fc.Params {
	var p fc.Params
	copy(p.K[:], theta[IdxK:IdxK+fc.NElem])
	copy(p.C[:], theta[IdxC:IdxC+fc.NElem])
	p.Y0, p.MuS, p.MuD, p.MuV = theta[IdxY0], theta[IdxMuS], theta[IdxMuD], theta[IdxMuV]
	return p
}

func (m *Model) scratch() *scratch {
	if s, ok := m.pool.Get().(*scratch); ok {
		return s
	}
	return &scratch{b: make([]float64, NCoef), db: make([]float64, NCoef)}
}

// footOutputs writes the GRF and marker outputs of foot s for pose q, q̇.
func (m *Model) footOutputs(s int, p *fc.Params, q, qd []float64, l *fc.Loads, out []float64) {
	f := m.Feet[s]
	f.Evaluate(p, q, qd, l)
	g := fc.GRFFrom(l.Total, l.MomentO, 1)
	if math.IsNaN(g.CoPx) {
		g.CoPx, g.CoPz, g.Tfree = l.HFOrigin[0], l.HFOrigin[2], 0
	}
	out[0], out[1], out[2], out[3], out[4], out[5] = g.Fx, g.Fy, g.Fz, g.CoPx, g.CoPz, g.Tfree
	mk := f.MarkerPositions(q)
	for i, v := range mk {
		out[NOutGRF+3*i], out[NOutGRF+3*i+1], out[NOutGRF+3*i+2] = v[0], v[1], v[2]
	}
}

// pose fills sc.q, sc.qd with measured + deviation for foot s of row x and
// writes the deviations to dev.
func (m *Model) pose(sc *scratch, theta, x []float64, s int, dev []float64) {
	dur := x[2]
	qm := x[3+s*2*fc.NDoF : 3+s*2*fc.NDoF+fc.NDoF]
	qdm := x[3+s*2*fc.NDoF+fc.NDoF : 3+(s+1)*2*fc.NDoF]
	first := m.Basis.Eval(x[1], sc.b)
	m.Basis.Deriv(x[1], 1, sc.db)
	for j := 0; j < fc.NDoF; j++ {
		d, dd := 0.0, 0.0
		for b := first; b <= first+Degree && b < NCoef; b++ {
			c := theta[DevIndex(s, j, b)]
			d += c * sc.b[b]
			dd += c * sc.db[b]
		}
		sc.q[j] = qm[j] + d
		sc.qd[j] = qdm[j] + dd/dur
		dev[j] = d
	}
}

func checkRow(x []float64) abi.Status {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return abi.Invalid
		}
	}
	if !(x[2] > 0) {
		return abi.Invalid
	}
	return abi.OK
}

// Eval implements abi.Model.
func (m *Model) Eval(theta, x, y []float64) abi.Status {
	if len(theta) != NParams || len(x)%NConds != 0 || len(y) != len(x)/NConds*NOut {
		return abi.Invalid
	}
	p := ContactParams(theta)
	sc := m.scratch()
	defer m.pool.Put(sc)
	for k := 0; k < len(x)/NConds; k++ {
		xr := x[k*NConds : (k+1)*NConds]
		if st := checkRow(xr); st != abi.OK {
			return st
		}
		for s := 0; s < 2; s++ {
			out := y[k*NOut+s*NOutFoot : k*NOut+(s+1)*NOutFoot]
			m.pose(sc, theta, xr, s, out[NOutGRF+NOutMarker:])
			m.footOutputs(s, &p, sc.q[:], sc.qd[:], &sc.loads, out)
		}
	}
	for _, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return abi.NonFinite
		}
	}
	return abi.OK
}

// Steps of the central differences in q and q̇.
const (
	hQ  = 1e-6
	hQd = 1e-5
)

// grfJac is ∂(GRF outputs)/∂(F, M) at force F and moment M (about the lab
// origin), for the reduction of footcontact.GRFFrom; below 1 N the CoP
// and free moment are the fallback, whose contact derivatives are 0.
func grfJac(F, M rb.Vec3) (J [NOutGRF][6]float64) {
	J[0][0], J[1][1], J[2][2] = 1, 1, 1
	if !(F[1] >= 1) {
		return J
	}
	fy := F[1]
	px, pz := M[2]/fy, -M[0]/fy
	// CoPx = Mz/Fy.
	J[3][5], J[3][1] = 1/fy, -M[2]/(fy*fy)
	// CoPz = −Mx/Fy.
	J[4][3], J[4][1] = -1/fy, M[0]/(fy*fy)
	// T = My − pz·Fx + px·Fz.
	for c := 0; c < 6; c++ {
		J[5][c] = -F[0]*J[4][c] + F[2]*J[3][c]
	}
	J[5][4] += 1
	J[5][0] += -pz
	J[5][2] += px
	return J
}

// Jacobian implements abi.Jacobian: y as Eval, and jac = ∂y/∂θ, (K·NOut)
// × NParams row-major.
func (m *Model) Jacobian(theta, x, y, jac []float64) abi.Status {
	if st := m.Eval(theta, x, y); st != abi.OK {
		return st
	}
	if len(jac) != len(y)*NParams {
		return abi.Invalid
	}
	for i := range jac {
		jac[i] = 0
	}
	p := ContactParams(theta)
	vl := fc.LatchingVelocity
	sc := m.scratch()
	defer m.pool.Put(sc)
	var dev [fc.NDoF]float64
	for k := 0; k < len(x)/NConds; k++ {
		xr := x[k*NConds : (k+1)*NConds]
		for s := 0; s < 2; s++ {
			row0 := k*NOut + s*NOutFoot // first output row of this foot
			J := func(o, i int) *float64 { return &jac[(row0+o)*NParams+i] }
			m.pose(sc, theta, xr, s, dev[:])
			f := m.Feet[s]
			l := &sc.loads
			f.Evaluate(&p, sc.q[:], sc.qd[:], l)
			G := grfJac(l.Total, l.MomentO)
			// add writes ∂GRF/∂θ_i from a force derivative df at element position r.
			add := func(i int, r, df rb.Vec3) {
				dm := r.Cross(df)
				d6 := [6]float64{df[0], df[1], df[2], dm[0], dm[1], dm[2]}
				for o := 0; o < NOutGRF; o++ {
					v := 0.0
					for c := 0; c < 6; c++ {
						v += G[o][c] * d6[c]
					}
					*J(o, i) += v
				}
			}
			for i := 0; i < fc.NElem; i++ {
				fe := l.Force[i]
				if fe[1] == 0 {
					continue
				}
				r, v := l.Pos[i], l.Vel[i]
				d := -r[1] - p.Y0
				yd := -v[1]
				gf := 1 + p.C[i]*yd
				u := rb.Vec3{fe[0] / fe[1], 1, fe[2] / fe[1]} // force per unit vertical force
				add(IdxK+i, r, u.Scale(d*gf))                 // Eq. 1: ∂F/∂k = d·g
				add(IdxC+i, r, u.Scale(p.K[i]*d*yd))          // ∂F/∂c = k·d·ẏ
				add(IdxY0, r, u.Scale(-p.K[i]*gf))            // ∂F/∂y0 = −k·g
				as, ad, av := fc.FrictionBasis(math.Hypot(v[0], v[2]), vl)
				F := fe[1]
				for _, mu := range []struct {
					idx int
					a   float64
				}{{IdxMuS, as}, {IdxMuD, ad}, {IdxMuV, av}} {
					add(mu.idx, r, rb.Vec3{-F * mu.a * v[0], 0, -F * mu.a * v[2]}) // Eq. 2: slope linear in μ
				}
			}
			// ∂(GRF, markers)/∂q_j and ∂/∂q̇_j by central differences.
			q0, qd0 := sc.q, sc.qd
			for j := 0; j < 2*fc.NDoF; j++ {
				qp, qdp, qm, qdm := q0, qd0, q0, qd0
				h := hQ
				if j < fc.NDoF {
					qp[j] += h
					qm[j] -= h
				} else {
					h = hQd
					qdp[j-fc.NDoF] += h
					qdm[j-fc.NDoF] -= h
				}
				m.footOutputs(s, &p, qp[:], qdp[:], l, sc.op[:])
				m.footOutputs(s, &p, qm[:], qdm[:], l, sc.om[:])
				for o := 0; o < NOutGRF+NOutMarker; o++ {
					sc.dq[j][o] = (sc.op[o] - sc.om[o]) / (2 * h)
				}
			}
			first := m.Basis.Eval(xr[1], sc.b)
			m.Basis.Deriv(xr[1], 1, sc.db)
			dur := xr[2]
			for j := 0; j < fc.NDoF; j++ {
				for b := first; b <= first+Degree && b < NCoef; b++ {
					i := DevIndex(s, j, b)
					for o := 0; o < NOutGRF+NOutMarker; o++ {
						*J(o, i) = sc.dq[j][o]*sc.b[b] + sc.dq[fc.NDoF+j][o]*sc.db[b]/dur
					}
					*J(NOutGRF+NOutMarker+j, i) = sc.b[b]
				}
			}
		}
	}
	for _, v := range jac {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return abi.NonFinite
		}
	}
	return abi.OK
}
