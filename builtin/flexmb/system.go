package flexmb

import (
	"errors"
	"fmt"
	"math"

	"github.com/kinfer/kinfer/builtin/flexmb/beam"
	"github.com/kinfer/kinfer/builtin/flexmb/hht"
)

// Beam is a co-rotational beam element between nodes N1 and N2. Its
// reference chord (L0, Beta0) is taken from the system's reference
// coordinates when left zero.
type Beam struct {
	N1, N2 int
	beam.Props
}

// Spring is a massless co-rotational linear and torsional spring between
// nodes N1 and N2: N = K(L − L0), M = Kt(θ2 − θ1 − Phi0). L0 is taken
// from the reference coordinates when zero.
type Spring struct {
	N1, N2    int
	K, Kt     float64
	L0, Phi0  float64
	NoTorsion bool // a purely axial spring (a truss)
	NoAxial   bool // a purely torsional spring
}

// PointMass is a lumped mass M [kg] and rotary inertia J [kg m²] at a node.
type PointMass struct {
	Node int
	M, J float64
}

// Fixed clamps a node: x, y, θ held at their reference values (3 constraints).
type Fixed struct{ Node int }

// Pin holds a node's x, y at their reference values (2 constraints).
type Pin struct{ Node int }

// Link pins two nodes together: x_A = x_B, y_A = y_B (2 constraints).
type Link struct{ A, B int }

// Load is a constant external nodal force and moment.
type Load struct {
	Node       int
	Fx, Fy, Mz float64
}

// System is a planar flexible multibody system. X0 holds the reference
// coordinates (x, y, θ) of every node (3 per node); constraints hold
// nodes at them.
type System struct {
	X0      []float64
	Beams   []Beam
	Springs []Spring
	Masses  []PointMass
	Fixed   []Fixed
	Pins    []Pin
	Links   []Link
	Loads   []Load
	Gravity [2]float64

	ml       [][36]float64 // local mass of each beam
	bmat     []float64     // constant constraint Jacobian nc×n
	b0       []float64     // Φ = B q − b0
	nc       int
	prepared bool
	// LoadFactor scales Loads (Static's increments); 1 by default.
	LoadFactor float64
}

// Nodes is the number of nodes.
func (s *System) Nodes() int { return len(s.X0) / 3 }

// Prepare checks the system and fills the derived data; call it after
// building the system and before anything else.
func (s *System) Prepare() error {
	if len(s.X0) == 0 || len(s.X0)%3 != 0 {
		return fmt.Errorf("flexmb: %d reference coordinates, want 3 per node", len(s.X0))
	}
	nn := s.Nodes()
	node := func(what string, i, n int) error {
		if n < 0 || n >= nn {
			return fmt.Errorf("flexmb: %s %d names node %d; the system has nodes 0 to %d", what, i, n, nn-1)
		}
		return nil
	}
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	s.ml = make([][36]float64, len(s.Beams))
	for i := range s.Beams {
		b := &s.Beams[i]
		if err := node("beam", i, b.N1); err != nil {
			return err
		}
		if err := node("beam", i, b.N2); err != nil {
			return err
		}
		if b.N1 == b.N2 {
			return fmt.Errorf("flexmb: beam %d joins node %d to itself", i, b.N1)
		}
		if b.L0 == 0 {
			dx, dy := s.X0[3*b.N2]-s.X0[3*b.N1], s.X0[3*b.N2+1]-s.X0[3*b.N1+1]
			b.L0, b.Beta0 = math.Hypot(dx, dy), math.Atan2(dy, dx)
		}
		if !pos(b.E) || !pos(b.A) || !pos(b.I) || !(b.Rho >= 0) || !pos(b.L0) {
			return fmt.Errorf("flexmb: beam %d: E, A, I, L0 must be > 0 and rho >= 0 (E=%g A=%g I=%g rho=%g L0=%g)", i, b.E, b.A, b.I, b.Rho, b.L0)
		}
		s.ml[i] = b.LocalMass()
	}
	for i := range s.Springs {
		sp := &s.Springs[i]
		if err := node("spring", i, sp.N1); err != nil {
			return err
		}
		if err := node("spring", i, sp.N2); err != nil {
			return err
		}
		if sp.L0 == 0 && !sp.NoAxial {
			sp.L0 = math.Hypot(s.X0[3*sp.N2]-s.X0[3*sp.N1], s.X0[3*sp.N2+1]-s.X0[3*sp.N1+1])
		}
		if !(sp.K >= 0) || !(sp.Kt >= 0) || math.IsInf(sp.K, 0) || math.IsInf(sp.Kt, 0) {
			return fmt.Errorf("flexmb: spring %d: stiffnesses must be finite and >= 0 (k=%g kt=%g)", i, sp.K, sp.Kt)
		}
	}
	for i, m := range s.Masses {
		if err := node("mass", i, m.Node); err != nil {
			return err
		}
		if !(m.M >= 0) || !(m.J >= 0) {
			return fmt.Errorf("flexmb: mass %d: m=%g J=%g, want >= 0", i, m.M, m.J)
		}
	}
	for i, l := range s.Loads {
		if err := node("load", i, l.Node); err != nil {
			return err
		}
	}
	n := len(s.X0)
	var rows [][]float64
	var rhs []float64
	add := func(dof int) {
		r := make([]float64, n)
		r[dof] = 1
		rows = append(rows, r)
		rhs = append(rhs, s.X0[dof])
	}
	for i, f := range s.Fixed {
		if err := node("fixed joint", i, f.Node); err != nil {
			return err
		}
		add(3 * f.Node)
		add(3*f.Node + 1)
		add(3*f.Node + 2)
	}
	for i, p := range s.Pins {
		if err := node("pin", i, p.Node); err != nil {
			return err
		}
		add(3 * p.Node)
		add(3*p.Node + 1)
	}
	for i, l := range s.Links {
		if err := node("link", i, l.A); err != nil {
			return err
		}
		if err := node("link", i, l.B); err != nil {
			return err
		}
		for d := 0; d < 2; d++ {
			r := make([]float64, n)
			r[3*l.A+d], r[3*l.B+d] = 1, -1
			rows = append(rows, r)
			rhs = append(rhs, 0)
		}
	}
	s.nc = len(rows)
	s.bmat = make([]float64, 0, s.nc*n)
	for _, r := range rows {
		s.bmat = append(s.bmat, r...)
	}
	s.b0 = rhs
	if s.LoadFactor == 0 {
		s.LoadFactor = 1
	}
	s.prepared = true
	return nil
}

// Size implements hht.System.
func (s *System) Size() (int, int) { return len(s.X0), s.nc }

// ErrNotPrepared is returned when Prepare was not called.
var ErrNotPrepared = errors.New("flexmb: system not prepared (call Prepare)")

// ErrDegenerate is returned for an element whose chord has collapsed.
var ErrDegenerate = errors.New("flexmb: element of zero length")

func gather(q []float64, a, b int, p *[6]float64) {
	copy(p[:3], q[3*a:3*a+3])
	copy(p[3:], q[3*b:3*b+3])
}

func dofs(a, b int) [6]int {
	return [6]int{3 * a, 3*a + 1, 3*a + 2, 3 * b, 3*b + 1, 3*b + 2}
}

// Eval implements hht.System: M(q), F = h(q, q̇) + f_int(q) − g(q) − f_ext,
// K = ∂f_int/∂q, C = 0, Φ = Bq − b0.
func (s *System) Eval(t float64, q, v []float64, e *hht.Eval) error {
	if !s.prepared {
		return ErrNotPrepared
	}
	n := len(s.X0)
	clear(e.M)
	clear(e.F)
	clear(e.K)
	clear(e.C)
	var p, pv [6]float64
	for i := range s.Beams {
		b := &s.Beams[i]
		gather(q, b.N1, b.N2, &p)
		gather(v, b.N1, b.N2, &pv)
		if p[0] == p[3] && p[1] == p[4] {
			return ErrDegenerate
		}
		var f, fi, fg [6]float64
		var K, M [36]float64
		b.Internal(&p, &f, &K)
		b.Mass(&p, &s.ml[i], &M)
		b.Inertia(&p, &pv, &s.ml[i], &fi)
		b.Gravity(&p, s.Gravity, &fg)
		d := dofs(b.N1, b.N2)
		for a := 0; a < 6; a++ {
			e.F[d[a]] += f[a] + fi[a] - fg[a]
			for c := 0; c < 6; c++ {
				e.K[d[a]*n+d[c]] += K[a*6+c]
				e.M[d[a]*n+d[c]] += M[a*6+c]
			}
		}
	}
	for i := range s.Springs {
		sp := &s.Springs[i]
		gather(q, sp.N1, sp.N2, &p)
		var f [6]float64
		var K [36]float64
		if err := sp.internal(&p, &f, &K); err != nil {
			return err
		}
		d := dofs(sp.N1, sp.N2)
		for a := 0; a < 6; a++ {
			e.F[d[a]] += f[a]
			for c := 0; c < 6; c++ {
				e.K[d[a]*n+d[c]] += K[a*6+c]
			}
		}
	}
	for _, m := range s.Masses {
		i := 3 * m.Node
		e.M[i*n+i] += m.M
		e.M[(i+1)*n+i+1] += m.M
		e.M[(i+2)*n+i+2] += m.J
		e.F[i] -= m.M * s.Gravity[0]
		e.F[i+1] -= m.M * s.Gravity[1]
	}
	for _, l := range s.Loads {
		i := 3 * l.Node
		e.F[i] -= s.LoadFactor * l.Fx
		e.F[i+1] -= s.LoadFactor * l.Fy
		e.F[i+2] -= s.LoadFactor * l.Mz
	}
	copy(e.B, s.bmat)
	for c := 0; c < s.nc; c++ {
		var r float64
		for j := 0; j < n; j++ {
			r += s.bmat[c*n+j] * q[j]
		}
		e.Phi[c] = r - s.b0[c]
		e.Gamma[c] = 0
	}
	return nil
}

// internal adds the spring's force and tangent.
func (sp *Spring) internal(p *[6]float64, f *[6]float64, K *[36]float64) error {
	if !sp.NoAxial {
		dx, dy := p[3]-p[0], p[4]-p[1]
		L := math.Hypot(dx, dy)
		if L == 0 {
			return ErrDegenerate
		}
		ch := beam.Chord{L: L, C: dx / L, S: dy / L}
		r, z := ch.R(), ch.Z()
		N := sp.K * (L - sp.L0)
		for a := 0; a < 6; a++ {
			f[a] += N * r[a]
			for c := 0; c < 6; c++ {
				K[a*6+c] += sp.K*r[a]*r[c] + N*z[a]*z[c]/L
			}
		}
	}
	if !sp.NoTorsion {
		m := sp.Kt * (p[5] - p[2] - sp.Phi0)
		f[2] -= m
		f[5] += m
		K[2*6+2] += sp.Kt
		K[5*6+5] += sp.Kt
		K[2*6+5] -= sp.Kt
		K[5*6+2] -= sp.Kt
	}
	return nil
}

// SpringForces returns the axial force N and the moment M of spring i at q.
func (s *System) SpringForces(i int, q []float64) (N, M float64) {
	sp := &s.Springs[i]
	var p [6]float64
	gather(q, sp.N1, sp.N2, &p)
	if !sp.NoAxial {
		N = sp.K * (math.Hypot(p[3]-p[0], p[4]-p[1]) - sp.L0)
	}
	if !sp.NoTorsion {
		M = sp.Kt * (p[5] - p[2] - sp.Phi0)
	}
	return
}

// Energy returns the kinetic energy T, the strain energy U (beams and
// springs) and the gravity potential V (beams and point masses) at (q, q̇).
func (s *System) Energy(q, v []float64) (T, U, V float64) {
	var p, pv [6]float64
	for i := range s.Beams {
		b := &s.Beams[i]
		gather(q, b.N1, b.N2, &p)
		gather(v, b.N1, b.N2, &pv)
		T += b.Kinetic(&p, &pv, &s.ml[i])
		U += b.StrainEnergy(&p)
		V += b.GravityPotential(&p, s.Gravity)
	}
	for i := range s.Springs {
		sp := &s.Springs[i]
		gather(q, sp.N1, sp.N2, &p)
		if !sp.NoAxial {
			d := math.Hypot(p[3]-p[0], p[4]-p[1]) - sp.L0
			U += 0.5 * sp.K * d * d
		}
		if !sp.NoTorsion {
			d := p[5] - p[2] - sp.Phi0
			U += 0.5 * sp.Kt * d * d
		}
	}
	for _, m := range s.Masses {
		i := 3 * m.Node
		T += 0.5 * (m.M*(v[i]*v[i]+v[i+1]*v[i+1]) + m.J*v[i+2]*v[i+2])
		V -= m.M * (s.Gravity[0]*q[i] + s.Gravity[1]*q[i+1])
	}
	for _, l := range s.Loads {
		i := 3 * l.Node
		V -= s.LoadFactor * (l.Fx*(q[i]-s.X0[i]) + l.Fy*(q[i+1]-s.X0[i+1]) + l.Mz*(q[i+2]-s.X0[i+2]))
	}
	return
}
