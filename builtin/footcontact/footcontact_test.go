package footcontact

import (
	"math"
	"math/rand/v2"
	"testing"

	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

const (
	tolRound = 1e-12 // sums and reductions of a few dozen terms
	tolFD    = 1e-6  // relative, central differences
)

func feet(t testing.TB) (*Foot, *Foot) {
	r, err := NewFoot(Right, DefaultDimensions)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewFoot(Left, DefaultDimensions)
	if err != nil {
		t.Fatal(err)
	}
	return r, l
}

func TestGridClippedTo38(t *testing.T) {
	r, l := feet(t)
	nFF := 0
	for i, e := range r.Elem {
		if e.Forefoot {
			nFF++
		}
		// Mirror image: same grid cell, Z flipped.
		le := l.Elem[i]
		if le.Row != e.Row || le.Col != e.Col || le.Forefoot != e.Forefoot || le.Pos[2] != -e.Pos[2] || le.Pos[0] != e.Pos[0] {
			t.Fatalf("element %d: right %+v left %+v", i, e, le)
		}
		// Inside the marker rectangle, on the sole plane.
		if e.Pos[0] <= 0 || e.Pos[0] >= r.Dim.Length || math.Abs(e.Pos[2]) >= r.Dim.Width/2 || e.Pos[1] != -r.Dim.MarkerH {
			t.Fatalf("element %d outside the grid rectangle: %v", i, e.Pos)
		}
		// The segment is the side of the toes axis.
		side := e.Pos.Sub(r.AxisPoint).Cross(r.Axis)[1] // < 0: anterior for an axis along +Z
		if (side < 0) != e.Forefoot {
			t.Fatalf("element %d: forefoot %v but on the other side of the axis", i, e.Forefoot)
		}
	}
	// 55 grid cells, 17 dropped by the outline; 15 in the forefoot.
	if nFF != 15 {
		t.Fatalf("%d forefoot elements, want 15", nFF)
	}
	if math.Abs(r.Axis.Norm()-1) > tolRound || r.Axis[2] <= 0 || l.Axis[2] <= 0 {
		t.Fatalf("axis %v %v", r.Axis, l.Axis)
	}
}

// Eq. 1: out of contact 0; continuous at contact whatever the rate; loading
// above and unloading below the elastic line at the same depth.
func TestVerticalForceEq1(t *testing.T) {
	k, c, y0 := 2600.0, 0.8, 0.004
	if VerticalForce(k, c, y0, 0.003, -0.5) != 0 || VerticalForce(k, c, y0, y0, 2) != 0 {
		t.Fatal("force out of contact")
	}
	for _, yd := range []float64{-0.5, 0, 0.5, 1} {
		if f := VerticalForce(k, c, y0, y0+1e-9, yd); f > 1e-5 {
			t.Fatalf("ẏ=%g: force %g just inside contact, want → 0 (continuous)", yd, f)
		}
	}
	// Known value: k·d·(1 + c·ẏ).
	if f := VerticalForce(k, c, y0, y0+0.01, 0.2); math.Abs(f-2600*0.01*1.16) > tolRound*f {
		t.Fatalf("F = %.17g, want %.17g", f, 2600*0.01*1.16)
	}
	// No pulling during fast release (1 + c·ẏ < 0).
	if f := VerticalForce(k, c, y0, y0+0.01, -2); f != 0 {
		t.Fatalf("pulling force %g", f)
	}
}

// The nonlinear damping gives hysteresis: over a compression cycle y = y0 +
// A(1 − cos ωt)/2 the loop encloses energy ∮F dy = k·c·∫(y−y0)·ẏ² dt =
// π·k·c·A³·ω/8 (the elastic part integrates to zero), loading force above
// unloading force at every depth by 2·k·c·(y−y0)·|ẏ|.
func TestDampingHysteresis(t *testing.T) {
	k, c, y0, A, w := 3000.0, 0.5, 0.002, 0.012, 2*math.Pi*3 // c·A·ω/2 ≈ 0.057 < 1: never clipped
	const n = 200000
	T := 2 * math.Pi / w
	dt := T / n
	W := 0.0
	for i := 0; i < n; i++ {
		tm := (float64(i) + 0.5) * dt
		y := y0 + A*(1-math.Cos(w*tm))/2
		yd := A * w * math.Sin(w*tm) / 2
		W += VerticalForce(k, c, y0, y, yd) * yd * dt
	}
	want := math.Pi * k * c * A * A * A * w / 8
	if math.Abs(W-want) > 1e-6*want {
		t.Fatalf("dissipated %.10g J, want %.10g J", W, want)
	}
	// At the same depth, loading (ẏ > 0) exceeds unloading (ẏ < 0).
	for _, tm := range []float64{0.1 * T, 0.25 * T, 0.4 * T} {
		y := y0 + A*(1-math.Cos(w*tm))/2
		yd := A * w * math.Sin(w*tm) / 2
		up, down := VerticalForce(k, c, y0, y, yd), VerticalForce(k, c, y0, y, -yd)
		if gap := up - down; math.Abs(gap-2*k*c*(y-y0)*yd) > 1e-9*up || gap <= 0 {
			t.Fatalf("t=%g: loading %g unloading %g", tm, up, down)
		}
	}
}

// Eq. 2: continuous through zero slip, opposite to slip, bounded by μs·F
// without the viscous term and by (μs + μv·vs/vl)·F with it.
func TestFrictionEq2(t *testing.T) {
	p := &Params{MuS: 0.25, MuD: 0.2, MuV: 0.005}
	vl := LatchingVelocity
	// Known values: 0 at rest; at vs = vl the bracket is μd·tanh 1 +
	// (μs−μd)·(1 − e^{−1}) + μv; far out μd + μv·vs/vl.
	if r := FrictionRatio(0, p.MuS, p.MuD, p.MuV, vl); r != 0 {
		t.Fatalf("ratio at rest %g", r)
	}
	want := 0.2*math.Tanh(1) + 0.05*(1-math.Exp(-1)) + 0.005
	if r := FrictionRatio(vl, p.MuS, p.MuD, p.MuV, vl); math.Abs(r-want) > tolRound {
		t.Fatalf("ratio at vl %.17g, want %.17g", r, want)
	}
	if r := FrictionRatio(1, p.MuS, p.MuD, p.MuV, vl); math.Abs(r-(0.2+0.005*100)) > 1e-12 {
		t.Fatalf("ratio at 1 m/s %.17g", r)
	}
	F := 300.0
	// Continuity through zero slip along a line crossing 0: the force is
	// odd in v and its increments vanish with the step.
	for _, dir := range [][2]float64{{1, 0}, {0.6, -0.8}} {
		prevX, prevZ := math.NaN(), math.NaN()
		step := 1e-7
		for i := -1000; i <= 1000; i++ {
			v := float64(i) * step
			fx, fz := Friction(F, v*dir[0], v*dir[1], p)
			if !math.IsNaN(prevX) {
				if d := math.Hypot(fx-prevX, fz-prevZ); d > 2*F*frictionSlope(0, p.MuS, p.MuD, p.MuV, vl)*step {
					t.Fatalf("jump %g at v=%g", d, v)
				}
			}
			prevX, prevZ = fx, fz
			// Opposite to slip.
			if v != 0 && (fx*dir[0]+fz*dir[1])*v >= 0 {
				t.Fatalf("friction not opposite to slip at v=%g", v)
			}
		}
	}
	// The slope at zero slip is the limit used there (central difference).
	h := 1e-7
	fd := FrictionRatio(h, p.MuS, p.MuD, p.MuV, vl) / h
	if math.Abs(fd-frictionSlope(0, p.MuS, p.MuD, p.MuV, vl)) > 1e-5*fd {
		t.Fatalf("slope at 0: limit %g, difference %g", frictionSlope(0, p.MuS, p.MuD, p.MuV, vl), fd)
	}
	// Bounds, over slip speeds from 0 to 5 m/s, for several friction sets.
	for _, mu := range [][3]float64{{0.25, 0.2, 0}, {0.101, 0.088, 0}, {0.8, 0.1, 0}, {0.25, 0.2, 0.005}, {0.101, 0.088, 0.013}} {
		q := &Params{MuS: mu[0], MuD: mu[1], MuV: mu[2]}
		peak := 0.0
		for i := 0; i <= 500000; i++ {
			vs := 5 * float64(i) / 500000
			fx, fz := Friction(F, vs*0.6, vs*0.8, q)
			f := math.Hypot(fx, fz)
			bound := (q.MuS + q.MuV*vs/vl) * F
			if f > bound*(1+1e-12) {
				t.Fatalf("μ=%v: |f| = %g > %g at vs=%g", mu, f, bound, vs)
			}
			peak = math.Max(peak, f-q.MuV*vs/vl*F)
		}
		// Static friction: the peak of the non-viscous part exceeds μd·F.
		if peak <= q.MuD*F {
			t.Fatalf("μ=%v: peak %g not above μd·F = %g", mu, peak, q.MuD*F)
		}
	}
}

func randomPose(rng *rand.Rand) (q, qd []float64) {
	q = []float64{0.4 * rng.Float64(), 0.03 - 0.012*rng.Float64(), 0.02 * rng.NormFloat64(),
		0.15 * rng.NormFloat64(), 0.05 * rng.NormFloat64(), 0.1 * rng.NormFloat64(), 0.3 * rng.NormFloat64()}
	qd = make([]float64, NDoF)
	for i := range qd {
		qd[i] = 0.3 * rng.NormFloat64()
	}
	return q, qd
}

func testParams(rng *rand.Rand) *Params {
	p := &Params{Y0: 0.002, MuS: 0.25, MuD: 0.2, MuV: 0.005}
	for i := range p.K {
		p.K[i] = 2000 + 1500*rng.Float64()
		p.C[i] = rng.Float64()
	}
	return p
}

// Velocities are the time derivatives of positions: along q(t) = q + t·q̇,
// central differences of the element positions match Point's velocity.
func TestVelocitiesAgainstFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	r, l := feet(t)
	const h = 1e-6
	for trial := 0; trial < 20; trial++ {
		f := r
		if trial%2 == 1 {
			f = l
		}
		q, qd := randomPose(rng)
		qp, qm := make([]float64, NDoF), make([]float64, NDoF)
		for i := range q {
			qp[i], qm[i] = q[i]+h*qd[i], q[i]-h*qd[i]
		}
		k, kp, km := f.Kinematics(q), f.Kinematics(qp), f.Kinematics(qm)
		for _, e := range f.Elem {
			_, v := f.Point(&k, e.Pos, e.Forefoot, qd)
			pp, _ := f.Point(&kp, e.Pos, e.Forefoot, qd)
			pm, _ := f.Point(&km, e.Pos, e.Forefoot, qd)
			fd := pp.Sub(pm).Scale(1 / (2 * h))
			if fd.Sub(v).Norm() > tolFD*math.Max(1, v.Norm()) {
				t.Fatalf("trial %d element %+v: velocity %v, difference %v", trial, e, v, fd)
			}
		}
		// R is a rotation.
		rr := k.R.Mul(k.R.T())
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				if math.Abs(rr[i][j]-rb.Identity3[i][j]) > tolRound {
					t.Fatalf("R·Rᵀ = %v", rr)
				}
			}
		}
	}
}

// The toes axis lies on the floor and a positive toe angle lifts the toes;
// the static pose with the heel marker at its height puts the sole on the
// floor.
func TestToeFlexionAndStaticPose(t *testing.T) {
	r, l := feet(t)
	for _, f := range []*Foot{r, l} {
		q := []float64{0, f.Dim.MarkerH, 0, 0, 0, 0, 0}
		zero := make([]float64, NDoF)
		k := f.Kinematics(q)
		for _, e := range f.Elem {
			p, _ := f.Point(&k, e.Pos, e.Forefoot, zero)
			if math.Abs(p[1]) > tolRound {
				t.Fatalf("%v static pose: element at height %g", f.Side, p[1])
			}
		}
		q[6] = 0.3
		k = f.Kinematics(q)
		for _, e := range f.Elem {
			p, _ := f.Point(&k, e.Pos, e.Forefoot, zero)
			if e.Forefoot && !(p[1] > 0) || !e.Forefoot && math.Abs(p[1]) > tolRound {
				t.Fatalf("%v toes up: element %+v at height %g", f.Side, e, p[1])
			}
		}
		m := f.MarkerPositions(q)
		if m[1][1] <= m[0][1] {
			t.Fatalf("%v: toe marker not lifted: %v", f.Side, m)
		}
	}
}

// Net loads are sums of element loads: segment forces and moments about
// their origins, the total and its moment about the lab origin.
func TestNetLoadsAreSumsOfElementLoads(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 3))
	r, _ := feet(t)
	p := testParams(rng)
	var l Loads
	inContact := 0
	for trial := 0; trial < 50; trial++ {
		q, qd := randomPose(rng)
		r.Evaluate(p, q, qd, &l)
		var hf, ff, tot, hfm, ffm, mo rb.Vec3
		for i, e := range r.Elem {
			f := l.Force[i]
			if f[1] > 0 {
				inContact++
			}
			if e.Forefoot {
				ff, ffm = ff.Add(f), ffm.Add(l.Pos[i].Sub(l.FFOrigin).Cross(f))
			} else {
				hf, hfm = hf.Add(f), hfm.Add(l.Pos[i].Sub(l.HFOrigin).Cross(f))
			}
			tot, mo = tot.Add(f), mo.Add(l.Pos[i].Cross(f))
		}
		scale := 1 + tot.Norm()
		for _, c := range []struct {
			name      string
			got, want rb.Vec3
		}{{"HF force", l.HFForce, hf}, {"FF force", l.FFForce, ff}, {"HF moment", l.HFMoment, hfm}, {"FF moment", l.FFMoment, ffm}, {"total", l.Total, tot}, {"moment about O", l.MomentO, mo}} {
			if c.got.Sub(c.want).Norm() > tolRound*scale {
				t.Fatalf("trial %d %s: %v, sum of elements %v", trial, c.name, c.got, c.want)
			}
		}
		// Each element's force is Eq. 1–2 of its own state.
		for i := range r.Elem {
			want := ElementForce(p.K[i], p.C[i], l.Pos[i], l.Vel[i], p)
			if l.Force[i] != want {
				t.Fatalf("element %d force %v, want %v", i, l.Force[i], want)
			}
		}
	}
	if inContact < 100 {
		t.Fatalf("only %d element-instants in contact: the poses test little", inContact)
	}
}

// The ground reaction quantities: a vertical force at a point has its CoP
// there and no free moment; a horizontal couple is a free moment; below
// 100 N the CoP is left out.
func TestGRFQuantities(t *testing.T) {
	p := rb.Vec3{0.31, 0, -0.07}
	F := rb.Vec3{20, 700, -15}
	g := GRFFrom(F, p.Cross(F), MinCoPForce)
	if math.Abs(g.CoPx-0.31) > tolRound || math.Abs(g.CoPz+0.07) > tolRound || math.Abs(g.Tfree) > tolRound {
		t.Fatalf("%+v", g)
	}
	// Add a couple of 3 N·m about the vertical: forces ±f at ±d along X.
	M := p.Cross(F).Add(rb.Vec3{0.1, 0, 0}.Cross(rb.Vec3{0, 0, -15})).Add(rb.Vec3{-0.1, 0, 0}.Cross(rb.Vec3{0, 0, 15}))
	g = GRFFrom(F, M, MinCoPForce)
	if math.Abs(g.Tfree-3) > tolRound || math.Abs(g.CoPx-0.31) > tolRound {
		t.Fatalf("free moment %+v", g)
	}
	g = GRFFrom(rb.Vec3{0, 99, 0}, rb.Vec3{1, 2, 3}, MinCoPForce)
	if !math.IsNaN(g.CoPx) || !math.IsNaN(g.CoPz) || !math.IsNaN(g.Tfree) || g.Fy != 99 {
		t.Fatalf("below 100 N: %+v", g)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	r, _ := feet(b)
	p := testParams(rng)
	q, qd := randomPose(rng)
	var l Loads
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Evaluate(p, q, qd, &l)
	}
}

func TestFrictionBasis(t *testing.T) {
	for _, vs := range []float64{0, 1e-12, 1e-4, 0.005, 0.01, 0.02, 0.3, 2} {
		as, ad, av := FrictionBasis(vs, LatchingVelocity)
		got := 0.3*as + 0.2*ad + 0.01*av
		want := frictionSlope(vs, 0.3, 0.2, 0.01, LatchingVelocity)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Fatalf("vs=%g: basis gives %.17g, slope %.17g", vs, got, want)
		}
	}
}
