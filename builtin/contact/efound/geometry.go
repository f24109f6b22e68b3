package efound

import (
	"fmt"
	"math"
)

// Condyle is a femoral condyle: a torus whose axis is the femoral z axis
// (the flexion axis), centred at z = Zc in the femoral frame. Its tube
// circle (radius Frontal, the frontal-plane radius of the condyle) sweeps
// a circle of radius Sagittal − Frontal in the sagittal (x–y) plane, so
// the condyle's sagittal radius is Sagittal. With Sagittal = Frontal the
// torus degenerates into a sphere of that radius centred at (0, 0, Zc).
// All lengths in mm.
type Condyle struct {
	Sagittal float64 // sagittal (flexion-plane) radius R_s, ≥ Frontal
	Frontal  float64 // frontal (coronal-plane) radius r_f
	Zc       float64 // medial–lateral position of the condyle centre
}

// Validate checks the radii.
func (c Condyle) Validate() error {
	if !(c.Frontal > 0) || !(c.Sagittal >= c.Frontal) || math.IsInf(c.Sagittal, 0) || math.IsNaN(c.Zc) {
		return fmt.Errorf("efound: condyle needs 0 < frontal ≤ sagittal < ∞, got sagittal %g, frontal %g, zc %g", c.Sagittal, c.Frontal, c.Zc)
	}
	return nil
}

// SDF is the signed distance from q (femoral frame) to the condyle's
// surface, negative inside, and its gradient (a unit vector where defined).
// Torus: ρ = √(q_x² + q_y²), d_c = √((ρ − a)² + (q_z − Zc)²), φ = d_c − r_f
// with a = R_s − r_f.
func (c Condyle) SDF(q [3]float64) (phi float64, g [3]float64) {
	a := c.Sagittal - c.Frontal
	qz := q[2] - c.Zc
	rho := math.Hypot(q[0], q[1])
	dr := rho - a
	dc := math.Hypot(dr, qz)
	phi = dc - c.Frontal
	if dc == 0 {
		return phi, [3]float64{0, -1, 0}
	}
	if rho == 0 { // on the axis (only for a sphere): radial direction is −y by convention
		return phi, [3]float64{0, -dr / dc, qz / dc}
	}
	s := dr / (dc * rho)
	return phi, [3]float64{q[0] * s, q[1] * s, qz / dc}
}

// Dish is the articular surface of one side of the tibial insert, a height
// field y = H(x, z) in the tibial frame over the rectangle
// [−HalfX, HalfX] × [Zc − HalfZ, Zc + HalfZ]. It is the lower surface of a
// torus (a toroidal dish) with sagittal radius Sagittal and frontal radius
// Frontal, lowest point (0, 0, Zc): H(x, z) = C − √((a + √(r_f² − w²))² − x²),
// w = z − Zc, a = R_s − r_f, C = R_s. Sagittal = Frontal gives a spherical
// dish; Flat = true a plane y = 0 (the closed-form test case).
type Dish struct {
	Sagittal, Frontal float64 // dish radii (mm), Sagittal ≥ Frontal unless Flat
	Zc                float64 // ML position of the dish's lowest point (mm)
	HalfX, HalfZ      float64 // half extents of the meshed patch (mm)
	Flat              bool
}

// Validate checks the dish against its patch: the torus must be defined
// over the whole patch.
func (d Dish) Validate() error {
	if !(d.HalfX > 0) || !(d.HalfZ > 0) || math.IsNaN(d.Zc) {
		return fmt.Errorf("efound: dish patch needs half_x, half_z > 0, got %g, %g", d.HalfX, d.HalfZ)
	}
	if d.Flat {
		return nil
	}
	if !(d.Frontal > d.HalfZ) || !(d.Sagittal >= d.Frontal) || math.IsInf(d.Sagittal, 0) {
		return fmt.Errorf("efound: dish needs half_z < frontal ≤ sagittal < ∞, got sagittal %g, frontal %g, half_z %g", d.Sagittal, d.Frontal, d.HalfZ)
	}
	a := d.Sagittal - d.Frontal
	rz := math.Sqrt(d.Frontal*d.Frontal - d.HalfZ*d.HalfZ)
	if !(a+rz > d.HalfX) {
		return fmt.Errorf("efound: dish patch half_x %g exceeds the dish's sagittal extent %g", d.HalfX, a+rz)
	}
	return nil
}

// Height returns H(x, z) and its partial derivatives H_x, H_z.
func (d Dish) Height(x, z float64) (h, hx, hz float64) {
	if d.Flat {
		return 0, 0, 0
	}
	w := z - d.Zc
	a := d.Sagittal - d.Frontal
	rz := math.Sqrt(d.Frontal*d.Frontal - w*w) // frontal circle
	u := a + rz                                // sagittal radius of the section at this z
	s := math.Sqrt(u*u - x*x)
	h = d.Sagittal - s
	hx = x / s
	// ∂s/∂z = (u/s)·∂u/∂z, ∂u/∂z = −w/rz
	hz = -(u / s) * (-w / rz)
	return h, hx, hz
}
