package arm

import (
	"fmt"
	"math"

	"github.com/kinfer/kinfer/builtin/muscle"
)

// Degrees of freedom, in q order.
const (
	ElvAngle     = iota // shoulder elevation plane
	ShoulderElv         // shoulder elevation
	ShoulderRot         // shoulder (humeral) rotation
	ElbowFlexion        // elbow flexion
	ProSup              // forearm pronation–supination
	NDoF
)

// NMuscles is the number of muscles (builtin/muscle.MyoArm order).
const NMuscles = 8

// DoFNames are the joint names, in q order (MyoArm's / OpenSim's names).
var DoFNames = [NDoF]string{"elv_angle", "shoulder_elv", "shoulder_rot", "elbow_flexion", "pro_sup"}

// MuscleNames are the muscle names, in builtin/muscle.MyoArm order.
var MuscleNames = [NMuscles]string{"DELT1", "DELT3", "TRIlong", "TRIlat", "BIClong", "BICshort", "BRA", "BRD"}

// Range is the operating range of each joint [rad] (see the package doc):
// MoBL-ARMS-like, except shoulder elevation, which stays away from 0 and π
// where the elevation-plane axis would align with the humeral rotation axis
// (a singular mass matrix, since the shoulder's first two joint bodies are
// massless).
var Range = [NDoF][2]float64{
	ElvAngle:     {-1.658, 2.269}, // −95° … 130°
	ShoulderElv:  {0.25, 2.5},     // 14° … 143°
	ShoulderRot:  {-1.571, 0.349}, // −90° … 20°
	ElbowFlexion: {0, 2.269},      // 0 … 130° (REFERENCES.md)
	ProSup:       {-1.5708, 1.5708},
}

// armDesign is the shape of one moment arm r(q_j) = −∂len/∂q_j [m], given
// at the low end, the middle and the high end of joint j's Range; r is the
// quadratic through those three points. A muscle's design arms are then
// scaled by one factor so that its length spans exactly its MyoArm
// lengthrange over the Range box (see pathFor).
type armDesign struct {
	joint         int
	lo, mid, high float64
}

// Sign convention of r: a positive r means the muscle's tension drives q_j
// up (elv_angle: towards flexion/horizontal adduction; shoulder_elv:
// elevation; shoulder_rot: internal rotation; elbow_flexion: flexion;
// pro_sup: supination).
var design = [NMuscles][]armDesign{
	{ // DELT1, anterior deltoid: elevator, horizontal flexor, internal rotator
		{ElvAngle, 0.002, 0.003, 0.003}, {ShoulderElv, 0.030, 0.040, 0.030}, {ShoulderRot, 0.004, 0.001, -0.002}},
	{ // DELT3, posterior deltoid: horizontal extensor, weak elevator, external rotator
		{ElvAngle, -0.025, -0.030, -0.030}, {ShoulderElv, 0.010, 0.015, 0.005}, {ShoulderRot, -0.005, -0.012, -0.020}},
	{ // TRIlong: shoulder depressor/extensor and elbow extensor
		{ShoulderElv, -0.020, -0.030, -0.030}, {ElbowFlexion, -0.020, -0.022, -0.018}},
	{ // TRIlat: elbow extensor
		{ElbowFlexion, -0.020, -0.022, -0.018}},
	{ // BIClong: shoulder flexor, elbow flexor (peak near 90°), supinator
		{ShoulderElv, 0.020, 0.025, 0.015}, {ElbowFlexion, 0.020, 0.040, 0.030}, {ProSup, 0.004, 0.003, 0.001}},
	{ // BICshort: shoulder flexor and horizontal adductor, elbow flexor, supinator
		{ElvAngle, 0.010, 0.012, 0.010}, {ShoulderElv, 0.020, 0.025, 0.015}, {ElbowFlexion, 0.020, 0.040, 0.030}, {ProSup, 0.004, 0.003, 0.001}},
	{ // BRA: elbow flexor
		{ElbowFlexion, 0.010, 0.020, 0.018}},
	{ // BRD: elbow flexor (large arm in flexion), returns the forearm to neutral rotation
		{ElbowFlexion, 0.020, 0.055, 0.060}, {ProSup, 0.015, 0.005, -0.010}},
}

// Term is one joint's part of a muscle path: the moment arm
// r(q) = C0 + C1·q + C2·q² about joint Joint and its length contribution
// −∫r = −(C0·q + C1·q²/2 + C2·q³/3).
type Term struct {
	Joint      int
	C0, C1, C2 float64
}

func (t Term) arm(q float64) float64 { return t.C0 + q*(t.C1+q*t.C2) }
func (t Term) length(q float64) float64 {
	return -q * (t.C0 + q*(t.C1/2+q*t.C2/3))
}

// extremes returns the minimum and maximum of t.length over [a, b]: at the
// ends or where r = 0 inside.
func (t Term) extremes(a, b float64) (lo, hi float64) {
	lo, hi = math.Min(t.length(a), t.length(b)), math.Max(t.length(a), t.length(b))
	try := func(q float64) {
		if q > a && q < b {
			l := t.length(q)
			lo, hi = math.Min(lo, l), math.Max(hi, l)
		}
	}
	if t.C2 == 0 {
		if t.C1 != 0 {
			try(-t.C0 / t.C1)
		}
		return lo, hi
	}
	if d := t.C1*t.C1 - 4*t.C2*t.C0; d >= 0 {
		s := math.Sqrt(d)
		try((-t.C1 + s) / (2 * t.C2))
		try((-t.C1 - s) / (2 * t.C2))
	}
	return lo, hi
}

// Path is one muscle's length as a function of the joint angles,
// len(q) = Offset + Σ_terms −∫r_j(q_j) dq_j: a sum of cubics in the joint
// angles, so the moment arms r_j = −∂len/∂q_j are quadratics.
type Path struct {
	Offset float64
	Terms  []Term
	Scale  float64 // factor applied to the design arms
}

// Length returns the muscle–tendon length at q [m].
func (p *Path) Length(q []float64) float64 {
	l := p.Offset
	for _, t := range p.Terms {
		l += t.length(q[t.Joint])
	}
	return l
}

// pathFor fits the quadratic through the three design arms of each joint,
// scales all of a muscle's arms by one factor s > 0 so that the length
// spans the muscle's lengthrange LR1 − LR0 over the Range box, and sets
// the offset so that its minimum over the box is LR0. The length is then
// within [LR0, LR1] wherever every joint is within its Range, and reaches
// both ends (MuJoCo's lengthrange is the range of the length over the
// joint ranges).
func pathFor(d []armDesign, m muscle.Muscle) Path {
	p := Path{}
	for _, a := range d {
		lo, hi := Range[a.joint][0], Range[a.joint][1]
		mid := 0.5 * (lo + hi)
		// quadratic through (lo, a.lo), (mid, a.mid), (hi, a.high) in Newton form
		h := mid - lo
		d1 := (a.mid - a.lo) / h
		d2 := (a.high - a.mid) / h
		c2 := (d2 - d1) / (2 * h)
		// r = a.lo + d1(q−lo) + c2(q−lo)(q−mid)
		c1 := d1 - c2*(lo+mid)
		c0 := a.lo - d1*lo + c2*lo*mid
		p.Terms = append(p.Terms, Term{Joint: a.joint, C0: c0, C1: c1, C2: c2})
	}
	span, min := 0.0, 0.0
	for _, t := range p.Terms {
		lo, hi := t.extremes(Range[t.Joint][0], Range[t.Joint][1])
		span += hi - lo
		min += lo
	}
	s := (m.LR1 - m.LR0) / span
	for i := range p.Terms {
		p.Terms[i].C0 *= s
		p.Terms[i].C1 *= s
		p.Terms[i].C2 *= s
	}
	p.Scale = s
	p.Offset = m.LR0 - s*min
	return p
}

// Paths are the eight muscle paths, fitted to MyoArm's lengthranges.
var Paths = func() [NMuscles]Path {
	var ps [NMuscles]Path
	ms := muscle.MyoArm()
	for i := range ps {
		if ms[i].Name != MuscleNames[i] {
			panic(fmt.Sprintf("arm: muscle %d is %s, want %s", i, ms[i].Name, MuscleNames[i]))
		}
		ps[i] = pathFor(design[i], ms[i])
	}
	return ps
}()

// MuscleLengths writes the eight muscle–tendon lengths at q into l [m].
func MuscleLengths(q, l []float64) {
	for i := range Paths {
		l[i] = Paths[i].Length(q)
	}
}

// MomentArms writes the moment-arm matrix R = −∂len/∂q at q into r,
// row-major NMuscles×NDoF [m]: the joint torque of tensions T is τ = Rᵀ T
// (builtin/muscle.TorqueFromTension with J = −R).
func MomentArms(q, r []float64) {
	for i := range r[:NMuscles*NDoF] {
		r[i] = 0
	}
	for i := range Paths {
		for _, t := range Paths[i].Terms {
			r[i*NDoF+t.Joint] = t.arm(q[t.Joint])
		}
	}
}

// MuscleVelocities writes the lengthening velocities v = ∂len/∂q·q̇ =
// −R q̇ at (q, q̇) into v [m/s].
func MuscleVelocities(q, qd, v []float64) {
	for i := range Paths {
		s := 0.0
		for _, t := range Paths[i].Terms {
			s -= t.arm(q[t.Joint]) * qd[t.Joint]
		}
		v[i] = s
	}
}
