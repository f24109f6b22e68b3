package beam

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Tolerances of the finite-difference checks (central differences, step
// 1e-6 on O(1) coordinates: truncation ~1e-12 relative, rounding ~1e-10).
const (
	tolFD    = 1e-6 // relative to the largest entry compared
	fdStep   = 1e-6
	tolExact = 1e-12
)

func testProps() Props {
	// Gouveia's bar: E = 2.1e10 Pa, A = 25e-6 m², I = 52.1e-12 m⁴, ρ = 7800 kg/m³, L = 0.9 m.
	return Props{E: 2.1e10, A: 25e-6, I: 52.1e-12, Rho: 7800, L0: 0.9, Beta0: 0.3}
}

// deformed returns a configuration near the reference, moved rigidly and
// turned by up to a full turn, with small deformations.
func deformed(rng *rand.Rand, pr Props) [6]float64 {
	tr := rng.Float64() * 2 * math.Pi
	b := pr.Beta0 + tr
	x1, y1 := rng.NormFloat64(), rng.NormFloat64()
	L := pr.L0 * (1 + 1e-3*rng.NormFloat64())
	return [6]float64{x1, y1, tr + 0.2*rng.NormFloat64(), x1 + L*math.Cos(b), y1 + L*math.Sin(b), tr + 0.2*rng.NormFloat64()}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func TestInternalForceIsEnergyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pr := testProps()
	for trial := 0; trial < 20; trial++ {
		p := deformed(rng, pr)
		var f [6]float64
		pr.Internal(&p, &f, nil)
		var fd [6]float64
		for j := 0; j < 6; j++ {
			pp, pm := p, p
			pp[j] += fdStep
			pm[j] -= fdStep
			fd[j] = (pr.StrainEnergy(&pp) - pr.StrainEnergy(&pm)) / (2 * fdStep)
		}
		for j := range f {
			if d := math.Abs(f[j] - fd[j]); d > tolFD*maxAbs(f[:]) {
				t.Fatalf("trial %d: f[%d] = %g, dU/dq = %g", trial, j, f[j], fd[j])
			}
		}
	}
}

// The tangent stiffness of Crisfield (1991, ch. 7) against central
// differences of the internal force.
func TestTangentStiffnessFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pr := testProps()
	for trial := 0; trial < 20; trial++ {
		p := deformed(rng, pr)
		var f [6]float64
		var K [36]float64
		pr.Internal(&p, &f, &K)
		for j := 0; j < 6; j++ {
			pp, pm := p, p
			pp[j] += fdStep
			pm[j] -= fdStep
			var fp, fm [6]float64
			pr.Internal(&pp, &fp, nil)
			pr.Internal(&pm, &fm, nil)
			for i := 0; i < 6; i++ {
				fd := (fp[i] - fm[i]) / (2 * fdStep)
				if d := math.Abs(K[i*6+j] - fd); d > tolFD*maxAbs(K[:]) {
					t.Fatalf("trial %d: K[%d][%d] = %g, FD %g", trial, i, j, K[i*6+j], fd)
				}
			}
		}
		// symmetry: K is the Hessian of the strain energy
		for i := 0; i < 6; i++ {
			for j := 0; j < i; j++ {
				if math.Abs(K[i*6+j]-K[j*6+i]) > tolExact*maxAbs(K[:]) {
					t.Fatalf("K not symmetric at %d,%d", i, j)
				}
			}
		}
	}
}

// A rigid motion creates no internal force.
func TestRigidMotionForceFree(t *testing.T) {
	pr := testProps()
	for _, a := range []float64{0, 1, 3, -2.5, 7} {
		b := pr.Beta0 + a
		p := [6]float64{2, -1, a, 2 + pr.L0*math.Cos(b), -1 + pr.L0*math.Sin(b), a}
		var f [6]float64
		pr.Internal(&p, &f, nil)
		if maxAbs(f[:]) > 1e-9 {
			t.Errorf("rotation %g: f = %v", a, f)
		}
	}
}

func TestGravityIsPotentialGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pr := testProps()
	g := [2]float64{0.3, -9.81}
	for trial := 0; trial < 20; trial++ {
		p := deformed(rng, pr)
		var f [6]float64
		pr.Gravity(&p, g, &f)
		for j := 0; j < 6; j++ {
			pp, pm := p, p
			pp[j] += fdStep
			pm[j] -= fdStep
			fd := -(pr.GravityPotential(&pp, g) - pr.GravityPotential(&pm, g)) / (2 * fdStep)
			if math.Abs(f[j]-fd) > tolFD*maxAbs(f[:]) {
				t.Fatalf("trial %d: g[%d] = %g, −dV/dq = %g", trial, j, f[j], fd)
			}
		}
	}
}

// At an undeformed state the gravity force is M(q)·g: free fall leaves the
// beam straight.
func TestGravityConsistentWithMass(t *testing.T) {
	pr := testProps()
	g := [2]float64{0.3, -9.81}
	b := 1.1
	p := [6]float64{0, 0, b - pr.Beta0, pr.L0 * math.Cos(b), pr.L0 * math.Sin(b), b - pr.Beta0}
	var f [6]float64
	pr.Gravity(&p, g, &f)
	Ml := pr.LocalMass()
	var M [36]float64
	pr.Mass(&p, &Ml, &M)
	gv := [6]float64{g[0], g[1], 0, g[0], g[1], 0}
	mg := mul6(&M, &gv)
	for i := range f {
		if math.Abs(f[i]-mg[i]) > tolExact*maxAbs(mg[:]) {
			t.Fatalf("gravity %v, M·g %v", f, mg)
		}
	}
}

// The rigid rotation of a beam of mass m about its end has kinetic energy
// ½(mL²/3)ω²: the Hermite interpolation is exact for rigid motion.
func TestKineticRigidRotation(t *testing.T) {
	pr := testProps()
	Ml := pr.LocalMass()
	b := 0.7
	p := [6]float64{0, 0, 0, pr.L0 * math.Cos(b), pr.L0 * math.Sin(b), 0}
	w := 2.5
	v := [6]float64{0, 0, w, -pr.L0 * math.Sin(b) * w, pr.L0 * math.Cos(b) * w, w}
	m := pr.Rho * pr.A * pr.L0
	want := 0.5 * m * pr.L0 * pr.L0 / 3 * w * w
	if got := pr.Kinetic(&p, &v, &Ml); math.Abs(got-want) > tolExact*want {
		t.Fatalf("T = %g, want %g", got, want)
	}
}

// The velocity-dependent inertial force is Ṁv − ∂T/∂q: both parts by
// central differences (Ṁv = d/dε M(q+εv)v).
func TestInertiaLagrangeFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pr := testProps()
	Ml := pr.LocalMass()
	for trial := 0; trial < 20; trial++ {
		p := deformed(rng, pr)
		var v [6]float64
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		var h [6]float64
		pr.Inertia(&p, &v, &Ml, &h)
		var Mp, Mm [36]float64
		var pp, pm [6]float64
		for i := range p {
			pp[i] = p[i] + fdStep*v[i]
			pm[i] = p[i] - fdStep*v[i]
		}
		pr.Mass(&pp, &Ml, &Mp)
		pr.Mass(&pm, &Ml, &Mm)
		var want [6]float64
		for i := 0; i < 6; i++ {
			for j := 0; j < 6; j++ {
				want[i] += (Mp[i*6+j] - Mm[i*6+j]) / (2 * fdStep) * v[j]
			}
		}
		for j := 0; j < 6; j++ {
			a, b := p, p
			a[j] += fdStep
			b[j] -= fdStep
			want[j] -= (pr.Kinetic(&a, &v, &Ml) - pr.Kinetic(&b, &v, &Ml)) / (2 * fdStep)
		}
		for i := range h {
			if math.Abs(h[i]-want[i]) > tolFD*maxAbs(want[:]) {
				t.Fatalf("trial %d: h = %v, want %v", trial, h, want)
			}
		}
	}
}
