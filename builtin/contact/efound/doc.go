// Package efound is an elastic-foundation (EF) contact model of a knee
// replacement: a rigid femoral component against a tibial insert whose
// articular surface is a thin elastic layer on a rigid backing, medial and
// lateral compartments — the "original contact model" Lin et al. (2010,
// "Surrogate articular contact models for computationally efficient
// multibody dynamic simulations", Med. Eng. Phys. 32:584–594, Sec. 2.1
// concepts 1–4 and Sec. 2.3) replace by Kriging surrogates.
//
// Foundation (Bei & Fregly 2004; Fregly, Bei & Sylvester 2003, refs. 16–17
// of Lin 2010): each element of the insert surface carries a pressure set
// by its own penetration d alone,
//
//	K = (1 − ν)·E / ((1 + ν)(1 − 2ν))
//	p = K·d/h               (linear)
//	p = −K·ln(1 − d/h)      (nonlinear; d ≥ h is an error)
//
// with E = 463 MPa, ν = 0.46 (Lin 2010, Sec. 2.3), so K = 2140.58 MPa, and
// a layer thickness h = 5 mm (Lin 2010 does not give h; 5 mm is a value
// used by other EF knee models and is a parameter here).
//
// Geometry (analytic, illustrative of a cruciate-retaining knee
// replacement, not a particular implant). Tibial frame: x anterior, y
// superior, z medial (Lin 2010, Fig. 1); medial side at z = +22 mm,
// lateral at −22 mm.
//   - Each femoral condyle is a torus about the femoral z axis (the flexion
//     axis): sagittal radius 40 mm, frontal radius 20 mm (Condyle). Flexion
//     rolls the condyle on itself, so the geometry does not change with γ.
//   - Each insert dish is the lower surface of a torus with sagittal radius
//     70 mm and frontal radius 25 mm, lowest point at (0, 0, ±22) (Dish):
//     less conforming in the sagittal plane (70 vs 40 mm) than in the
//     frontal plane (25 vs 20 mm), as in most fixed-bearing designs.
//   - Each dish is meshed over 40 mm (AP) × 28 mm (ML) into NX × NZ
//     rectangular elements of its planform (DefaultKnee(cell): cell mm
//     squares, 0.5 mm → 80 × 56 = 4 480 elements per side). An element is
//     its centre c on the surface, the unit surface normal n there and its
//     surface area A = Δx·Δz·√(1 + H_x² + H_z²).
//
// Penetration per element is measured along the insert's surface normal:
// the distance from c, along −n, to the condyle surface (Newton's method on
// the torus's signed-distance function φ(c + s·n) = 0), zero when c is
// outside the condyle. The element's force p(d)·A acts along n on the femur
// at c (equal and opposite on the insert); summed over elements it gives,
// per side, the three forces and the three torques about the femoral origin
// (tibial axes; N and N·m), the centre of pressure (normal-force-weighted
// mean of the contacting element centres, tibial frame, mm), the contact
// area, the peak pressure and the layer's strain energy.
//
// Pose (Lin 2010, Sec. 2.1 concept 3): x, y, z translations of the femoral
// origin (mm) and rotations α (varus–valgus, about x), β (internal–external,
// about y), γ (flexion, about z), R = R_y(β)·R_x(α)·R_z(γ) from femoral to
// tibial axes. y is measured from the lift-off height, so y = 0 with no
// rotation is the pose where both sides barely touch and y < 0 loads them.
//
// Around the contact evaluation: Knee.Sensitivity is Lin 2010's
// sensitivity vector (Eq. 1) of the net loads by central differences;
// Knee.Preload sets y for a given net F_y; Knee.Static is the static
// analysis of Sec. 2.2.3 in this knee's sensitive directions (y and α
// equilibrate applied net F_y and T_α within 0.1 %).
//
// Checks (efound_test.go): the foundation modulus by hand; a sphere on a
// flat foundation against its closed forms (linear: F = (K/h)·V_cap =
// π·K·δ²(R − δ/3)/h ≈ π·K·R·δ²/h; nonlinear: a 1-D integral, Gauss–Legendre);
// convergence with grid refinement; zero loads out of contact;
// medial–lateral mirror symmetry; forces against finite differences of the
// strain energy; analytic geometry slopes against finite differences; the
// sensitive directions y and α (Lin 2010, Sec. 2.3.1); static equilibrium.
package efound
