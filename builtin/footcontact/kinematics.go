package footcontact

import (
	"math"

	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// NDoF is the number of degrees of freedom of one foot (Jackson 2016: "three
// translations and three rotations defining the position and orientation
// of the HF segment in the lab frame (6DoFs) and one rotation defining toes
// flexion with respect to the HF segment (1DoF)").
const NDoF = 7

// DoFNames are the coordinates q, in order: HF origin AP, SI, ML [m]; HF
// rotations about ML (Z), AP (X), SI (Y) in a body-fixed 3-1-2 sequence
// [rad] (Jackson 2016 Fig. 3); toe flexion [rad].
var DoFNames = [NDoF]string{"hf_tx", "hf_ty", "hf_tz", "hf_rz", "hf_rx", "hf_ry", "toe"}

// Kin is a foot's pose evaluated for q: the HF rotation and its partial
// derivatives, the toe rotation and its derivative.
type Kin struct {
	T   rb.Vec3    // HF origin in the lab
	R   rb.Mat3    // HF orientation: lab = T + R·hf
	DR  [3]rb.Mat3 // ∂R/∂rz, ∂R/∂rx, ∂R/∂ry
	Ra  rb.Mat3    // toe rotation about the toes axis (in HF coordinates)
	DRa rb.Mat3    // ∂Ra/∂toe
}

func rotZ(a float64) (r, d rb.Mat3) {
	s, c := math.Sincos(a)
	return rb.Mat3{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}, rb.Mat3{{-s, -c, 0}, {c, -s, 0}, {0, 0, 0}}
}

func rotX(a float64) (r, d rb.Mat3) {
	s, c := math.Sincos(a)
	return rb.Mat3{{1, 0, 0}, {0, c, -s}, {0, s, c}}, rb.Mat3{{0, 0, 0}, {0, -s, -c}, {0, c, -s}}
}

func rotY(a float64) (r, d rb.Mat3) {
	s, c := math.Sincos(a)
	return rb.Mat3{{c, 0, s}, {0, 1, 0}, {-s, 0, c}}, rb.Mat3{{-s, 0, c}, {0, 0, 0}, {-c, 0, -s}}
}

// Kinematics evaluates the pose for q: R = Rz(rz)·Rx(rx)·Ry(ry) (body-fixed
// 3-1-2), and the toe rotation Ra = exp(toe·a×) about the toes axis a
// (Rodrigues).
func (f *Foot) Kinematics(q []float64) Kin {
	var k Kin
	k.T = rb.Vec3{q[0], q[1], q[2]}
	z, dz := rotZ(q[3])
	x, dx := rotX(q[4])
	y, dy := rotY(q[5])
	k.R = z.Mul(x).Mul(y)
	k.DR[0] = dz.Mul(x).Mul(y)
	k.DR[1] = z.Mul(dx).Mul(y)
	k.DR[2] = z.Mul(x).Mul(dy)
	k.Ra = rb.AxisAngle(f.Axis, q[6])
	s, c := math.Sincos(q[6])
	K := rb.Skew(f.Axis)
	k.DRa = K.Scale(c).Add(K.Mul(K).Scale(s))
	return k
}

// Point returns the lab position and velocity of a point fixed in the HF
// (forefoot false) or FF, given by its HF coordinates s in the static pose,
// for the pose k and the coordinate rates qd: v = Σ_j ∂r/∂q_j·q̇_j.
func (f *Foot) Point(k *Kin, s rb.Vec3, forefoot bool, qd []float64) (pos, vel rb.Vec3) {
	sh := s
	var dsh rb.Vec3 // ∂(HF coordinates)/∂toe
	if forefoot {
		rel := s.Sub(f.AxisPoint)
		sh = f.AxisPoint.Add(k.Ra.MulVec(rel))
		dsh = k.DRa.MulVec(rel)
	}
	pos = k.T.Add(k.R.MulVec(sh))
	vel = rb.Vec3{qd[0], qd[1], qd[2]}
	for j := 0; j < 3; j++ {
		vel = vel.Add(k.DR[j].MulVec(sh).Scale(qd[3+j]))
	}
	if forefoot {
		vel = vel.Add(k.R.MulVec(dsh).Scale(qd[6]))
	}
	return pos, vel
}

// MarkerPositions returns the lab positions of the dynamic markers for q.
func (f *Foot) MarkerPositions(q []float64) [NMarkers]rb.Vec3 {
	k := f.Kinematics(q)
	var zero [NDoF]float64
	var out [NMarkers]rb.Vec3
	for i, m := range f.Markers {
		out[i], _ = f.Point(&k, m.Pos, m.Forefoot, zero[:])
	}
	return out
}
