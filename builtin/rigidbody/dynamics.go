package rigidbody

import (
	"fmt"
	"math"
)

// Workspace holds the per-body quantities of one evaluation, so that the
// algorithms allocate nothing and a later reverse-mode pass can read the
// forward quantities back. A Workspace belongs to one goroutine; the Model
// it points to may be changed between calls (identification changes the
// inertial parameters every evaluation), but not its number of bodies.
//
// What depends on the bodies only (each body's spatial inertia, and the
// joint-rotation factors of its axis and placement) is computed once and
// kept until a body changes: every call compares the bodies with the
// values the cache was built from, which costs far less than rebuilding
// them per call; Hold skips even that while the bodies stay fixed.
type Workspace struct {
	M *Model

	X  []Transform  // X_i: parent → body i
	X0 []Transform  // world → body i (ForwardKinematics and Velocities only)
	S  []Vec6       // motion subspace of joint i
	I  []Inertia6   // spatial inertia of body i about its origin
	V  []Vec6       // body velocity v_i
	A  []Vec6       // body acceleration a_i (RNEA, ABA)
	C  []Vec6       // velocity-product acceleration c_i = v_i ×m S_i q̇_i
	F  []Vec6       // RNEA body force f_i; ABA bias force p^A_i
	IA []Inertia6   // ABA articulated inertia (not formed for roots); CRBA composite inertia
	U  []Vec6       // ABA U_i = I^A_i S_i
	D  []float64    // ABA D_i = S_iᵀ U_i
	Uu []float64    // ABA u_i = τ_i − S_iᵀ p^A_i
	SC [][2]float64 // sin q_i, cos q_i of the last call that set X

	cache []bodyCache
	zero  []float64 // q̈ = 0 for BiasForces
	held  bool      // Hold: bodies declared unchanged, skip the check
}

// bodyCache is what depends on one body's fields only, with the values it
// was computed from.
type bodyCache struct {
	axis  Vec3
	xtree Transform
	shape bool // p1, p2 valid for axis, xtree

	mass    float64
	com     Vec3
	inertia Mat3
	inert   bool // rigid, massless valid for mass, com, inertia

	p1, p2   Mat3 // a×E_T and a×a×E_T: E_i = E_T − sin q·p1 + (1 − cos q)·p2
	rigid    Inertia6
	massless bool // rigid = 0: the body exerts no force of its own
}

// NewWorkspace allocates a workspace for m.
func NewWorkspace(m *Model) *Workspace {
	n := len(m.Bodies)
	return &Workspace{
		M: m, X: make([]Transform, n), X0: make([]Transform, n), S: make([]Vec6, n),
		I: make([]Inertia6, n), V: make([]Vec6, n), A: make([]Vec6, n), C: make([]Vec6, n),
		F: make([]Vec6, n), IA: make([]Inertia6, n), U: make([]Vec6, n),
		D: make([]float64, n), Uu: make([]float64, n), SC: make([][2]float64, n),
		cache: make([]bodyCache, n), zero: make([]float64, n),
	}
}

func (w *Workspace) check() {
	if len(w.X) != len(w.M.Bodies) {
		panic(fmt.Sprintf("rigidbody: workspace for %d bodies used with a model of %d", len(w.X), len(w.M.Bodies)))
	}
}

// prepare brings the per-body cache, S and I up to date with the bodies.
func (w *Workspace) prepare() {
	if w.held {
		return
	}
	w.check()
	for i := range w.M.Bodies {
		b := &w.M.Bodies[i]
		c := &w.cache[i]
		if !c.shape || !sameShape(b, c) {
			k := Skew(b.Axis)
			c.p1 = k.Mul(b.XTree.E)
			c.p2 = k.Mul(c.p1)
			c.axis, c.xtree, c.shape = b.Axis, b.XTree, true
			w.S[i] = MotionSubspace(b.Axis)
		}
		if !c.inert || !sameInertia(b, c) {
			c.rigid = RigidInertia(b.Mass, b.COM, b.Inertia)
			c.massless = c.rigid == Inertia6{}
			c.mass, c.com, c.inertia, c.inert = b.Mass, b.COM, b.Inertia, true
			w.I[i] = c.rigid
		}
	}
}

// Hold refreshes the cache from the bodies and declares that they will not
// change until Release or the next Hold: the algorithms then skip their
// per-call comparison of the bodies with the cache (≈ 7 % of a 5-body ABA,
// BenchmarkABA5). Changing a body while held gives results for the bodies
// as they were at Hold.
func (w *Workspace) Hold() {
	w.held = false
	w.prepare()
	w.held = true
}

// Release ends Hold: every call checks the bodies again.
func (w *Workspace) Release() { w.held = false }

// sameShape reports whether b's axis and placement are those of the cache
// (written out: the generated array comparisons are calls).
func sameShape(b *Body, c *bodyCache) bool {
	x, y := &b.XTree, &c.xtree
	return b.Axis[0] == c.axis[0] && b.Axis[1] == c.axis[1] && b.Axis[2] == c.axis[2] &&
		x.R[0] == y.R[0] && x.R[1] == y.R[1] && x.R[2] == y.R[2] &&
		x.E[0][0] == y.E[0][0] && x.E[0][1] == y.E[0][1] && x.E[0][2] == y.E[0][2] &&
		x.E[1][0] == y.E[1][0] && x.E[1][1] == y.E[1][1] && x.E[1][2] == y.E[1][2] &&
		x.E[2][0] == y.E[2][0] && x.E[2][1] == y.E[2][1] && x.E[2][2] == y.E[2][2]
}

// sameInertia reports whether b's inertial parameters are those of the cache.
func sameInertia(b *Body, c *bodyCache) bool {
	I, J := &b.Inertia, &c.inertia
	return b.Mass == c.mass && b.COM[0] == c.com[0] && b.COM[1] == c.com[1] && b.COM[2] == c.com[2] &&
		I[0][0] == J[0][0] && I[0][1] == J[0][1] && I[0][2] == J[0][2] &&
		I[1][0] == J[1][0] && I[1][1] == J[1][1] && I[1][2] == J[1][2] &&
		I[2][0] == J[2][0] && I[2][1] == J[2][1] && I[2][2] == J[2][2]
}

// jointX sets X_i = X_J(q)·X_T(i) = plx(E_J E_T, r_T) for a revolute joint,
// E_J E_T = E_T − sin q·a×E_T + (1 − cos q)·a×a×E_T (JointTransform, with
// the products of the axis and the placement cached), and keeps sin q and
// cos q for Save.
func (w *Workspace) jointX(i int, q float64) {
	s, co := math.Sincos(q)
	w.setX(i, s, co)
}

func (w *Workspace) setX(i int, s, co float64) {
	c := &w.cache[i]
	w.SC[i] = [2]float64{s, co}
	oc := 1 - co
	X := &w.X[i]
	ET := &c.xtree.E
	for r := 0; r < 3; r++ {
		for k := 0; k < 3; k++ {
			X.E[r][k] = ET[r][k] - s*c.p1[r][k] + oc*c.p2[r][k]
		}
	}
	X.R = c.xtree.R
}

// kinematics fills X, S and I for configuration q (and, with qd ≠ nil,
// V and C): RBDA Table 5.1 lines 3–6.
func (w *Workspace) kinematics(q, qd []float64) {
	w.prepare()
	w.M.checkLen("q", q)
	for i := range w.M.Bodies {
		w.jointX(i, q[i])
		if qd == nil {
			continue
		}
		w.velocity(i, qd[i])
	}
}

// velocity sets v_i = X_i v_λ(i) + S_i q̇_i and c_i = v_i ×m S_i q̇_i (S
// constant), with X_i already set.
func (w *Workspace) velocity(i int, qd float64) {
	ax := &w.cache[i].axis
	s0, s1, s2 := ax[0]*qd, ax[1]*qd, ax[2]*qd
	var v Vec6
	if p := w.M.Bodies[i].Parent; p >= 0 {
		v = w.X[i].apply(&w.V[p])
	}
	v[0] += s0
	v[1] += s1
	v[2] += s2
	w.V[i] = v
	// [ω; v_O] ×m [s; 0] = [ω×s; v_O×s]
	w.C[i] = Vec6{
		v[1]*s2 - v[2]*s1, v[2]*s0 - v[0]*s2, v[0]*s1 - v[1]*s0,
		v[4]*s2 - v[5]*s1, v[5]*s0 - v[3]*s2, v[3]*s1 - v[4]*s0,
	}
}

// ForwardKinematics returns, for each body, the transform from the world
// frame to the body frame at configuration q. Body i's origin in world
// coordinates is X0[i].R and its axes are the columns of X0[i].E transposed;
// X0[i].InvApplyPoint(p) maps a body-frame point to world coordinates. The
// returned slice is the workspace's own.
func (w *Workspace) ForwardKinematics(q []float64) []Transform {
	w.kinematics(q, nil)
	w.worldTransforms()
	return w.X0
}

// worldTransforms sets X0_i = X_i X0_λ(i) from X.
func (w *Workspace) worldTransforms() {
	for i := range w.M.Bodies {
		if p := w.M.Bodies[i].Parent; p < 0 {
			w.X0[i] = w.X[i]
		} else {
			w.X0[i] = w.X[i].Compose(w.X0[p])
		}
	}
}

// Velocities returns the spatial velocity of each body in its own frame at
// (q, q̇), and sets X0 as ForwardKinematics does. The returned slice is
// the workspace's own.
func (w *Workspace) Velocities(q, qd []float64) []Vec6 {
	w.M.checkLen("qd", qd)
	w.kinematics(q, qd)
	w.worldTransforms()
	return w.V
}

// baseAcceleration is a_0 = −a_g: gravity as a fictitious upward
// acceleration of the base (RBDA §5.3).
func (w *Workspace) baseAcceleration() Vec6 { return V6(Vec3{}, w.M.Gravity.Scale(-1)) }

// InverseDynamics is the RNEA (RBDA Table 5.1): the joint forces tau that
// produce q̈ = qdd at (q, q̇) under gravity,
//
//	v_i = X_i v_λ + S_i q̇_i,  a_i = X_i a_λ + S_i q̈_i + v_i ×m S_i q̇_i,
//	f_i = I_i a_i + v_i ×* I_i v_i,  τ_i = S_iᵀ f_i,  f_λ += X_iᵀ f_i,
//
// with a_0 = −a_g. tau may alias none of the inputs.
func (w *Workspace) InverseDynamics(q, qd, qdd, tau []float64) {
	m := w.M
	m.checkLen("qd", qd)
	m.checkLen("qdd", qdd)
	m.checkLen("tau", tau)
	w.kinematics(q, qd)
	a0 := w.baseAcceleration()
	for i := range m.Bodies {
		ap := a0
		if p := m.Bodies[i].Parent; p >= 0 {
			ap = w.A[p]
		}
		w.A[i] = w.X[i].Apply(ap).Add(w.S[i].Scale(qdd[i])).Add(w.C[i])
		if w.cache[i].massless {
			w.F[i] = Vec6{}
			continue
		}
		Iv := w.I[i].MulVec(w.V[i])
		w.F[i] = w.I[i].MulVec(w.A[i]).Add(CrossForce(w.V[i], Iv))
	}
	for i := len(m.Bodies) - 1; i >= 0; i-- {
		tau[i] = w.S[i].Dot(w.F[i])
		if p := m.Bodies[i].Parent; p >= 0 {
			w.F[p] = w.F[p].Add(w.X[i].TApplyForce(w.F[i]))
		}
	}
}

// BiasForces returns C(q, q̇) = RNEA(q, q̇, 0): Coriolis, centrifugal and
// gravity joint forces, so that M q̈ + C = τ (RBDA Eq. 6.1–6.2).
func (w *Workspace) BiasForces(q, qd, c []float64) {
	w.InverseDynamics(q, qd, w.zero, c)
}

// MassMatrix is the CRBA (RBDA Table 6.2): the joint-space inertia matrix
// H(q), written row-major into h (n×n):
//
//	I^c_i = I_i;  for i = n−1…0: I^c_λ += X_iᵀ I^c_i X_i;
//	F = I^c_i S_i;  H_ii = S_iᵀ F;  j = i; while λ(j) ≥ 0:
//	F = X_jᵀ F; j = λ(j); H_ij = H_ji = S_jᵀ F.
//
// Entries of bodies on different branches are zero.
func (w *Workspace) MassMatrix(q []float64, h []float64) {
	m := w.M
	n := len(m.Bodies)
	if len(h) != n*n {
		panic(fmt.Sprintf("rigidbody: mass matrix has %d entries, want %d×%d", len(h), n, n))
	}
	w.kinematics(q, nil)
	for i := range h {
		h[i] = 0
	}
	copy(w.IA, w.I)
	for i := n - 1; i >= 0; i-- {
		if p := m.Bodies[i].Parent; p >= 0 {
			w.X[i].addCongruence(&w.IA[p], &w.IA[i])
		}
		F := w.IA[i].MulAng(w.cache[i].axis)
		h[i*n+i] = w.S[i].Dot(F)
		for j := i; m.Bodies[j].Parent >= 0; {
			F = w.X[j].TApplyForce(F)
			j = m.Bodies[j].Parent
			h[i*n+j] = w.S[j].Dot(F)
			h[j*n+i] = h[i*n+j]
		}
	}
}

// ForwardDynamics is the ABA (RBDA Table 7.1): the accelerations qdd at
// (q, q̇) under joint forces tau and gravity.
//
//	pass 1: v_i, c_i, I^A_i = I_i, p^A_i = v_i ×* I_i v_i
//	pass 2 (i = n−1…0): U_i = I^A_i S_i, D_i = S_iᵀ U_i,
//	    u_i = τ_i − S_iᵀ p^A_i; if λ(i) ≥ 0:
//	    I^a = I^A_i − U_i U_iᵀ/D_i, p^a = p^A_i + I^a c_i + U_i u_i/D_i,
//	    I^A_λ += X_iᵀ I^a X_i, p^A_λ += X_iᵀ p^a
//	pass 3: a'_i = X_i a_λ + c_i, q̈_i = (u_i − U_iᵀ a'_i)/D_i,
//	    a_i = a'_i + S_i q̈_i,  with a_0 = −a_g.
//
// A root body (λ(i) = −1) needs only U_i = I^A_i S_i, so its children add
// X_jᵀ I^a_j (X_j S_i) to U_i (three matrix–vector products) instead of
// the congruence X_jᵀ I^a_j X_j to a full I^A_i; IA of a root is then not
// formed. qdd may alias none of the inputs.
func (w *Workspace) ForwardDynamics(q, qd, tau, qdd []float64) {
	m := w.M
	m.checkLen("qd", qd)
	m.checkLen("tau", tau)
	m.checkLen("qdd", qdd)
	w.kinematics(q, qd)
	n := len(m.Bodies)
	for i := 0; i < n; i++ {
		c := &w.cache[i]
		root := m.Bodies[i].Parent < 0
		if c.massless {
			w.F[i] = Vec6{}
			if root {
				w.U[i] = Vec6{}
			} else {
				w.IA[i] = Inertia6{}
			}
			continue
		}
		Iv := w.I[i].MulVec(w.V[i])
		w.F[i] = crossForce(&w.V[i], &Iv)
		if root {
			w.U[i] = w.I[i].MulAng(c.axis)
		} else {
			w.IA[i] = w.I[i]
		}
	}
	for i := n - 1; i >= 0; i-- {
		ax := &w.cache[i].axis
		p := m.Bodies[i].Parent
		if p >= 0 {
			w.U[i] = w.IA[i].MulAng(*ax)
		}
		U := &w.U[i]
		D := ax[0]*U[0] + ax[1]*U[1] + ax[2]*U[2]
		F := &w.F[i]
		u := tau[i] - (ax[0]*F[0] + ax[1]*F[1] + ax[2]*F[2])
		w.D[i], w.Uu[i] = D, u
		if p < 0 {
			continue
		}
		Ia := &w.IA[i]
		Ia.SubOuter(1/D, *U)
		pa := Ia.MulVec(w.C[i])
		uD := u / D
		for k := range pa {
			pa[k] += F[k] + U[k]*uD
		}
		X := &w.X[i]
		if m.Bodies[p].Parent < 0 {
			Sp := V6(w.cache[p].axis, Vec3{})
			XS := X.apply(&Sp)
			IXS := Ia.MulVec(XS)
			add6(&w.U[p], X.tApplyForce(&IXS))
		} else {
			X.addCongruence(&w.IA[p], Ia)
		}
		add6(&w.F[p], X.tApplyForce(&pa))
	}
	for i := 0; i < n; i++ {
		var a Vec6
		if p := m.Bodies[i].Parent; p >= 0 {
			a = w.X[i].apply(&w.A[p])
		} else {
			a0 := w.baseAcceleration()
			a = w.X[i].apply(&a0)
		}
		add6(&a, w.C[i])
		U := &w.U[i]
		qi := (w.Uu[i] - (U[0]*a[0] + U[1]*a[1] + U[2]*a[2] + U[3]*a[3] + U[4]*a[4] + U[5]*a[5])) / w.D[i]
		qdd[i] = qi
		ax := &w.cache[i].axis
		a[0] += ax[0] * qi
		a[1] += ax[1] * qi
		a[2] += ax[2] * qi
		w.A[i] = a
	}
}

// add6 adds b to a in place.
func add6(a *Vec6, b Vec6) {
	a[0] += b[0]
	a[1] += b[1]
	a[2] += b[2]
	a[3] += b[3]
	a[4] += b[4]
	a[5] += b[5]
}

// TapeLen is the number of values Save writes: per body sin q, cos q, D,
// U, V and A.
func (w *Workspace) TapeLen() int { return tapeBody * len(w.X) }

const tapeBody = 3 + 3*6

// Save writes to t (TapeLen values) what the Adjoint's SolveMass and
// AddInertiaVJP read of the last ForwardDynamics call, so that a later
// Load can restore it without running the ABA again.
func (w *Workspace) Save(t []float64) {
	t = t[:w.TapeLen()]
	for i := range w.X {
		b := t[i*tapeBody : (i+1)*tapeBody]
		b[0], b[1], b[2] = w.SC[i][0], w.SC[i][1], w.D[i]
		*(*Vec6)(b[3:9]) = w.U[i] // array assignments: copy() calls memmove
		*(*Vec6)(b[9:15]) = w.V[i]
		*(*Vec6)(b[15:21]) = w.A[i]
	}
}

// Load restores what Save kept: the transforms X (rebuilt from sin q and
// cos q exactly as ForwardDynamics built them), U, D, V and A, for the
// same Model bodies. The Adjoint's results after Load are then identical,
// bit for bit, to its results after the ForwardDynamics call that was
// saved.
func (w *Workspace) Load(t []float64) {
	w.prepare()
	t = t[:w.TapeLen()]
	for i := range w.X {
		b := t[i*tapeBody : (i+1)*tapeBody]
		w.setX(i, b[0], b[1])
		w.D[i] = b[2]
		w.U[i] = *(*Vec6)(b[3:9])
		w.V[i] = *(*Vec6)(b[9:15])
		w.A[i] = *(*Vec6)(b[15:21])
	}
}

// ForwardDynamics allocates a workspace and runs the ABA; see
// Workspace.ForwardDynamics.
func (m *Model) ForwardDynamics(q, qd, tau, qdd []float64) {
	NewWorkspace(m).ForwardDynamics(q, qd, tau, qdd)
}

// InverseDynamics allocates a workspace and runs the RNEA; see
// Workspace.InverseDynamics.
func (m *Model) InverseDynamics(q, qd, qdd, tau []float64) {
	NewWorkspace(m).InverseDynamics(q, qd, qdd, tau)
}

// MassMatrix allocates a workspace and runs the CRBA; see
// Workspace.MassMatrix.
func (m *Model) MassMatrix(q, h []float64) { NewWorkspace(m).MassMatrix(q, h) }
