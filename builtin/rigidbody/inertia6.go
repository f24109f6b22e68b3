package rigidbody

// Sym3 is a symmetric 3×3 matrix by its six distinct entries, in the
// order xx, yy, zz, xy, xz, yz.
type Sym3 [6]float64

// Mat3 returns the full matrix.
func (s *Sym3) Mat3() Mat3 {
	return Mat3{{s[0], s[3], s[4]}, {s[3], s[1], s[5]}, {s[4], s[5], s[2]}}
}

// mulVec returns s·v.
func (s *Sym3) mulVec(v0, v1, v2 float64) (r0, r1, r2 float64) {
	return s[0]*v0 + s[3]*v1 + s[4]*v2, s[3]*v0 + s[1]*v1 + s[5]*v2, s[4]*v0 + s[5]*v1 + s[2]*v2
}

// Inertia6 is a symmetric 6×6 spatial inertia, rigid (RBDA Eq. 2.63) or
// articulated (RBDA §7.2, Eq. 7.23: symmetric positive semi-definite), in
// block form
//
//	[ A   B ]
//	[ Bᵀ  C ]
//
// with A and C symmetric: 21 numbers instead of Mat6's 36. Its kernels
// (MulVec, MulAng, SubOuter, Transform.Congruence) skip what the symmetry
// and the block structure of a Plücker transform make redundant; the
// algorithms of this package use it instead of Mat6 (see RATIONALE.md,
// "Why hand-written spatial kernels").
type Inertia6 struct {
	A Sym3
	B Mat3
	C Sym3
}

// RigidInertia is SpatialInertia in block form: A = I_C + m·c×c×ᵀ =
// I_C + m(|c|²·1 − c cᵀ), B = m·c×, C = m·1 (RBDA Eq. 2.63). I_C is taken
// as symmetric: its upper triangle is read.
func RigidInertia(m float64, c Vec3, Ic Mat3) Inertia6 {
	x, y, z := c[0], c[1], c[2]
	mx, my, mz := m*x, m*y, m*z
	return Inertia6{
		A: Sym3{
			Ic[0][0] + my*y + mz*z, Ic[1][1] + mx*x + mz*z, Ic[2][2] + mx*x + my*y,
			Ic[0][1] - mx*y, Ic[0][2] - mx*z, Ic[1][2] - my*z,
		},
		B: Mat3{{0, -mz, my}, {mz, 0, -mx}, {-my, mx, 0}},
		C: Sym3{m, m, m, 0, 0, 0},
	}
}

// Mat6 returns the full 6×6 matrix.
func (I *Inertia6) Mat6() Mat6 {
	var M Mat6
	A, C := I.A.Mat3(), I.C.Mat3()
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			M[i][j] = A[i][j]
			M[i][j+3] = I.B[i][j]
			M[i+3][j] = I.B[j][i]
			M[i+3][j+3] = C[i][j]
		}
	}
	return M
}

// MulVec returns I·v.
func (I *Inertia6) MulVec(v Vec6) Vec6 {
	B := &I.B
	a0, a1, a2 := I.A.mulVec(v[0], v[1], v[2])
	c0, c1, c2 := I.C.mulVec(v[3], v[4], v[5])
	return Vec6{
		a0 + B[0][0]*v[3] + B[0][1]*v[4] + B[0][2]*v[5],
		a1 + B[1][0]*v[3] + B[1][1]*v[4] + B[1][2]*v[5],
		a2 + B[2][0]*v[3] + B[2][1]*v[4] + B[2][2]*v[5],
		c0 + B[0][0]*v[0] + B[1][0]*v[1] + B[2][0]*v[2],
		c1 + B[0][1]*v[0] + B[1][1]*v[1] + B[2][1]*v[2],
		c2 + B[0][2]*v[0] + B[1][2]*v[1] + B[2][2]*v[2],
	}
}

// MulAng returns I·[a; 0], e.g. U = I^A S for a revolute joint's S = [a; 0].
func (I *Inertia6) MulAng(a Vec3) Vec6 {
	B := &I.B
	a0, a1, a2 := I.A.mulVec(a[0], a[1], a[2])
	return Vec6{
		a0, a1, a2,
		B[0][0]*a[0] + B[1][0]*a[1] + B[2][0]*a[2],
		B[0][1]*a[0] + B[1][1]*a[1] + B[2][1]*a[2],
		B[0][2]*a[0] + B[1][2]*a[1] + B[2][2]*a[2],
	}
}

// SubOuter subtracts s·u·uᵀ in place (the ABA's I^A − U Uᵀ/D).
func (I *Inertia6) SubOuter(s float64, u Vec6) {
	s0, s1, s2, s3, s4, s5 := s*u[0], s*u[1], s*u[2], s*u[3], s*u[4], s*u[5]
	I.A[0] -= s0 * u[0]
	I.A[1] -= s1 * u[1]
	I.A[2] -= s2 * u[2]
	I.A[3] -= s0 * u[1]
	I.A[4] -= s0 * u[2]
	I.A[5] -= s1 * u[2]
	I.B[0][0] -= s0 * u[3]
	I.B[0][1] -= s0 * u[4]
	I.B[0][2] -= s0 * u[5]
	I.B[1][0] -= s1 * u[3]
	I.B[1][1] -= s1 * u[4]
	I.B[1][2] -= s1 * u[5]
	I.B[2][0] -= s2 * u[3]
	I.B[2][1] -= s2 * u[4]
	I.B[2][2] -= s2 * u[5]
	I.C[0] -= s3 * u[3]
	I.C[1] -= s4 * u[4]
	I.C[2] -= s5 * u[5]
	I.C[3] -= s3 * u[4]
	I.C[4] -= s3 * u[5]
	I.C[5] -= s4 * u[5]
}

// Add adds J in place.
func (I *Inertia6) Add(J *Inertia6) {
	for k := range I.A {
		I.A[k] += J.A[k]
		I.C[k] += J.C[k]
	}
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			I.B[r][c] += J.B[r][c]
		}
	}
}

// rotSym returns the six distinct entries (xx, yy, zz, xy, xz, yz) of
// Eᵀ S E for symmetric S: T = S E (27 products), then the upper triangle
// of Eᵀ T (18). Written in scalars, as rotGen and addCongruence: with the
// matrices as local arrays the congruence took 40 % longer.
func rotSym(E *Mat3, S *Sym3) (r00, r11, r22, r01, r02, r12 float64) {
	s00, s11, s22, s01, s02, s12 := S[0], S[1], S[2], S[3], S[4], S[5]
	e00, e01, e02 := E[0][0], E[0][1], E[0][2]
	e10, e11, e12 := E[1][0], E[1][1], E[1][2]
	e20, e21, e22 := E[2][0], E[2][1], E[2][2]
	t00 := s00*e00 + s01*e10 + s02*e20
	t01 := s00*e01 + s01*e11 + s02*e21
	t02 := s00*e02 + s01*e12 + s02*e22
	t10 := s01*e00 + s11*e10 + s12*e20
	t11 := s01*e01 + s11*e11 + s12*e21
	t12 := s01*e02 + s11*e12 + s12*e22
	t20 := s02*e00 + s12*e10 + s22*e20
	t21 := s02*e01 + s12*e11 + s22*e21
	t22 := s02*e02 + s12*e12 + s22*e22
	r00 = e00*t00 + e10*t10 + e20*t20
	r11 = e01*t01 + e11*t11 + e21*t21
	r22 = e02*t02 + e12*t12 + e22*t22
	r01 = e00*t01 + e10*t11 + e20*t21
	r02 = e00*t02 + e10*t12 + e20*t22
	r12 = e01*t02 + e11*t12 + e21*t22
	return
}

// rotGen returns Eᵀ B E for a general B (54 products).
func rotGen(E *Mat3, B *Mat3) Mat3 {
	e00, e01, e02 := E[0][0], E[0][1], E[0][2]
	e10, e11, e12 := E[1][0], E[1][1], E[1][2]
	e20, e21, e22 := E[2][0], E[2][1], E[2][2]
	var R Mat3
	for i := 0; i < 3; i++ { // row i of B E, then column i of Eᵀ (B E)
		b0, b1, b2 := B[i][0], B[i][1], B[i][2]
		t0 := b0*e00 + b1*e10 + b2*e20
		t1 := b0*e01 + b1*e11 + b2*e21
		t2 := b0*e02 + b1*e12 + b2*e22
		f0, f1, f2 := E[i][0], E[i][1], E[i][2]
		R[0][0] += f0 * t0
		R[0][1] += f0 * t1
		R[0][2] += f0 * t2
		R[1][0] += f1 * t0
		R[1][1] += f1 * t1
		R[1][2] += f1 * t2
		R[2][0] += f2 * t0
		R[2][1] += f2 * t1
		R[2][2] += f2 * t2
	}
	return R
}

// Congruence returns Xᵀ I X: the inertia I, expressed in frame B, carried
// to frame A (RBDA Eq. 2.66; the ABA's I^A_λ(i) += X_iᵀ I^a_i X_i, Table
// 7.1), as CongruenceInertia but exploiting the structure. X = rot(E)·xlt(r)
// (RBDA Eq. 2.24), so Xᵀ I X = xlt(r)ᵀ (rot(E)ᵀ I rot(E)) xlt(r): first the
// rotation, A' = EᵀAE, B' = EᵀBE, C' = EᵀCE, then the translation with
// xlt(r) = [1 0; −r× 1], which multiplied out gives
//
//	C'' = C',  B'' = B' + r×C',  A'' = A' − W − Wᵀ − (r×C') r×,  W = B' r×
//
// (r×B'ᵀ = −(B'r×)ᵀ, and (r×C')r× = r×C'r× is symmetric). About 190
// multiplications against 864 for the two dense 6×6 products; a pure
// rotation (r = 0) skips the translation.
func (X Transform) Congruence(I *Inertia6) Inertia6 {
	var out Inertia6
	X.addCongruence(&out, I)
	return out
}

// addCongruence adds Xᵀ I X to dst (see Congruence).
func (X *Transform) addCongruence(dst, I *Inertia6) {
	E := &X.E
	a00, a11, a22, a01, a02, a12 := rotSym(E, &I.A)
	c00, c11, c22, c01, c02, c12 := rotSym(E, &I.C)
	B := rotGen(E, &I.B)
	x, y, z := X.R[0], X.R[1], X.R[2]
	if x != 0 || y != 0 || z != 0 {
		// P = r×C' (rows of r× times C')
		p00, p01, p02 := -z*c01+y*c02, -z*c11+y*c12, -z*c12+y*c22
		p10, p11, p12 := z*c00-x*c02, z*c01-x*c12, z*c02-x*c22
		p20, p21, p22 := -y*c00+x*c01, -y*c01+x*c11, -y*c02+x*c12
		// W = B' r× (row i: (z b_i1 − y b_i2, −z b_i0 + x b_i2, y b_i0 − x b_i1))
		w00, w01, w02 := z*B[0][1]-y*B[0][2], -z*B[0][0]+x*B[0][2], y*B[0][0]-x*B[0][1]
		w10, w11, w12 := z*B[1][1]-y*B[1][2], -z*B[1][0]+x*B[1][2], y*B[1][0]-x*B[1][1]
		w20, w21, w22 := z*B[2][1]-y*B[2][2], -z*B[2][0]+x*B[2][2], y*B[2][0]-x*B[2][1]
		// Z = P r×, symmetric: the six distinct entries
		z00 := z*p01 - y*p02
		z11 := -z*p10 + x*p12
		z22 := y*p20 - x*p21
		z01 := -z*p00 + x*p02
		z02 := y*p00 - x*p01
		z12 := y*p10 - x*p11
		a00 -= 2*w00 + z00
		a11 -= 2*w11 + z11
		a22 -= 2*w22 + z22
		a01 -= w01 + w10 + z01
		a02 -= w02 + w20 + z02
		a12 -= w12 + w21 + z12
		B[0][0] += p00
		B[0][1] += p01
		B[0][2] += p02
		B[1][0] += p10
		B[1][1] += p11
		B[1][2] += p12
		B[2][0] += p20
		B[2][1] += p21
		B[2][2] += p22
	}
	d := &dst.A
	d[0] += a00
	d[1] += a11
	d[2] += a22
	d[3] += a01
	d[4] += a02
	d[5] += a12
	d = &dst.C
	d[0] += c00
	d[1] += c11
	d[2] += c22
	d[3] += c01
	d[4] += c02
	d[5] += c12
	for i := 0; i < 3; i++ {
		dst.B[i][0] += B[i][0]
		dst.B[i][1] += B[i][1]
		dst.B[i][2] += B[i][2]
	}
}
