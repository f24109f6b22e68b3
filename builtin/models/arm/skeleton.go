package arm

import (
	"math"

	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// Bones, in θ order.
const (
	Humerus = iota
	Ulna
	Radius
	NBones
)

// BoneNames are the bone names, in θ order.
var BoneNames = [NBones]string{"humerus", "ulna", "radius"}

// Bone is the ten inertial parameters of one bone (Diff-MSM Sec. III-B,
// π_b = [m, c_x, c_y, c_z, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz]) in its
// body frame: mass [kg], centre of mass [m] and the inertia tensor about
// the centre of mass [kg·m²].
type Bone struct {
	Mass                         float64
	COM                          [3]float64
	Ixx, Iyy, Izz, Ixy, Ixz, Iyz float64
}

// Inertia returns the symmetric inertia tensor about the centre of mass.
func (b Bone) Inertia() rb.Mat3 {
	return rb.Mat3{{b.Ixx, b.Ixy, b.Ixz}, {b.Ixy, b.Iyy, b.Iyz}, {b.Ixz, b.Iyz, b.Izz}}
}

// positiveDefinite reports whether m > 0 and I_C ≻ 0 (leading minors), so
// that the spatial inertia is positive definite. The triangle inequality
// of the principal moments is not required: a perturbed start may violate
// it while the dynamics remain well defined.
func (b Bone) positiveDefinite() bool {
	I := b.Inertia()
	d1 := I[0][0]
	d2 := I[0][0]*I[1][1] - I[0][1]*I[1][0]
	d3 := I[0][0]*(I[1][1]*I[2][2]-I[1][2]*I[2][1]) -
		I[0][1]*(I[1][0]*I[2][2]-I[1][2]*I[2][0]) +
		I[0][2]*(I[1][0]*I[2][1]-I[1][1]*I[2][0])
	return b.Mass > 0 && d1 > 0 && d2 > 0 && d3 > 0 && !math.IsInf(b.Mass, 0)
}

// MyoArmBones are the ground-truth bones. Masses and principal moments are
// MyoArm's (REFERENCES.md); the rest is chosen (see the package doc): the
// principal axes are taken as the body axes, with the smallest moment about
// the long (y) axis, and the centres of mass lie ≈ 43 % down the shaft
// (Dempster's segment ratios) with small offsets so that no component is 0.
var MyoArmBones = [NBones]Bone{
	Humerus: {Mass: 1.99757, COM: [3]float64{0.006, -0.127, -0.004}, Ixx: 0.0128576, Iyy: 0.00239265, Izz: 0.0121576},
	Ulna:    {Mass: 1.1053, COM: [3]float64{0.005, -0.110, 0.012}, Ixx: 0.00543663, Iyy: 0.001, Izz: 0.00523521},
	Radius:  {Mass: 0.23359, COM: [3]float64{0.010, -0.105, -0.006}, Ixx: 0.001, Iyy: 0.001, Izz: 0.001},
}

// Gravity is the gravitational acceleration in the world (thorax) frame,
// OpenSim's convention: x anterior, y up, z lateral (right arm) [m/s²].
var Gravity = rb.Vec3{0, -9.81, 0}

// Joint placements and axes (see the package doc).
var (
	// ElbowPos is the elbow joint centre in the humerus frame (MyoArm's
	// ulna body position, REFERENCES.md) [m].
	ElbowPos = rb.Vec3{0.0061, -0.2904, -0.0123}
	// RadiusPos is the radius frame origin (radial head) in the ulna frame
	// [m] (chosen: 2 cm lateral, 1.15 cm distal of the elbow centre).
	RadiusPos = rb.Vec3{0.0004, -0.0115, 0.02}
	// ElbowAxis is the flexion axis in the humerus frame: lateral (+z),
	// tilted a few degrees for the carrying angle.
	ElbowAxis = unit(rb.Vec3{0.0494, 0.0366, 0.9981})
	// ProSupAxis is the forearm rotation axis in the ulna frame, from the
	// distal ulna to the radial head: the long axis tilted ≈ 7° laterally.
	ProSupAxis = unit(rb.Vec3{-0.0172, 0.9927, 0.1197})
)

func unit(v rb.Vec3) rb.Vec3 { return v.Scale(1 / v.Norm()) }

// Skeleton returns the rigid-body tree with the ground-truth bones: two
// massless shoulder bodies for the elevation plane (about the vertical y)
// and the elevation (about −x in the rotated plane), then the humerus
// (rotation about its long axis y), the ulna (elbow flexion) and the radius
// (pronation–supination). All three shoulder joints sit at the world
// origin, the glenohumeral centre.
func Skeleton() rb.Model {
	m := rb.Model{Gravity: Gravity, Bodies: []rb.Body{
		{Name: "elv_plane", Parent: -1, XTree: rb.Identity, Axis: rb.Vec3{0, 1, 0}},
		{Name: "elevation", Parent: 0, XTree: rb.Identity, Axis: rb.Vec3{-1, 0, 0}},
		{Name: "humerus", Parent: 1, XTree: rb.Identity, Axis: rb.Vec3{0, 1, 0}},
		{Name: "ulna", Parent: 2, XTree: rb.Xlt(ElbowPos), Axis: ElbowAxis},
		{Name: "radius", Parent: 3, XTree: rb.Xlt(RadiusPos), Axis: ProSupAxis},
	}}
	for i := 0; i < NBones; i++ {
		setBone(&m.Bodies[2+i], MyoArmBones[i])
	}
	return m
}

func setBone(b *rb.Body, p Bone) {
	b.Mass = p.Mass
	b.COM = rb.Vec3(p.COM)
	b.Inertia = p.Inertia()
}

// Soft joint limits: beyond a Range end by e > 0 the joint feels
// τ = ∓k·φ(e) − c·min(e/δ, 1)·q̇, φ(e) = e²/(2δ) for e < δ and e − δ/2
// beyond (C¹ at the range end). They are part of the model (Eval and the
// data generator use the same function) and are not identified.
const LimitMargin = 0.05 // δ [rad]

// LimitStiffness k [N·m/rad] and LimitDamping c [N·m·s/rad] per joint.
var (
	LimitStiffness = [NDoF]float64{100, 200, 100, 200, 10}
	LimitDamping   = [NDoF]float64{2, 5, 1, 2, 0.05}
)

// LimitTorque returns the soft-limit torque of joint j at (q, q̇).
func LimitTorque(j int, q, qd float64) float64 {
	lo, hi := Range[j][0], Range[j][1]
	var e, sign float64
	switch {
	case q > hi:
		e, sign = q-hi, -1
	case q < lo:
		e, sign = lo-q, 1
	default:
		return 0
	}
	const d = LimitMargin
	phi, w := e-d/2, 1.0
	if e < d {
		phi, w = e*e/(2*d), e/d
	}
	return sign*LimitStiffness[j]*phi - LimitDamping[j]*w*qd
}
