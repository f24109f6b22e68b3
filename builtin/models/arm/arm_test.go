package arm

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/muscle"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

const (
	fdTol     = 1e-7  // moment arms vs central differences of the length (relative to 1 cm)
	solveTol  = 1e-10 // ABA vs mass-matrix solve, relative
	lengthTol = 1e-12 // lengths at the lengthrange ends [m]
)

func randomQ(rng *rand.Rand, q []float64, margin float64) {
	for j := range q[:NDoF] {
		lo, hi := Range[j][0], Range[j][1]
		q[j] = lo - margin + (hi-lo+2*margin)*rng.Float64()
	}
}

func randomRow(rng *rand.Rand, r []float64) {
	randomQ(rng, r[:NDoF], 0.1) // also beyond the ranges, where the soft limits act
	for j := NDoF; j < 2*NDoF; j++ {
		r[j] = 4 * (2*rng.Float64() - 1)
	}
	for i := 2 * NDoF; i < NConditions; i++ {
		r[i] = rng.Float64()
	}
}

func TestSpec(t *testing.T) {
	if err := Spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(Spec.Params) != 54 || len(Spec.Conditions) != 18 || len(Spec.Outputs) != 5 {
		t.Fatalf("%d params, %d conditions, %d outputs", len(Spec.Params), len(Spec.Conditions), len(Spec.Outputs))
	}
	gt := GroundTruth()
	for i, p := range Spec.Params {
		if p.Default != gt[i] || !(p.Lower <= gt[i] && gt[i] <= p.Upper) {
			t.Errorf("%s: truth %g, default %g, bounds [%g, %g]", p.Name, gt[i], p.Default, p.Lower, p.Upper)
		}
	}
	for _, c := range []struct {
		i    int
		name string
		v    float64
	}{{0, "humerus_mass", 1.99757}, {15, "ulna_Iyy", 0.001}, {29, "radius_Iyz", 0}, {31, "DELT1_F0", 1051.85}, {53, "BRD_vmax", 10}} {
		if Spec.Params[c.i].Name != c.name || gt[c.i] != c.v {
			t.Errorf("param %d is %s = %g, want %s = %g", c.i, Spec.Params[c.i].Name, gt[c.i], c.name, c.v)
		}
	}
	if Spec.Conditions[0].Name != "q_elv_angle" || Spec.Conditions[10].Name != "act_DELT1" || Spec.Outputs[4].Name != "qdd_pro_sup" {
		t.Error("column names")
	}
	if got := gt[NBones*BoneParams]; math.Abs(got-muscle.MyoArm()[0].L0()) > 0 {
		t.Errorf("DELT1_L0 %g", got)
	}
	if _, err := New([]float64{-1}); err == nil {
		t.Error("negative damping accepted")
	}
	if _, err := New(nil); err == nil {
		t.Error("missing setting accepted")
	}
	vals, err := abi.SettingValues(Spec.Settings, nil)
	if err != nil || vals[0] != DefaultDamping {
		t.Errorf("default settings %v %v", vals, err)
	}
}

// Moment arms are −∂len/∂q: central differences of the lengths.
func TestMomentArmsAreLengthGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := make([]float64, NDoF)
	r := make([]float64, NMuscles*NDoF)
	lp, lm := make([]float64, NMuscles), make([]float64, NMuscles)
	const h = 1e-6
	for n := 0; n < 200; n++ {
		randomQ(rng, q, 0)
		MomentArms(q, r)
		for j := 0; j < NDoF; j++ {
			q0 := q[j]
			q[j] = q0 + h
			MuscleLengths(q, lp)
			q[j] = q0 - h
			MuscleLengths(q, lm)
			q[j] = q0
			for i := 0; i < NMuscles; i++ {
				fd := -(lp[i] - lm[i]) / (2 * h)
				if math.Abs(fd-r[i*NDoF+j]) > fdTol*0.01 {
					t.Fatalf("%s/%s at q %v: arm %g, −∂len/∂q %g", MuscleNames[i], DoFNames[j], q, r[i*NDoF+j], fd)
				}
			}
		}
	}
	// Velocities are −R q̇ = d len/dt along a path.
	qd := []float64{0.3, -0.7, 1.1, -0.4, 0.9}
	v := make([]float64, NMuscles)
	MuscleVelocities(q, qd, v)
	qp, qm := make([]float64, NDoF), make([]float64, NDoF)
	for j := range q {
		qp[j], qm[j] = q[j]+h*qd[j], q[j]-h*qd[j]
	}
	MuscleLengths(qp, lp)
	MuscleLengths(qm, lm)
	for i := range v {
		if fd := (lp[i] - lm[i]) / (2 * h); math.Abs(fd-v[i]) > 1e-8 {
			t.Errorf("%s: velocity %g, d len/dt %g", MuscleNames[i], v[i], fd)
		}
	}
}

// Over the Range box every length stays within MyoArm's lengthrange, and
// the single-joint muscles reach both ends at the ends of the elbow range.
func TestLengthsWithinLengthrange(t *testing.T) {
	ms := muscle.MyoArm()
	rng := rand.New(rand.NewPCG(3, 4))
	q := make([]float64, NDoF)
	l := make([]float64, NMuscles)
	lo, hi := make([]float64, NMuscles), make([]float64, NMuscles)
	for i := range lo {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
	}
	check := func() {
		MuscleLengths(q, l)
		for i, m := range ms {
			if l[i] < m.LR0-lengthTol || l[i] > m.LR1+lengthTol {
				t.Fatalf("%s: length %g at q %v outside [%g, %g]", m.Name, l[i], q, m.LR0, m.LR1)
			}
			lo[i], hi[i] = math.Min(lo[i], l[i]), math.Max(hi[i], l[i])
		}
	}
	for n := 0; n < 20000; n++ {
		randomQ(rng, q, 0)
		check()
	}
	for c := 0; c < 1<<NDoF; c++ { // corners
		for j := range q {
			q[j] = Range[j][c>>j&1]
		}
		check()
	}
	for i, m := range ms {
		// random points and corners cover most of the lengthrange
		if (hi[i]-lo[i])/(m.LR1-m.LR0) < 0.9 {
			t.Errorf("%s: sampled lengths [%g, %g] cover little of [%g, %g]", m.Name, lo[i], hi[i], m.LR0, m.LR1)
		}
	}
	for _, c := range []struct {
		i      int
		atZero float64
		atMax  float64
	}{{3, ms[3].LR0, ms[3].LR1}, {6, ms[6].LR1, ms[6].LR0}} { // TRIlat lengthens with flexion, BRA shortens
		q[ElbowFlexion] = Range[ElbowFlexion][0]
		a := Paths[c.i].Length(q)
		q[ElbowFlexion] = Range[ElbowFlexion][1]
		b := Paths[c.i].Length(q)
		if math.Abs(a-c.atZero) > lengthTol || math.Abs(b-c.atMax) > lengthTol {
			t.Errorf("%s: length %g … %g over the elbow range, want %g … %g", MuscleNames[c.i], a, b, c.atZero, c.atMax)
		}
	}
}

// Anatomical signs: flexors accelerate elbow flexion, extensors the
// opposite; DELT1 elevates.
func TestMuscleActionSigns(t *testing.T) {
	e := NewEvaluator(DefaultDamping)
	q := []float64{0.5, 1.0, -0.3, 1.2, 0.2}
	qd := make([]float64, NDoF)
	act := make([]float64, NMuscles)
	base, more := make([]float64, NDoF), make([]float64, NDoF)
	e.Accel(q, qd, act, base)
	for _, c := range []struct {
		m, j int
		sign float64
	}{{6, ElbowFlexion, 1}, {7, ElbowFlexion, 1}, {4, ElbowFlexion, 1}, {3, ElbowFlexion, -1}, {2, ElbowFlexion, -1},
		{0, ShoulderElv, 1}, {4, ProSup, 1}} {
		act[c.m] = 0.5
		e.Accel(q, qd, act, more)
		act[c.m] = 0
		if (more[c.j]-base[c.j])*c.sign <= 0 {
			t.Errorf("%s: q̈_%s %g → %g, want sign %g", MuscleNames[c.m], DoFNames[c.j], base[c.j], more[c.j], c.sign)
		}
	}
}

// solve solves the n×n system A x = b by Gaussian elimination with partial
// pivoting (A and b are overwritten).
func solve(A []float64, b []float64) []float64 {
	n := len(b)
	for k := 0; k < n; k++ {
		p := k
		for i := k + 1; i < n; i++ {
			if math.Abs(A[i*n+k]) > math.Abs(A[p*n+k]) {
				p = i
			}
		}
		for j := 0; j < n; j++ {
			A[k*n+j], A[p*n+j] = A[p*n+j], A[k*n+j]
		}
		b[k], b[p] = b[p], b[k]
		for i := k + 1; i < n; i++ {
			f := A[i*n+k] / A[k*n+k]
			for j := k; j < n; j++ {
				A[i*n+j] -= f * A[k*n+j]
			}
			b[i] -= f * b[k]
		}
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for j := i + 1; j < n; j++ {
			s -= A[i*n+j] * x[j]
		}
		x[i] = s / A[i*n+i]
	}
	return x
}

// Eval agrees with an independent assembly: tensions from builtin/muscle
// at the path lengths, τ by muscle.TorqueFromTension with J = −R, the
// damping and limit torques, and q̈ from the CRBA mass matrix and the RNEA
// bias forces, M q̈ = τ − C, at a perturbed θ.
func TestEvalMatchesMassMatrixSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	theta := GroundTruth()
	for i, p := range Spec.Params {
		theta[i] = p.Lower + (p.Upper-p.Lower)*(0.25+0.5*rng.Float64())
	}
	const K = 50
	x := make([]float64, K*NConditions)
	for k := 0; k < K; k++ {
		randomRow(rng, x[k*NConditions:(k+1)*NConditions])
	}
	m := NewModel(0.8)
	y := make([]float64, K*NOutputs)
	if st := m.Eval(theta, x, y); st != abi.OK {
		t.Fatal(st)
	}
	sk := Skeleton()
	for b := 0; b < NBones; b++ {
		setBone(&sk.Bodies[2+b], boneFromVector(theta[b*BoneParams:]))
	}
	ws := rb.NewWorkspace(&sk)
	ms := muscle.MyoArm()
	for i := range ms {
		p := theta[NBones*BoneParams+3*i:]
		ms[i] = ms[i].WithIdent(muscle.Ident{L0: p[0], Force: p[1], VMax: p[2]})
	}
	R := make([]float64, NMuscles*NDoF)
	J := make([]float64, NMuscles*NDoF)
	l, v, T := make([]float64, NMuscles), make([]float64, NMuscles), make([]float64, NMuscles)
	tau, c, H := make([]float64, NDoF), make([]float64, NDoF), make([]float64, NDoF*NDoF)
	for k := 0; k < K; k++ {
		r := x[k*NConditions : (k+1)*NConditions]
		q, qd, act := r[:NDoF], r[NDoF:2*NDoF], r[2*NDoF:]
		MomentArms(q, R)
		for i := range R {
			J[i] = -R[i]
		}
		MuscleLengths(q, l)
		MuscleVelocities(q, qd, v)
		for i := range ms {
			T[i] = ms[i].Tension(l[i], v[i], act[i])
		}
		muscle.TorqueFromTension(J, T, tau)
		ws.BiasForces(q, qd, c)
		ws.MassMatrix(q, H)
		for j := range tau {
			tau[j] += -0.8*qd[j] + LimitTorque(j, q[j], qd[j]) - c[j]
		}
		want := solve(H, tau)
		for j := range want {
			got := y[k*NOutputs+j]
			if math.Abs(got-want[j]) > solveTol*math.Max(1, math.Abs(want[j])) {
				t.Errorf("row %d q̈_%s: Eval %.15g, M⁻¹(τ − C) %.15g", k, DoFNames[j], got, want[j])
			}
		}
	}
}

// The soft limit is 0 inside the range, C¹ at its ends, and pushes back.
func TestLimitTorque(t *testing.T) {
	for j := 0; j < NDoF; j++ {
		lo, hi := Range[j][0], Range[j][1]
		if LimitTorque(j, 0.5*(lo+hi), 3) != 0 || LimitTorque(j, hi, 3) != 0 || LimitTorque(j, lo, -3) != 0 {
			t.Errorf("%s: torque inside the range", DoFNames[j])
		}
		if !(LimitTorque(j, hi+0.2, 0) < 0 && LimitTorque(j, lo-0.2, 0) > 0) {
			t.Errorf("%s: limit does not push back", DoFNames[j])
		}
		const eps = 1e-7
		d := LimitMargin
		a, b := LimitTorque(j, hi+d-eps, 0), LimitTorque(j, hi+d+eps, 0)
		if math.Abs(a-b) > 1e-4 {
			t.Errorf("%s: jump %g at the end of the margin", DoFNames[j], b-a)
		}
		want := -LimitStiffness[j]*(0.3-d/2) - LimitDamping[j]*2
		if got := LimitTorque(j, hi+0.3, 2); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %g, want %g", DoFNames[j], got, want)
		}
	}
}

func TestInvalidTheta(t *testing.T) {
	m := NewModel(DefaultDamping)
	x := make([]float64, NConditions)
	randomRow(rand.New(rand.NewPCG(7, 8)), x)
	y := make([]float64, NOutputs)
	if st := m.Eval(GroundTruth(), x, y); st != abi.OK {
		t.Fatal(st)
	}
	bad := func(what string, f func(th []float64)) {
		th := GroundTruth()
		f(th)
		if st := m.Eval(th, x, y); st != abi.Invalid {
			t.Errorf("%s: status %v, want invalid", what, st)
		}
	}
	bad("negative mass", func(th []float64) { th[0] = -1 })
	bad("indefinite inertia", func(th []float64) { th[BoneParams+7] = 0.01 }) // ulna I_xy > √(I_xx I_yy)
	bad("zero force", func(th []float64) { th[NBones*BoneParams+1] = 0 })
	bad("NaN", func(th []float64) { th[5] = math.NaN() })
	if st := m.Eval(GroundTruth()[:53], x, y); st != abi.Invalid {
		t.Errorf("short θ: %v", st)
	}
	if st := m.Eval(GroundTruth(), x[:17], y); st != abi.Invalid {
		t.Errorf("short row: %v", st)
	}
}

// Concurrent Evals with different θ give the serial answers.
func TestConcurrentEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const K, P = 200, 8
	x := make([]float64, K*NConditions)
	for k := 0; k < K; k++ {
		randomRow(rng, x[k*NConditions:(k+1)*NConditions])
	}
	thetas := make([][]float64, P)
	want := make([][]float64, P)
	m := NewModel(DefaultDamping)
	for p := range thetas {
		thetas[p] = GroundTruth()
		for i, s := range Spec.Params {
			thetas[p][i] = s.Lower + (s.Upper-s.Lower)*(0.3+0.4*rng.Float64())
		}
		want[p] = make([]float64, K*NOutputs)
		if st := m.Eval(thetas[p], x, want[p]); st != abi.OK {
			t.Fatal(st)
		}
	}
	concurrently(t, P, func(_, p int) bool {
		y := make([]float64, K*NOutputs)
		if st := m.Eval(thetas[p], x, y); st != abi.OK {
			return false
		}
		for i := range y {
			if y[i] != want[p][i] {
				return false
			}
		}
		return true
	})
}

// One Eval over 10 000 rows (the paper's training-set size).
func BenchmarkEval10k(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	const K = 10000
	x := make([]float64, K*NConditions)
	for k := 0; k < K; k++ {
		randomRow(rng, x[k*NConditions:(k+1)*NConditions])
	}
	y := make([]float64, K*NOutputs)
	m := NewModel(DefaultDamping)
	th := GroundTruth()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := m.Eval(th, x, y); st != abi.OK {
			b.Fatal(st)
		}
	}
}

// concurrently runs same(rep, p) for every θ index p < P, four repetitions,
// all at once, and reports each p whose call returned false (a result that
// differs from the serial one).
func concurrently(t *testing.T, P int, same func(rep, p int) bool) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan int, P*4)
	for rep := 0; rep < 4; rep++ {
		for p := 0; p < P; p++ {
			wg.Add(1)
			go func(rep, p int) {
				defer wg.Done()
				if !same(rep, p) {
					errs <- p
				}
			}(rep, p)
		}
	}
	wg.Wait()
	close(errs)
	for p := range errs {
		t.Errorf("θ %d: concurrent result differs", p)
	}
}
