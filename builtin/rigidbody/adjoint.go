package rigidbody

import "fmt"

// Adjoint computes the reverse-mode quantities of the equations of motion
// H(q;π) q̈ + C(q, q̇;π) = τ from the forward quantities a Workspace kept,
// without allocating: a solve with H (SolveMass) and the gradient of a
// weighted inverse dynamics with respect to the inertial parameters π of
// every body (AddInertiaVJP). Together they give the exact vector–Jacobian
// product of forward dynamics with respect to π: with q̈ = ABA(q, q̇, τ;π)
// and w = H⁻¹u,
//
//	uᵀ ∂q̈/∂π = −wᵀ ∂RNEA(q, q̇, q̈;π)/∂π   (q̈ held at its value)
//
// (implicit differentiation of RNEA(q, q̇, q̈;π) = τ, ∂RNEA/∂q̈ = H). An
// Adjoint belongs to one goroutine, like its Workspace.
type Adjoint struct {
	W *Workspace

	// Skip, if set (one entry per body), marks the bodies whose gradient
	// AddInertiaVJP need not compute.
	Skip []bool

	lam []Vec6 // λ_i: virtual velocity of body i for joint rates w (also SolveMass's accelerations)
	p   []Vec6 // SolveMass: articulated bias forces
}

// NewAdjoint allocates an adjoint for workspace w.
func NewAdjoint(w *Workspace) *Adjoint {
	n := len(w.X)
	return &Adjoint{W: w, lam: make([]Vec6, n), p: make([]Vec6, n)}
}

// SolveMass writes x = H(q)⁻¹ b, for the q and the bodies of the last
// Workspace.ForwardDynamics call, by reusing that call's articulated-body
// factorisation (X_i, U_i = I^A_i S_i, D_i): the ABA with q̇ = 0, no
// gravity and joint forces b, i.e. passes 2 and 3 of RBDA Table 7.1 with
// c_i = 0 and p^A_i = 0, which computes H⁻¹b (RBDA §7.3). Costs O(n)
// 6-vector operations, no kinematics and no 6×6 products. x may alias b.
// Its pass 3 computes a_i = X_i a_λ(i) + S_i x_i, which are the λ_i of
// AddInertiaVJP for w = x: AddSolvedInertiaVJP uses them.
func (ad *Adjoint) SolveMass(b, x []float64) {
	w := ad.W
	m := w.M
	m.checkLen("b", b)
	m.checkLen("x", x)
	n := len(m.Bodies)
	if len(ad.p) != n {
		panic(fmt.Sprintf("rigidbody: adjoint for %d bodies used with a model of %d", len(ad.p), n))
	}
	p, a := ad.p, ad.lam
	for i := range p {
		p[i] = Vec6{}
	}
	// u_i is kept in x (x_i is read before written in pass 3).
	for i := n - 1; i >= 0; i-- {
		ax := &w.S[i]
		pi := &p[i]
		u := b[i] - (ax[0]*pi[0] + ax[1]*pi[1] + ax[2]*pi[2])
		x[i] = u
		if par := m.Bodies[i].Parent; par >= 0 {
			uD := u / w.D[i]
			U := &w.U[i]
			pa := Vec6{pi[0] + U[0]*uD, pi[1] + U[1]*uD, pi[2] + U[2]*uD, pi[3] + U[3]*uD, pi[4] + U[4]*uD, pi[5] + U[5]*uD}
			add6(&p[par], w.X[i].tApplyForce(&pa))
		}
	}
	for i := 0; i < n; i++ {
		var ai Vec6
		if par := m.Bodies[i].Parent; par >= 0 {
			ai = w.X[i].apply(&a[par])
		}
		U := &w.U[i]
		xi := (x[i] - (U[0]*ai[0] + U[1]*ai[1] + U[2]*ai[2] + U[3]*ai[3] + U[4]*ai[4] + U[5]*ai[5])) / w.D[i]
		x[i] = xi
		ax := &w.S[i]
		ai[0] += ax[0] * xi
		ai[1] += ax[1] * xi
		ai[2] += ax[2] * xi
		a[i] = ai
	}
}

// InertialGrad is the gradient of a scalar with respect to one body's
// inertial parameters as Body holds them: Mass, COM (3) and the nine
// entries of Inertia (the rotational inertia about the COM), each entry
// taken as independent. A parameterisation by the six distinct entries of
// a symmetric I_C sums the two off-diagonal partners (∂/∂I_xy =
// Inertia[0][1] + Inertia[1][0]).
type InertialGrad struct {
	Mass    float64
	COM     Vec3
	Inertia Mat3
}

// Add returns g + h.
func (g InertialGrad) Add(h InertialGrad) InertialGrad {
	return InertialGrad{Mass: g.Mass + h.Mass, COM: g.COM.Add(h.COM), Inertia: g.Inertia.Add(h.Inertia)}
}

// Scale returns s·g.
func (g InertialGrad) Scale(s float64) InertialGrad {
	return InertialGrad{Mass: s * g.Mass, COM: g.COM.Scale(s), Inertia: g.Inertia.Scale(s)}
}

// addBilinear adds to g the gradient of xᵀ I(m, c, I_C) y with respect to
// (m, c, I_C), using the identity (RBDA Eq. 2.63 expanded)
//
//	xᵀ I y = x_ωᵀ I_C y_ω + m·(x_v + x_ω×c)·(y_v + y_ω×c),
//
// the point velocities at the COM being x_v + x_ω×c: so ∂/∂m = X·Y,
// ∂/∂c = m·(Y×x_ω + X×y_ω), ∂/∂I_C = x_ω y_ωᵀ, with X = x_v + x_ω×c,
// Y = y_v + y_ω×c.
func addBilinear(g *InertialGrad, mass float64, c Vec3, x, y *Vec6) {
	// X = x_v + x_ω×c, Y = y_v + y_ω×c
	X0 := x[3] + (x[1]*c[2] - x[2]*c[1])
	X1 := x[4] + (x[2]*c[0] - x[0]*c[2])
	X2 := x[5] + (x[0]*c[1] - x[1]*c[0])
	Y0 := y[3] + (y[1]*c[2] - y[2]*c[1])
	Y1 := y[4] + (y[2]*c[0] - y[0]*c[2])
	Y2 := y[5] + (y[0]*c[1] - y[1]*c[0])
	g.Mass += X0*Y0 + X1*Y1 + X2*Y2
	// m·(Y×x_ω + X×y_ω)
	g.COM[0] += mass * ((Y1*x[2] - Y2*x[1]) + (X1*y[2] - X2*y[1]))
	g.COM[1] += mass * ((Y2*x[0] - Y0*x[2]) + (X2*y[0] - X0*y[2]))
	g.COM[2] += mass * ((Y0*x[1] - Y1*x[0]) + (X0*y[1] - X1*y[0]))
	for r := 0; r < 3; r++ {
		xr := x[r]
		g.Inertia[r][0] += xr * y[0]
		g.Inertia[r][1] += xr * y[1]
		g.Inertia[r][2] += xr * y[2]
	}
}

// AddInertiaVJP adds to g[i], for every body i, the gradient of wᵀτ with
// respect to body i's inertial parameters, where τ = RNEA(q, q̇, q̈;π) is
// evaluated at the body velocities V and accelerations A (gravity
// included) that the last ForwardDynamics or InverseDynamics call of the
// Workspace left, i.e. at that call's q, q̇ and q̈ held fixed. The RNEA
// body force f_i = I_i a_i + v_i ×* I_i v_i is linear in I_i and
// wᵀτ = Σ_i λ_iᵀ f_i with λ_i = X_i λ_λ(i) + S_i w_i (the body velocities
// for joint rates w), so with v ×* = −(v ×m)ᵀ
//
//	∂(wᵀτ)/∂π_i = ∂/∂π_i [λ_iᵀ I_i a_i − (v_i ×m λ_i)ᵀ I_i v_i].
//
// g has one entry per body. With Skip set, the bodies i with Skip[i]
// (e.g. massless, or not identified) get no gradient, which saves their
// two bilinear forms; their λ is still propagated.
func (ad *Adjoint) AddInertiaVJP(w []float64, g []InertialGrad) {
	ws := ad.W
	m := ws.M
	m.checkLen("w", w)
	if len(g) != len(m.Bodies) || len(ad.lam) != len(m.Bodies) {
		panic(fmt.Sprintf("rigidbody: %d gradients / adjoint for %d bodies, model has %d", len(g), len(ad.lam), len(m.Bodies)))
	}
	for i := range m.Bodies {
		ax := &ws.S[i]
		wi := w[i]
		var l Vec6
		if p := m.Bodies[i].Parent; p >= 0 {
			l = ws.X[i].apply(&ad.lam[p])
		}
		l[0] += ax[0] * wi
		l[1] += ax[1] * wi
		l[2] += ax[2] * wi
		ad.lam[i] = l
	}
	ad.addInertia(g)
}

// AddSolvedInertiaVJP is AddInertiaVJP(x, g) for the x of the last
// SolveMass(b, x), whose accelerations are the λ_i that AddInertiaVJP
// computes, so that recursion is skipped; the result is the same, bit for
// bit. Nothing may use the Adjoint in between.
func (ad *Adjoint) AddSolvedInertiaVJP(g []InertialGrad) {
	if len(g) != len(ad.W.M.Bodies) || len(ad.lam) != len(ad.W.M.Bodies) {
		panic(fmt.Sprintf("rigidbody: %d gradients / adjoint for %d bodies, model has %d", len(g), len(ad.lam), len(ad.W.M.Bodies)))
	}
	ad.addInertia(g)
}

// addInertia adds to g the bilinear forms of AddInertiaVJP at the λ in
// ad.lam.
func (ad *Adjoint) addInertia(g []InertialGrad) {
	ws := ad.W
	m := ws.M
	for i := range m.Bodies {
		if ad.Skip != nil && ad.Skip[i] {
			continue
		}
		b := &m.Bodies[i]
		l := &ad.lam[i]
		addBilinear(&g[i], b.Mass, b.COM, l, &ws.A[i])
		// μ = −(v ×m λ) = λ ×m v
		v := &ws.V[i]
		mu := Vec6{
			l[1]*v[2] - l[2]*v[1], l[2]*v[0] - l[0]*v[2], l[0]*v[1] - l[1]*v[0],
			(l[1]*v[5] - l[2]*v[4]) + (l[4]*v[2] - l[5]*v[1]),
			(l[2]*v[3] - l[0]*v[5]) + (l[5]*v[0] - l[3]*v[2]),
			(l[0]*v[4] - l[1]*v[3]) + (l[3]*v[1] - l[4]*v[0]),
		}
		addBilinear(&g[i], b.Mass, b.COM, &mu, v)
	}
}
