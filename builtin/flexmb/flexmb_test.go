package flexmb

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/kinfer/kinfer/builtin/flexmb/beam"
	"github.com/kinfer/kinfer/builtin/flexmb/hht"
)

// Named tolerances, with where they come from.
const (
	// tolPolygon: Newton tolerance 1e-12 on O(1) coordinates; the discrete
	// answer is exact.
	tolPolygon = 1e-8
	// tolPeriod: relative period error of the stiff-beam pendulum: trapezoidal
	// phase error (ωh)²/12 ≈ 1e-6 at h = 1e-3, axial compliance and the
	// beam's mass 1e-6 of the bob's.
	tolPeriod = 2e-5
	// tolEnergyDrift: |E − E₀| relative to the largest kinetic energy of a
	// flexible pendulum over 2 s at α = 0, h = 1e-3 (trapezoidal rule on a
	// nonlinear system: bounded O(h²) oscillation, not a drift; measured 1.1e-5).
	tolEnergyDrift = 1e-4
)

// cantilever returns a clamped straight beam of nel elements along x,
// length L, with an end moment M.
func cantilever(nel int, L, EI, M float64) *System {
	s := &System{}
	for i := 0; i <= nel; i++ {
		s.X0 = append(s.X0, L*float64(i)/float64(nel), 0, 0)
	}
	for i := 0; i < nel; i++ {
		s.Beams = append(s.Beams, Beam{N1: i, N2: i + 1, Props: beam.Props{E: 1e4, A: 1e2, I: EI / 1e4}})
	}
	s.Fixed = []Fixed{{Node: 0}}
	s.Loads = []Load{{Node: nel, Mz: M}}
	return s
}

// An end moment M bends a cantilever into a circular arc of radius EI/M:
// tip at ((EI/M) sin θ, (EI/M)(1 − cos θ)), θ = ML/EI (pure bending, constant curvature M/EI;
// an analytic solution of the elastica), a full circle at M = 2πEI/L. With nel
// co-rotational elements the curve is the polygon of nel chords of length
// L/nel turning by φ = θ/nel (each element is in pure bending, N = 0):
// tip = (L/nel)(e^{iθ} − 1)/(2i sin(φ/2)), the arc's tip times
// (φ/2)/sin(φ/2).
func TestCantileverRollsIntoCircle(t *testing.T) {
	const L, EI = 1.0, 2.0
	for _, nel := range []int{10, 20} {
		for _, frac := range []float64{0.25, 0.5, 1} {
			theta := 2 * math.Pi * frac
			M := theta * EI / L
			s := cantilever(nel, L, EI, M)
			if err := s.Prepare(); err != nil {
				t.Fatal(err)
			}
			q, _, err := s.Static(nil, 40, 0, 1e-12)
			if err != nil {
				t.Fatalf("nel %d θ %g: %v", nel, theta, err)
			}
			phi := theta / float64(nel)
			poly := complex(L/float64(nel), 0) * (cmplx.Exp(complex(0, theta)) - 1) / complex(0, 2*math.Sin(phi/2))
			tx, ty, tr := q[3*nel], q[3*nel+1], q[3*nel+2]
			if math.Hypot(tx-real(poly), ty-imag(poly)) > tolPolygon*L {
				t.Errorf("nel %d θ %.4f: tip (%.10f, %.10f), polygon (%.10f, %.10f)", nel, theta, tx, ty, real(poly), imag(poly))
			}
			if math.Abs(beam.Wrap(tr-theta)) > tolPolygon {
				t.Errorf("nel %d θ %.4f: tip rotation %.10f", nel, theta, tr)
			}
			// against the continuum arc: relative error (φ/2)/sin(φ/2) − 1 ≈ φ²/24
			R := EI / M
			ax, ay := R*math.Sin(theta), R*(1-math.Cos(theta))
			tolArc := (phi/2/math.Sin(phi/2) - 1) * 2 * R * 1.0001
			if d := math.Hypot(tx-ax, ty-ay); d > tolArc+tolPolygon {
				t.Errorf("nel %d θ %.4f: tip %.3g from the arc (bound %.3g)", nel, theta, d, tolArc)
			}
			if frac == 1 && math.Hypot(tx, ty) > tolPolygon {
				t.Errorf("nel %d: full circle does not close: tip (%g, %g)", nel, tx, ty)
			}
		}
	}
}

// pendulum is a bob of 1 kg on a stiff, almost massless beam of length L
// pinned at the origin, started at rest at angle th0 from the downward
// vertical.
func pendulum(L, th0 float64) *System {
	s := &System{X0: []float64{0, 0, 0, L * math.Sin(th0), -L * math.Cos(th0), 0}, Gravity: [2]float64{0, -9.81}}
	// EA = 1e8 N (stretch under the bob's weight ~1e-7), beam mass 1e-6 kg.
	s.Beams = []Beam{{N1: 0, N2: 1, Props: beam.Props{E: 1e10, A: 1e-2, I: 1e-8, Rho: 1e-4}}}
	s.Masses = []PointMass{{Node: 1, M: 1}}
	s.Pins = []Pin{{Node: 0}}
	return s
}

// period integrates the pendulum and returns twice the time between the
// first and second downward crossings of the vertical (x = 0), interpolated.
func period(t *testing.T, s *System, alpha, h float64) float64 {
	t.Helper()
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	it, err := hht.New(s, hht.Options{Alpha: alpha, Step: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Init(0, s.X0, make([]float64, len(s.X0))); err != nil {
		t.Fatal(err)
	}
	var cross []float64
	prevX, prevT := it.Q[3], it.T
	for len(cross) < 2 && it.T < 20 {
		if err := it.Step(); err != nil {
			t.Fatal(err)
		}
		x := it.Q[3]
		if (prevX > 0) != (x > 0) {
			cross = append(cross, prevT+(it.T-prevT)*prevX/(prevX-x))
		}
		prevX, prevT = x, it.T
	}
	if len(cross) < 2 {
		t.Fatal("pendulum did not swing")
	}
	return 2 * (cross[1] - cross[0])
}

// Rigid pendulum periods T = 4√(L/g)·K(sin(θ₀/2)), L = 1, g = 9.81
// (exact period of the simple pendulum, K the complete elliptic integral
// of the first kind; the literal values agree with K = π/(2·AGM(1, cos(θ₀/2)))
// to 1e-7, checked below).
func TestPendulumPeriod(t *testing.T) {
	agm := func(a, b float64) float64 {
		for i := 0; i < 40; i++ {
			a, b = (a+b)/2, math.Sqrt(a*b)
		}
		return a
	}
	for _, c := range []struct{ deg, T float64 }{{10, 2.0098926}, {90, 2.3678419}, {170, 4.8935243}} {
		th0 := c.deg * math.Pi / 180
		if exact := 4 / math.Sqrt(9.81) * math.Pi / (2 * agm(1, math.Cos(th0/2))); math.Abs(exact-c.T) > 1e-7 {
			t.Fatalf("%g°: reference %.7f, AGM %.9f", c.deg, c.T, exact)
		}
		for _, alpha := range []float64{0, -0.05} {
			T := period(t, pendulum(1, c.deg*math.Pi/180), alpha, 1e-3)
			if math.Abs(T-c.T) > tolPeriod*c.T {
				t.Errorf("θ₀ = %g°, α = %g: period %.7f s, want %.7f", c.deg, alpha, T, c.T)
			}
		}
	}
}

// flexPendulum is a flexible steel-like beam of nel elements pinned at one
// end, started horizontal.
func flexPendulum(nel int) *System {
	s := &System{Gravity: [2]float64{0, -9.81}}
	for i := 0; i <= nel; i++ {
		s.X0 = append(s.X0, float64(i)/float64(nel), 0, 0)
	}
	for i := 0; i < nel; i++ {
		s.Beams = append(s.Beams, Beam{N1: i, N2: i + 1, Props: beam.Props{E: 2.1e10, A: 25e-6, I: 52.1e-12, Rho: 7800}})
	}
	s.Pins = []Pin{{Node: 0}}
	return s
}

func energyRun(t *testing.T, alpha float64, dur float64) (E []float64, Tmax float64) {
	s := flexPendulum(4)
	if err := s.Prepare(); err != nil {
		t.Fatal(err)
	}
	it, err := hht.New(s, hht.Options{Alpha: alpha, Step: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Init(0, s.X0, make([]float64, len(s.X0))); err != nil {
		t.Fatal(err)
	}
	for it.T < dur-1e-9 {
		if err := it.Step(); err != nil {
			t.Fatal(err)
		}
		T, U, V := s.Energy(it.Q, it.V)
		E = append(E, T+U+V)
		Tmax = math.Max(Tmax, T)
	}
	return
}

// Without numerical damping (α = 0) the total energy of a flexible
// pendulum stays at its initial value; with α < 0 it is dissipated, more
// for a more negative α.
func TestEnergy(t *testing.T) {
	E0, Tmax := energyRun(t, 0, 2)
	e0 := 0.0 // potential at the start, system at rest: E = V(q0)
	s := flexPendulum(4)
	s.Prepare()
	_, U, V := s.Energy(s.X0, make([]float64, len(s.X0)))
	e0 = U + V
	worst := 0.0
	for _, e := range E0 {
		worst = math.Max(worst, math.Abs(e-e0))
	}
	if worst > tolEnergyDrift*Tmax {
		t.Errorf("α = 0: energy error %.3g J, largest kinetic energy %.3g J", worst, Tmax)
	}
	t.Logf("α = 0: largest |E − E0| = %.3g J (%.2g of max T)", worst, worst/Tmax)
	prevLoss := e0 - E0[len(E0)-1]
	t.Logf("α = 0: energy lost in 2 s %.3g J", prevLoss)
	for _, al := range []float64{-0.05, -0.3} {
		E, _ := energyRun(t, al, 2)
		loss := e0 - E[len(E)-1]
		t.Logf("α = %g: energy lost in 2 s %.3g J", al, loss)
		if !(loss > prevLoss) {
			t.Errorf("α = %g: energy lost %.3g J, not more than %.3g", al, loss, prevLoss)
		}
		prevLoss = loss
	}
}

func TestPrepareRefusals(t *testing.T) {
	for name, s := range map[string]*System{
		"no nodes":      {},
		"bad node":      {X0: []float64{0, 0, 0, 1, 0, 0}, Beams: []Beam{{N1: 0, N2: 2, Props: beam.Props{E: 1, A: 1, I: 1}}}},
		"self beam":     {X0: []float64{0, 0, 0, 1, 0, 0}, Beams: []Beam{{N1: 1, N2: 1, Props: beam.Props{E: 1, A: 1, I: 1}}}},
		"zero E":        {X0: []float64{0, 0, 0, 1, 0, 0}, Beams: []Beam{{N1: 0, N2: 1, Props: beam.Props{A: 1, I: 1}}}},
		"neg spring":    {X0: []float64{0, 0, 0, 1, 0, 0}, Springs: []Spring{{N1: 0, N2: 1, K: -1}}},
		"bad pin":       {X0: []float64{0, 0, 0}, Pins: []Pin{{Node: 3}}},
		"partial coord": {X0: []float64{0, 0}},
	} {
		if err := s.Prepare(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	var s System
	if _, _, err := s.Static(nil, 1, 0, 0); err == nil {
		t.Error("unprepared system solved")
	}
}
