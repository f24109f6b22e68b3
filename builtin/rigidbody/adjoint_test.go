package rigidbody

import (
	"math"
	"math/rand/v2"
	"testing"
)

const (
	solveTol = 1e-10 // H·SolveMass(b) = b, relative to max|b|
	linTol   = 1e-8  // ∂(wᵀRNEA)/∂π vs central differences (RNEA is linear in π: rounding only)
	abaFDTol = 1e-6  // uᵀ∂q̈/∂π vs Richardson central differences of the ABA, relative (floor: 1e-3·max|g|)
)

// symParams groups the body parameters as a symmetric I_C is parameterised
// (mass, COM, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz; an off-diagonal entry
// moves both partners), and symGrad gives the gradient in that order.
func symParams(b *Body) [][]*float64 {
	I := &b.Inertia
	return [][]*float64{{&b.Mass}, {&b.COM[0]}, {&b.COM[1]}, {&b.COM[2]},
		{&I[0][0]}, {&I[1][1]}, {&I[2][2]}, {&I[0][1], &I[1][0]}, {&I[0][2], &I[2][0]}, {&I[1][2], &I[2][1]}}
}

func symGrad(g InertialGrad) []float64 {
	I := g.Inertia
	return []float64{g.Mass, g.COM[0], g.COM[1], g.COM[2],
		I[0][0], I[1][1], I[2][2], I[0][1] + I[1][0], I[0][2] + I[2][0], I[1][2] + I[2][1]}
}

// SolveMass after ForwardDynamics solves H x = b (H from the CRBA) on
// random branched trees, also with x aliasing b.
func TestSolveMass(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 100; trial++ {
		m := randTree(r, 5)
		n := m.NDoF()
		w := NewWorkspace(m)
		ad := NewAdjoint(w)
		q, qd, tau := randState(r, n, math.Pi), randState(r, n, 3), randState(r, n, 20)
		qdd := make([]float64, n)
		w.ForwardDynamics(q, qd, tau, qdd)
		b := randState(r, n, 5)
		x := make([]float64, n)
		ad.SolveMass(b, x)
		alias := append([]float64(nil), b...)
		ad.SolveMass(alias, alias)
		h := make([]float64, n*n)
		w.MassMatrix(q, h)
		for i := 0; i < n; i++ {
			s := 0.0
			for j := 0; j < n; j++ {
				s += h[i*n+j] * x[j]
			}
			if d := math.Abs(s - b[i]); d > solveTol*maxAbs(b) {
				t.Errorf("trial %d: (H x)[%d] = %.15g, b = %.15g", trial, i, s, b[i])
			}
			if alias[i] != x[i] {
				t.Errorf("trial %d: aliased solve differs at %d", trial, i)
			}
		}
	}
}

// AddInertiaVJP is the gradient of wᵀRNEA(q, q̇, q̈) with respect to each
// body's inertial parameters: central differences (exact up to rounding,
// RNEA being linear in them), after InverseDynamics. Off-diagonal inertia
// entries move in symmetric pairs (symParams): the spatial inertia is
// symmetric by construction (RigidInertia reads I_C's upper triangle).
func TestInertiaVJPMatchesRNEA(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for trial := 0; trial < 20; trial++ {
		m := randTree(r, 5)
		n := m.NDoF()
		ws := NewWorkspace(m)
		ad := NewAdjoint(ws)
		q, qd, qdd, wv := randState(r, n, math.Pi), randState(r, n, 3), randState(r, n, 10), randState(r, n, 2)
		tau := make([]float64, n)
		ws.InverseDynamics(q, qd, qdd, tau)
		g := make([]InertialGrad, n)
		ad.AddInertiaVJP(wv, g)
		f := func() float64 {
			ws.InverseDynamics(q, qd, qdd, tau)
			s := 0.0
			for i := range tau {
				s += wv[i] * tau[i]
			}
			return s
		}
		f0 := math.Abs(f())
		for i := range m.Bodies {
			got := symGrad(g[i])
			for k, ps := range symParams(&m.Bodies[i]) {
				v0 := *ps[0] // partners are equal
				set := func(v float64) {
					for _, p := range ps {
						*p = v
					}
				}
				const h = 1e-3
				set(v0 + h)
				fp := f()
				set(v0 - h)
				fm := f()
				set(v0)
				fd := (fp - fm) / (2 * h)
				if d := math.Abs(fd - got[k]); d > linTol*math.Max(math.Abs(fd), f0+1) {
					t.Errorf("trial %d body %d param %d: %.12g, central difference %.12g", trial, i, k, got[k], fd)
				}
			}
		}
	}
}

// The adjoint of forward dynamics: uᵀ∂q̈/∂π = −wᵀ∂RNEA/∂π with w = H⁻¹u,
// q̈ = ABA(τ), against central differences of uᵀABA. Off-diagonal
// inertia entries move in symmetric pairs: the ABA (U Uᵀ/D) and the solve
// with H assume a symmetric inertia.
func TestForwardDynamicsVJP(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for trial := 0; trial < 20; trial++ {
		m := randTree(r, 5)
		n := m.NDoF()
		ws := NewWorkspace(m)
		ad := NewAdjoint(ws)
		q, qd, tau, u := randState(r, n, math.Pi), randState(r, n, 3), randState(r, n, 20), randState(r, n, 1)
		qdd := make([]float64, n)
		ws.ForwardDynamics(q, qd, tau, qdd)
		wv := make([]float64, n)
		ad.SolveMass(u, wv)
		g := make([]InertialGrad, n)
		ad.AddInertiaVJP(wv, g)
		f := func() float64 {
			ws.ForwardDynamics(q, qd, tau, qdd)
			s := 0.0
			for i := range qdd {
				s += u[i] * qdd[i]
			}
			return s
		}
		var all []float64
		for i := range g {
			all = append(all, symGrad(g[i].Scale(-1))...)
		}
		floor := 1e-3 * maxAbs(all) // FD rounding: absolute error allowed 1e-9·max|g|
		for i := range m.Bodies {
			got := symGrad(g[i].Scale(-1))
			for k, ps := range symParams(&m.Bodies[i]) {
				v0 := *ps[0]
				set := func(v float64) {
					for _, p := range ps {
						*p = v
					}
				}
				h := 1e-3 * math.Max(math.Abs(v0), 0.01)
				// Richardson: (4·D(h/2) − D(h))/3, error O(h⁴)
				d := func(h float64) float64 {
					set(v0 + h)
					fp := f()
					set(v0 - h)
					fm := f()
					set(v0)
					return (fp - fm) / (2 * h)
				}
				fd := (4*d(h/2) - d(h)) / 3
				if e := math.Abs(fd - got[k]); e > abaFDTol*(math.Abs(fd)+floor) {
					t.Errorf("trial %d body %d param %d: adjoint %.12g, central difference %.12g", trial, i, k, got[k], fd)
				}
			}
		}
	}
}

// The adjoint path allocates nothing.
func TestAdjointAllocs(t *testing.T) {
	m := chain5()
	w := NewWorkspace(m)
	ad := NewAdjoint(w)
	q, qd, tau, qdd := make([]float64, 5), make([]float64, 5), make([]float64, 5), make([]float64, 5)
	g := make([]InertialGrad, 5)
	if a := testing.AllocsPerRun(100, func() {
		w.ForwardDynamics(q, qd, tau, qdd)
		ad.SolveMass(tau, qdd)
		ad.AddInertiaVJP(qdd, g)
	}); a != 0 {
		t.Errorf("%v allocations per adjoint", a)
	}
}

func BenchmarkAdjoint5(b *testing.B) {
	m := chain5()
	w := NewWorkspace(m)
	ad := NewAdjoint(w)
	q := []float64{0.3, -0.2, 0.5, 1.1, 0.4}
	qd := []float64{0.5, -1, 0.7, 2, -0.3}
	tau := []float64{1, -2, 0.5, 3, 0.1}
	qdd, wv := make([]float64, 5), make([]float64, 5)
	g := make([]InertialGrad, 5)
	w.ForwardDynamics(q, qd, tau, qdd)
	b.ReportAllocs()
	for b.Loop() {
		ad.SolveMass(tau, wv)
		ad.AddInertiaVJP(wv, g)
	}
}
