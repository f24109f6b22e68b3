package efound

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// sphereOnFlat is a sphere of radius r (a degenerate condyle) over a flat
// foundation meshed over ±half mm with n×n elements.
func sphereOnFlat(r, half float64, n int, f Foundation) Side {
	return Side{
		Condyle: Condyle{Sagittal: r, Frontal: r},
		Dish:    Dish{Flat: true, HalfX: half, HalfZ: half},
		NX:      n, NZ: n,
	}
}

var ident = Pose{}.Rotation()

// Linear foundation, sphere of radius R pressed δ into a flat layer: the
// penetration at radius ρ is d = δ − (R − √(R² − ρ²)), so
// F = ∫ K·d/h dA = (K/h)·V_cap = π·K·δ²·(R − δ/3)/h (the cap's volume),
// ≈ π·K·R·δ²/h for δ ≪ R. Derived here; the small-δ form is the classical
// elastic-foundation sphere result (Johnson 1985, "Contact Mechanics",
// Sec. 5.9, with K/h the foundation stiffness).
func linearSphereForce(f Foundation, R, delta float64) float64 {
	return math.Pi * f.K() * delta * delta * (R - delta/3) / f.H
}

// Nonlinear foundation: F = 2π∫₀^a −K·ln(1 − d(ρ)/h)·ρ dρ; with u = √(R² − ρ²)
// (ρ dρ = −u du) this is 2πK∫_{R−δ}^{R} −ln(1 − (u − R + δ)/h)·u du,
// integrated here by 64-point Gauss–Legendre (smooth integrand, exact to
// rounding). For δ ≪ R (paraboloid) it is 2πRKh[(1 − t)ln(1 − t) + t],
// t = δ/h.
func nonlinearSphereForce(f Foundation, R, delta float64) float64 {
	g := func(u float64) float64 { return -math.Log1p(-(u-R+delta)/f.H) * u }
	return 2 * math.Pi * f.K() * quad.Fixed(g, R-delta, R, 64, quad.Legendre{}, 0)
}

func TestFoundationModulus(t *testing.T) {
	// K = (1−ν)E/((1+ν)(1−2ν)) at E = 463 MPa, ν = 0.46:
	// 0.54·463/(1.46·0.08) = 250.02/0.1168 = 2140.582 MPa (hand arithmetic).
	f := Foundation{E: 463, Nu: 0.46, H: 5}
	if got, want := f.K(), 250.02/0.1168; math.Abs(got-want) > 1e-9*want {
		t.Fatalf("K = %.9g, want %.9g", got, want)
	}
}

// Sphere on flat against the closed forms, linear and nonlinear, R = 20 mm,
// h = 5 mm, δ = 0.2 mm, grid 0.05 mm. Named tolerance: 0.5 % (midpoint-rule
// error of the element sum at this grid, measured ≈ 0.05 %; a wrong area,
// normal or K gives tens of percent).
func TestSphereOnFlatClosedForm(t *testing.T) {
	const tol = 5e-3
	const R, delta = 20.0, 0.2
	for _, nonlin := range []bool{false, true} {
		f := Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH, Nonlinear: nonlin}
		s := sphereOnFlat(R, 4, 160, f)
		l, err := s.Contact(f, ident, [3]float64{0, R - delta, 0})
		if err != nil {
			t.Fatal(err)
		}
		want := linearSphereForce(f, R, delta)
		if nonlin {
			want = nonlinearSphereForce(f, R, delta)
		}
		if rel := math.Abs(l.F[1]-want) / want; rel > tol {
			t.Errorf("nonlinear=%v: F_y = %.6g N, closed form %.6g N (rel err %.2g > %g)", nonlin, l.F[1], want, rel, tol)
		}
		// symmetry: no tangential force or torque, CoP under the centre.
		for _, v := range []float64{l.F[0], l.F[2], l.T[0], l.T[1], l.T[2], l.CoP[0], l.CoP[2]} {
			if math.Abs(v) > 1e-9*l.F[1] {
				t.Errorf("nonlinear=%v: symmetric case gives a non-zero off-axis load/CoP %g", nonlin, v)
			}
		}
		// contact radius a = √(2Rδ − δ²): area within a grid cell's ring.
		a2 := 2*R*delta - delta*delta
		if rel := math.Abs(l.Area-math.Pi*a2) / (math.Pi * a2); rel > 0.03 {
			t.Errorf("area %.4g mm², πa² = %.4g", l.Area, math.Pi*a2)
		}
		t.Logf("nonlinear=%v: F_y %.6g N vs %.6g N", nonlin, l.F[1], want)
	}
	// The nonlinear force exceeds the linear one (−ln(1−t) > t).
	fl := linearSphereForce(Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH}, R, delta)
	fn := nonlinearSphereForce(Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH}, R, delta)
	if !(fn > fl) {
		t.Fatalf("nonlinear %g ≤ linear %g", fn, fl)
	}
	// small-δ forms: πKRδ²/h and the paraboloid integral agree to O(δ/R).
	f := Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH}
	if rel := math.Abs(fl-math.Pi*f.K()*R*delta*delta/f.H) / fl; rel > delta/R {
		t.Errorf("small-δ linear form off by %g", rel)
	}
	tt := delta / f.H
	par := 2 * math.Pi * R * f.K() * f.H * ((1-tt)*math.Log1p(-tt) + tt)
	if rel := math.Abs(fn-par) / fn; rel > delta/R {
		t.Errorf("paraboloid nonlinear form off by %g", rel)
	}
}

// Convergence with grid refinement: the error of the element sum against
// the closed form shrinks as the cells do (roughly O(Δ²) for the midpoint
// rule, less regular at the contact edge), and is small on the finest.
func TestGridConvergence(t *testing.T) {
	const R, delta = 20.0, 0.2
	f := Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH}
	want := linearSphereForce(f, R, delta)
	var prev = math.Inf(1)
	for _, n := range []int{10, 20, 40, 80, 160, 320} {
		s := sphereOnFlat(R, 4, n, f)
		l, err := s.Contact(f, ident, [3]float64{0, R - delta, 0})
		if err != nil {
			t.Fatal(err)
		}
		rel := math.Abs(l.F[1]-want) / want
		t.Logf("grid %3d×%-3d (cell %.4f mm): F_y %.6g N, rel err %.3g", n, n, 8/float64(n), l.F[1], rel)
		if n >= 40 && !(rel < prev) {
			t.Errorf("error did not decrease at n=%d: %g ≥ %g", n, rel, prev)
		}
		prev = rel
	}
	if prev > 1e-3 {
		t.Errorf("finest grid error %g > 1e-3", prev)
	}
}

// Zero force out of contact: every pose that lifts the femur gives exact
// zeros on both sides.
func TestOutOfContact(t *testing.T) {
	k := DefaultKnee(1, false)
	for _, p := range []Pose{{Y: 0.01}, {Y: 1}, {Y: 0.5, X: 3, Gamma: 0.5}, {Y: 0.2, Beta: 0.1}} {
		l, err := k.Contact(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range l {
			if s.Elements != 0 || s.F != [3]float64{} || s.T != [3]float64{} || s.CoP != [3]float64{} {
				t.Errorf("pose %+v %s: loads out of contact %+v", p, SideNames[i], s)
			}
		}
	}
}

// Medial–lateral symmetry of the default knee: at a pose symmetric in z
// (Z = α = β = 0) the sides mirror each other: equal F_x, F_y, T_γ,
// opposite F_z, T_α, T_β, mirrored CoP. And a mirrored pose (Z, α, β
// negated) swaps the sides.
func TestSymmetry(t *testing.T) {
	const tol = 1e-9
	k := DefaultKnee(0.5, false)
	l, err := k.Contact(Pose{X: 1.3, Y: -0.1, Gamma: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	m, ll := l[Medial], l[Lateral]
	if m.F[1] < 100 {
		t.Fatalf("medial F_y %g: pose not in contact enough for a test", m.F[1])
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(m.F[1])) }
	if !close(m.F[0], ll.F[0]) || !close(m.F[1], ll.F[1]) || !close(m.F[2], -ll.F[2]) ||
		!close(m.T[0], -ll.T[0]) || !close(m.T[1], -ll.T[1]) || !close(m.T[2], ll.T[2]) ||
		!close(m.CoP[2], -ll.CoP[2]) || !close(m.CoP[0], ll.CoP[0]) {
		t.Errorf("sides not mirrored:\nmedial  %+v\nlateral %+v", m, ll)
	}
	p := Pose{X: 0.7, Y: -0.15, Z: 0.4, Alpha: 0.004, Beta: 0.05, Gamma: 0.3}
	a, err := k.Contact(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := k.Contact(Pose{X: p.X, Y: p.Y, Z: -p.Z, Alpha: -p.Alpha, Beta: -p.Beta, Gamma: p.Gamma})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		x, y := a[i], b[1-i]
		if !close(x.F[0], y.F[0]) || !close(x.F[1], y.F[1]) || !close(x.F[2], -y.F[2]) ||
			!close(x.T[0], -y.T[0]) || !close(x.T[1], -y.T[1]) || !close(x.T[2], y.T[2]) {
			t.Errorf("mirrored pose does not swap sides (%s):\n%+v\n%+v", SideNames[i], x, y)
		}
	}
}

// Forces against the finite-difference derivative of the layer's strain
// energy. For a translation along the insert normal of a flat foundation
// the element penetrations change by exactly −δy, so F_y = −∂U/∂y holds to
// the differencing error (both foundations). For general poses the
// elastic-foundation force (pressure along the insert normal) is not the
// exact gradient of U (the condyle normal differs from the insert normal
// by an angle of order the contact half-width over the radii), so on the
// knee the check is F ≈ −∂U/∂q to a named 1 % of F_y for the translations
// (measured ≈ 0.4 %).
func TestForceIsEnergyGradient(t *testing.T) {
	const R, delta, hstep = 20.0, 0.2, 1e-4
	for _, nonlin := range []bool{false, true} {
		f := Foundation{E: DefaultE, Nu: DefaultNu, H: DefaultH, Nonlinear: nonlin}
		s := sphereOnFlat(R, 4, 80, f)
		ev := func(y float64) Loads {
			l, err := s.Contact(f, ident, [3]float64{0.013, R - delta + y, -0.021})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		l0, lp, lm := ev(0), ev(hstep), ev(-hstep)
		fd := -(lp.Energy - lm.Energy) / (2 * hstep)
		// Elements entering/leaving contact make U piecewise smooth; the
		// named tolerance 1e-3 covers it at this grid and step.
		if rel := math.Abs(fd-l0.F[1]) / l0.F[1]; rel > 1e-3 {
			t.Errorf("nonlinear=%v: F_y %g vs −∂U/∂y %g (rel %g)", nonlin, l0.F[1], fd, rel)
		}
	}
	k := DefaultKnee(0.25, false)
	p0 := Pose{X: 1, Y: -0.2, Z: 0.3, Gamma: 0.3}
	u := func(p Pose) float64 {
		l, err := k.Contact(p)
		if err != nil {
			t.Fatal(err)
		}
		return Net(l).Energy
	}
	l, _ := k.Contact(p0)
	n := Net(l)
	const h = 1e-3
	for i, name := range []string{"x", "y", "z"} {
		pp, pm := p0, p0
		switch i {
		case 0:
			pp.X += h
			pm.X -= h
		case 1:
			pp.Y += h
			pm.Y -= h
		case 2:
			pp.Z += h
			pm.Z -= h
		}
		fd := -(u(pp) - u(pm)) / (2 * h)
		if math.Abs(fd-n.F[i]) > 0.01*math.Abs(n.F[1]) {
			t.Errorf("F_%s %g vs −∂U/∂%s %g (tolerance 1 %% of F_y %g)", name, n.F[i], name, fd, n.F[1])
		}
		t.Logf("F_%s %.5g N, −∂U/∂%s %.5g N", name, n.F[i], name, fd)
	}
}

// Rotation: R = R_y(β)·R_x(α)·R_z(γ) is orthonormal and composes as
// documented (the image of e_z under a pure flexion is e_z).
func TestRotation(t *testing.T) {
	r := Pose{Alpha: 0.3, Beta: -0.2, Gamma: 1.1}.Rotation()
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			var s float64
			for k := 0; k < 3; k++ {
				s += r[k][i] * r[k][j]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(s-want) > 1e-14 {
				t.Fatalf("RᵀR[%d][%d] = %g", i, j, s)
			}
		}
	}
	g := Pose{Gamma: 0.5}.Rotation()
	if g[2][2] != 1 || g[0][2] != 0 || g[1][2] != 0 {
		t.Fatalf("flexion moves the z axis: %v", g)
	}
	// R_y(β) outermost: β alone rotates x toward −z.
	b := Pose{Beta: 0.1}.Rotation()
	if math.Abs(b[2][0]+math.Sin(0.1)) > 1e-15 {
		t.Fatalf("R_y sign: %v", b)
	}
}

// Nonlinear foundation at d ≥ h: an error, not an infinite force.
func TestTooDeep(t *testing.T) {
	f := Foundation{E: DefaultE, Nu: DefaultNu, H: 0.1, Nonlinear: true}
	s := sphereOnFlat(20, 4, 40, f)
	if _, err := s.Contact(f, ident, [3]float64{0, 20 - 0.2, 0}); err == nil {
		t.Fatal("no error for penetration beyond the layer")
	}
}

// The dish's analytic slope against central differences; the torus SDF's
// gradient likewise.
func TestGeometryGradients(t *testing.T) {
	d := Dish{Sagittal: 70, Frontal: 25, Zc: 22, HalfX: 20, HalfZ: 14}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for _, pt := range [][2]float64{{0, 22}, {5, 30}, {-12, 10}, {19, 35}} {
		_, hx, hz := d.Height(pt[0], pt[1])
		a, _, _ := d.Height(pt[0]+h, pt[1])
		b, _, _ := d.Height(pt[0]-h, pt[1])
		c, _, _ := d.Height(pt[0], pt[1]+h)
		e, _, _ := d.Height(pt[0], pt[1]-h)
		if math.Abs((a-b)/(2*h)-hx) > 1e-7 || math.Abs((c-e)/(2*h)-hz) > 1e-7 {
			t.Errorf("dish slope at %v: (%g, %g) vs fd (%g, %g)", pt, hx, hz, (a-b)/(2*h), (c-e)/(2*h))
		}
	}
	// A spherical dish (equal radii) is a sphere of that radius.
	sd := Dish{Sagittal: 25, Frontal: 25, HalfX: 10, HalfZ: 10}
	hh, _, _ := sd.Height(6, 8)
	if want := 25 - math.Sqrt(625-100); math.Abs(hh-want) > 1e-12 {
		t.Errorf("spherical dish height %g, want %g", hh, want)
	}
	c := Condyle{Sagittal: 40, Frontal: 20, Zc: 22}
	for _, q := range [][3]float64{{0, -40, 22}, {3, -38, 25}, {-10, -35, 15}} {
		_, g := c.SDF(q)
		for k := 0; k < 3; k++ {
			qp, qm := q, q
			qp[k] += h
			qm[k] -= h
			a, _ := c.SDF(qp)
			b, _ := c.SDF(qm)
			if math.Abs((a-b)/(2*h)-g[k]) > 1e-7 {
				t.Errorf("torus gradient %d at %v: %g vs %g", k, q, g[k], (a-b)/(2*h))
			}
		}
	}
	// distal point of the condyle is on its surface
	if phi, _ := c.SDF([3]float64{0, -40, 22}); math.Abs(phi) > 1e-12 {
		t.Errorf("distal point φ = %g", phi)
	}
}

func BenchmarkKneeContact(b *testing.B) {
	k := DefaultKnee(0.5, false)
	p := Pose{X: 1, Y: -0.15, Z: 0.2, Alpha: 0.002, Beta: 0.03, Gamma: 0.5}
	for i := 0; i < b.N; i++ {
		if _, err := k.Contact(p); err != nil {
			b.Fatal(err)
		}
	}
}

// Lin 2010, Sec. 2.3.1: with the implant in a nominal pose and both sides
// barely touching, the net F_y and T_α are highly sensitive to y and α
// (Eq. 1), the other four directions insensitive. Here "highly" is
// |s| ≥ 10× every other entry of its group (translations, rotations), at
// light (50 N) and ISO-peak (2600 N) preloads and 0° and 30° flexion; every
// entry but γ (flexion rolls the torus on itself: s_γ ≈ 0) is restoring.
func TestSensitiveDirections(t *testing.T) {
	k := DefaultKnee(1, false)
	for _, flex := range []float64{0, 30} {
		for _, fy := range []float64{50, 2600} {
			p, err := k.Preload(Pose{Gamma: flex * math.Pi / 180}, fy)
			if err != nil {
				t.Fatal(err)
			}
			l, _ := k.Contact(p)
			if got := Net(l).F[1]; math.Abs(got-fy) > 1e-3*fy {
				t.Fatalf("preload %g gives %g", fy, got)
			}
			s, err := k.Sensitivity(p, 1e-3, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			a := func(i int) float64 { return math.Abs(s[i]) }
			if a(1) < 10*math.Max(a(0), a(2)) || a(3) < 10*math.Max(a(4), a(5)) {
				t.Errorf("flexion %g°, F_y %g N: s = %v: y and α not the sensitive directions", flex, fy, s)
			}
			for i := 0; i < 5; i++ {
				if !(s[i] < 0) {
					t.Errorf("flexion %g°, F_y %g N: s[%s] = %g not restoring", flex, fy, PoseNames[i], s[i])
				}
			}
			if a(5) > 1e-6*a(3) {
				t.Errorf("s_γ = %g, want ≈ 0 for a toroidal condyle", s[5])
			}
		}
	}
}

// Static analysis (Lin 2010 Sec. 2.2.3): the equilibrium pose reproduces
// the applied F_y and T_α within 0.1 %, holds x, z, β, γ, and a positive
// T_α (on the femur, about x) is carried by loading the side at −z harder
// (T_α = Σ(r_y F_z − r_z F_y): a larger F_y at z < 0 gives T_α > 0).
func TestStatic(t *testing.T) {
	k := DefaultKnee(1, false)
	for _, c := range []struct{ x, z, beta, gamma, fy, ta float64 }{
		{0, 0, 0, 0, 1000, 0},
		{2, 0.5, 0.05, 0.5, 2000, 8},
		{-3, -0.8, -0.1, 0.9, 400, -4},
	} {
		p, l, err := k.Static(Pose{X: c.x, Z: c.z, Beta: c.beta, Gamma: c.gamma}, c.fy, c.ta)
		if err != nil {
			t.Fatal(err)
		}
		n := Net(l)
		if math.Abs(n.F[1]-c.fy) > StaticTol*c.fy || math.Abs(n.T[0]-c.ta) > math.Max(StaticTol*math.Abs(c.ta), StaticFloorT) {
			t.Errorf("%+v: net F_y %g, T_α %g", c, n.F[1], n.T[0])
		}
		if p.X != c.x || p.Z != c.z || p.Beta != c.beta || p.Gamma != c.gamma {
			t.Errorf("insensitive directions moved: %+v", p)
		}
		if c.ta > 0 && !(l[Lateral].F[1] > l[Medial].F[1]) || c.ta < 0 && !(l[Medial].F[1] > l[Lateral].F[1]) {
			t.Errorf("%+v: medial %g lateral %g N", c, l[Medial].F[1], l[Lateral].F[1])
		}
		t.Logf("%+v → y %.4f mm, α %.4f°; medial %.1f N lateral %.1f N", c, p.Y, p.Alpha*180/math.Pi, l[Medial].F[1], l[Lateral].F[1])
	}
}

// A condyle that has passed through the layer (its centre far below the
// surface, so that no element's surface point is inside it) is an error,
// not "no contact" with zero load; with either foundation. A sphere of
// radius 20 mm over a 5 mm layer: centre at y = −100 is 120 mm below
// touching, centre at y = −21 has its lowest point 41 mm down.
func TestThroughTheLayer(t *testing.T) {
	for _, nonlinear := range []bool{false, true} {
		f := Foundation{E: DefaultE, Nu: DefaultNu, H: 5, Nonlinear: nonlinear}
		s := sphereOnFlat(20, 4, 8, f)
		for _, y := range []float64{-100, -21} {
			if _, err := s.Contact(f, ident, [3]float64{0, y, 0}); !errors.Is(err, ErrThrough) {
				t.Errorf("nonlinear %v, centre at y = %g: %v, want ErrThrough", nonlinear, y, err)
			}
		}
		// Just above, out of contact: no error, no load.
		if l, err := s.Contact(f, ident, [3]float64{0, 20.5, 0}); err != nil || l.Elements != 0 {
			t.Errorf("nonlinear %v, out of contact: %+v %v", nonlinear, l, err)
		}
	}
	// The default knee (both foundations) pushed 100 mm and 1 km down: an
	// ok evaluation with zero force before.
	for _, nonlinear := range []bool{false, true} {
		k := DefaultKnee(1, nonlinear)
		for _, y := range []float64{-100, -1e6} {
			if _, err := k.Contact(Pose{Y: y}); !errors.Is(err, ErrThrough) {
				t.Errorf("default knee, nonlinear %v, Y = %g: %v, want ErrThrough", nonlinear, y, err)
			}
		}
	}
}
