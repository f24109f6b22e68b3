package footcontact

import (
	"math"

	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// MinCoPForce is the vertical force below which the centre of pressure and
// the free moment are left out (Jackson 2016 reports CoP only where the
// vertical force is at least 100 N; below it the CoP is ill-conditioned).
const MinCoPForce = 100.0

// Loads are the contact loads on one foot at one instant, in the lab
// frame.
type Loads struct {
	Pos, Vel [NElem]rb.Vec3 // element centres and their velocities
	Force    [NElem]rb.Vec3 // force on each element (Eq. 1 vertical, Eq. 2 horizontal)
	// Net force and moment on each segment about its origin (the heel
	// marker for the HF, the toe marker for the FF), by the principle of
	// replacement: F = Σ f_i, M = Σ (r_i − o) × f_i over its elements.
	HFForce, HFMoment rb.Vec3
	FFForce, FFMoment rb.Vec3
	HFOrigin          rb.Vec3
	FFOrigin          rb.Vec3
	// Total force and its moment about the lab origin.
	Total, MomentO rb.Vec3
}

// Evaluate computes the loads for pose q and rates qd (len NDoF each).
func (f *Foot) Evaluate(p *Params, q, qd []float64, l *Loads) {
	k := f.Kinematics(q)
	var zero [NDoF]float64
	l.HFOrigin, _ = f.Point(&k, f.Markers[0].Pos, false, zero[:])
	l.FFOrigin, _ = f.Point(&k, f.Markers[1].Pos, true, zero[:])
	l.HFForce, l.HFMoment, l.FFForce, l.FFMoment = rb.Vec3{}, rb.Vec3{}, rb.Vec3{}, rb.Vec3{}
	l.Total, l.MomentO = rb.Vec3{}, rb.Vec3{}
	for i := range f.Elem {
		e := &f.Elem[i]
		pos, vel := f.Point(&k, e.Pos, e.Forefoot, qd)
		fe := ElementForce(p.K[i], p.C[i], pos, vel, p)
		l.Pos[i], l.Vel[i], l.Force[i] = pos, vel, fe
		if e.Forefoot {
			l.FFForce = l.FFForce.Add(fe)
			l.FFMoment = l.FFMoment.Add(pos.Sub(l.FFOrigin).Cross(fe))
		} else {
			l.HFForce = l.HFForce.Add(fe)
			l.HFMoment = l.HFMoment.Add(pos.Sub(l.HFOrigin).Cross(fe))
		}
	}
	// The foot's total from the segments' (replacement again: moving a
	// segment's moment from its origin o to the lab origin adds o × F).
	l.Total = l.HFForce.Add(l.FFForce)
	l.MomentO = l.HFMoment.Add(l.HFOrigin.Cross(l.HFForce)).Add(l.FFMoment).Add(l.FFOrigin.Cross(l.FFForce))
}

// GRF is the six ground reaction quantities of one foot as a force plate
// in the floor (Y = 0) reports them: the force, the centre of pressure
// (where the line of action meets the floor) and the free moment about
// the vertical through it.
type GRF struct {
	Fx, Fy, Fz float64 // AP, vertical, ML force on the foot [N]
	CoPx, CoPz float64 // centre of pressure AP, ML [m]; NaN where Fy < the threshold
	Tfree      float64 // free moment about the vertical [N·m]; NaN where Fy < the threshold
}

// GRFFrom reduces a force F and its moment M about the lab origin to the
// ground reaction quantities: with the force applied at p = (px, 0, pz)
// plus a free moment T about Y, M = p × F + (0, T, 0), so px = Mz/Fy, pz =
// −Mx/Fy and T = My − (pz·Fx − px·Fz). Below minFy the CoP and T are NaN.
func GRFFrom(F, M rb.Vec3, minFy float64) GRF {
	g := GRF{Fx: F[0], Fy: F[1], Fz: F[2], CoPx: math.NaN(), CoPz: math.NaN(), Tfree: math.NaN()}
	if F[1] >= minFy && F[1] > 0 {
		g.CoPx = M[2] / F[1]
		g.CoPz = -M[0] / F[1]
		g.Tfree = M[1] - (g.CoPz*F[0] - g.CoPx*F[2])
	}
	return g
}

// GRF returns the foot's ground reaction quantities, CoP and free moment
// left out below minFy (MinCoPForce in Jackson 2016).
func (l *Loads) GRF(minFy float64) GRF {
	return GRFFrom(l.Total, l.MomentO, minFy)
}
