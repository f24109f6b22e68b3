package wearsim

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kinfer/kinfer/builtin/contact/efound"
)

const deg = math.Pi / 180

// Machine holds the simulator's mechanical parameters. Lengths mm, masses
// kg, inertias kg·m², forces N, torques N·m, angles rad.
type Machine struct {
	TibiaMass   float64 // AP and ML carriage of the tibial insert (x, z)
	FemurMass   float64 // axial (y) carriage of the femoral component
	VVInertia   float64 // femoral varus–valgus (α) inertia
	IEInertia   float64 // tibial internal–external (β) inertia
	APSpring    float64 // N/mm, total of the anterior and posterior bumpers (Lin 2010: 2 × 14.48 = 28.96)
	IESpring    float64 // N·m/rad, rotational restraint
	AxialOffset float64 // mm, medial offset of the axial force line
	// Damping (N·s/mm for x, y, z; N·m·s/rad for α, β): the machine's
	// friction and the insert's losses, lumped as viscous.
	Damping [5]float64
}

// DefaultMachine is a Stanmore-type simulator (doc.go): bumpers
// 2 × 14.48 N/mm (Lin et al. 2010, Sec. 2.3), rotational restraint
// 0.6 N·m/° and axial force line 7 % of a 70 mm insert width medial of the
// centre (the ISO 14243-1 soft-tissue and load-offset values as commonly
// quoted), masses and inertias of a simulator's carriages (our estimates;
// Lin et al. estimated theirs from CAD models, not given), damping ratios
// 0.3–0.5 of the modes' critical damping.
var DefaultMachine = Machine{
	TibiaMass: 4, FemurMass: 6, VVInertia: 0.02, IEInertia: 0.02,
	APSpring: 28.96, IESpring: 0.6 / deg, AxialOffset: 0.07 * 70,
	Damping: [5]float64{0.5, 5, 0.5, 2, 0.5},
}

// Options of a simulation.
type Options struct {
	Steps  int // time steps per cycle (default 500: 2 ms at 1 Hz)
	Cycles int // cycles simulated (default 2); wear and histories are those of the last
	// Warmup, when > 0, replaces Cycles: the simulation runs Warmup cycles
	// (a fraction is allowed, e.g. 0.25) and then the measured cycle.
	Warmup float64
	// WearFactor k of Archard's law, mm³/(N·m) (default 1e-7, Lin 2010 Sec. 2.3.5)
	WearFactor float64
	// Extrapolate the one-cycle wear to this many cycles (default 5e6).
	Extrapolate float64
	// Elements: also the element-based wear (needs an *EF contact).
	Elements bool
	// Tol is Newton's tolerance on the step increment (mm, rad; default 1e-5: above the rounding noise of a Kriging surrogate on ~1 000 sites, far below the motions that matter for wear).
	Tol float64
	// History: keep the last cycle's time histories.
	History bool
}

func (o *Options) defaults() {
	if o.Steps <= 0 {
		o.Steps = 500
	}
	if o.Cycles <= 0 {
		o.Cycles = 2
	}
	if o.WearFactor == 0 {
		o.WearFactor = 1e-7
	}
	if o.Extrapolate == 0 {
		o.Extrapolate = 5e6
	}
	if o.Tol == 0 {
		o.Tol = 1e-5
	}
}

// Frame is one time instant of a history.
type Frame struct {
	T     float64
	Pose  efound.Pose
	Loads [2]SideLoads
	Slip  [2]float64 // CoP slip speed per side, mm/s
}

// Result of a simulation.
type Result struct {
	// WearCoP is the CoP-based Archard wear per side (medial, lateral),
	// mm³, of the last cycle times Extrapolate.
	WearCoP [2]float64
	// WearElem is the element-based wear (Options.Elements), same units.
	WearElem [2]float64
	History  []Frame
	// Evals counts contact evaluations; Jacobians the Jacobian refreshes.
	Evals, Jacobians, Steps int
}

// Total is the medial plus lateral CoP-based wear.
func (r Result) Total() float64 { return r.WearCoP[0] + r.WearCoP[1] }

// Newton's iteration limit per step, and the iterations after which a
// Jacobian is refreshed at the current iterate.
const (
	maxNewton    = 16
	refreshEvery = 4
)

// ErrNewton: a step's Newton iteration failed even with fresh Jacobians.
var ErrNewton = errors.New("wearsim: Newton iteration did not converge")

// sim is one simulation's state.
type sim struct {
	c     Contact
	m     Machine
	in    Inputs
	opt   Options
	mass  [5]float64 // diagonal, N·s²/mm or N·m·s²
	loads [2]SideLoads
	evals int
	lu    mat.LU
	jac   *mat.Dense
	c2    float64 // step-matrix coefficient of the current Jacobian
}

func (s *sim) pose(t float64, q [5]float64) efound.Pose {
	return efound.Pose{X: q[0], Y: q[1], Z: q[2], Alpha: q[3], Beta: q[4], Gamma: s.in[InFlexion].At(t) * deg}
}

// force is the generalised force F(t, q, v) of the five free coordinates
// (relative pose x, y, z, α, β of the femoral component in tibial axes;
// rows in N and N·m): contact, bumpers, damping and the ISO loads.
// Coordinates are relative (femur minus tibia), so the loads applied to
// the tibia (AP force, IE torque) enter with a minus sign; the axial force
// pushes the femur down along its line at AxialOffset medially, giving a
// varus–valgus moment e·W.
func (s *sim) force(t float64, q, v [5]float64, cop bool) ([5]float64, error) {
	if err := s.c.Eval(s.pose(t, q), cop, &s.loads); err != nil {
		return [5]float64{}, err
	}
	s.evals++
	var fc [5]float64
	for side := 0; side < 2; side++ {
		l := s.loads[side]
		fc[0] += l.F[0]
		fc[1] += l.F[1]
		fc[2] += l.F[2]
		fc[3] += l.T[0]
		fc[4] += l.T[1]
	}
	w := s.in[InAxial].At(t)
	m := s.m
	f := [5]float64{
		fc[0] - m.APSpring*q[0] - s.in[InAP].At(t),
		fc[1] - w,
		fc[2],
		fc[3] + m.AxialOffset*w*1e-3,
		fc[4] - m.IESpring*q[4] - s.in[InIE].At(t),
	}
	for i := range f {
		f[i] -= m.Damping[i] * v[i]
		if math.IsNaN(f[i]) || math.IsInf(f[i], 0) {
			return f, fmt.Errorf("wearsim: non-finite force at t %g s", t)
		}
	}
	return f, nil
}

// stepJacobian forms J = c2·M − ∂F/∂q − c1·∂F/∂v for an implicit step
// with q̈ = c2·q + …, q̇ = c1·q + …: ∂F/∂q by forward differences of the
// contact model (1e-3 mm, 1e-4 rad: steps well above a Kriging
// predictor's rounding noise) plus the springs, ∂F/∂v = −damping.
func (s *sim) stepJacobian(t float64, q, v [5]float64, f0 [5]float64, c1, c2 float64) error {
	J := mat.NewDense(5, 5, nil)
	for j := 0; j < 5; j++ {
		h := 1e-3
		if j >= 3 {
			h = 1e-4
		}
		qp := q
		qp[j] += h
		fp, err := s.force(t, qp, v, false)
		if err != nil {
			return err
		}
		for i := 0; i < 5; i++ {
			J.Set(i, j, -(fp[i]-f0[i])/h)
		}
		J.Set(j, j, J.At(j, j)+c2*s.mass[j]+c1*s.m.Damping[j])
	}
	s.jac = J
	s.lu.Factorize(J)
	if s.lu.Det() == 0 {
		return fmt.Errorf("wearsim: singular step matrix at t %g s", t)
	}
	return nil
}

// Simulate runs the simulator with contact model c, machine m and inputs
// in: implicit BDF2 (backward Euler on the first step) on the five free
// coordinates with γ(t) prescribed, modified Newton with a
// finite-difference Jacobian kept across steps and refreshed when an
// iteration stalls (as a stiff solver such as Matlab's ode15s, which Lin
// et al. 2010 used, does). The start is the static pose under the first
// instant's axial load (y from the contact model, other coordinates 0,
// at rest); wear and histories are those of the last cycle.
func Simulate(c Contact, m Machine, in Inputs, opt Options) (Result, error) {
	opt.defaults()
	var res Result
	for i, cv := range in {
		if cv == nil {
			return res, fmt.Errorf("wearsim: input %s missing", InputNames[i])
		}
	}
	s := &sim{c: c, m: m, in: in, opt: opt}
	s.mass = [5]float64{m.TibiaMass * 1e-3, m.FemurMass * 1e-3, m.TibiaMass * 1e-3, m.VVInertia, m.IEInertia}
	for i, v := range s.mass {
		if !(v > 0) {
			return res, fmt.Errorf("wearsim: mass/inertia %d is %g, need > 0", i, v)
		}
	}
	period := in[InFlexion].Period
	h := period / float64(opt.Steps)
	y0, err := s.preload(in[InAxial].At(0))
	if err != nil {
		return res, err
	}
	q := [5]float64{0, y0, 0, 0, 0}
	var v, qPrev, vPrev [5]float64
	warm := opt.Steps * (opt.Cycles - 1)
	if opt.Warmup > 0 {
		warm = int(math.Round(opt.Warmup * float64(opt.Steps)))
	}
	total := warm + opt.Steps
	last := warm
	var elem *EF
	if opt.Elements {
		e, ok := c.(*EF)
		if !ok {
			return res, fmt.Errorf("wearsim: element-based wear needs the EF contact model")
		}
		elem = e
	}
	restart := true // the next step is a backward-Euler one (no history)
	for n := 0; n < total; n++ {
		t1 := float64(n+1) * h
		q1, v1, err := s.step(t1, h, q, v, qPrev, vPrev, !restart, &res)
		restart = false
		if errors.Is(err, ErrNewton) {
			// a hard step: four backward-Euler substeps, then restart BDF2
			q1, v1 = q, v
			for k := 1; k <= 4; k++ {
				if q1, v1, err = s.step(t1-h+float64(k)*h/4, h/4, q1, v1, q1, v1, false, &res); err != nil {
					break
				}
			}
			restart = true
		}
		if err != nil {
			return res, err
		}
		qPrev, vPrev = q, v
		q, v = q1, v1
		res.Steps++
		if n < last {
			continue
		}
		// accepted step in the last cycle: loads with CoP, slip, wear
		if _, err := s.force(t1, q, v, true); err != nil {
			return res, err
		}
		p := s.pose(t1, q)
		gd := s.in[InFlexion].Slope(t1) * deg
		fr := Frame{T: t1 - float64(warm)*h, Pose: p, Loads: s.loads}
		for side := 0; side < 2; side++ {
			l := s.loads[side]
			sv := pointVelocity(p, v, gd, c.LiftOff(), l.CoP)
			fr.Slip[side] = norm3(sv)
			// Archard: V = k·|F|·s, s in m (Lin 2010, Sec. 2.3.5)
			res.WearCoP[side] += opt.WearFactor * norm3(l.F) * fr.Slip[side] * h * 1e-3
		}
		if elem != nil {
			err := elem.Visit(p, func(side int, cc [3]float64, fn float64) {
				res.WearElem[side] += opt.WearFactor * fn * norm3(pointVelocity(p, v, gd, c.LiftOff(), cc)) * h * 1e-3
			})
			if err != nil {
				return res, err
			}
		}
		if opt.History {
			res.History = append(res.History, fr)
		}
	}
	for side := 0; side < 2; side++ {
		res.WearCoP[side] *= opt.Extrapolate
		res.WearElem[side] *= opt.Extrapolate
	}
	res.Evals = s.evals
	return res, nil
}

// step takes one implicit step of size h to t1 from (q, v): BDF2 with the
// history (qPrev, vPrev) one step back when bdf2, else backward Euler.
func (s *sim) step(t1, h float64, q, v, qPrev, vPrev [5]float64, bdf2 bool, res *Result) (q1, v1 [5]float64, err error) {
	var c1, c2 float64
	var qb, vb [5]float64 // q̇₁ = c1·q₁ − qb, q̈₁ = c2·q₁ − vb
	if !bdf2 {
		// backward Euler: v₁ = (q₁ − q₀)/h, a₁ = (v₁ − v₀)/h
		c1, c2 = 1/h, 1/(h*h)
		for i := range qb {
			qb[i] = q[i] / h
			vb[i] = q[i]/(h*h) + v[i]/h
		}
	} else {
		// BDF2: v₁ = (3q₁ − 4q₀ + q₋₁)/(2h), a₁ = (3v₁ − 4v₀ + v₋₁)/(2h)
		c1 = 3 / (2 * h)
		c2 = 9 / (4 * h * h)
		for i := range qb {
			qb[i] = (4*q[i] - qPrev[i]) / (2 * h)
			vb[i] = 3/(2*h)*qb[i] + (4*v[i]-vPrev[i])/(2*h)
		}
	}
	if c2 != s.c2 {
		s.jac = nil // another step size or formula: the step matrix changes
		s.c2 = c2
	}
	vel := func(q1 [5]float64) (v1, a1 [5]float64) {
		for i := range q1 {
			v1[i] = c1*q1[i] - qb[i]
			a1[i] = c2*q1[i] - vb[i]
		}
		return
	}
	q1 = q
	for i := range q1 { // predictor: q + h·v
		q1[i] += h * v[i]
	}
	converged := false
	for it := 0; it < maxNewton && !converged; it++ {
		v1, a1 := vel(q1)
		f, err := s.force(t1, q1, v1, false)
		if err != nil {
			return q1, v1, err
		}
		if s.jac == nil || (it > 0 && it%refreshEvery == 0) {
			// a stalled (or first) iteration: fresh Jacobian at the iterate
			if err := s.stepJacobian(t1, q1, v1, f, c1, c2); err != nil {
				return q1, v1, err
			}
			res.Jacobians++
		}
		r := mat.NewVecDense(5, nil)
		for i := range f {
			r.SetVec(i, s.mass[i]*a1[i]-f[i])
		}
		var dq mat.VecDense
		if err := s.lu.SolveVecTo(&dq, false, r); err != nil {
			return q1, v1, fmt.Errorf("%w: step matrix at t %g s: %v", ErrNewton, t1, err)
		}
		converged = true
		for i := 0; i < 5; i++ {
			d := dq.AtVec(i)
			q1[i] -= d
			if !(math.Abs(d) <= s.opt.Tol) {
				converged = false
			}
		}
	}
	if !converged {
		return q1, v1, fmt.Errorf("%w at t %g s", ErrNewton, t1)
	}
	v1, _ = vel(q1)
	return q1, v1, nil
}

// preload finds y at which the net contact F_y equals w at the neutral
// pose (x = z = α = β = 0, γ(0)), by bisection on y ∈ [−0.4, −0.01] mm (inside the surrogates' data).
func (s *sim) preload(w float64) (float64, error) {
	f := func(y float64) (float64, error) {
		fo, err := s.force(0, [5]float64{0, y, 0, 0, 0}, [5]float64{}, false)
		return fo[1], err // fc_y − w
	}
	lo, hi := -0.4, -0.01
	flo, err := f(lo)
	if err != nil {
		return 0, err
	}
	fhi, err := f(hi)
	if err != nil {
		return 0, err
	}
	if !(flo > 0 && fhi < 0) {
		return 0, fmt.Errorf("wearsim: initial axial load %g N not bracketed by y ∈ [−0.4, −0.01] mm", w)
	}
	for hi-lo > 1e-10 {
		mid := 0.5 * (lo + hi)
		fm, err := f(mid)
		if err != nil {
			return 0, err
		}
		if fm > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi), nil
}

// pointVelocity is the velocity, in tibial axes (mm/s), of the point of
// the femoral component that is at c (tibial frame, mm): v = ṫ + ω×(c − t)
// with t = (x, y + Y0, z) and, for R = R_y(β)R_x(α)R_z(γ),
// ω = β̇·e_y + α̇·R_y(β)e_x + γ̇·R_y(β)R_x(α)e_z (rigid-body kinematics;
// Lin 2010 Sec. 2.3.5 treat the CoP as a point fixed in the femoral frame).
func pointVelocity(p efound.Pose, v [5]float64, gdot, y0 float64, c [3]float64) [3]float64 {
	sa, ca := math.Sin(p.Alpha), math.Cos(p.Alpha)
	sb, cb := math.Sin(p.Beta), math.Cos(p.Beta)
	w := [3]float64{
		v[3]*cb + gdot*sb*ca,
		v[4] - gdot*sa,
		-v[3]*sb + gdot*cb*ca,
	}
	r := [3]float64{c[0] - p.X, c[1] - (p.Y + y0), c[2] - p.Z}
	return [3]float64{
		v[0] + w[1]*r[2] - w[2]*r[1],
		v[1] + w[2]*r[0] - w[0]*r[2],
		v[2] + w[0]*r[1] - w[1]*r[0],
	}
}

func norm3(a [3]float64) float64 { return math.Sqrt(a[0]*a[0] + a[1]*a[1] + a[2]*a[2]) }
