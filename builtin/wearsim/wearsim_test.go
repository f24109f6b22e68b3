package wearsim

import (
	"math"
	"testing"

	"github.com/kinfer/kinfer/builtin/contact/efound"
)

func constCurve(t *testing.T, name string, v float64) *Curve {
	c, err := NewCurve(name, "", 1, []float64{0, 20, 40, 60, 80}, []float64{v, v, v, v, v})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Static equilibrium under constant load: with constant inputs the
// simulation must settle where the contact model's static analysis
// (efound.Knee.Static, Lin 2010 Sec. 2.2.3, an independent Newton solve on
// y, α) puts it for the applied net F_y = W and T_α = −e·W (the axial
// force's medial offset), and the insensitive directions must balance the
// bumpers: F_x = k·x, F_z = 0, T_β = k_β·β. Tolerances: 2e-4 mm and
// 2e-5 rad (the static analysis stops at 0.1 % of the load), 0.5 N, 0.01 N·m.
func TestStaticEquilibrium(t *testing.T) {
	k := efound.DefaultKnee(1, false)
	ef, err := NewEF(k)
	if err != nil {
		t.Fatal(err)
	}
	const W, flex = 1500.0, 20.0
	in := Inputs{constCurve(t, "flexion", flex), constCurve(t, "axial", W), constCurve(t, "ap", 40), constCurve(t, "ie", 1)}
	m := DefaultMachine
	res, err := Simulate(ef, m, in, Options{Steps: 200, Cycles: 1, History: true})
	if err != nil {
		t.Fatal(err)
	}
	end := res.History[len(res.History)-1]
	p := end.Pose
	net := [2]float64{}
	var fx, fz, tb float64
	for s := 0; s < 2; s++ {
		net[0] += end.Loads[s].F[1]
		net[1] += end.Loads[s].T[0]
		fx += end.Loads[s].F[0]
		fz += end.Loads[s].F[2]
		tb += end.Loads[s].T[1]
	}
	ps, _, err := k.Static(efound.Pose{X: p.X, Z: p.Z, Beta: p.Beta, Gamma: p.Gamma}, W, -m.AxialOffset*W*1e-3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("simulated y %.6f α %.6f°, static y %.6f α %.6f°; x %.4f z %.5f β %.4f°", p.Y, p.Alpha/deg, ps.Y, ps.Alpha/deg, p.X, p.Z, p.Beta/deg)
	if math.Abs(p.Y-ps.Y) > 2e-4 || math.Abs(p.Alpha-ps.Alpha) > 2e-5 {
		t.Errorf("pose (y %g, α %g) differs from the static analysis's (%g, %g)", p.Y, p.Alpha, ps.Y, ps.Alpha)
	}
	if d := fx - m.APSpring*p.X - 40; math.Abs(d) > 0.5 {
		t.Errorf("AP balance off by %g N", d)
	}
	if math.Abs(fz) > 0.5 {
		t.Errorf("F_z %g N at rest", fz)
	}
	if d := tb - m.IESpring*p.Beta - 1; math.Abs(d) > 0.01 {
		t.Errorf("IE balance off by %g N·m", d)
	}
	if math.Abs(net[0]-W) > 0.5 {
		t.Errorf("net F_y %g, W %g", net[0], W)
	}
}

// pointVelocity against a central difference of the position
// t + R(α, β, γ)·r of a point fixed in the femoral frame.
func TestPointVelocityFD(t *testing.T) {
	const y0 = 40.0
	q := [5]float64{0.7, -0.05, 0.2, 0.03, -0.08}
	v := [5]float64{12, -3, 4, 0.4, -0.9}
	g, gd := 0.6, 2.5
	c := [3]float64{5, 3, 21} // tibial frame at the instant
	p0 := efound.Pose{X: q[0], Y: q[1], Z: q[2], Alpha: q[3], Beta: q[4], Gamma: g}
	R := p0.Rotation()
	tt := [3]float64{q[0], q[1] + y0, q[2]}
	var r [3]float64 // femoral-frame coordinates: Rᵀ(c − t)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[i] += R[j][i] * (c[j] - tt[j])
		}
	}
	pos := func(h float64) [3]float64 {
		p := efound.Pose{X: q[0] + h*v[0], Y: q[1] + h*v[1], Z: q[2] + h*v[2], Alpha: q[3] + h*v[3], Beta: q[4] + h*v[4], Gamma: g + h*gd}
		Rh := p.Rotation()
		var x [3]float64
		for i := 0; i < 3; i++ {
			x[i] = [3]float64{p.X, p.Y + y0, p.Z}[i] + Rh[i][0]*r[0] + Rh[i][1]*r[1] + Rh[i][2]*r[2]
		}
		return x
	}
	const h = 1e-6
	a, b := pos(h), pos(-h)
	got := pointVelocity(p0, v, gd, y0, c)
	for i := 0; i < 3; i++ {
		fd := (a[i] - b[i]) / (2 * h)
		if math.Abs(fd-got[i]) > 1e-6*(1+math.Abs(fd)) {
			t.Errorf("component %d: analytic %g, finite difference %g", i, got[i], fd)
		}
	}
}

// stub is a contact with a known answer: a linear vertical spring and
// restoring springs in every other direction, total force W split evenly,
// CoP fixed at rho below the femoral origin on each side.
type stub struct{ y0, rho float64 }

func (s stub) LiftOff() float64 { return s.y0 }
func (s stub) Eval(p efound.Pose, cop bool, out *[2]SideLoads) error {
	for side := 0; side < 2; side++ {
		z := 20.0
		if side == 1 {
			z = -20
		}
		out[side] = SideLoads{
			F:   [3]float64{-50 * p.X, -5000 * p.Y, -100 * p.Z},
			T:   [3]float64{-100 * p.Alpha, -10 * p.Beta, 0},
			CoP: [3]float64{p.X, p.Y + s.y0 - s.rho, z},
		}
	}
	return nil
}

// Archard's law on a known answer: with a constant axial load W shared
// by two sides, no AP force or IE torque and the pose at rest, each side's
// CoP (fixed ρ below the flexion axis) slides at ρ·|γ̇|, so one cycle wears
// V = k·(W/2)·ρ·Σ|Δγ| per side (Lin 2010, Sec. 2.3.5). Relative tolerance
// 1e-3 (the rectangle rule on 2 000 steps).
func TestArchardKnown(t *testing.T) {
	iso, err := ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	const W, rho = 1000.0, 40.0
	in := Inputs{iso[InFlexion], constCurve(t, "axial", W), constCurve(t, "ap", 0), constCurve(t, "ie", 0)}
	m := DefaultMachine
	m.AxialOffset = 0
	res, err := Simulate(stub{y0: 40, rho: rho}, m, in, Options{Steps: 2000, Cycles: 1, Extrapolate: 1})
	if err != nil {
		t.Fatal(err)
	}
	var tv float64
	const n = 200000
	for i := 0; i < n; i++ {
		tv += math.Abs(iso[InFlexion].At(float64(i+1)/n)-iso[InFlexion].At(float64(i)/n)) * deg
	}
	want := 1e-7 * (W / 2) * rho * tv * 1e-3
	for side := 0; side < 2; side++ {
		if r := res.WearCoP[side]/want - 1; math.Abs(r) > 1e-3 {
			t.Errorf("side %d: wear %g mm³, want %g (rel. err %g)", side, res.WearCoP[side], want, r)
		}
	}
}

// The CoP-based and element-based wear of the EF simulation agree within
// 2 % (Lin 2010, Sec. 3: "the CoP-based approach ... reproduced the
// element-based EF results to within 2 % error"), per side, and halving
// the time step changes the wear by < 2 %; a quarter-cycle warm-up
// instead of a whole cycle changes it by < 0.2 %. Coarse (1 mm) cells, 250 and
// 500 steps per cycle.
func TestCoPvsElementAndStep(t *testing.T) {
	if testing.Short() {
		t.Skip("EF dynamics: a few seconds")
	}
	ef, err := NewEF(efound.DefaultKnee(1, false))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	var tot [2]float64
	for i, steps := range []int{250, 500} {
		r, err := Simulate(ef, DefaultMachine, in, Options{Steps: steps, Elements: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d steps: CoP wear %.3f / %.3f mm³, element %.3f / %.3f; %d evaluations, %d Jacobians", steps, r.WearCoP[0], r.WearCoP[1], r.WearElem[0], r.WearElem[1], r.Evals, r.Jacobians)
		for s := 0; s < 2; s++ {
			if d := r.WearCoP[s]/r.WearElem[s] - 1; math.Abs(d) > 0.02 {
				t.Errorf("%d steps, side %d: CoP %g vs element %g", steps, s, r.WearCoP[s], r.WearElem[s])
			}
		}
		if r.WearCoP[0] <= r.WearCoP[1] {
			t.Errorf("medial wear %g not above lateral %g with the medial load offset", r.WearCoP[0], r.WearCoP[1])
		}
		tot[i] = r.Total()
	}
	if d := tot[0]/tot[1] - 1; math.Abs(d) > 0.02 {
		t.Errorf("wear %g at 250 steps vs %g at 500", tot[0], tot[1])
	}
	// a quarter-cycle warm-up instead of a whole cycle: the start
	// transients have decayed (slowest mode, IE, ~0.08 s time constant)
	r, err := Simulate(ef, DefaultMachine, in, Options{Steps: 250, Warmup: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warm-up 0.25 cycle: %.3f mm³ (one cycle: %.3f)", r.Total(), tot[0])
	if d := r.Total()/tot[0] - 1; math.Abs(d) > 0.002 {
		t.Errorf("wear %g after a 0.25-cycle warm-up vs %g after one cycle", r.Total(), tot[0])
	}
}

// Vary: nominal weights give the curve itself; weights (1, 1) scale about
// Ref and delay by Tau: c_w(t + τ) = Ref + (1 + A)(c(t) − Ref).
func TestVary(t *testing.T) {
	iso, err := ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	same, err := Vary(iso, DefaultFamilies, Nominal)
	if err != nil {
		t.Fatal(err)
	}
	for i := range same {
		if same[i] != iso[i] {
			t.Fatalf("nominal weights changed curve %d", i)
		}
	}
	var w Weights = Nominal
	w[InAxial] = [2]float64{1, 1}
	v, err := Vary(iso, DefaultFamilies, w)
	if err != nil {
		t.Fatal(err)
	}
	f := DefaultFamilies[InAxial]
	for k := 0; k < 100; k++ {
		tk := float64(k) / 100
		want := f.Ref + (1+f.A)*(iso[InAxial].At(tk)-f.Ref)
		if got := v[InAxial].At(tk + f.Tau); math.Abs(got-want) > 2 {
			t.Errorf("t %g: %g, want %g", tk, got, want)
		}
	}
	if _, err := Vary(iso, DefaultFamilies, Weights{{2, 0.5}}); err == nil {
		t.Error("weight 2 accepted")
	}
	if _, err := NewCurve("x", "", 1, []float64{0, 10, 10, 20, 30}, []float64{1, 2, 3, 4, 5}); err == nil {
		t.Error("repeated knot accepted")
	}
}

// The digitised ISO 14243-1 curves keep the extremes they are documented
// with (doc.go): flexion 0 … 58°, axial 168 … 2 600 N, AP −265 … 110 N,
// IE −1 … 6 N·m, within the Akima spline's overshoot (2 %).
func TestISOExtremes(t *testing.T) {
	in, err := ISO(1)
	if err != nil {
		t.Fatal(err)
	}
	want := [NInputs][2]float64{{0, 58}, {168, 2600}, {-265, 110}, {-1, 6}}
	for i, c := range in {
		lo, hi := c.Range()
		span := want[i][1] - want[i][0]
		if math.Abs(lo-want[i][0]) > 0.02*span || math.Abs(hi-want[i][1]) > 0.02*span {
			t.Errorf("%s: range %g … %g, want %g … %g", c.Name, lo, hi, want[i][0], want[i][1])
		}
	}
}

func BenchmarkSimulateEF1mm(b *testing.B) {
	ef, _ := NewEF(efound.DefaultKnee(1, false))
	in, _ := ISO(1)
	for i := 0; i < b.N; i++ {
		if _, err := Simulate(ef, DefaultMachine, in, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
