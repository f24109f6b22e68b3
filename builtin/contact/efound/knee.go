package efound

import (
	"fmt"
	"math"
)

// Default material and layer (Lin et al. 2010, Sec. 2.3: "linear material
// properties (Young's modulus = 463 MPa, Poisson's ratio = 0.46)"). The
// paper does not state the layer thickness; DefaultH = 5 mm is the value
// some elastic-foundation knee models use and about the thickness of the
// polyethylene under the articular surface of a tibial insert. It is a
// parameter of the model.
const (
	DefaultE  = 463.0 // MPa
	DefaultNu = 0.46
	DefaultH  = 5.0 // mm
)

// Knee is a two-compartment femoral component against a tibial insert:
// Sides[0] is medial (+z), Sides[1] lateral (−z).
type Knee struct {
	Sides      [2]Side
	Foundation Foundation
}

// Side indices.
const (
	Medial  = 0
	Lateral = 1
)

// SideNames name Sides in order.
var SideNames = [2]string{"medial", "lateral"}

// DefaultKnee returns the knee of this package's documentation (doc.go):
// symmetric toroidal condyles (sagittal radius 40 mm, frontal 20 mm) at
// z = ±22 mm on toroidal dishes (sagittal 70 mm, frontal 25 mm), each dish
// meshed over 40 mm (AP) × 28 mm (ML) into elements of side cell mm, with
// the linear (or nonlinear) foundation of DefaultE, DefaultNu, DefaultH.
// The dimensions are illustrative of a cruciate-retaining knee replacement,
// not those of a particular implant.
func DefaultKnee(cell float64, nonlinear bool) Knee {
	nx := int(math.Round(40 / cell))
	nz := int(math.Round(28 / cell))
	side := func(zc float64) Side {
		return Side{
			Condyle: Condyle{Sagittal: 40, Frontal: 20, Zc: zc},
			Dish:    Dish{Sagittal: 70, Frontal: 25, Zc: zc, HalfX: 20, HalfZ: 14},
			NX:      nx, NZ: nz,
		}
	}
	return Knee{
		Sides:      [2]Side{side(22), side(-22)},
		Foundation: Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH, Nonlinear: nonlinear},
	}
}

// Validate checks both sides and the foundation.
func (k Knee) Validate() error {
	for i, s := range k.Sides {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("%s side: %w", SideNames[i], err)
		}
	}
	return k.Foundation.Validate()
}

// LiftOff is Y0, the height of the femoral origin above the tibial origin
// at which, with zero rotation and X = Z = 0, the lowest condyle point just
// touches its dish: max over sides of (dish height below the condyle + R_s).
func (k Knee) LiftOff() float64 {
	y0 := math.Inf(-1)
	for _, s := range k.Sides {
		h, _, _ := s.Dish.Height(0, s.Condyle.Zc)
		y0 = math.Max(y0, h+s.Condyle.Sagittal)
	}
	return y0
}

// Contact evaluates both sides at a pose.
func (k Knee) Contact(p Pose) ([2]Loads, error) { return k.ContactVisit(p, nil) }

// ContactVisit is Contact that also calls visit, when not nil, for every
// loaded element of each side (Side.ContactVisit).
func (k Knee) ContactVisit(p Pose, visit func(side int, c [3]float64, fn float64)) ([2]Loads, error) {
	var out [2]Loads
	for _, v := range []float64{p.X, p.Y, p.Z, p.Alpha, p.Beta, p.Gamma} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return out, fmt.Errorf("efound: non-finite pose %+v", p)
		}
	}
	R := p.Rotation()
	t := [3]float64{p.X, p.Y + k.LiftOff(), p.Z}
	for i, s := range k.Sides {
		var v func(c [3]float64, fn float64)
		if visit != nil {
			side := i
			v = func(c [3]float64, fn float64) { visit(side, c, fn) }
		}
		l, err := s.ContactVisit(k.Foundation, R, t, v)
		if err != nil {
			return out, fmt.Errorf("%s side: %w", SideNames[i], err)
		}
		out[i] = l
	}
	return out, nil
}

// Net sums the loads of both sides (forces and torques; the CoP is the
// normal-force-weighted mean of the sides').
func Net(l [2]Loads) Loads {
	var n Loads
	var w float64
	for _, s := range l {
		fn := s.NormalForce()
		for k := 0; k < 3; k++ {
			n.F[k] += s.F[k]
			n.T[k] += s.T[k]
			n.CoP[k] += fn * s.CoP[k]
		}
		w += fn
		n.Area += s.Area
		n.Energy += s.Energy
		n.MaxP = math.Max(n.MaxP, s.MaxP)
		n.Elements += s.Elements
	}
	if w > 0 {
		for k := range n.CoP {
			n.CoP[k] /= w
		}
	}
	return n
}
