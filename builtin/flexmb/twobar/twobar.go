package twobar

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/flexmb"
	"github.com/kinfer/kinfer/builtin/flexmb/beam"
	"github.com/kinfer/kinfer/builtin/flexmb/hht"
)

// The paper's data (Gouveia et al., Sec. 6).
const (
	E      = 2.1e10   // Pa
	A      = 25e-6    // m²
	I      = 52.1e-12 // m⁴
	Rho    = 7800.0   // kg/m³
	Lb     = 0.9      // bar length, m
	Ls     = 0.1      // unstretched spring length, m
	G      = 9.81     // m/s²
	Theta0 = math.Pi / 6
	Tend   = 3.0 // s
	T1     = 0.69
	T2     = 2.83

	// Nodes, free coordinates (nodes 2–5) and parameters.
	Nodes  = 5
	NDof   = 3 * Nodes
	NFree  = 3 * (Nodes - 1)
	NParam = 4

	DefaultStep   = 1e-3
	DefaultAlpha  = -0.05
	SampleEvery   = 10 // steps between samples: 10 ms at the default step
	DefaultSample = SampleEvery * DefaultStep
)

// PSol, P1 and P2 are the parameter sets of the paper's Table 1 and Figs.
// 2–5: [k₁ N/m, k_t1 N m/rad, k₃ N/m, k_t3 N m/rad].
var (
	PSol = [NParam]float64{700, 0.5, 400, 0.5}
	P1   = [NParam]float64{663, 0.49, 379, 0.49}
	P2   = [NParam]float64{757, 0.50, 465, 0.52}
)

// ParamNames are the parameter names the models use.
var ParamNames = [NParam]string{"k1", "kt1", "k3", "kt3"}

// CoordNames are x1, y1, th1, …, x5, y5, th5 (the paper's node numbers).
func CoordNames(prefix string) []string {
	out := make([]string, 0, NDof)
	for n := 1; n <= Nodes; n++ {
		for _, c := range []string{"x", "y", "th"} {
			out = append(out, fmt.Sprintf("%s%s%d", prefix, c, n))
		}
	}
	return out
}

// CoordColumns are the columns of CoordNames(prefix), for "" (positions),
// "v" (velocities) or "a" (accelerations) of the nodes, with their units
// and what they are (models23: the specs gave neither).
func CoordColumns(prefix string) []abi.Column {
	units := map[string][3]string{"": {"m", "m", "rad"}, "v": {"m/s", "m/s", "rad/s"}, "a": {"m/s²", "m/s²", "rad/s²"}}[prefix]
	what := map[string][3]string{"": {"x position", "y position", "angle"}, "v": {"x velocity", "y velocity", "angular velocity"},
		"a": {"x acceleration", "y acceleration", "angular acceleration"}}[prefix]
	var out []abi.Column
	for i, n := range CoordNames(prefix) {
		out = append(out, abi.Column{Name: n, Unit: units[i%3], Doc: fmt.Sprintf("node %d: %s", i/3+1, what[i%3])})
	}
	return out
}

// System builds the two-bar system for parameters p. Its reference
// coordinates are the stress-free configuration (hanging straight down).
func System(p [NParam]float64) (*flexmb.System, error) {
	for i, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("twobar: parameter %s = %g, want finite and >= 0", ParamNames[i], v)
		}
	}
	d := []float64{0, Ls, Ls + Lb, 2*Ls + Lb, 2*Ls + 2*Lb}
	s := &flexmb.System{Gravity: [2]float64{0, -G}}
	for _, di := range d {
		s.X0 = append(s.X0, 0, -di, 0)
	}
	bar := beam.Props{E: E, A: A, I: I, Rho: Rho}
	s.Springs = []flexmb.Spring{{N1: 0, N2: 1, K: p[0], Kt: p[1]}, {N1: 2, N2: 3, K: p[2], Kt: p[3]}}
	s.Beams = []flexmb.Beam{{N1: 1, N2: 2, Props: bar}, {N1: 3, N2: 4, Props: bar}}
	s.Fixed = []flexmb.Fixed{{Node: 0}}
	if err := s.Prepare(); err != nil {
		return nil, err
	}
	return s, nil
}

// Initial returns the released configuration: the stress-free chain turned
// rigidly by π/6 about node 1, node 1's rotation held at 0 by its clamp.
func Initial(s *flexmb.System) []float64 {
	q := make([]float64, NDof)
	c, sn := math.Cos(Theta0), math.Sin(Theta0)
	for n := 0; n < Nodes; n++ {
		x, y := s.X0[3*n], s.X0[3*n+1]
		q[3*n] = c*x - sn*y
		q[3*n+1] = sn*x + c*y
		if n > 0 {
			q[3*n+2] = Theta0
		}
	}
	return q
}

// Options of a simulation: the HHT step and α.
type Options struct {
	Step, Alpha float64
}

// DefaultOptions are step 1 ms and α = −0.05.
func DefaultOptions() Options { return Options{Step: DefaultStep, Alpha: DefaultAlpha} }

func (o Options) resolve() Options {
	if o.Step == 0 {
		o.Step = DefaultStep
	}
	return o
}

// Sim is a simulation in progress.
type Sim struct {
	Sys *flexmb.System
	It  *hht.Integrator
}

// NewSim sets up the simulation of the release with parameters p.
func NewSim(p [NParam]float64, o Options) (*Sim, error) {
	o = o.resolve()
	s, err := System(p)
	if err != nil {
		return nil, err
	}
	it, err := hht.New(s, hht.Options{Alpha: o.Alpha, Step: o.Step})
	if err != nil {
		return nil, err
	}
	if err := it.Init(0, Initial(s), make([]float64, NDof)); err != nil {
		return nil, err
	}
	return &Sim{Sys: s, It: it}, nil
}

// State is one sample: time and q, q̇, q̈ (15 each).
type State struct {
	T       float64
	Q, V, A []float64
}

func (sm *Sim) state() State {
	it := sm.It
	return State{T: it.T, Q: append([]float64(nil), it.Q...), V: append([]float64(nil), it.V...), A: append([]float64(nil), it.A...)}
}

// Simulate integrates the release with parameters p and returns the state
// every `every` steps from t = 0 to tEnd (inclusive when on the grid).
func Simulate(p [NParam]float64, o Options, tEnd float64, every int) ([]State, error) {
	o = o.resolve()
	sm, err := NewSim(p, o)
	if err != nil {
		return nil, err
	}
	if every < 1 {
		return nil, fmt.Errorf("twobar: sampling every %d steps", every)
	}
	nsteps := int(math.Round(tEnd / o.Step))
	out := []State{sm.state()}
	for k := 1; k <= nsteps; k++ {
		if err := sm.It.Step(); err != nil {
			return out, err
		}
		if k%every == 0 {
			st := sm.state()
			st.T = float64(k) * o.Step // not the sum of k steps: exact grid times
			out = append(out, st)
		}
	}
	return out, nil
}

// Measured returns the "measured set": q from the samples, q̇ and q̈ by
// central differences of q at the sampling interval (Gouveia Sec. 6), for
// the interior samples 1 … len−2.
func Measured(sim []State) []State {
	if len(sim) < 3 {
		return nil
	}
	out := make([]State, 0, len(sim)-2)
	for k := 1; k+1 < len(sim); k++ {
		dt := (sim[k+1].T - sim[k-1].T) / 2
		st := State{T: sim[k].T, Q: append([]float64(nil), sim[k].Q...), V: make([]float64, NDof), A: make([]float64, NDof)}
		for i := 0; i < NDof; i++ {
			qm, q0, qp := sim[k-1].Q[i], sim[k].Q[i], sim[k+1].Q[i]
			st.V[i] = (qp - qm) / (2 * dt)
			st.A[i] = (qp - 2*q0 + qm) / (dt * dt)
		}
		out = append(out, st)
	}
	return out
}

// DirectResidual writes into r (length NFree) the equation-of-motion
// residual of Gouveia Eq. 11 on the free coordinates (nodes 2–5) at the
// kinematics (q, q̇, q̈) for parameters p; sys is a System(p) (rebuilt by
// the caller when p changes) and e its work space.
func DirectResidual(sys *flexmb.System, e *hht.Eval, q, v, a, r []float64) error {
	if err := sys.Eval(0, q, v, e); err != nil {
		return err
	}
	for i := 3; i < NDof; i++ {
		s := e.F[i]
		for j := 0; j < NDof; j++ {
			s += e.M[i*NDof+j] * a[j]
		}
		r[i-3] = s
	}
	return nil
}

// NewEval allocates the work space of DirectResidual.
func NewEval() *hht.Eval {
	n, nc := NDof, 3
	return &hht.Eval{M: make([]float64, n*n), F: make([]float64, n), K: make([]float64, n*n), C: make([]float64, n*n),
		Phi: make([]float64, nc), B: make([]float64, nc*n), Gamma: make([]float64, nc)}
}
