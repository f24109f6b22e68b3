package wearsim

import (
	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/contact/efsurr"
)

// SideLoads are one side's contact loads on the femoral component (tibial
// axes): forces F (N), torques T about the femoral origin (N·m), and,
// when asked for, the centre of pressure CoP (tibial frame, mm).
type SideLoads struct {
	F, T, CoP [3]float64
}

// Contact is a contact model behind the simulator: the elastic foundation
// (EF) or its Kriging surrogates (Surrogate). Eval writes both sides'
// loads at a pose (efound.Pose: mm, radians); the CoP only when cop is
// true (the simulator asks for it once per accepted step). Implementations
// need not be safe for concurrent use: a simulation owns its Contact.
type Contact interface {
	Eval(p efound.Pose, cop bool, out *[2]SideLoads) error
	// LiftOff is the height Y0 of the femoral origin above the tibial
	// origin at Y = 0 (efound.Knee.LiftOff), for the CoP kinematics.
	LiftOff() float64
}

// EF is the elastic-foundation contact model (builtin/contact/efound).
type EF struct {
	Knee efound.Knee
	y0   float64
}

// NewEF wraps a knee.
func NewEF(k efound.Knee) (*EF, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	return &EF{Knee: k, y0: k.LiftOff()}, nil
}

// LiftOff implements Contact.
func (e *EF) LiftOff() float64 { return e.y0 }

// Eval implements Contact.
func (e *EF) Eval(p efound.Pose, cop bool, out *[2]SideLoads) error {
	l, err := e.Knee.Contact(p)
	if err != nil {
		return err
	}
	for s := range l {
		out[s] = SideLoads{F: l[s].F, T: l[s].T, CoP: l[s].CoP}
	}
	return nil
}

// Visit calls visit for every loaded element of each side at pose p
// (efound.Knee.ContactVisit): the element-based wear's data.
func (e *EF) Visit(p efound.Pose, visit func(side int, c [3]float64, fn float64)) error {
	_, err := e.Knee.ContactVisit(p, visit)
	return err
}

// Surrogate is the Kriging surrogate contact model (builtin/contact/efsurr)
// used as Lin et al. (2010, Sec. 2.2.5, Fig. 2h) do: for each side, F_y and
// T_α from the pose, then F_x, F_z, T_β, T_γ (and the CoP) from
// (x, F_y, z, T_α, β, γ) with that side's predicted F_y, T_α (Eq. 2).
type Surrogate struct {
	S  *efsurr.Surrogate
	Y0 float64 // lift-off height of the knee the surrogate was built on
}

// LiftOff implements Contact.
func (s *Surrogate) LiftOff() float64 { return s.Y0 }

// Eval implements Contact.
func (s *Surrogate) Eval(p efound.Pose, cop bool, out *[2]SideLoads) error {
	in := efsurr.PoseInputs(p)
	for side := 0; side < 2; side++ {
		m := &s.S.Sides[side]
		fy, err := m[0].Mean(in)
		if err != nil {
			return err
		}
		ta, err := m[1].Mean(in)
		if err != nil {
			return err
		}
		h := efsurr.HybridInputs(p, fy, ta)
		var o [9]float64
		o[0], o[1] = fy, ta
		n := 6
		if cop {
			n = 9
		}
		for j := 2; j < n; j++ {
			if o[j], err = m[j].Mean(h); err != nil {
				return err
			}
		}
		// Names order: Fy, Tα, Fx, Fz, Tβ, Tγ, copx, copy, copz
		out[side] = SideLoads{F: [3]float64{o[2], o[0], o[3]}, T: [3]float64{o[1], o[4], o[5]}, CoP: [3]float64{o[6], o[7], o[8]}}
	}
	return nil
}
