package rigidbody

import "math"

// Vec3 is a 3-vector.
type Vec3 [3]float64

// Mat3 is a 3×3 matrix, row-major: m[row][col].
type Mat3 [3][3]float64

// Vec6 is a spatial motion or force vector, [angular; linear] (RBDA §2.2).
type Vec6 [6]float64

// Mat6 is a 6×6 matrix acting on Vec6, row-major.
type Mat6 [6][6]float64

// Identity3 is the 3×3 identity.
var Identity3 = Mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

// Add returns a + b.
func (a Vec3) Add(b Vec3) Vec3 { return Vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

// Sub returns a − b.
func (a Vec3) Sub(b Vec3) Vec3 { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

// Scale returns s·a.
func (a Vec3) Scale(s float64) Vec3 { return Vec3{s * a[0], s * a[1], s * a[2]} }

// Dot returns a·b.
func (a Vec3) Dot(b Vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// Cross returns a × b.
func (a Vec3) Cross(b Vec3) Vec3 {
	return Vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// Norm returns |a|.
func (a Vec3) Norm() float64 { return math.Sqrt(a.Dot(a)) }

// Skew returns the cross-product matrix a× with (a×)b = a × b.
func Skew(a Vec3) Mat3 {
	return Mat3{{0, -a[2], a[1]}, {a[2], 0, -a[0]}, {-a[1], a[0], 0}}
}

// Diag3 returns diag(d).
func Diag3(d Vec3) Mat3 { return Mat3{{d[0], 0, 0}, {0, d[1], 0}, {0, 0, d[2]}} }

// MulVec returns m·v.
func (m Mat3) MulVec(v Vec3) Vec3 {
	return Vec3{
		m[0][0]*v[0] + m[0][1]*v[1] + m[0][2]*v[2],
		m[1][0]*v[0] + m[1][1]*v[1] + m[1][2]*v[2],
		m[2][0]*v[0] + m[2][1]*v[1] + m[2][2]*v[2],
	}
}

// TMulVec returns mᵀ·v.
func (m Mat3) TMulVec(v Vec3) Vec3 {
	return Vec3{
		m[0][0]*v[0] + m[1][0]*v[1] + m[2][0]*v[2],
		m[0][1]*v[0] + m[1][1]*v[1] + m[2][1]*v[2],
		m[0][2]*v[0] + m[1][2]*v[1] + m[2][2]*v[2],
	}
}

// Mul returns m·n.
func (m Mat3) Mul(n Mat3) Mat3 {
	var r Mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[i][j] = m[i][0]*n[0][j] + m[i][1]*n[1][j] + m[i][2]*n[2][j]
		}
	}
	return r
}

// T returns mᵀ.
func (m Mat3) T() Mat3 {
	return Mat3{{m[0][0], m[1][0], m[2][0]}, {m[0][1], m[1][1], m[2][1]}, {m[0][2], m[1][2], m[2][2]}}
}

// Add returns m + n.
func (m Mat3) Add(n Mat3) Mat3 {
	var r Mat3
	for i := range r {
		for j := range r[i] {
			r[i][j] = m[i][j] + n[i][j]
		}
	}
	return r
}

// Scale returns s·m.
func (m Mat3) Scale(s float64) Mat3 {
	var r Mat3
	for i := range r {
		for j := range r[i] {
			r[i][j] = s * m[i][j]
		}
	}
	return r
}

// AxisAngle returns the rotation matrix R of angle θ about the unit axis a
// (Rodrigues): R = 1 + sin θ·a× + (1 − cos θ)·a×a×. R maps coordinates in
// the rotated frame to coordinates in the original frame; the Plücker
// coordinate transform of the rotation is E = Rᵀ (RBDA Eq. 2.31: rz(θ) is
// the transpose of the usual rotation matrix).
func AxisAngle(a Vec3, theta float64) Mat3 {
	s, c := math.Sincos(theta)
	k := Skew(a)
	return Identity3.Add(k.Scale(s)).Add(k.Mul(k).Scale(1 - c))
}

// Ang returns the angular part of a spatial vector.
func (v Vec6) Ang() Vec3 { return Vec3{v[0], v[1], v[2]} }

// Lin returns the linear part of a spatial vector.
func (v Vec6) Lin() Vec3 { return Vec3{v[3], v[4], v[5]} }

// V6 assembles a spatial vector from its angular and linear parts.
func V6(ang, lin Vec3) Vec6 { return Vec6{ang[0], ang[1], ang[2], lin[0], lin[1], lin[2]} }

// Add returns a + b.
func (a Vec6) Add(b Vec6) Vec6 {
	for i := range a {
		a[i] += b[i]
	}
	return a
}

// Sub returns a − b.
func (a Vec6) Sub(b Vec6) Vec6 {
	for i := range a {
		a[i] -= b[i]
	}
	return a
}

// Scale returns s·a.
func (a Vec6) Scale(s float64) Vec6 {
	for i := range a {
		a[i] *= s
	}
	return a
}

// Dot returns aᵀb (a motion–force pairing gives power, RBDA §2.6).
func (a Vec6) Dot(b Vec6) float64 {
	return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3] + a[4]*b[4] + a[5]*b[5]
}

// CrossMotion returns v ×m = crm(v)·m, the spatial cross product for motion
// vectors (RBDA Eq. 2.33): [ω×m_ω; ω×m_v + v×m_ω].
func CrossMotion(v, m Vec6) Vec6 {
	w, vo := v.Ang(), v.Lin()
	mw, mv := m.Ang(), m.Lin()
	return V6(w.Cross(mw), w.Cross(mv).Add(vo.Cross(mw)))
}

// CrossForce returns v ×* f = crf(v)·f = −crm(v)ᵀ·f, the spatial cross
// product for force vectors (RBDA Eq. 2.34): [ω×n + v×f; ω×f].
func CrossForce(v, f Vec6) Vec6 { return crossForce(&v, &f) }

// crossForce is CrossForce on pointers, in scalars (see apply).
func crossForce(v, f *Vec6) Vec6 {
	return Vec6{
		(v[1]*f[2] - v[2]*f[1]) + (v[4]*f[5] - v[5]*f[4]),
		(v[2]*f[0] - v[0]*f[2]) + (v[5]*f[3] - v[3]*f[5]),
		(v[0]*f[1] - v[1]*f[0]) + (v[3]*f[4] - v[4]*f[3]),
		v[1]*f[5] - v[2]*f[4],
		v[2]*f[3] - v[0]*f[5],
		v[0]*f[4] - v[1]*f[3],
	}
}

// MulVec returns m·v.
func (m *Mat6) MulVec(v Vec6) Vec6 {
	var r Vec6
	for i := 0; i < 6; i++ {
		r[i] = m[i][0]*v[0] + m[i][1]*v[1] + m[i][2]*v[2] + m[i][3]*v[3] + m[i][4]*v[4] + m[i][5]*v[5]
	}
	return r
}

// Mul returns m·n.
func (m *Mat6) Mul(n *Mat6) Mat6 {
	var r Mat6
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			var s float64
			for k := 0; k < 6; k++ {
				s += m[i][k] * n[k][j]
			}
			r[i][j] = s
		}
	}
	return r
}

// T returns mᵀ.
func (m *Mat6) T() Mat6 {
	var r Mat6
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			r[i][j] = m[j][i]
		}
	}
	return r
}

// AddOuter adds s·u·wᵀ to m in place.
func (m *Mat6) AddOuter(s float64, u, w Vec6) {
	for i := 0; i < 6; i++ {
		su := s * u[i]
		for j := 0; j < 6; j++ {
			m[i][j] += su * w[j]
		}
	}
}

// AddTo adds n to m in place.
func (m *Mat6) AddTo(n *Mat6) {
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			m[i][j] += n[i][j]
		}
	}
}

// SpatialInertia is the spatial inertia of a rigid body of mass m, centre
// of mass c and rotational inertia Ic about the centre of mass, all in the
// body frame, about the body-frame origin (RBDA Eq. 2.63):
//
//	I = [ Ic + m·c×c×ᵀ   m·c× ]
//	    [ m·c×ᵀ          m·1  ]
func SpatialInertia(m float64, c Vec3, Ic Mat3) Mat6 {
	cx := Skew(c)
	mcx := cx.Scale(m)
	top := Ic.Add(cx.Mul(cx.T()).Scale(m))
	var I Mat6
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			I[i][j] = top[i][j]
			I[i][j+3] = mcx[i][j]
			I[i+3][j] = mcx[j][i]
		}
		I[i+3][i+3] = m
	}
	return I
}

// Transform is the Plücker transform plx(E, r) from frame A to frame B:
// E is the coordinate rotation (B coordinates = E·A coordinates) and R the
// position of B's origin in A coordinates (RBDA Eq. 2.24, Table 2.5). As a
// 6×6 matrix acting on motion vectors it is [E 0; −E·r× E].
type Transform struct {
	E Mat3
	R Vec3
}

// Identity is the identity transform.
var Identity = Transform{E: Identity3}

// Xlt is the pure translation by r (RBDA Eq. 2.28: xlt(r)).
func Xlt(r Vec3) Transform { return Transform{E: Identity3, R: r} }

// Xrot is the pure coordinate rotation E (RBDA Eq. 2.29: rot(E)).
func Xrot(E Mat3) Transform { return Transform{E: E} }

// Placement is the transform from a parent frame to a child frame whose
// origin sits at p and whose axes are the columns of R, both in parent
// coordinates (the orientation convention of MuJoCo and URDF): plx(Rᵀ, p).
func Placement(R Mat3, p Vec3) Transform { return Transform{E: R.T(), R: p} }

// Apply returns X·m for a motion vector: [Eω; E(v − r×ω)] (RBDA Table 2.5).
func (X Transform) Apply(m Vec6) Vec6 { return X.apply(&m) }

// apply is Apply on pointers, written out in scalars: the algorithms' hot
// path (passing the 96-byte Transform and the Vec6 by value, through Vec3
// helpers, made it a quarter of the ABA's time).
func (X *Transform) apply(m *Vec6) Vec6 {
	E, r := &X.E, &X.R
	w0, w1, w2 := m[0], m[1], m[2]
	t0 := m[3] - (r[1]*w2 - r[2]*w1)
	t1 := m[4] - (r[2]*w0 - r[0]*w2)
	t2 := m[5] - (r[0]*w1 - r[1]*w0)
	return Vec6{
		E[0][0]*w0 + E[0][1]*w1 + E[0][2]*w2,
		E[1][0]*w0 + E[1][1]*w1 + E[1][2]*w2,
		E[2][0]*w0 + E[2][1]*w1 + E[2][2]*w2,
		E[0][0]*t0 + E[0][1]*t1 + E[0][2]*t2,
		E[1][0]*t0 + E[1][1]*t1 + E[1][2]*t2,
		E[2][0]*t0 + E[2][1]*t1 + E[2][2]*t2,
	}
}

// ApplyForce returns X*·f for a force vector: [E(n − r×f); Ef].
func (X Transform) ApplyForce(f Vec6) Vec6 {
	n, fl := f.Ang(), f.Lin()
	return V6(X.E.MulVec(n.Sub(X.R.Cross(fl))), X.E.MulVec(fl))
}

// InvApply returns X⁻¹·m for a motion vector (B to A): [Eᵀω; Eᵀv + r×Eᵀω].
func (X Transform) InvApply(m Vec6) Vec6 {
	w := X.E.TMulVec(m.Ang())
	return V6(w, X.E.TMulVec(m.Lin()).Add(X.R.Cross(w)))
}

// TApplyForce returns Xᵀ·f = (X*)⁻¹·f, which carries a force vector from B
// back to A: [Eᵀn + r×Eᵀf; Eᵀf] (RBDA Table 2.5).
func (X Transform) TApplyForce(f Vec6) Vec6 { return X.tApplyForce(&f) }

// tApplyForce is TApplyForce on pointers, in scalars (see apply).
func (X *Transform) tApplyForce(f *Vec6) Vec6 {
	E, r := &X.E, &X.R
	l0 := E[0][0]*f[3] + E[1][0]*f[4] + E[2][0]*f[5]
	l1 := E[0][1]*f[3] + E[1][1]*f[4] + E[2][1]*f[5]
	l2 := E[0][2]*f[3] + E[1][2]*f[4] + E[2][2]*f[5]
	n0 := E[0][0]*f[0] + E[1][0]*f[1] + E[2][0]*f[2]
	n1 := E[0][1]*f[0] + E[1][1]*f[1] + E[2][1]*f[2]
	n2 := E[0][2]*f[0] + E[1][2]*f[1] + E[2][2]*f[2]
	return Vec6{
		n0 + (r[1]*l2 - r[2]*l1),
		n1 + (r[2]*l0 - r[0]*l2),
		n2 + (r[0]*l1 - r[1]*l0),
		l0, l1, l2,
	}
}

// Compose returns X·Y (first Y, then X): plx(E_X E_Y, r_Y + E_Yᵀ r_X)
// (RBDA Table 2.5).
func (X Transform) Compose(Y Transform) Transform {
	return Transform{E: X.E.Mul(Y.E), R: Y.R.Add(Y.E.TMulVec(X.R))}
}

// Inverse returns X⁻¹ = plx(Eᵀ, −E r).
func (X Transform) Inverse() Transform {
	return Transform{E: X.E.T(), R: X.E.MulVec(X.R).Scale(-1)}
}

// ApplyPoint maps a point with A coordinates p to B coordinates: E(p − r).
func (X Transform) ApplyPoint(p Vec3) Vec3 { return X.E.MulVec(p.Sub(X.R)) }

// InvApplyPoint maps a point with B coordinates p to A coordinates: r + Eᵀp.
func (X Transform) InvApplyPoint(p Vec3) Vec3 { return X.R.Add(X.E.TMulVec(p)) }

// Mat6 returns X as a 6×6 motion transform, [E 0; −E·r× E].
func (X Transform) Mat6() Mat6 {
	erx := X.E.Mul(Skew(X.R))
	var M Mat6
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			M[i][j] = X.E[i][j]
			M[i+3][j+3] = X.E[i][j]
			M[i+3][j] = -erx[i][j]
		}
	}
	return M
}

// CongruenceInertia returns Xᵀ·I·X: an inertia I (rigid or articulated)
// expressed in frame B, carried to frame A (RBDA Eq. 2.66 and Table 7.1,
// I^A_λ(i) += X_iᵀ I^a_i X_i).
func (X Transform) CongruenceInertia(I *Mat6) Mat6 {
	M := X.Mat6()
	IX := I.Mul(&M)
	MT := M.T()
	return MT.Mul(&IX)
}
