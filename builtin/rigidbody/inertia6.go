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

// rotSym returns Eᵀ S E for symmetric S: T = S E (27 products), then the
// six distinct entries of Eᵀ T (18).
func rotSym(E *Mat3, S *Sym3) Sym3 {
	var T Mat3
	for j := 0; j < 3; j++ {
		e0, e1, e2 := E[0][j], E[1][j], E[2][j]
		T[0][j], T[1][j], T[2][j] = S.mulVec(e0, e1, e2)
	}
	dot := func(i, j int) float64 { return E[0][i]*T[0][j] + E[1][i]*T[1][j] + E[2][i]*T[2][j] }
	return Sym3{dot(0, 0), dot(1, 1), dot(2, 2), dot(0, 1), dot(0, 2), dot(1, 2)}
}

// rotGen returns Eᵀ B E for a general B (54 products).
func rotGen(E *Mat3, B *Mat3) Mat3 {
	T := B.Mul(*E)
	var R Mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			R[i][j] = E[0][i]*T[0][j] + E[1][i]*T[1][j] + E[2][i]*T[2][j]
		}
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
	A := rotSym(E, &I.A)
	B := rotGen(E, &I.B)
	C := rotSym(E, &I.C)
	x, y, z := X.R[0], X.R[1], X.R[2]
	if x != 0 || y != 0 || z != 0 {
		Cf := C.Mat3()
		var P, W Mat3 // P = r×C', W = B'r×
		for j := 0; j < 3; j++ {
			P[0][j] = -z*Cf[1][j] + y*Cf[2][j]
			P[1][j] = z*Cf[0][j] - x*Cf[2][j]
			P[2][j] = -y*Cf[0][j] + x*Cf[1][j]
		}
		for i := 0; i < 3; i++ {
			W[i][0] = z*B[i][1] - y*B[i][2]
			W[i][1] = -z*B[i][0] + x*B[i][2]
			W[i][2] = y*B[i][0] - x*B[i][1]
		}
		// Z = P r×, symmetric: the six distinct entries
		z00 := z*P[0][1] - y*P[0][2]
		z11 := -z*P[1][0] + x*P[1][2]
		z22 := y*P[2][0] - x*P[2][1]
		z01 := -z*P[0][0] + x*P[0][2]
		z02 := y*P[0][0] - x*P[0][1]
		z12 := y*P[1][0] - x*P[1][1]
		A[0] -= 2*W[0][0] + z00
		A[1] -= 2*W[1][1] + z11
		A[2] -= 2*W[2][2] + z22
		A[3] -= W[0][1] + W[1][0] + z01
		A[4] -= W[0][2] + W[2][0] + z02
		A[5] -= W[1][2] + W[2][1] + z12
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				B[i][j] += P[i][j]
			}
		}
	}
	for k := range A {
		dst.A[k] += A[k]
		dst.C[k] += C[k]
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			dst.B[i][j] += B[i][j]
		}
	}
}
