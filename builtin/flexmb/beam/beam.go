package beam

import "math"

// Props are an element's section and material properties and its
// reference (stress-free) chord: length L0 [m] and angle Beta0 [rad].
type Props struct {
	E, A, I, Rho float64 // Young's modulus [Pa], area [m²], second moment [m⁴], density [kg/m³]
	L0, Beta0    float64
}

// Chord is the element's current chord: length, cos and sin of its angle.
type Chord struct {
	L, C, S float64
}

// NewChord returns the chord of the element with nodal coordinates
// p = [x1, y1, θ1, x2, y2, θ2].
func NewChord(p *[6]float64) Chord {
	dx, dy := p[3]-p[0], p[4]-p[1]
	L := math.Hypot(dx, dy)
	return Chord{L: L, C: dx / L, S: dy / L}
}

// R returns r = ∂L/∂q, Z returns z with ∂β/∂q = z/L.
func (ch Chord) R() [6]float64 { return [6]float64{-ch.C, -ch.S, 0, ch.C, ch.S, 0} }
func (ch Chord) Z() [6]float64 { return [6]float64{ch.S, -ch.C, 0, -ch.S, ch.C, 0} }

// Wrap returns a wrapped to (−π, π].
func Wrap(a float64) float64 {
	return math.Atan2(math.Sin(a), math.Cos(a))
}

// Local returns the local deformations (u, θ1, θ2) of the element at p.
func (pr *Props) Local(p *[6]float64, ch Chord) (u, t1, t2 float64) {
	// β − β0 from the chord direction against the reference direction,
	// wrapped; the nodal rotations then differ from it by a small angle.
	c0, s0 := math.Cos(pr.Beta0), math.Sin(pr.Beta0)
	rot := math.Atan2(c0*ch.S-s0*ch.C, c0*ch.C+s0*ch.S)
	u = ch.L - pr.L0
	t1 = Wrap(p[2] - rot)
	t2 = Wrap(p[5] - rot)
	return
}

// LocalForces returns N, M1, M2 (Crisfield 1991, ch. 7).
func (pr *Props) LocalForces(u, t1, t2 float64) (N, M1, M2 float64) {
	k := 2 * pr.E * pr.I / pr.L0
	return pr.E * pr.A * u / pr.L0, k * (2*t1 + t2), k * (t1 + 2*t2)
}

// StrainEnergy is ½EA u²/L0 + (2EI/L0)(θ1² + θ1θ2 + θ2²).
func (pr *Props) StrainEnergy(p *[6]float64) float64 {
	ch := NewChord(p)
	u, t1, t2 := pr.Local(p, ch)
	return 0.5*pr.E*pr.A*u*u/pr.L0 + 2*pr.E*pr.I/pr.L0*(t1*t1+t1*t2+t2*t2)
}

// Internal adds the internal force f = Bᵀ[N, M1, M2] to f and, when K is
// not nil, the tangent stiffness (6×6 row-major) to K.
func (pr *Props) Internal(p *[6]float64, f *[6]float64, K *[36]float64) {
	ch := NewChord(p)
	u, t1, t2 := pr.Local(p, ch)
	N, M1, M2 := pr.LocalForces(u, t1, t2)
	r, z := ch.R(), ch.Z()
	L := ch.L
	// B rows: b0 = r, b1 = e3 − z/L, b2 = e6 − z/L.
	var B [3][6]float64
	for j := 0; j < 6; j++ {
		B[0][j] = r[j]
		B[1][j] = -z[j] / L
		B[2][j] = -z[j] / L
	}
	B[1][2] += 1
	B[2][5] += 1
	for j := 0; j < 6; j++ {
		f[j] += B[0][j]*N + B[1][j]*M1 + B[2][j]*M2
	}
	if K == nil {
		return
	}
	ea := pr.E * pr.A / pr.L0
	k := 2 * pr.E * pr.I / pr.L0
	Kl := [3][3]float64{{ea, 0, 0}, {0, 2 * k, k}, {0, k, 2 * k}}
	var KB [3][6]float64
	for a := 0; a < 3; a++ {
		for j := 0; j < 6; j++ {
			KB[a][j] = Kl[a][0]*B[0][j] + Kl[a][1]*B[1][j] + Kl[a][2]*B[2][j]
		}
	}
	m := (M1 + M2) / (L * L)
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			K[i*6+j] += B[0][i]*KB[0][j] + B[1][i]*KB[1][j] + B[2][i]*KB[2][j] +
				N*z[i]*z[j]/L + m*(r[i]*z[j]+z[i]*r[j])
		}
	}
}

// LocalMass returns the consistent mass matrix of the Euler–Bernoulli
// element in its chord frame, dofs (u1, v1, θ1, u2, v2, θ2) (Dhatt & Batoz
// 1990; Przemieniecki 1968, "Theory of Matrix Structural Analysis"): axial ρAL/6·[2 1; 1 2], bending
// ρAL/420·[156 22L 54 −13L; 22L 4L² 13L −3L²; 54 13L 156 −22L; −13L −3L² −22L 4L²].
func (pr *Props) LocalMass() [36]float64 {
	m := pr.Rho * pr.A * pr.L0
	L := pr.L0
	a, b := m/420, m/6
	var M [36]float64
	set := func(i, j int, v float64) { M[i*6+j], M[j*6+i] = v, v }
	set(0, 0, 2*b)
	set(3, 3, 2*b)
	set(0, 3, b)
	set(1, 1, 156*a)
	set(1, 2, 22*L*a)
	set(1, 4, 54*a)
	set(1, 5, -13*L*a)
	set(2, 2, 4*L*L*a)
	set(2, 4, 13*L*a)
	set(2, 5, -3*L*L*a)
	set(4, 4, 156*a)
	set(4, 5, -22*L*a)
	set(5, 5, 4*L*L*a)
	return M
}

// rot applies the block rotation R (global → chord frame) to v: for each
// node (vx, vy, ω) ↦ (c vx + s vy, −s vx + c vy, ω); dR applies ∂R/∂β.
func rot(c, s float64, v *[6]float64) (o [6]float64) {
	for n := 0; n < 6; n += 3 {
		o[n] = c*v[n] + s*v[n+1]
		o[n+1] = -s*v[n] + c*v[n+1]
		o[n+2] = v[n+2]
	}
	return
}

func drot(c, s float64, v *[6]float64) (o [6]float64) {
	for n := 0; n < 6; n += 3 {
		o[n] = -s*v[n] + c*v[n+1]
		o[n+1] = -c*v[n] - s*v[n+1]
	}
	return
}

// rotT applies Rᵀ, drotT applies (∂R/∂β)ᵀ.
func rotT(c, s float64, v *[6]float64) (o [6]float64) {
	for n := 0; n < 6; n += 3 {
		o[n] = c*v[n] - s*v[n+1]
		o[n+1] = s*v[n] + c*v[n+1]
		o[n+2] = v[n+2]
	}
	return
}

func drotT(c, s float64, v *[6]float64) (o [6]float64) {
	for n := 0; n < 6; n += 3 {
		o[n] = -s*v[n] - c*v[n+1]
		o[n+1] = c*v[n] - s*v[n+1]
	}
	return
}

func mul6(M *[36]float64, v *[6]float64) (o [6]float64) {
	for i := 0; i < 6; i++ {
		var s float64
		for j := 0; j < 6; j++ {
			s += M[i*6+j] * v[j]
		}
		o[i] = s
	}
	return
}

// Mass adds the global mass matrix M(q) = RᵀM_l R (6×6 row-major) to M.
func (pr *Props) Mass(p *[6]float64, Ml *[36]float64, M *[36]float64) {
	ch := NewChord(p)
	for j := 0; j < 6; j++ {
		var e [6]float64
		e[j] = 1
		re := rot(ch.C, ch.S, &e)
		col := mul6(Ml, &re)
		col = rotT(ch.C, ch.S, &col)
		for i := 0; i < 6; i++ {
			M[i*6+j] += col[i]
		}
	}
}

// Kinetic returns T = ½ vᵀRᵀM_l R v.
func (pr *Props) Kinetic(p, v *[6]float64, Ml *[36]float64) float64 {
	ch := NewChord(p)
	rv := rot(ch.C, ch.S, v)
	mv := mul6(Ml, &rv)
	var t float64
	for i := range rv {
		t += rv[i] * mv[i]
	}
	return 0.5 * t
}

// Inertia adds to f the velocity-dependent inertial force of Lagrange's
// equations for T = ½vᵀM(q)v, h = Ṁv − ∂T/∂q with Ṁ = β̇(R'ᵀM_lR + RᵀM_lR')
// (Gouveia Eq. 2), β̇ = zᵀv/L and ∂T/∂q = (z/L)·vᵀR'ᵀM_lRv. The full inertial
// force is M(q)a + h.
func (pr *Props) Inertia(p, v *[6]float64, Ml *[36]float64, f *[6]float64) {
	ch := NewChord(p)
	z := ch.Z()
	var bd float64
	for i := range z {
		bd += z[i] * v[i]
	}
	bd /= ch.L
	rv := rot(ch.C, ch.S, v)
	drv := drot(ch.C, ch.S, v)
	mrv := mul6(Ml, &rv)   // M_l R v
	mdrv := mul6(Ml, &drv) // M_l R' v
	a := drotT(ch.C, ch.S, &mrv)
	b := rotT(ch.C, ch.S, &mdrv)
	var dT float64 // vᵀR'ᵀM_lRv
	for i := range drv {
		dT += drv[i] * mrv[i]
	}
	dT /= ch.L
	for i := 0; i < 6; i++ {
		f[i] += bd*(a[i]+b[i]) - z[i]*dT
	}
}

// GravityPotential is −ρA∫g·x ds over the co-rotational field:
// −m g·(x1+x2)/2 − (ρA L0²/12)(θ1 − θ2)(g·n), n = (−sin β, cos β) the
// chord normal (∫Hermite transverse shape functions = L0/12 each).
func (pr *Props) GravityPotential(p *[6]float64, g [2]float64) float64 {
	ch := NewChord(p)
	m := pr.Rho * pr.A * pr.L0
	_, t1, t2 := pr.Local(p, ch)
	gn := -ch.S*g[0] + ch.C*g[1]
	return -m*(g[0]*(p[0]+p[3])+g[1]*(p[1]+p[4]))/2 - m*pr.L0/12*(t1-t2)*gn
}

// Gravity adds the gravity force −∂V/∂q of GravityPotential to f.
func (pr *Props) Gravity(p *[6]float64, g [2]float64, f *[6]float64) {
	ch := NewChord(p)
	m := pr.Rho * pr.A * pr.L0
	_, t1, t2 := pr.Local(p, ch)
	gn := -ch.S*g[0] + ch.C*g[1]
	dgn := -ch.C*g[0] - ch.S*g[1] // d(g·n)/dβ
	c := m * pr.L0 / 12
	z := ch.Z()
	f[0] += m * g[0] / 2
	f[1] += m * g[1] / 2
	f[3] += m * g[0] / 2
	f[4] += m * g[1] / 2
	f[2] += c * gn
	f[5] -= c * gn
	w := c * (t1 - t2) * dgn / ch.L
	for i := range z {
		f[i] += w * z[i]
	}
}
