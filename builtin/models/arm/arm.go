package arm

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/muscle"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// Sizes of θ, of a condition row and of an output row.
const (
	BoneParams   = 10
	MuscleParams = 3
	NParams      = NBones*BoneParams + NMuscles*MuscleParams // 54
	NConditions  = 2*NDoF + NMuscles                         // q, q̇, activations
	NOutputs     = NDoF                                      // q̈
)

// DefaultDamping is the joint damping b [N·m·s/rad] of every joint
// (REFERENCES.md: MyoArm ≈ 0.5–1; the low end, see the package doc).
const DefaultDamping = 0.5

var boneFields = [BoneParams]struct{ name, unit, doc string }{
	{"mass", "kg", "mass m"},
	{"com_x", "m", "centre of mass c_x, body frame"},
	{"com_y", "m", "centre of mass c_y, body frame"},
	{"com_z", "m", "centre of mass c_z, body frame"},
	{"Ixx", "kg m^2", "inertia about the COM, I_xx"},
	{"Iyy", "kg m^2", "inertia about the COM, I_yy"},
	{"Izz", "kg m^2", "inertia about the COM, I_zz"},
	{"Ixy", "kg m^2", "inertia about the COM, I_xy"},
	{"Ixz", "kg m^2", "inertia about the COM, I_xz"},
	{"Iyz", "kg m^2", "inertia about the COM, I_yz"},
}

var muscleFields = [MuscleParams]struct{ name, unit, doc string }{
	{"L0", "m", "optimal fibre length l_o^M (MuJoCo L0; tendon slack length held fixed)"},
	{"F0", "N", "maximum isometric force F_o^M (MuJoCo force)"},
	{"vmax", "L0/s", "maximum contraction velocity v_max^M (MuJoCo vmax)"},
}

// boneVector is a bone's parameters in θ order.
func boneVector(b Bone) [BoneParams]float64 {
	return [BoneParams]float64{b.Mass, b.COM[0], b.COM[1], b.COM[2], b.Ixx, b.Iyy, b.Izz, b.Ixy, b.Ixz, b.Iyz}
}

func boneFromVector(v []float64) Bone {
	return Bone{Mass: v[0], COM: [3]float64{v[1], v[2], v[3]}, Ixx: v[4], Iyy: v[5], Izz: v[6], Ixy: v[7], Ixz: v[8], Iyz: v[9]}
}

// GroundTruth returns the MyoArm θ (54 values, Spec order).
func GroundTruth() []float64 {
	th := make([]float64, 0, NParams)
	for _, b := range MyoArmBones {
		v := boneVector(b)
		th = append(th, v[:]...)
	}
	for _, m := range muscle.MyoArm() {
		id := m.Ident()
		th = append(th, id.L0, id.Force, id.VMax)
	}
	return th
}

func buildParams() []abi.Param {
	gt := GroundTruth()
	ps := make([]abi.Param, 0, NParams)
	for b := 0; b < NBones; b++ {
		minI := math.Min(MyoArmBones[b].Ixx, math.Min(MyoArmBones[b].Iyy, MyoArmBones[b].Izz))
		for f, fd := range boneFields {
			v := gt[b*BoneParams+f]
			var lo, hi float64
			switch {
			case f == 0 || (f >= 4 && f <= 6): // mass, principal moments: ±50 %
				lo, hi = 0.5*v, 1.5*v
			case f <= 3: // COM: ±(50 % + 1 cm)
				w := 0.5*math.Abs(v) + 0.01
				lo, hi = v-w, v+w
			default: // products of inertia: ±0.2·(smallest principal moment)
				lo, hi = v-0.2*minI, v+0.2*minI
			}
			ps = append(ps, abi.Param{Name: BoneNames[b] + "_" + fd.name, Unit: fd.unit, Lower: lo, Upper: hi, Default: v,
				Doc: BoneNames[b] + " " + fd.doc})
		}
	}
	for m := 0; m < NMuscles; m++ {
		for f, fd := range muscleFields {
			v := gt[NBones*BoneParams+m*MuscleParams+f]
			ps = append(ps, abi.Param{Name: MuscleNames[m] + "_" + fd.name, Unit: fd.unit, Lower: 0.5 * v, Upper: 1.5 * v, Default: v,
				Doc: MuscleNames[m] + " " + fd.doc})
		}
	}
	return ps
}

func buildColumns() (conds, outs []abi.Column) {
	for _, n := range DoFNames {
		conds = append(conds, abi.Column{Name: "q_" + n, Unit: "rad", Doc: "joint angle " + n})
	}
	for _, n := range DoFNames {
		conds = append(conds, abi.Column{Name: "qd_" + n, Unit: "rad/s", Doc: "joint velocity " + n})
	}
	for _, n := range MuscleNames {
		conds = append(conds, abi.Column{Name: "act_" + n, Unit: "1", Doc: "activation of " + n})
	}
	for _, n := range DoFNames {
		outs = append(outs, abi.Column{Name: "qdd_" + n, Unit: "rad/s^2", Doc: "joint acceleration " + n})
	}
	return conds, outs
}

// Spec is the self-description of the builtin arm model.
var Spec = func() abi.Spec {
	conds, outs := buildColumns()
	return abi.Spec{
		Kind:    abi.KindModel,
		Name:    "arm",
		Version: "1.0.0",
		Doc: "5-DoF MyoArm-like arm (Zhou et al. Diff-MSM Eq. 1-3): joint accelerations by the ABA from 8 MuJoCo Hill muscles " +
			"(torque R^T T), joint damping and soft joint limits; theta = 3 bones x 10 + 8 muscles x 3",
		Params:     buildParams(),
		Conditions: conds,
		Outputs:    outs,
		Settings: []abi.Setting{
			{Name: "damping", Unit: "N m s/rad", Default: DefaultDamping, Doc: "viscous damping of every joint (not identified)"},
		},
		Capabilities: []abi.Capability{abi.CapVJP, abi.CapRowsIndependent},
	}
}()

// Evaluator computes the forward dynamics of the arm for one θ. It is not
// safe for concurrent use; Model keeps a pool of them.
type Evaluator struct {
	Damping float64

	base [NMuscles]muscle.Muscle
	prep [NMuscles]muscle.Prepared // the muscles at θ, prepared (SetTheta)
	rbm  rb.Model
	ws   *rb.Workspace
	ad   *rb.Adjoint

	// After Accel: the row's muscle lengths [m], lengthening velocities
	// [m/s], tensions [N] and their partial derivatives, moment arms R
	// (NMuscles×NDoF) [m] and joint torques [N·m].
	Length, Velocity, Tension [NMuscles]float64
	Partials                  [NMuscles]muscle.Partials
	Arms                      [NMuscles * NDoF]float64
	Tau                       [NDoF]float64

	// AddVJP accumulators: ∂(Σ wᵀRNEA)/∂(body parameters) for every body
	// of the skeleton, and Σ vᵀ∂q̈/∂(muscle parameters); w is scratch.
	gBody   [NDoF]rb.InertialGrad
	gMuscle [NMuscles * MuscleParams]float64
	w       [NDoF]float64
}

// pathTerm is one term of one muscle's path (Paths), flattened for the
// row loop, with the length coefficients C1/2 and C2/3 of Term.length.
type pathTerm struct {
	joint      int
	c0, c1, c2 float64
	h1, h2     float64
}

// terms are all the muscles' path terms in muscle order; muscle i's are
// terms[termStart[i]:termStart[i+1]].
var terms, termStart = func() ([]pathTerm, [NMuscles + 1]int) {
	var ts []pathTerm
	var start [NMuscles + 1]int
	for i := range Paths {
		start[i] = len(ts)
		for _, t := range Paths[i].Terms {
			ts = append(ts, pathTerm{joint: t.Joint, c0: t.C0, c1: t.C1, c2: t.C2, h1: t.C1 / 2, h2: t.C2 / 3})
		}
	}
	start[NMuscles] = len(ts)
	return ts, start
}()

// NewEvaluator returns an evaluator at the ground truth with the given
// joint damping.
func NewEvaluator(damping float64) *Evaluator {
	e := &Evaluator{Damping: damping, rbm: Skeleton()}
	copy(e.base[:], muscle.MyoArm())
	for i := range e.base {
		e.prep[i] = e.base[i].Prepare()
	}
	e.ws = rb.NewWorkspace(&e.rbm)
	e.ws.Hold()
	e.ad = rb.NewAdjoint(e.ws)
	e.ad.Skip = []bool{true, true, false, false, false} // the massless shoulder bodies
	return e
}

// SetTheta sets the 54 parameters. It returns abi.Invalid if a bone's
// mass or inertia is not positive definite, a muscle parameter is not
// positive, or a value is not finite. What depends on θ alone (the bones'
// spatial inertias, the muscles' constants) is computed here, once for
// all the rows that follow.
func (e *Evaluator) SetTheta(theta []float64) abi.Status {
	if len(theta) != NParams {
		return abi.Invalid
	}
	for _, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return abi.Invalid
		}
	}
	for b := 0; b < NBones; b++ {
		if !boneFromVector(theta[b*BoneParams : (b+1)*BoneParams]).positiveDefinite() {
			return abi.Invalid
		}
	}
	off := NBones * BoneParams
	for m := 0; m < NMuscles; m++ {
		p := theta[off+m*MuscleParams : off+(m+1)*MuscleParams]
		if !(p[0] > 0 && p[1] > 0 && p[2] > 0) {
			return abi.Invalid
		}
	}
	for b := 0; b < NBones; b++ {
		setBone(&e.rbm.Bodies[2+b], boneFromVector(theta[b*BoneParams:(b+1)*BoneParams]))
	}
	for m := 0; m < NMuscles; m++ {
		p := theta[off+m*MuscleParams : off+(m+1)*MuscleParams]
		e.prep[m] = e.base[m].WithIdent(muscle.Ident{L0: p[0], Force: p[1], VMax: p[2]}).Prepare()
	}
	e.ws.Hold()
	return abi.OK
}

// Accel computes q̈ at (q, q̇) with muscle activations act (the paper's
// f_FD, Eq. 1–3): muscle lengths and velocities from the paths, tensions
// T from builtin/muscle, τ = Rᵀ T − b·q̇ + soft limits, q̈ by the ABA. It
// returns false if the result is not finite.
func (e *Evaluator) Accel(q, qd, act, qdd []float64) bool {
	q, qd, act, qdd = q[:NDoF], qd[:NDoF], act[:NMuscles], qdd[:NDoF]
	for j := range e.Tau {
		e.Tau[j] = -e.Damping*qd[j] + LimitTorque(j, q[j], qd[j])
	}
	for i := 0; i < NMuscles; i++ {
		ts := terms[termStart[i]:termStart[i+1]]
		row := e.Arms[i*NDoF : (i+1)*NDoF : (i+1)*NDoF]
		l, v := Paths[i].Offset, 0.0
		for k := range ts {
			t := &ts[k]
			qj := q[t.joint]
			r := t.c0 + qj*(t.c1+qj*t.c2) // Term.arm
			row[t.joint] = r
			l += -qj * (t.c0 + qj*(t.h1+qj*t.h2)) // Term.length
			v -= r * qd[t.joint]
		}
		T, dT := e.prep[i].TensionPartials(l, v, act[i])
		e.Length[i], e.Velocity[i], e.Tension[i], e.Partials[i] = l, v, T, dT
		for k := range ts {
			j := ts[k].joint
			e.Tau[j] += row[j] * T
		}
	}
	e.ws.ForwardDynamics(q, qd, e.Tau[:], qdd)
	for _, a := range qdd {
		if math.IsNaN(a) || math.IsInf(a, 0) {
			return false
		}
	}
	return true
}

// ResetVJP clears the accumulators of AddVJP.
func (e *Evaluator) ResetVJP() {
	e.gBody = [NDoF]rb.InertialGrad{}
	e.gMuscle = [NMuscles * MuscleParams]float64{}
}

// AddVJP adds the row's vᵀ·∂q̈/∂θ to the accumulators, for the row of the
// last successful Accel or Load (whose workspace it reads; v has NDoF
// entries). It returns false if M⁻¹v is not finite. The adjoint through
// the equations of motion M(q;θ_b) q̈ + C(q, q̇;θ_b) = τ(q, q̇, a;θ_m) at
// the row's q̈:
//
//	w = M⁻¹ v                          (the ABA's own factorisation, rb.Adjoint.SolveMass)
//	vᵀ∂q̈/∂θ_m = (Σ_j R_mj w_j)·∂T_m/∂(L0, F0, vmax)   (muscle.TensionPartials)
//	vᵀ∂q̈/∂θ_b = −∂(wᵀ RNEA(q, q̇, q̈;θ_b))/∂θ_b      (rb.Adjoint.AddInertiaVJP)
//
// Damping, soft limits and moment arms do not depend on θ.
func (e *Evaluator) AddVJP(v []float64) bool {
	w := e.w[:]
	e.ad.SolveMass(v[:NDoF], w)
	for _, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	for i := 0; i < NMuscles; i++ {
		ts := terms[termStart[i]:termStart[i+1]]
		row := e.Arms[i*NDoF : (i+1)*NDoF : (i+1)*NDoF]
		s := 0.0
		for k := range ts {
			j := ts[k].joint
			s += row[j] * w[j]
		}
		p := &e.Partials[i]
		g := e.gMuscle[i*MuscleParams : (i+1)*MuscleParams : (i+1)*MuscleParams]
		g[0] += s * p.DL0
		g[1] += s * p.DForce
		g[2] += s * p.DVMax
	}
	e.ad.AddSolvedInertiaVJP(e.gBody[:]) // AddInertiaVJP(w, …), reusing SolveMass's λ
	return true
}

// GradVJP writes the accumulated Σ_rows vᵀ∂q̈/∂θ into g (NParams values,
// θ order). The bone parameters take the six distinct entries of the
// symmetric I_C, so ∂/∂I_xy sums the gradients of I_C[0][1] and I_C[1][0].
func (e *Evaluator) GradVJP(g []float64) {
	for b := 0; b < NBones; b++ {
		gb := &e.gBody[2+b] // skeleton: bodies 0 and 1 are the massless shoulder bodies
		I := &gb.Inertia
		d := g[b*BoneParams : (b+1)*BoneParams]
		d[0], d[1], d[2], d[3] = -gb.Mass, -gb.COM[0], -gb.COM[1], -gb.COM[2]
		d[4], d[5], d[6] = -I[0][0], -I[1][1], -I[2][2]
		d[7], d[8], d[9] = -(I[0][1] + I[1][0]), -(I[0][2] + I[2][0]), -(I[1][2] + I[2][1])
	}
	copy(g[NBones*BoneParams:], e.gMuscle[:])
}

// TapeLen is the number of values Save keeps per row: the rigid-body
// workspace's (rb.Workspace.Save: 21 per body), the nonzero moment arms
// and the tensions' parameter partials.
func (e *Evaluator) TapeLen() int { return e.ws.TapeLen() + len(terms) + 3*NMuscles }

// Save writes to t (TapeLen values) what AddVJP reads of the last Accel.
func (e *Evaluator) Save(t []float64) {
	n := e.ws.TapeLen()
	e.ws.Save(t[:n])
	t = t[n:e.TapeLen()]
	for i := 0; i < NMuscles; i++ {
		for k := termStart[i]; k < termStart[i+1]; k++ {
			t[k] = e.Arms[i*NDoF+terms[k].joint]
		}
		p := &e.Partials[i]
		o := len(terms) + 3*i
		t[o], t[o+1], t[o+2] = p.DL0, p.DForce, p.DVMax
	}
}

// Load restores a row that Save kept, at the same θ: AddVJP then adds
// exactly (bit for bit) what it would have added right after that row's
// Accel. Only what AddVJP reads is restored.
func (e *Evaluator) Load(t []float64) {
	n := e.ws.TapeLen()
	e.ws.Load(t[:n])
	t = t[n:e.TapeLen()]
	for i := 0; i < NMuscles; i++ {
		for k := termStart[i]; k < termStart[i+1]; k++ {
			e.Arms[i*NDoF+terms[k].joint] = t[k]
		}
		p := &e.Partials[i]
		o := len(terms) + 3*i
		p.DL0, p.DForce, p.DVMax = t[o], t[o+1], t[o+2]
	}
}

// Model is the arm as an abi.Model. It is safe for concurrent use.
type Model struct {
	damping float64
	pool    sync.Pool // *Evaluator
	tapes   tapeList  // EvalPullback's tapes
}

// tapeList keeps released tapes for reuse, up to maxKeptTape values in
// all. Unlike a sync.Pool it survives garbage collections: a tape is
// several hundred kilobytes and an Adam iteration needs the same ones
// again, so reallocating them after every collection cost time and more
// collections.
type tapeList struct {
	mu   sync.Mutex
	free [][]float64
	kept int // values in free
}

// maxKeptTape bounds the values tapeList keeps: 64 MiB, the tapes of
// ≈ 57 000 rows.
const maxKeptTape = 64 << 20 / 8

// get returns a tape of n values, reused if one is kept.
func (l *tapeList) get(n int) []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.free) - 1; i >= 0; i-- {
		if t := l.free[i]; cap(t) >= n {
			l.free = append(l.free[:i], l.free[i+1:]...)
			l.kept -= cap(t)
			return t[:n]
		}
	}
	return make([]float64, n)
}

// put keeps t for reuse unless the list is full.
func (l *tapeList) put(t []float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kept+cap(t) <= maxKeptTape {
		l.free = append(l.free, t)
		l.kept += cap(t)
	}
}

// New builds the model from its settings (damping).
func New(settings []float64) (abi.Model, error) {
	if len(settings) != len(Spec.Settings) {
		return nil, fmt.Errorf("arm: want %d setting (damping), got %d", len(Spec.Settings), len(settings))
	}
	b := settings[0]
	if !(b >= 0) || math.IsInf(b, 0) {
		return nil, fmt.Errorf("arm: damping must be finite and ≥ 0, got %g", b)
	}
	return NewModel(b), nil
}

// NewModel returns the model with joint damping b.
func NewModel(b float64) *Model {
	m := &Model{damping: b}
	m.pool.New = func() any { return NewEvaluator(b) }
	return m
}

// Spec implements abi.Model.
func (*Model) Spec() abi.Spec { return Spec }

// Eval implements abi.Model: q̈ (5 per row) for each row (q, q̇, act) of x.
func (m *Model) Eval(theta, x, y []float64) abi.Status {
	e, st := m.evaluator(theta, x, y)
	if st != abi.OK {
		return st
	}
	defer m.pool.Put(e)
	for k := 0; k < len(x)/NConditions; k++ {
		r := x[k*NConditions : (k+1)*NConditions]
		if !e.Accel(r[:NDoF], r[NDoF:2*NDoF], r[2*NDoF:], y[k*NOutputs:(k+1)*NOutputs]) {
			return abi.Failed
		}
	}
	return abi.OK
}

// VJP implements abi.VJP: y as Eval (bit for bit) and g = vᵀ·∂y/∂θ, v
// being K×NOutputs like y, by the adjoint of Evaluator.AddVJP row by row
// (rows whose cotangent is zero cost an Eval only). It returns
// abi.Invalid for mismatched lengths, an invalid θ or a non-finite v, and
// abi.Failed if a row's q̈ (as in Eval) or M⁻¹v is not finite; g is then
// all zero and y unspecified.
func (m *Model) VJP(theta, x, v, y, g []float64) abi.Status {
	if st := checkCotangent(len(x)/NConditions, v, g); st != abi.OK {
		return st
	}
	e, st := m.evaluator(theta, x, y)
	if st != abi.OK {
		return st
	}
	defer m.pool.Put(e)
	e.ResetVJP()
	for k := 0; k < len(x)/NConditions; k++ {
		r := x[k*NConditions : (k+1)*NConditions]
		if !e.Accel(r[:NDoF], r[NDoF:2*NDoF], r[2*NDoF:], y[k*NOutputs:(k+1)*NOutputs]) {
			return abi.Failed
		}
		vk := v[k*NOutputs : (k+1)*NOutputs]
		if vk[0] == 0 && vk[1] == 0 && vk[2] == 0 && vk[3] == 0 && vk[4] == 0 {
			continue
		}
		if !e.AddVJP(vk) {
			return abi.Failed
		}
	}
	e.GradVJP(g)
	return abi.OK
}

// evaluator checks the lengths of x and y and takes an Evaluator set to θ
// from the pool (give it back with m.pool.Put); with any other status than
// OK it returns none.
func (m *Model) evaluator(theta, x, y []float64) (*Evaluator, abi.Status) {
	if len(x)%NConditions != 0 || len(y) != len(x)/NConditions*NOutputs {
		return nil, abi.Invalid
	}
	e := m.pool.Get().(*Evaluator)
	if st := e.SetTheta(theta); st != abi.OK {
		m.pool.Put(e)
		return nil, st
	}
	return e, abi.OK
}

// checkCotangent zeroes g and checks the lengths of g and v (K rows) and
// that v is finite.
func checkCotangent(K int, v, g []float64) abi.Status {
	if len(g) != NParams {
		return abi.Invalid
	}
	for i := range g {
		g[i] = 0
	}
	if len(v) != K*NOutputs {
		return abi.Invalid
	}
	for _, c := range v {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return abi.Invalid
		}
	}
	return abi.OK
}

// RowsIndependent implements abi.RowsIndependent: each row's q̈ depends on
// θ and that row alone, computed by the same code whatever rows surround
// it.
func (*Model) RowsIndependent() bool { return true }

// EvalPullback implements abi.Pullbacker: y as Eval (bit for bit), keeping
// per row what AddVJP reads (Evaluator.Save, TapeLen = 148 values,
// 1184 bytes), so that Pull runs only the backward pass. Pull's g equals
// VJP's for the same cotangent bit for bit (the same AddVJP, in the same
// row order, on restored rows). The statuses are Eval's.
func (m *Model) EvalPullback(theta, x, y []float64) (abi.Pullback, abi.Status) {
	e, st := m.evaluator(theta, x, y)
	if st != abi.OK {
		return nil, st
	}
	K, n := len(x)/NConditions, e.TapeLen()
	tape := m.tapes.get(K * n)
	for k := 0; k < K; k++ {
		r := x[k*NConditions : (k+1)*NConditions]
		if !e.Accel(r[:NDoF], r[NDoF:2*NDoF], r[2*NDoF:], y[k*NOutputs:(k+1)*NOutputs]) {
			m.pool.Put(e)
			m.tapes.put(tape)
			return nil, abi.Failed
		}
		e.Save(tape[k*n : (k+1)*n])
	}
	return &pullback{m: m, e: e, tape: tape, rows: K}, abi.OK
}

// pullback is the arm's abi.Pullback: the evaluator at θ and the rows'
// tape.
type pullback struct {
	m    *Model
	e    *Evaluator
	tape []float64
	rows int
}

// Pull implements abi.Pullback: g = vᵀ·∂y/∂θ as VJP, from the tape.
func (p *pullback) Pull(v, g []float64) abi.Status {
	if st := checkCotangent(p.rows, v, g); st != abi.OK {
		return st
	}
	e := p.e
	n := e.TapeLen()
	e.ResetVJP()
	for k := 0; k < p.rows; k++ {
		vk := v[k*NOutputs : (k+1)*NOutputs]
		if vk[0] == 0 && vk[1] == 0 && vk[2] == 0 && vk[3] == 0 && vk[4] == 0 {
			continue
		}
		e.Load(p.tape[k*n : (k+1)*n])
		if !e.AddVJP(vk) {
			return abi.Failed // g still all zero
		}
	}
	e.GradVJP(g)
	return abi.OK
}

// EvalTape implements abi.TapePullbacker (what the Go plugin serves as
// capability pullback): EvalPullback with the rows' tape (TapeLen values
// per row) returned in tape instead of kept.
func (m *Model) EvalTape(theta, x, y, tape []float64) ([]float64, abi.Status) {
	e, st := m.evaluator(theta, x, y)
	if st != abi.OK {
		return tape, st
	}
	defer m.pool.Put(e)
	K, n := len(x)/NConditions, e.TapeLen()
	tape = slices.Grow(tape[:0], K*n)[:K*n]
	for k := 0; k < K; k++ {
		r := x[k*NConditions : (k+1)*NConditions]
		if !e.Accel(r[:NDoF], r[NDoF:2*NDoF], r[2*NDoF:], y[k*NOutputs:(k+1)*NOutputs]) {
			return tape, abi.Failed
		}
		e.Save(tape[k*n : (k+1)*n])
	}
	return tape, abi.OK
}

// PullTape implements abi.TapePullbacker: Pull from a tape of EvalTape at
// the same θ and x, on an evaluator set to θ (SetTheta is deterministic,
// so g equals VJP's bit for bit, like Pull's).
func (m *Model) PullTape(theta, x, tape, v, g []float64) abi.Status {
	K := len(x) / NConditions
	if st := checkCotangent(K, v, g); st != abi.OK {
		return st
	}
	if len(x)%NConditions != 0 {
		return abi.Invalid
	}
	e := m.pool.Get().(*Evaluator)
	defer m.pool.Put(e)
	if st := e.SetTheta(theta); st != abi.OK {
		return st
	}
	n := e.TapeLen()
	if len(tape) != K*n {
		return abi.Invalid
	}
	e.ResetVJP()
	for k := 0; k < K; k++ {
		vk := v[k*NOutputs : (k+1)*NOutputs]
		if vk[0] == 0 && vk[1] == 0 && vk[2] == 0 && vk[3] == 0 && vk[4] == 0 {
			continue
		}
		e.Load(tape[k*n : (k+1)*n])
		if !e.AddVJP(vk) {
			clear(g)
			return abi.Failed
		}
	}
	e.GradVJP(g)
	return abi.OK
}

// Release implements abi.Pullback.
func (p *pullback) Release() {
	if p.e == nil {
		return
	}
	p.m.pool.Put(p.e)
	p.m.tapes.put(p.tape)
	p.e, p.tape = nil, nil
}
