package efound

import (
	"errors"
	"fmt"
	"math"
)

// Foundation is the elastic layer of the tibial insert: Young's modulus E
// (MPa), Poisson's ratio ν and thickness H (mm) on a rigid backing.
type Foundation struct {
	E, Nu, H  float64
	Nonlinear bool // p = −K·ln(1 − d/h) instead of p = K·d/h
}

// Validate checks the material and thickness.
func (f Foundation) Validate() error {
	if !(f.E > 0) || !(f.H > 0) || !(f.Nu >= 0 && f.Nu < 0.5) || math.IsInf(f.E, 0) || math.IsInf(f.H, 0) {
		return fmt.Errorf("efound: foundation needs E > 0, 0 ≤ ν < 0.5, h > 0; got E %g MPa, ν %g, h %g mm", f.E, f.Nu, f.H)
	}
	return nil
}

// K is the foundation modulus K = (1−ν)E/((1+ν)(1−2ν)) (MPa) of the
// elastic-foundation model (Bei & Fregly 2004; Fregly, Bei & Sylvester
// 2003, cited by Lin et al. 2010, Sec. 2.3).
func (f Foundation) K() float64 {
	return (1 - f.Nu) * f.E / ((1 + f.Nu) * (1 - 2*f.Nu))
}

// ErrTooDeep is returned when a penetration reaches the layer thickness
// in the nonlinear foundation, where the pressure is infinite.
var ErrTooDeep = errors.New("efound: penetration reaches the layer thickness (nonlinear foundation)")

// Pressure returns the pressure p (MPa) at penetration d (mm) and the
// strain energy per unit area e = ∫₀^d p (N/mm):
// linear p = K·d/h, e = ½K·d²/h; nonlinear p = −K·ln(1 − d/h),
// e = K·h·[(1 − t)·ln(1 − t) + t], t = d/h.
func (f Foundation) Pressure(d float64) (p, e float64, err error) {
	if d <= 0 {
		return 0, 0, nil
	}
	k := f.K()
	if !f.Nonlinear {
		return k * d / f.H, 0.5 * k * d * d / f.H, nil
	}
	t := d / f.H
	if t >= 1 {
		return math.Inf(1), math.Inf(1), ErrTooDeep
	}
	l := math.Log1p(-t)
	return -k * l, k * f.H * ((1-t)*l + t), nil
}

// Pose is the pose of the femoral component relative to the tibial insert
// (Lin 2010, Sec. 2.1 concept 3, axes of Fig. 1): translations X
// (anterior–posterior), Y (superior–inferior, up positive), Z
// (medial–lateral) in mm and rotations Alpha (varus–valgus, about x), Beta
// (internal–external, about y), Gamma (flexion–extension, about z) in
// radians. The rotation from femoral to tibial axes is
// R = R_y(β)·R_x(α)·R_z(γ): internal–external about the tibial axis,
// varus–valgus about the floating axis, flexion about the femoral axis,
// as in a Grood–Suntay joint coordinate system. The femoral origin sits at
// (X, Y + Y0, Z) in the tibial frame, where Y0 is the knee's lift-off
// height, so Y = 0 at zero rotation is the pose where both sides barely
// touch.
type Pose struct {
	X, Y, Z, Alpha, Beta, Gamma float64
}

// Rotation returns R = R_y(β)·R_x(α)·R_z(γ), row-major.
func (p Pose) Rotation() [3][3]float64 {
	ca, sa := math.Cos(p.Alpha), math.Sin(p.Alpha)
	cb, sb := math.Cos(p.Beta), math.Sin(p.Beta)
	cg, sg := math.Cos(p.Gamma), math.Sin(p.Gamma)
	ry := [3][3]float64{{cb, 0, sb}, {0, 1, 0}, {-sb, 0, cb}}
	rx := [3][3]float64{{1, 0, 0}, {0, ca, -sa}, {0, sa, ca}}
	rz := [3][3]float64{{cg, -sg, 0}, {sg, cg, 0}, {0, 0, 1}}
	return mul3(ry, mul3(rx, rz))
}

func mul3(a, b [3][3]float64) (c [3][3]float64) {
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return c
}

// Side is one compartment: a femoral condyle against an insert dish meshed
// into NX × NZ rectangular elements (cells of the dish's planform, each
// represented by its centre on the surface, its surface normal and its
// surface area).
type Side struct {
	Condyle Condyle
	Dish    Dish
	NX, NZ  int
}

// Loads are the results of one side for one pose. Forces and torques are
// those the insert applies to the femoral component (the femur applies
// the opposite ones to the insert), in tibial axes; torques are about the
// femoral origin.
type Loads struct {
	F        [3]float64 // N: F_x, F_y, F_z
	T        [3]float64 // N·m: T_α (about x), T_β (about y), T_γ (about z)
	CoP      [3]float64 // mm, tibial frame: normal-force-weighted mean of the contacting elements' centres; zero out of contact
	Area     float64    // mm², surface area of the contacting elements
	MaxP     float64    // MPa, largest element pressure
	Energy   float64    // N·mm, Σ e(d)·A over elements (strain energy of the layer)
	Elements int        // contacting elements
}

// NormalForce is the magnitude of the contact force |F| (N).
func (l Loads) NormalForce() float64 { return math.Sqrt(l.F[0]*l.F[0] + l.F[1]*l.F[1] + l.F[2]*l.F[2]) }

// Validate checks the side's geometry and grid.
func (s Side) Validate() error {
	if s.NX < 1 || s.NZ < 1 {
		return fmt.Errorf("efound: grid needs nx, nz ≥ 1, got %d×%d", s.NX, s.NZ)
	}
	if err := s.Condyle.Validate(); err != nil {
		return err
	}
	return s.Dish.Validate()
}

// maxNewton bounds the iterations of the ray–condyle intersection.
const maxNewton = 30

// Contact evaluates one side at a pose (femoral origin at t in tibial
// coordinates, rotation R from femoral to tibial axes). For every element
// with centre c on the dish and unit normal n (pointing out of the insert),
// the penetration d is the distance, along n, from c down to the condyle
// surface: φ(Rᵀ(c + s·n − t)) = 0 solved for s by Newton's method from
// s = 0 and d = −s when c is inside the condyle (φ(c) < 0), else 0. The
// element's pressure p(d) (Foundation.Pressure) acts along n on its surface
// area A: force p·A·n on the femur, applied at c.
func (s Side) Contact(f Foundation, R [3][3]float64, t [3]float64) (Loads, error) {
	return s.ContactVisit(f, R, t, nil)
}

// ContactVisit is Contact that also calls visit, when not nil, for every
// loaded element with its centre c (tibial frame, mm) and its normal force
// p·A (N): the element-level data of element-based wear (Lin et al. 2010,
// Sec. 2.3.5, refs. 18–19).
func (s Side) ContactVisit(f Foundation, R [3][3]float64, t [3]float64, visit func(c [3]float64, fn float64)) (Loads, error) {
	var L Loads
	d := s.Dish
	dx := 2 * d.HalfX / float64(s.NX)
	dz := 2 * d.HalfZ / float64(s.NZ)
	var sumFn float64
	var cop [3]float64
	for iz := 0; iz < s.NZ; iz++ {
		z := d.Zc - d.HalfZ + (float64(iz)+0.5)*dz
		for ix := 0; ix < s.NX; ix++ {
			x := -d.HalfX + (float64(ix)+0.5)*dx
			h, hx, hz := d.Height(x, z)
			c := [3]float64{x, h, z}
			// condyle SDF at c, femoral frame
			phi, _ := s.sdf(R, t, c)
			if !(phi < 0) {
				if math.IsNaN(phi) {
					return L, fmt.Errorf("efound: non-finite distance at element (%d,%d)", ix, iz)
				}
				continue
			}
			inv := 1 / math.Sqrt(1+hx*hx+hz*hz)
			n := [3]float64{-hx * inv, inv, -hz * inv}
			pen, err := s.depth(R, t, c, n)
			if err != nil {
				return L, fmt.Errorf("%w at element (%d,%d)", err, ix, iz)
			}
			p, e, err := f.Pressure(pen)
			if err != nil {
				return L, err
			}
			if p == 0 {
				continue
			}
			area := dx * dz / inv
			fn := p * area
			if visit != nil {
				visit(c, fn)
			}
			fe := [3]float64{fn * n[0], fn * n[1], fn * n[2]}
			r := [3]float64{c[0] - t[0], c[1] - t[1], c[2] - t[2]}
			for k := 0; k < 3; k++ {
				L.F[k] += fe[k]
				cop[k] += fn * c[k]
			}
			L.T[0] += r[1]*fe[2] - r[2]*fe[1]
			L.T[1] += r[2]*fe[0] - r[0]*fe[2]
			L.T[2] += r[0]*fe[1] - r[1]*fe[0]
			sumFn += fn
			L.Area += area
			L.Energy += e * area
			L.MaxP = math.Max(L.MaxP, p)
			L.Elements++
		}
	}
	for k := 0; k < 3; k++ {
		L.T[k] *= 1e-3 // N·mm → N·m
		if sumFn > 0 {
			L.CoP[k] = cop[k] / sumFn
		}
	}
	if L.Elements == 0 {
		// No element centre inside the condyle: out of contact, or the
		// condyle has passed through the layer altogether (below every
		// element's surface point), which would read as no load.
		if err := s.through(f, R, t); err != nil {
			return Loads{}, err
		}
	}
	return L, nil
}

// ErrThrough is returned when the condyle reaches below the layer's rigid
// backing at an element whose surface point it does not contain: it has
// passed through the insert, which no foundation can load.
var ErrThrough = errors.New("efound: the condyle is through the layer, below its rigid backing")

// through checks a pose without contacting elements: the condyle passed
// through the insert (ErrThrough) when an element's point on the rigid
// backing (depth h along −n) is inside it, or when its point nearest the
// elements, c − φ(c)·∇φ(c) from the element of least φ, lies under the
// dish below the backing (the whole condyle under the layer).
func (s Side) through(f Foundation, R [3][3]float64, t [3]float64) error {
	d := s.Dish
	dx := 2 * d.HalfX / float64(s.NX)
	dz := 2 * d.HalfZ / float64(s.NZ)
	best := math.Inf(1)
	var near [3]float64
	for iz := 0; iz < s.NZ; iz++ {
		z := d.Zc - d.HalfZ + (float64(iz)+0.5)*dz
		for ix := 0; ix < s.NX; ix++ {
			x := -d.HalfX + (float64(ix)+0.5)*dx
			h, hx, hz := d.Height(x, z)
			inv := 1 / math.Sqrt(1+hx*hx+hz*hz)
			b := [3]float64{x + f.H*hx*inv, h - f.H*inv, z + f.H*hz*inv} // c − h·n
			if phi, _ := s.sdf(R, t, b); phi < 0 {
				return fmt.Errorf("%w at element (%d,%d)", ErrThrough, ix, iz)
			}
			c := [3]float64{x, h, z}
			if phi, g := s.sdf(R, t, c); phi < best {
				best = phi
				near = [3]float64{c[0] - phi*g[0], c[1] - phi*g[1], c[2] - phi*g[2]}
			}
		}
	}
	if math.Abs(near[0]) <= d.HalfX && math.Abs(near[2]-d.Zc) <= d.HalfZ {
		if h, _, _ := d.Height(near[0], near[2]); near[1] < h-f.H {
			return fmt.Errorf("%w (its point nearest the surface, (%.3g, %.3g, %.3g) mm, is under the dish)", ErrThrough, near[0], near[1], near[2])
		}
	}
	return nil
}

// sdf is the condyle's signed distance at a tibial-frame point c, with its
// gradient in tibial axes.
func (s Side) sdf(R [3][3]float64, t, c [3]float64) (float64, [3]float64) {
	v := [3]float64{c[0] - t[0], c[1] - t[1], c[2] - t[2]}
	var q [3]float64
	for i := 0; i < 3; i++ { // q = Rᵀ v
		q[i] = R[0][i]*v[0] + R[1][i]*v[1] + R[2][i]*v[2]
	}
	phi, gq := s.Condyle.SDF(q)
	var g [3]float64
	for i := 0; i < 3; i++ { // g = R gq
		g[i] = R[i][0]*gq[0] + R[i][1]*gq[1] + R[i][2]*gq[2]
	}
	return phi, g
}

// errNoIntersection: the normal through an element never meets the
// condyle surface nearby (grazing geometry).
var errNoIntersection = errors.New("efound: element normal does not meet the condyle")

// depth solves φ(c + s·n) = 0 for the root s < 0 nearest c and returns −s.
func (s Side) depth(R [3][3]float64, t, c, n [3]float64) (float64, error) {
	var sv float64
	for it := 0; it < maxNewton; it++ {
		p := [3]float64{c[0] + sv*n[0], c[1] + sv*n[1], c[2] + sv*n[2]}
		phi, g := s.sdf(R, t, p)
		dphi := g[0]*n[0] + g[1]*n[1] + g[2]*n[2]
		if !(math.Abs(dphi) > 1e-6) {
			return 0, errNoIntersection
		}
		step := phi / dphi
		sv -= step
		if math.Abs(step) < 1e-12*(1+math.Abs(sv)) {
			if sv > 0 {
				return 0, errNoIntersection
			}
			return -sv, nil
		}
	}
	return 0, errNoIntersection
}
