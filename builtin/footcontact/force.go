package footcontact

import (
	"fmt"
	"math"

	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// LatchingVelocity is v_l of Eq. 2 (Jackson 2016: "selected to be 0.01 m/s
// in this study").
const LatchingVelocity = 0.01

// Params are the contact parameters shared by both feet (Jackson 2016:
// "all model parameter values were identical between the two feet").
type Params struct {
	K, C          [NElem]float64 // spring stiffness [N/m] and nonlinear damping [s/m], per element
	Y0            float64        // common spring resting length [m]
	MuS, MuD, MuV float64        // static, dynamic and viscous friction coefficients
	VL            float64        // latching velocity [m/s]; 0 means LatchingVelocity
}

// Check reports parameters that make Eq. 1–2 meaningless.
func (p *Params) Check() error {
	for i := range p.K {
		if math.IsNaN(p.K[i]) || math.IsNaN(p.C[i]) {
			return fmt.Errorf("footcontact: k or c of element %d is NaN", i+1)
		}
	}
	if p.VL < 0 || math.IsNaN(p.Y0+p.MuS+p.MuD+p.MuV+p.VL) {
		return fmt.Errorf("footcontact: bad parameters y0=%g μs=%g μd=%g μv=%g vl=%g", p.Y0, p.MuS, p.MuD, p.MuV, p.VL)
	}
	return nil
}

func (p *Params) vl() float64 {
	if p.VL > 0 {
		return p.VL
	}
	return LatchingVelocity
}

// VerticalForce is Eq. 1 of Jackson 2016: F = k·(y − y0)·(1 + c·ẏ), with y
// the penetration of the element into the floor (positive downwards, so ẏ >
// 0 compresses), y0 the resting length. Out of contact (y ≤ y0) and where
// the damping factor would make the spring pull (1 + c·ẏ < 0) the force is
// 0. The force is continuous: it is 0 at y = y0 whatever ẏ, unlike a
// linear damper's k·(y − y0) + c·ẏ, which jumps at contact (Hunt & Crossley
// 1975).
func VerticalForce(k, c, y0, y, yd float64) float64 {
	d := y - y0
	if d <= 0 {
		return 0
	}
	g := 1 + c*yd
	if g <= 0 {
		return 0
	}
	return k * d * g
}

// FrictionRatio is the bracket of Jackson 2016 Eq. 2, f/F as a function of
// the slip speed vs ≥ 0:
//
//	μd·tanh(vs/vl) + (μs−μd)·(e^{−((vs−vl)/(2vl))²} − e^{−((vs+vl)/(2vl))²}) + μv·vs/vl
//
// It is 0 at vs = 0, rises through the latching region to about μs near vs
// = vl and settles to μd + μv·vs/vl. Without the viscous term it never
// exceeds μs.
func FrictionRatio(vs, muS, muD, muV, vl float64) float64 {
	a := (vs - vl) / (2 * vl)
	b := (vs + vl) / (2 * vl)
	return muD*math.Tanh(vs/vl) + (muS-muD)*(math.Exp(-a*a)-math.Exp(-b*b)) + muV*vs/vl
}

// frictionSlope is FrictionRatio(vs)/vs, continuous at vs = 0 where it is
// the derivative (μd + (μs−μd)·e^{−1/4} + μv)/vl.
func frictionSlope(vs, muS, muD, muV, vl float64) float64 {
	if vs < 1e-9*vl {
		return (muD + (muS-muD)*math.Exp(-0.25) + muV) / vl
	}
	return FrictionRatio(vs, muS, muD, muV, vl) / vs
}

// Friction returns the horizontal friction force (fx, fz) of Eq. 2 on an
// element with vertical force F slipping with horizontal velocity (vx, vz):
// magnitude F·FrictionRatio(vs), direction opposite to the slip. It is a
// continuous function of the slip velocity, 0 at zero slip.
func Friction(F, vx, vz float64, p *Params) (fx, fz float64) {
	vs := math.Hypot(vx, vz)
	s := F * frictionSlope(vs, p.MuS, p.MuD, p.MuV, p.vl())
	return -s * vx, -s * vz
}

// ElementForce returns the force (lab frame) on an element whose centre is
// at pos moving with vel: Eq. 1 from its penetration −pos.Y and rate
// −vel.Y, Eq. 2 from its horizontal velocity.
func ElementForce(k, c float64, pos, vel rb.Vec3, p *Params) rb.Vec3 {
	F := VerticalForce(k, c, p.Y0, -pos[1], -vel[1])
	if F == 0 {
		return rb.Vec3{}
	}
	fx, fz := Friction(F, vel[0], vel[2], p)
	return rb.Vec3{fx, F, fz}
}

// FrictionBasis splits Eq. 2's slope FrictionRatio(vs)/vs, which is linear
// in the friction coefficients, as μs·as + μd·ad + μv·av:
//
//	as = E/vs, ad = (tanh(vs/vl) − E)/vs, av = 1/vl,  E = e^{−((vs−vl)/(2vl))²} − e^{−((vs+vl)/(2vl))²}
//
// with the limits at vs → 0: as = e^{−1/4}/vl, ad = (1 − e^{−1/4})/vl. It
// gives the friction force's exact derivatives with respect to μs, μd, μv.
func FrictionBasis(vs, vl float64) (as, ad, av float64) {
	av = 1 / vl
	if vs < 1e-9*vl {
		e := math.Exp(-0.25)
		return e / vl, (1 - e) / vl, av
	}
	a := (vs - vl) / (2 * vl)
	b := (vs + vl) / (2 * vl)
	E := math.Exp(-a*a) - math.Exp(-b*b)
	return E / vs, (math.Tanh(vs/vl) - E) / vs, av
}
