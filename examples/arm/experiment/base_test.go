package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kinfer/kinfer/builtin/models/arm"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// The number of base coefficients of the arm's skeleton, by the classical
// counting rules (Khalil and Dombre, "Modeling, Identification and Control
// of Robots", §9.5): the humerus turns about three intersecting shoulder
// axes through a fixed point, so its mass alone never acts (only m·c and
// I about the origin do): 9; the ulna and the radius hang on one revolute
// joint each, which regroups their mass, their first moment along the
// axis and one moment of inertia onto the parent: 7 each. 9 + 7 + 7 = 23
// (the paper's MyoArm skeleton has 17; its shoulder is not ours).
func TestBaseCount(t *testing.T) {
	b, err := NewBase()
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Kept) != 23 {
		t.Fatalf("%d base coefficients, want 23; |R_jj| = %.3g", len(b.Kept), b.RDiag)
	}
	for _, name := range []string{"humerus.m", "ulna.m", "radius.m"} {
		for _, j := range b.Kept {
			if stdName(j) == name {
				t.Errorf("%s is a base coefficient; a mass on a revolute or spherical joint regroups onto its parent", name)
			}
		}
	}
	if e := b.BaseErrors(truth); maxAbs(e) != 0 {
		t.Errorf("errors at the truth %v, want 0", e)
	}
}

// bonesFromStandard inverts rigidbody.Standard: c = h/m, I_C = I_O − m·c×c×ᵀ.
func bonesFromStandard(phi []float64, pi []float64) {
	for i := 0; i < arm.NBones; i++ {
		s := phi[i*rb.StandardParams:]
		m := s[0]
		c := rb.Vec3{s[1] / m, s[2] / m, s[3] / m}
		cx := rb.Skew(c)
		I := rb.Mat3{{s[4], s[7], s[8]}, {s[7], s[5], s[9]}, {s[8], s[9], s[6]}}.Add(cx.Mul(cx.T()).Scale(-m))
		v := pi[i*arm.BoneParams:]
		v[0], v[1], v[2], v[3] = m, c[0], c[1], c[2]
		v[4], v[5], v[6], v[7], v[8], v[9] = I[0][0], I[1][1], I[2][2], I[0][1], I[0][2], I[1][2]
	}
}

// The coefficients determine the dynamics: bone parameters changed along
// the regrouping (each dependent standard parameter moved by 3 % of the
// bone's mass scale, the kept ones by −K·Δ, so that β is unchanged) give
// the arm's model (arm.Evaluator: muscles, ABA) the same q̈ at random
// states, although all three bones' masses, COMs and inertias differ.
// Tolerance 1e-9 relative to |q̈|. Control: the same change without the
// compensation moves q̈ by far more.
func TestBaseDeterminesDynamics(t *testing.T) {
	b, err := NewBase()
	if err != nil {
		t.Fatal(err)
	}
	phi := standard(truth)
	moved := append([]float64(nil), phi...)
	uncompensated := append([]float64(nil), phi...)
	r := rand.New(rand.NewPCG(3, 4))
	for c, d := range b.Dep {
		delta := 0.03 * (2*r.Float64() - 1) * math.Max(math.Abs(phi[d]), 1e-3*phi[d-d%rb.StandardParams])
		if d%rb.StandardParams == 0 {
			delta = 0.05 * phi[d] // a mass: 5 %
		}
		moved[d] += delta
		uncompensated[d] += delta
		for i, j := range b.Kept {
			moved[j] -= b.K.At(i, c) * delta
		}
	}
	if e := b.BaseErrors(standardInverse(t, moved)); maxAbs(e) > 1e-9 {
		t.Fatalf("β moved by %v %%, want 0", e)
	}
	piMoved, piUncomp := standardInverse(t, moved), standardInverse(t, uncompensated)
	for i := 0; i < arm.NBones*arm.BoneParams; i++ {
		if i%arm.BoneParams == 0 && piMoved[i] == truth[i] {
			t.Errorf("%s unchanged; the test should move every mass", params[i].Name)
		}
	}
	ref, mv, un := arm.NewEvaluator(0.5), arm.NewEvaluator(0.5), arm.NewEvaluator(0.5)
	for _, c := range []struct {
		e  *arm.Evaluator
		pi []float64
	}{{ref, truth}, {mv, piMoved}, {un, piUncomp}} {
		if st := c.e.SetTheta(c.pi); st != 0 {
			t.Fatalf("SetTheta: status %v (bones not physical)", st)
		}
	}
	q, qd, act := make([]float64, arm.NDoF), make([]float64, arm.NDoF), make([]float64, arm.NMuscles)
	a0, a1, a2 := make([]float64, arm.NDoF), make([]float64, arm.NDoF), make([]float64, arm.NDoF)
	worstUn := 0.0
	for s := 0; s < 50; s++ {
		for j := range q {
			q[j] = arm.Range[j][0] + (arm.Range[j][1]-arm.Range[j][0])*r.Float64()
			qd[j] = 2 * (2*r.Float64() - 1)
		}
		for m := range act {
			act[m] = r.Float64()
		}
		ref.Accel(q, qd, act, a0)
		mv.Accel(q, qd, act, a1)
		un.Accel(q, qd, act, a2)
		scale := maxAbs(a0)
		for j := range a0 {
			if d := math.Abs(a1[j] - a0[j]); d > 1e-9*scale {
				t.Fatalf("state %d joint %d: q̈ %.12g with the moved bones, %.12g at the truth", s, j, a1[j], a0[j])
			}
			worstUn = math.Max(worstUn, math.Abs(a2[j]-a0[j])/scale)
		}
	}
	if worstUn < 1e-3 {
		t.Errorf("without the compensation q̈ changes by at most %.2g relative; the control should move it", worstUn)
	}
}

func standardInverse(t *testing.T, phi []float64) []float64 {
	t.Helper()
	pi := append([]float64(nil), truth...)
	bonesFromStandard(phi, pi)
	return pi
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
