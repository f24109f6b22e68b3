package rigidbody

import (
	"math/rand/v2"
	"testing"
)

// randSym6 is a random symmetric 6×6 inertia with entries O(1): an
// articulated inertia is symmetric but has no rigid-body structure.
func randSym6(r *rand.Rand) Inertia6 {
	var I Inertia6
	for k := range I.A {
		I.A[k] = 2*r.Float64() - 1
		I.C[k] = 2*r.Float64() - 1
	}
	for i := 0; i < 3; i++ {
		I.B[i] = randVec3(r, 1)
	}
	return I
}

// The structured kernels of Inertia6 equal the dense 6×6 operations they
// replace, to algebraTol, on random symmetric inertias, transforms (also
// pure rotations, which skip the translation) and vectors: RigidInertia
// against SpatialInertia, MulVec, MulAng, SubOuter, Add and Congruence
// against CongruenceInertia (two dense 6×6 products).
func TestInertia6MatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for k := 0; k < 200; k++ {
		b := randBody(r, -1)
		rig := RigidInertia(b.Mass, b.COM, b.Inertia)
		if got, want := rig.Mat6(), SpatialInertia(b.Mass, b.COM, b.Inertia); !close66(&got, &want, algebraTol) {
			t.Fatalf("RigidInertia %v\nwant %v", got, want)
		}
		I := randSym6(r)
		M := I.Mat6()
		v := randVec6(r)
		if got, want := I.MulVec(v), M.MulVec(v); !close6(got, want, algebraTol) {
			t.Fatalf("MulVec %v, want %v", got, want)
		}
		a := randVec3(r, 1)
		if got, want := I.MulAng(a), M.MulVec(V6(a, Vec3{})); !close6(got, want, algebraTol) {
			t.Fatalf("MulAng %v, want %v", got, want)
		}
		X := randTransform(r)
		if k%4 == 0 {
			X.R = Vec3{}
		}
		got, want := X.Congruence(&I), X.CongruenceInertia(&M)
		if g := got.Mat6(); !close66(&g, &want, algebraTol) {
			t.Fatalf("Congruence (r = %v) %v\nwant %v", X.R, g, want)
		}
		J := I
		J.SubOuter(0.7, v)
		M.AddOuter(-0.7, v, v)
		if g := J.Mat6(); !close66(&g, &M, algebraTol) {
			t.Fatalf("SubOuter %v\nwant %v", g, M)
		}
		J.Add(&I)
		N := I.Mat6()
		M.AddTo(&N)
		if g := J.Mat6(); !close66(&g, &M, algebraTol) {
			t.Fatalf("Add %v\nwant %v", g, M)
		}
	}
}

// Save and Load: after Load of a saved ForwardDynamics state, in a fresh
// workspace of the same model that has run other states since, SolveMass
// and AddInertiaVJP give the same numbers, bit for bit, as right after
// that ForwardDynamics call (random branched trees); AddSolvedInertiaVJP
// after SolveMass equals AddInertiaVJP bit for bit.
func TestSaveLoadAdjointIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for trial := 0; trial < 50; trial++ {
		m := randTree(r, 5)
		n := m.NDoF()
		w, w2 := NewWorkspace(m), NewWorkspace(m)
		ad, ad2 := NewAdjoint(w), NewAdjoint(w2)
		q, qd, tau := randState(r, n, 3), randState(r, n, 3), randState(r, n, 20)
		qdd := make([]float64, n)
		w.ForwardDynamics(q, qd, tau, qdd)
		tape := make([]float64, w.TapeLen())
		w.Save(tape)
		u := randState(r, n, 2)
		x, x2 := make([]float64, n), make([]float64, n)
		g, g2 := make([]InertialGrad, n), make([]InertialGrad, n)
		ad.SolveMass(u, x)
		ad.AddInertiaVJP(x, g)
		gs := make([]InertialGrad, n) // AddSolvedInertiaVJP: the same, bit for bit
		ad.SolveMass(u, x)
		ad.AddSolvedInertiaVJP(gs)
		for i := range g {
			if g[i] != gs[i] {
				t.Fatalf("trial %d body %d: AddSolvedInertiaVJP %v, AddInertiaVJP %v", trial, i, gs[i], g[i])
			}
		}

		w2.ForwardDynamics(randState(r, n, 3), randState(r, n, 3), tau, make([]float64, n))
		w2.Load(tape)
		ad2.SolveMass(u, x2)
		ad2.AddInertiaVJP(x2, g2)
		for i := range x {
			if x[i] != x2[i] || g[i] != g2[i] {
				t.Fatalf("trial %d body %d: after Load x %v g %v, want %v %v", trial, i, x2[i], g2[i], x[i], g[i])
			}
		}
	}
}

// A body changed between calls is seen: the cache of body-only quantities
// is rebuilt (mass, inertia, axis and placement each changed in turn).
func TestWorkspaceSeesBodyChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	m := randTree(r, 4)
	w := NewWorkspace(m)
	q, qd, tau := randState(r, 4, 2), randState(r, 4, 2), randState(r, 4, 5)
	got, want := make([]float64, 4), make([]float64, 4)
	w.ForwardDynamics(q, qd, tau, got)
	for k, change := range []func(b *Body){
		func(b *Body) { b.Mass *= 1.5 },
		func(b *Body) { b.Inertia[0][1] += 0.01; b.Inertia[1][0] += 0.01 },
		func(b *Body) { b.COM[2] += 0.05 },
		func(b *Body) { b.Axis = randUnit(r) },
		func(b *Body) { b.XTree = randTransform(r) },
	} {
		change(&m.Bodies[2])
		w.ForwardDynamics(q, qd, tau, got)
		NewWorkspace(m).ForwardDynamics(q, qd, tau, want)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("change %d: q̈ %v with the old workspace, %v with a new one", k, got, want)
			}
		}
	}
}

// Hold skips the check until the next Hold: a body changed while held is
// not seen, then is after Hold (and after Release).
func TestHold(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	m := randTree(r, 3)
	w := NewWorkspace(m)
	q, qd, tau := randState(r, 3, 2), randState(r, 3, 2), randState(r, 3, 5)
	before, got, want := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	w.Hold()
	w.ForwardDynamics(q, qd, tau, before)
	m.Bodies[1].Mass *= 2
	NewWorkspace(m).ForwardDynamics(q, qd, tau, want)
	w.ForwardDynamics(q, qd, tau, got)
	if got[0] != before[0] || got[1] != before[1] || got[2] != before[2] {
		t.Fatalf("held: %v, want the old bodies' %v", got, before)
	}
	w.Hold()
	w.ForwardDynamics(q, qd, tau, got)
	if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("after Hold: %v, want %v", got, want)
	}
	w.Release()
	m.Bodies[1].Mass /= 2
	w.ForwardDynamics(q, qd, tau, got)
	if got[0] != before[0] || got[1] != before[1] || got[2] != before[2] {
		t.Fatalf("after Release: %v, want %v", got, before)
	}
}
