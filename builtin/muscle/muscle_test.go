package muscle

import (
	"math"
	"testing"
)

const (
	handTol = 1e-12 // hand-computed values of the REFERENCES.md formulas (a few roundings of decimal inputs)
	fdTol   = 1e-6  // relative, analytic derivative vs central finite difference
	fdStep  = 1e-6  // relative step of the central differences
	odeTol  = 1e-9  // RK4 (h = 1e-6 s) against the closed-form activation time
	jumpTol = 1e-7  // |f(x+ε) − f(x−ε)| across a piece boundary, ε = 1e-9, slope ≤ ~10
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// REFERENCES.md "Muscles" test values, which are MuJoCo's own unit test
// (test/engine/engine_util_misc_test.cc, MuscleGainLength, compared with
// EXPECT_EQ): lmin 0.5, lmax 1.5. They are exact in floating point.
func TestFLReferenceValues(t *testing.T) {
	Ls := []float64{0, 0.5, 0.75, 1, 1.25, 1.5, 2}
	want := []float64{0, 0, 0.5, 1, 0.5, 0, 0}
	for i, L := range Ls {
		if got, _ := FL(L, 0.5, 1.5); got != want[i] {
			t.Errorf("FL(%g) = %.17g, want %g", L, got, want[i])
		}
	}
}

// FV with fvmax 1.4 (MyoArm), y = 0.4, by hand from the REFERENCES.md
// pieces, at and between the piece boundaries V = −1, 0, y.
func TestFVHandValues(t *testing.T) {
	cases := []struct{ V, f, d float64 }{
		{-2, 0, 0},
		{-1, 0, 0},           // boundary: (V+1)² piece starts at 0 with slope 0
		{-0.5, 0.25, 1},      // (V+1)²
		{0, 1, 2},            // boundary: both pieces give 1, slope 2
		{0.2, 1.3, 1},        // 1.4 − 0.2²/0.4
		{0.4, 1.4, 0},        // boundary V = y: fvmax, slope 0
		{1, 1.4, 0},          // plateau
		{-0.25, 0.5625, 1.5}, // (0.75)²
	}
	for _, c := range cases {
		f, d := FV(c.V, 1.4)
		if !near(f, c.f, handTol) || !near(d, c.d, handTol) {
			t.Errorf("FV(%g) = %.15g, %.15g; want %g, %g", c.V, f, d, c.f, c.d)
		}
	}
}

// FP with lmax 1.8 (MyoArm), b = 1.4, by hand.
func TestFPHandValues(t *testing.T) {
	cases := []struct{ L, f, d float64 }{
		{0.5, 0, 0},
		{1, 0, 0},          // boundary L = 1
		{1.2, 0.125, 1.25}, // ½(0.2/0.4)², slope 0.5/0.4
		{1.4, 0.5, 2.5},    // boundary L = b: ½, slope 1/(b−1)
		{1.8, 1.5, 2.5},    // ½ + (1.8−1.4)/0.4: 1.5 at lmax
		{2.2, 2.5, 2.5},    // linear beyond
	}
	for _, c := range cases {
		f, d := FP(c.L, 1.8)
		if !near(f, c.f, handTol) || !near(d, c.d, handTol) {
			t.Errorf("FP(%g) = %.15g, %.15g; want %g, %g", c.L, f, d, c.f, c.d)
		}
	}
}

// FL with lmin 0.5, lmax 1.5 also at the slope boundaries: slope 1/(a−lmin)
// = 4 at a = 0.75, −4 at b = 1.25, 0 at 1.
func TestFLSlopes(t *testing.T) {
	cases := []struct{ L, d float64 }{{0.5, 0}, {0.75, 4}, {1, 0}, {1.25, -4}, {1.5, 0}, {0.625, 2}}
	for _, c := range cases {
		if _, d := FL(c.L, 0.5, 1.5); !near(d, c.d, handTol) {
			t.Errorf("FL'(%g) = %.15g, want %g", c.L, d, c.d)
		}
	}
}

// All three curves are C¹: value and slope agree on both sides of every
// piece boundary (MyoArm's lmin 0, lmax 1.8, fvmax 1.4 and MuJoCo's
// defaults lmin 0.5, lmax 1.6, fvmax 1.2).
func TestCurvesContinuous(t *testing.T) {
	const eps = 1e-9
	check := func(name string, f func(float64) (float64, float64), x float64) {
		fl, dl := f(x - eps)
		fr, dr := f(x + eps)
		if math.Abs(fl-fr) > jumpTol || math.Abs(dl-dr) > 1e3*jumpTol {
			t.Errorf("%s at %g: value %g | %g, slope %g | %g", name, x, fl, fr, dl, dr)
		}
	}
	for _, p := range []struct{ lmin, lmax, fvmax float64 }{{0, 1.8, 1.4}, {0.5, 1.6, 1.2}} {
		a, b := 0.5*(p.lmin+1), 0.5*(1+p.lmax)
		for _, x := range []float64{p.lmin, a, 1, b, p.lmax} {
			check("FL", func(L float64) (float64, float64) { return FL(L, p.lmin, p.lmax) }, x)
		}
		for _, x := range []float64{1, b} {
			check("FP", func(L float64) (float64, float64) { return FP(L, p.lmax) }, x)
		}
		for _, x := range []float64{-1, 0, p.fvmax - 1} {
			check("FV", func(V float64) (float64, float64) { return FV(V, p.fvmax) }, x)
		}
	}
}

// d/dx of FL, FV, FP against central differences on a grid that avoids
// the piece boundaries by more than 100 steps.
func TestCurveDerivativesMatchFiniteDifferences(t *testing.T) {
	const h = 1e-6
	fd := func(f func(float64) (float64, float64), x float64) (an, num float64) {
		_, an = f(x)
		fp, _ := f(x + h)
		fm, _ := f(x - h)
		return an, (fp - fm) / (2 * h)
	}
	for _, p := range []struct{ lmin, lmax, fvmax float64 }{{0, 1.8, 1.4}, {0.5, 1.6, 1.2}, {0.5, 1.5, 1.4}} {
		for x := -0.537; x < 2.6; x += 0.0173 {
			if an, num := fd(func(L float64) (float64, float64) { return FL(L, p.lmin, p.lmax) }, x); !near(an, num, fdTol) {
				t.Errorf("FL'(%g) lmin %g lmax %g: %g, fd %g", x, p.lmin, p.lmax, an, num)
			}
			if an, num := fd(func(L float64) (float64, float64) { return FP(L, p.lmax) }, x); !near(an, num, fdTol) {
				t.Errorf("FP'(%g) lmax %g: %g, fd %g", x, p.lmax, an, num)
			}
			V := 1.2*x - 1.5
			if an, num := fd(func(V float64) (float64, float64) { return FV(V, p.fvmax) }, V); !near(an, num, fdTol) {
				t.Errorf("FV'(%g) fvmax %g: %g, fd %g", V, p.fvmax, an, num)
			}
		}
	}
}

// A whole muscle by hand, with MuJoCo's default shape parameters (XML
// reference, <muscle>: lmin 0.5, lmax 1.6, vmax 1.5, fpmax 1.3, fvmax 1.2)
// and round geometry: lengthrange (0.1, 0.3), range (0.5, 1.5) ⇒ L0 = 0.2,
// l_s = 0. At len 0.25, vel −0.15, act 0.6: L = 1.25, V = −0.5,
// FL = 1 − ½(0.25/0.3)², FV = 0.25, FP = ½(0.25/0.3)².
func TestTensionHandValue(t *testing.T) {
	m := Muscle{Name: "hand", LR0: 0.1, LR1: 0.3, Range0: 0.5, Range1: 1.5, Force: 100, Scale: 200,
		LMin: 0.5, LMax: 1.6, VMax: 1.5, FPMax: 1.3, FVMax: 1.2}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if !near(m.L0(), 0.2, handTol) || math.Abs(m.SlackLength()) > handTol {
		t.Fatalf("L0 %g, l_s %g", m.L0(), m.SlackLength())
	}
	L, V := m.Normalize(0.25, -0.15)
	if !near(L, 1.25, handTol) || !near(V, -0.5, handTol) {
		t.Fatalf("L %g V %g", L, V)
	}
	x := 0.25 / 0.3
	fl, fv, fp := 1-0.5*x*x, 0.25, 0.5*x*x
	active, passive := 100*fl*fv*0.6, 100*1.3*fp
	if got := m.ActiveTension(0.25, -0.15, 0.6); !near(got, active, handTol) {
		t.Errorf("active %.15g, want %.15g", got, active)
	}
	if got := m.PassiveTension(0.25); !near(got, passive, handTol) {
		t.Errorf("passive %.15g, want %.15g", got, passive)
	}
	T := m.Tension(0.25, -0.15, 0.6)
	if !near(T, active+passive, handTol) {
		t.Errorf("tension %.15g, want %.15g", T, active+passive)
	}
	// MuJoCo's sign: gain = −force·FL·FV, bias = −force·fpmax·FP.
	if g, b := m.Gain(0.25, -0.15), m.Bias(0.25); !near(g, -100*fl*fv, handTol) || !near(b, -passive, handTol) {
		t.Errorf("gain %g bias %g", g, b)
	}
	if f := m.ActuatorForce(0.25, -0.15, 0.6); !near(f, -T, handTol) {
		t.Errorf("actuator force %g, want −T = %g", f, -T)
	}
}

// MyoArm: the table validates, the normalised length runs over [range0,
// range1] across the lengthrange, and at L = 1, V = 0, act = 1 the tension
// is the peak force (FL = FV = 1, FP = 0).
func TestMyoArmTable(t *testing.T) {
	ms := MyoArm()
	names := []string{"DELT1", "DELT3", "TRIlong", "TRIlat", "BIClong", "BICshort", "BRA", "BRD"}
	if len(ms) != len(names) {
		t.Fatalf("%d muscles", len(ms))
	}
	for i, m := range ms {
		if m.Name != names[i] {
			t.Errorf("muscle %d is %q, want %q", i, m.Name, names[i])
		}
		if err := m.Validate(); err != nil {
			t.Error(err)
		}
		L0 := m.L0()
		if !near(L0, (m.LR1-m.LR0)/(m.Range1-m.Range0), handTol) || L0 < 0.02 || L0 > 0.2 {
			t.Errorf("%s: L0 = %g m", m.Name, L0)
		}
		if L, _ := m.Normalize(m.LR0, 0); !near(L, m.Range0, handTol) {
			t.Errorf("%s: L(LR0) = %g, want range0 %g", m.Name, L, m.Range0)
		}
		if L, _ := m.Normalize(m.LR1, 0); !near(L, m.Range1, handTol) {
			t.Errorf("%s: L(LR1) = %g, want range1 %g", m.Name, L, m.Range1)
		}
		if T := m.Tension(m.SlackLength()+L0, 0, 1); !near(T, m.Force, handTol) {
			t.Errorf("%s: tension at optimal length %g, want %g", m.Name, T, m.Force)
		}
	}
	ms[0].Force = -1 // a fresh copy each call
	if MyoArm()[0].Force != 1051.85 {
		t.Error("MyoArm shares its slice")
	}
}

// The tension's partial derivatives — with respect to length, velocity,
// activation and the Diff-MSM parameters (L0, force, vmax) through
// WithIdent — against central differences, for every MyoArm muscle over its
// lengthrange, shortening and lengthening.
func TestTensionPartialsMatchFiniteDifferences(t *testing.T) {
	for _, m := range MyoArm() {
		for _, s := range []float64{0.07, 0.31, 0.52, 0.77, 0.96} {
			length := m.LR0 + s*(m.LR1-m.LR0)
			for _, vel := range []float64{-0.31, -0.043, 0.0071, 0.029, 0.3} {
				act := 0.37
				T, p := m.TensionPartials(length, vel, act)
				if !near(T, m.Tension(length, vel, act), 0) {
					t.Fatal("Tension and TensionPartials disagree")
				}
				check := func(what string, an float64, f func(d float64) float64, x0 float64) {
					h := fdStep * math.Max(math.Abs(x0), 1e-3)
					num := (f(h) - f(-h)) / (2 * h)
					// relative to the derivative's natural scale |∂T/∂x| + |T|/|x|
					if math.Abs(an-num) > fdTol*(math.Abs(an)+math.Abs(T)/math.Max(math.Abs(x0), 1e-3)) {
						t.Errorf("%s len %g vel %g: ∂T/∂%s = %.10g, fd %.10g", m.Name, length, vel, what, an, num)
					}
				}
				check("len", p.DLength, func(d float64) float64 { return m.Tension(length+d, vel, act) }, length)
				check("vel", p.DVel, func(d float64) float64 { return m.Tension(length, vel+d, act) }, vel)
				check("act", p.DAct, func(d float64) float64 { return m.Tension(length, vel, act+d) }, act)
				id := m.Ident()
				check("L0", p.DL0, func(d float64) float64 {
					j := id
					j.L0 += d
					return m.WithIdent(j).Tension(length, vel, act)
				}, id.L0)
				check("force", p.DForce, func(d float64) float64 {
					j := id
					j.Force += d
					return m.WithIdent(j).Tension(length, vel, act)
				}, id.Force)
				check("vmax", p.DVMax, func(d float64) float64 {
					j := id
					j.VMax += d
					return m.WithIdent(j).Tension(length, vel, act)
				}, id.VMax)
			}
		}
	}
}

// WithIdent keeps the lengthrange and the slack length, sets L0, force and
// vmax, and gives back the same muscle for its own parameters.
func TestWithIdent(t *testing.T) {
	for _, m := range MyoArm() {
		same := m.WithIdent(m.Ident())
		if !near(same.Range0, m.Range0, handTol) || !near(same.Range1, m.Range1, handTol) {
			t.Errorf("%s: round trip range (%g, %g), want (%g, %g)", m.Name, same.Range0, same.Range1, m.Range0, m.Range1)
		}
		id := Ident{L0: 1.1 * m.L0(), Force: 0.9 * m.Force, VMax: 12}
		n := m.WithIdent(id)
		if err := n.Validate(); err != nil {
			t.Error(err)
		}
		if !near(n.L0(), id.L0, handTol) || n.Force != id.Force || n.VMax != id.VMax {
			t.Errorf("%s: ident %+v, want %+v", m.Name, n.Ident(), id)
		}
		if !near(n.SlackLength(), m.SlackLength(), handTol) || n.LR0 != m.LR0 || n.LR1 != m.LR1 {
			t.Errorf("%s: slack %g → %g", m.Name, m.SlackLength(), n.SlackLength())
		}
		length := 0.5 * (m.LR0 + m.LR1)
		if L, _ := n.Normalize(length, 0); !near(L, (length-m.SlackLength())/id.L0, handTol) {
			t.Errorf("%s: L = %g, want (len − l_s)/L0", m.Name, L)
		}
	}
}

func TestValidateNamesMuscle(t *testing.T) {
	m := MyoArm()[2]
	m.Force = -1
	if err := m.Validate(); err == nil || !contains(err.Error(), "TRIlong") || !contains(err.Error(), "force") {
		t.Errorf("error %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// τ = −Jᵀ T: a muscle whose length falls as q grows (J < 0) pulls q forward.
func TestTorqueFromTension(t *testing.T) {
	J := []float64{ // 2 muscles × 3 joints, ∂len/∂q [m/rad]
		-0.02, 0.01, 0,
		0.03, 0, -0.04,
	}
	T := []float64{100, 50}
	tau := make([]float64, 3)
	TorqueFromTension(J, T, tau)
	want := []float64{2 - 1.5, -1, 2}
	for j := range tau {
		if !near(tau[j], want[j], handTol) {
			t.Errorf("τ[%d] = %g, want %g", j, tau[j], want[j])
		}
	}
}

// Prepared.TensionPartials equals Muscle.TensionPartials to preparedTol
// (relative to each value's scale: rounding of a/b against a·(1/b)) for
// every MyoArm muscle, also with identified parameters (WithIdent), over
// lengths and velocities that visit every piece of FL, FV and FP.
func TestPreparedMatchesTensionPartials(t *testing.T) {
	const preparedTol = 1e-13
	for _, base := range MyoArm() {
		for _, m := range []Muscle{base, base.WithIdent(Ident{L0: 1.2 * base.L0(), Force: 0.8 * base.Force, VMax: 7})} {
			p := m.Prepare()
			pieces := map[string]bool{}
			for i := 0; i <= 60; i++ {
				L := -0.2 + 2.2*float64(i)/60 // normalised length, −0.2 … 2.0
				length := m.LR0 + (L-m.Range0)*m.L0()
				for _, V := range []float64{-1.3, -0.6, -0.01, 0.15, 0.39, 0.8} {
					vel := V * m.L0() * m.VMax
					T, d := m.TensionPartials(length, vel, 0.6)
					T2, d2 := p.TensionPartials(length, vel, 0.6)
					scale := math.Abs(T) + m.Force
					same := func(a, b, s float64) bool { return math.Abs(a-b) <= preparedTol*s }
					if !same(T, T2, scale) || !same(d.DForce, d2.DForce, 1) || !same(d.DAct, d2.DAct, m.Force) ||
						!same(d.DLength, d2.DLength, m.Force/m.L0()) || !same(d.DVel, d2.DVel, m.Force/(m.L0()*m.VMax)) ||
						!same(d.DL0, d2.DL0, 3*m.Force/m.L0()) || !same(d.DVMax, d2.DVMax, m.Force/m.VMax) {
						t.Fatalf("%s L %g V %g: prepared %v %+v, want %v %+v", m.Name, L, V, T2, d2, T, d)
					}
					pieces[flPiece(L)] = true
				}
			}
			if len(pieces) != 5 {
				t.Errorf("%s: visited FL pieces %v, want all 5", m.Name, pieces)
			}
		}
	}
}

func flPiece(L float64) string {
	switch {
	case L < 0 || L > 1.8:
		return "out"
	case L <= 0.5:
		return "rise"
	case L <= 1:
		return "top-left"
	case L <= 1.4:
		return "top-right"
	}
	return "fall"
}
