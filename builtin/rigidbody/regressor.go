package rigidbody

import "fmt"

// StandardParams is the number of standard inertial parameters of a body.
const StandardParams = 10

// Standard returns body b's standard inertial parameters, in which inverse
// dynamics is linear (RBDA §2.13; W. Khalil and E. Dombre, "Modeling,
// Identification and Control of Robots", 2002, §9.3):
//
//	φ = [m, m·c_x, m·c_y, m·c_z, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz]
//
// with I = I_C + m·c×c×ᵀ the rotational inertia about the body-frame origin
// (the top-left block of SpatialInertia), entries in Bone order.
func Standard(b *Body) [StandardParams]float64 {
	cx := Skew(b.COM)
	I := b.Inertia.Add(cx.Mul(cx.T()).Scale(b.Mass))
	h := b.COM.Scale(b.Mass)
	return [StandardParams]float64{b.Mass, h[0], h[1], h[2], I[0][0], I[1][1], I[2][2], I[0][1], I[0][2], I[1][2]}
}

// standardInertia is the spatial inertia of the standard parameters φ,
// linear in φ (RBDA Eq. 2.63 with h = m·c):
//
//	I = [ Ī   h× ]
//	    [ h×ᵀ m1 ]
//
// It repeats SpatialInertia's block assembly on purpose: sharing one
// assembler made the ABA, which builds every body's inertia per row,
// 2.8 % slower (BenchmarkABA5, 5.40 → 5.55 µs), and SpatialInertia cannot
// take φ directly (a unit φ has m = 0, so no c = h/m).
func standardInertia(phi *[StandardParams]float64) Mat6 {
	hx := Skew(Vec3{phi[1], phi[2], phi[3]})
	Ibar := Mat3{{phi[4], phi[7], phi[8]}, {phi[7], phi[5], phi[9]}, {phi[8], phi[9], phi[6]}}
	var I Mat6
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			I[i][j] = Ibar[i][j]
			I[i][j+3] = hx[i][j]
			I[i+3][j] = hx[j][i]
		}
		I[i+3][i+3] = phi[0]
	}
	return I
}

// Regressor writes the inverse-dynamics regressor Y(q, q̇, q̈) into y
// (row-major, n × 10n for n bodies): τ = Y·φ, where φ stacks each body's
// Standard parameters in body order, so that y·φ equals InverseDynamics'
// τ. Column 10i+k is the RNEA of body i alone with the unit standard
// parameter k: f = I_k a_i + v_i ×* I_k v_i, projected onto the joints of
// body i and its ancestors (Khalil and Dombre §9.3). The inertial
// parameters of the workspace's Model are not used.
func (w *Workspace) Regressor(q, qd, qdd, y []float64) {
	m := w.M
	n := len(m.Bodies)
	m.checkLen("qd", qd)
	m.checkLen("qdd", qdd)
	if len(y) != n*n*StandardParams {
		panic(fmt.Sprintf("rigidbody: regressor has %d entries, want %d×%d", len(y), n, n*StandardParams))
	}
	for i := range y {
		y[i] = 0
	}
	w.kinematics(q, qd)
	a0 := w.baseAcceleration()
	cols := n * StandardParams
	for i := range m.Bodies {
		ap := a0
		if p := m.Bodies[i].Parent; p >= 0 {
			ap = w.A[p]
		}
		w.A[i] = w.X[i].Apply(ap).Add(w.S[i].Scale(qdd[i])).Add(w.C[i])
		for k := 0; k < StandardParams; k++ {
			var unit [StandardParams]float64
			unit[k] = 1
			Ik := standardInertia(&unit)
			f := Ik.MulVec(w.A[i]).Add(CrossForce(w.V[i], Ik.MulVec(w.V[i])))
			col := i*StandardParams + k
			for j := i; ; {
				y[j*cols+col] = w.S[j].Dot(f)
				p := m.Bodies[j].Parent
				if p < 0 {
					break
				}
				f = w.X[j].TApplyForce(f)
				j = p
			}
		}
	}
}
