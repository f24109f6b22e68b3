package rigidbody

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const (
	rbdlTol   = 1e-12 // RBDL known answers (REFERENCES.md: "Tolerance 1e-12 is realistic")
	crossTol  = 1e-10 // ABA vs CRBA solve, and RNEA(ABA(τ)) = τ, relative to the largest entry
	energyTol = 1e-7  // power balance against central differences of the energy, h = 1e-5
	kinTol    = 1e-12 // closed-form kinematics
)

var rbdlGravity = Vec3{0, -9.81, 0}

// link is RBDL's Body(mass, com, (Ixx, Iyy, Izz)) on a revolute joint about
// z placed at p in its parent (RBDL's Xtrans(p)); RBDL uses the three
// numbers directly as the diagonal inertia about the COM.
func link(parent int, p, com, I Vec3) Body {
	return Body{Parent: parent, XTree: Xlt(p), Axis: Vec3{0, 0, 1}, Mass: 1, COM: com, Inertia: Diag3(I)}
}

// RBDL's forward-dynamics tests (tests/DynamicsTests.cc: single chain,
// spatial-inertia single chain, double and triple chain), as listed in
// docs/REFERENCES.md, at q = q̇ = τ = 0 under gravity (0, −9.81, 0).
func TestRBDLKnownAnswers(t *testing.T) {
	unit := Vec3{1, 1, 1}
	x := Vec3{1, 0, 0}
	cases := []struct {
		name   string
		bodies []Body
		want   []float64
	}{
		{"single chain", []Body{link(-1, Vec3{}, x, unit)}, []float64{-4.905}},
		{"spatial inertia single chain", []Body{link(-1, Vec3{}, Vec3{1.5, 1, 1}, Vec3{1, 2, 3})}, []float64{-2.3544}},
		{"double chain", []Body{link(-1, Vec3{}, x, unit), link(0, x, x, unit)}, []float64{-5.886, 3.924}},
		{"triple chain", []Body{link(-1, Vec3{}, x, unit), link(0, x, x, unit), link(1, x, x, unit)},
			[]float64{-6.03692307692308, 3.77307692307692, 1.50923076923077}},
	}
	for _, c := range cases {
		m := &Model{Bodies: c.bodies, Gravity: rbdlGravity}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		n := m.NDoF()
		zero := make([]float64, n)
		qdd := make([]float64, n)
		m.ForwardDynamics(zero, zero, zero, qdd)
		for i := range qdd {
			if math.Abs(qdd[i]-c.want[i]) > rbdlTol {
				t.Errorf("%s: q̈[%d] = %.15g, want %.15g (diff %.2g)", c.name, i, qdd[i], c.want[i], qdd[i]-c.want[i])
			}
		}
	}
}

// randBody draws a physically consistent body: mass in [0.5, 3] kg, COM in
// a 0.3 m cube, I_C = tr(Σ)·1 − Σ with Σ = LLᵀ + c·1 (Diff-MSM Eq. 5–7).
func randBody(r *rand.Rand, parent int) Body {
	var L Mat3
	for i := 0; i < 3; i++ {
		for j := 0; j <= i; j++ {
			L[i][j] = 0.3 * (2*r.Float64() - 1)
		}
	}
	S := L.Mul(L.T()).Add(Identity3.Scale(0.01))
	I := Identity3.Scale(S[0][0] + S[1][1] + S[2][2]).Add(S.Scale(-1))
	return Body{
		Parent: parent, XTree: randTransform(r), Axis: randUnit(r),
		Mass: 0.5 + 2.5*r.Float64(), COM: randVec3(r, 0.3), Inertia: I,
	}
}

// randTree is a random n-body tree (parents drawn among earlier bodies or
// the world, so it branches), with gravity of magnitude 9.81.
func randTree(r *rand.Rand, n int) *Model {
	m := &Model{Gravity: randUnit(r).Scale(9.81)}
	for i := 0; i < n; i++ {
		m.Bodies = append(m.Bodies, randBody(r, r.IntN(i+1)-1))
	}
	return m
}

func randState(r *rand.Rand, n int, s float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = s * (2*r.Float64() - 1)
	}
	return v
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// ABA against the CRBA + RNEA route M q̈ = τ − C (Cholesky solve), and
// RNEA(ABA(τ)) = τ, on random states of random 5-DoF trees. The branching
// is checked to happen.
func TestABAMatchesCRBAAndRNEA(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	branched := false
	for trial := 0; trial < 200; trial++ {
		m := randTree(r, 5)
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		for i, b := range m.Bodies {
			branched = branched || (i > 0 && b.Parent != i-1)
		}
		n := m.NDoF()
		w := NewWorkspace(m)
		q, qd, tau := randState(r, n, math.Pi), randState(r, n, 3), randState(r, n, 20)
		qdd := make([]float64, n)
		w.ForwardDynamics(q, qd, tau, qdd)

		h := make([]float64, n*n)
		w.MassMatrix(q, h)
		c := make([]float64, n)
		w.BiasForces(q, qd, c)
		rhs := make([]float64, n)
		for i := range rhs {
			rhs[i] = tau[i] - c[i]
		}
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(n, h)) {
			t.Fatalf("trial %d: mass matrix not positive definite", trial)
		}
		var x mat.VecDense
		if err := ch.SolveVecTo(&x, mat.NewVecDense(n, rhs)); err != nil {
			t.Fatal(err)
		}
		scale := math.Max(1, maxAbs(qdd))
		for i := 0; i < n; i++ {
			if d := math.Abs(qdd[i] - x.AtVec(i)); d > crossTol*scale {
				t.Errorf("trial %d: q̈[%d] ABA %.15g, CRBA %.15g (diff %.2g)", trial, i, qdd[i], x.AtVec(i), d)
			}
		}

		back := make([]float64, n)
		w.InverseDynamics(q, qd, qdd, back)
		scale = math.Max(1, maxAbs(tau))
		for i := range back {
			if d := math.Abs(back[i] - tau[i]); d > crossTol*scale {
				t.Errorf("trial %d: RNEA(ABA(τ))[%d] = %.15g, τ = %.15g", trial, i, back[i], tau[i])
			}
		}
	}
	if !branched {
		t.Error("no random tree branched")
	}
}

// CRBA column j equals RNEA(q, 0, e_j) − RNEA(q, 0, 0), and is symmetric.
func TestMassMatrixColumnsFromRNEA(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	m := randTree(r, 5)
	n := m.NDoF()
	w := NewWorkspace(m)
	q := randState(r, n, math.Pi)
	zero := make([]float64, n)
	h := make([]float64, n*n)
	w.MassMatrix(q, h)
	g := make([]float64, n)
	w.InverseDynamics(q, zero, zero, g)
	col := make([]float64, n)
	for j := 0; j < n; j++ {
		e := make([]float64, n)
		e[j] = 1
		w.InverseDynamics(q, zero, e, col)
		for i := 0; i < n; i++ {
			if d := math.Abs(col[i] - g[i] - h[i*n+j]); d > crossTol*math.Max(1, math.Abs(h[i*n+j])) {
				t.Errorf("H[%d][%d] = %g, RNEA gives %g", i, j, h[i*n+j], col[i]-g[i])
			}
			if h[i*n+j] != h[j*n+i] {
				t.Errorf("H not symmetric at %d,%d", i, j)
			}
		}
	}
}

// energy returns kinetic (Σ ½ v_iᵀ I_i v_i, from the body velocities, not
// the CRBA) plus potential (−Σ m_i g·c_i, from forward kinematics) energy.
func energy(w *Workspace, q, qd []float64) (kin, pot float64) {
	V := w.Velocities(q, qd)
	for i, b := range w.M.Bodies {
		I := SpatialInertia(b.Mass, b.COM, b.Inertia)
		kin += 0.5 * V[i].Dot(I.MulVec(V[i]))
		c := w.X0[i].InvApplyPoint(b.COM)
		pot -= b.Mass * w.M.Gravity.Dot(c)
	}
	return kin, pot
}

// Power balance along the ABA motion: d/dt(T + U) = q̇ᵀτ, with the time
// derivative taken by central differences of the energy along
// (q, q̇) ± h(q̇, q̈). This tests the velocity-product and gravity terms of
// ABA against kinematics alone. Also ½ q̇ᵀ H q̇ = T.
func TestPowerBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 20; trial++ {
		m := randTree(r, 5)
		n := m.NDoF()
		w := NewWorkspace(m)
		q, qd, tau := randState(r, n, math.Pi), randState(r, n, 2), randState(r, n, 10)
		qdd := make([]float64, n)
		w.ForwardDynamics(q, qd, tau, qdd)
		const h = 1e-5
		step := func(s float64) float64 {
			qq, vv := make([]float64, n), make([]float64, n)
			for i := range qq {
				qq[i] = q[i] + s*h*qd[i]
				vv[i] = qd[i] + s*h*qdd[i]
			}
			k, p := energy(w, qq, vv)
			return k + p
		}
		dEdt := (step(1) - step(-1)) / (2 * h)
		power := 0.0
		for i := range tau {
			power += qd[i] * tau[i]
		}
		if math.Abs(dEdt-power) > energyTol*math.Max(1, math.Abs(power)) {
			t.Errorf("trial %d: dE/dt %.10g, q̇ᵀτ %.10g", trial, dEdt, power)
		}

		kin, _ := energy(w, q, qd)
		H := make([]float64, n*n)
		w.MassMatrix(q, H)
		quad := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				quad += 0.5 * qd[i] * H[i*n+j] * qd[j]
			}
		}
		if math.Abs(quad-kin) > kinTol*math.Max(1, kin)*10 {
			t.Errorf("trial %d: ½q̇ᵀHq̇ %.15g, Σ½vᵀIv %.15g", trial, quad, kin)
		}
	}
}

// Planar two-link arm (RBDL's double chain geometry): the tip (1, 0, 0) of
// link 2 is at (cos q1 + cos(q1+q2), sin q1 + sin(q1+q2), 0); a joint about
// y turns the body z axis to (sin q, 0, cos q); holding a pendulum of COM
// (l, 0, 0) against gravity −9.81 ŷ takes τ = m g l cos q.
func TestKinematicsAndStatics(t *testing.T) {
	m := &Model{Bodies: []Body{
		link(-1, Vec3{}, Vec3{1, 0, 0}, Vec3{1, 1, 1}),
		link(0, Vec3{1, 0, 0}, Vec3{1, 0, 0}, Vec3{1, 1, 1}),
	}, Gravity: rbdlGravity}
	q1, q2 := 0.4, -1.1
	X0 := NewWorkspace(m).ForwardKinematics([]float64{q1, q2})
	tip := X0[1].InvApplyPoint(Vec3{1, 0, 0})
	want := Vec3{math.Cos(q1) + math.Cos(q1+q2), math.Sin(q1) + math.Sin(q1+q2), 0}
	if tip.Sub(want).Norm() > kinTol {
		t.Errorf("tip %v, want %v", tip, want)
	}

	y := &Model{Bodies: []Body{{Parent: -1, XTree: Identity, Axis: Vec3{0, 1, 0}, Mass: 1, Inertia: Identity3}}}
	q := 0.3
	if p := NewWorkspace(y).ForwardKinematics([]float64{q})[0].InvApplyPoint(Vec3{0, 0, 1}); p.Sub(Vec3{math.Sin(q), 0, math.Cos(q)}).Norm() > kinTol {
		t.Errorf("y-axis joint: %v", p)
	}

	pend := &Model{Bodies: []Body{link(-1, Vec3{}, Vec3{0.7, 0, 0}, Vec3{0.1, 0.1, 0.1})}, Gravity: rbdlGravity}
	pend.Bodies[0].Mass = 2
	tau := []float64{0}
	for _, q := range []float64{0, 0.5, 1.2, 2.5} {
		pend.InverseDynamics([]float64{q}, []float64{0}, []float64{0}, tau)
		if want := 2 * 9.81 * 0.7 * math.Cos(q); math.Abs(tau[0]-want) > kinTol*10 {
			t.Errorf("q %g: holding torque %.15g, want %.15g", q, tau[0], want)
		}
	}
}

func TestValidateNamesBody(t *testing.T) {
	bad := []struct {
		edit func(*Body)
		want string
	}{
		{func(b *Body) { b.Parent = 1 }, "parent"},
		{func(b *Body) { b.Axis = Vec3{0, 0, 2} }, "axis"},
		{func(b *Body) { b.Mass = 0 }, "mass"},
		{func(b *Body) { b.Inertia = Diag3(Vec3{1, 1, 3}) }, "triangle"},
		{func(b *Body) { b.Inertia = Diag3(Vec3{1, -1, 1}) }, "semi-definite"},
		{func(b *Body) { b.Inertia[0][1] = 0.1 }, "symmetric"},
		{func(b *Body) { b.XTree.E[0][0] = 2 }, "orthonormal"},
	}
	for _, c := range bad {
		m := &Model{Bodies: []Body{
			link(-1, Vec3{}, Vec3{1, 0, 0}, Vec3{1, 1, 1}),
			link(0, Vec3{1, 0, 0}, Vec3{1, 0, 0}, Vec3{1, 1, 1}),
		}}
		m.Bodies[1].Name = "ulna"
		c.edit(&m.Bodies[1])
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), "ulna") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want error naming ulna and %q, got %v", c.want, err)
		}
	}
}

// The workspace path allocates nothing.
func TestForwardDynamicsAllocs(t *testing.T) {
	m := chain5()
	w := NewWorkspace(m)
	q, qd, tau, qdd := make([]float64, 5), make([]float64, 5), make([]float64, 5), make([]float64, 5)
	if a := testing.AllocsPerRun(100, func() { w.ForwardDynamics(q, qd, tau, qdd) }); a != 0 {
		t.Errorf("%v allocations per ABA", a)
	}
}

// chain5 is a 5-DoF serial chain with arm-like proportions: MyoArm's
// humerus, ulna and radius masses (REFERENCES.md), three shoulder joints
// about z, x, y at the origin, an elbow about z 0.29 m down and a forearm
// rotation about y.
func chain5() *Model {
	small := Diag3(Vec3{1e-4, 1e-4, 1e-4})
	hum := Diag3(Vec3{0.0128576, 0.0121576, 0.00239265})
	uln := Diag3(Vec3{0.00543663, 0.00523521, 0.001})
	rad := Diag3(Vec3{0.001, 0.001, 0.001})
	return &Model{Gravity: Vec3{0, 0, -9.81}, Bodies: []Body{
		{Parent: -1, XTree: Identity, Axis: Vec3{0, 0, 1}, Mass: 0.1, Inertia: small},
		{Parent: 0, XTree: Identity, Axis: Vec3{1, 0, 0}, Mass: 0.1, Inertia: small},
		{Parent: 1, XTree: Identity, Axis: Vec3{0, 1, 0}, Mass: 1.99757, COM: Vec3{0, -0.16, 0}, Inertia: hum},
		{Parent: 2, XTree: Xlt(Vec3{0.0061, -0.2904, -0.0123}), Axis: Vec3{0, 0, 1}, Mass: 1.1053, COM: Vec3{0, -0.12, 0}, Inertia: uln},
		{Parent: 3, XTree: Identity, Axis: Vec3{0, 1, 0}, Mass: 0.23359, COM: Vec3{0.02, -0.12, 0}, Inertia: rad},
	}}
}

func BenchmarkABA5(b *testing.B) {
	m := chain5()
	w := NewWorkspace(m)
	q := []float64{0.3, -0.2, 0.5, 1.1, 0.4}
	qd := []float64{0.5, -1, 0.7, 2, -0.3}
	tau := []float64{1, -2, 0.5, 3, 0.1}
	qdd := make([]float64, 5)
	b.ReportAllocs()
	for b.Loop() {
		w.ForwardDynamics(q, qd, tau, qdd)
	}
}

func BenchmarkRNEA5(b *testing.B) {
	m := chain5()
	w := NewWorkspace(m)
	q := []float64{0.3, -0.2, 0.5, 1.1, 0.4}
	qd := []float64{0.5, -1, 0.7, 2, -0.3}
	qdd := []float64{1, -2, 0.5, 3, 0.1}
	tau := make([]float64, 5)
	b.ReportAllocs()
	for b.Loop() {
		w.InverseDynamics(q, qd, qdd, tau)
	}
}

func BenchmarkCRBA5(b *testing.B) {
	m := chain5()
	w := NewWorkspace(m)
	q := []float64{0.3, -0.2, 0.5, 1.1, 0.4}
	h := make([]float64, 25)
	b.ReportAllocs()
	for b.Loop() {
		w.MassMatrix(q, h)
	}
}
