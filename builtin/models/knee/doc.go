// Package knee is a reduced tibio-femoral knee model for the squat of
// Bartsoen et al. 2023 (docs/REFERENCES.md):
// the femur is fixed, the tibial flexion is prescribed, and the five
// secondary degrees of freedom (ML, AP, PD translations; VV, IE rotations)
// are found by quasi-static force and moment equilibrium of the tibia, the
// analogue of the paper's force-dependent kinematics (Sec. 2.2). It replaces
// the paper's MRI-based AnyBody model by analytic, documented geometry, so
// its outputs are those of a representative knee, not of a specimen.
//
// # Parameters (50, Table 2)
//
// For each bundle in Table 2's row order — deepMCL, supMCL, LCL, ALL, PFL,
// ACL0, ACL1, PCL0, PCL1, PC — the linear stiffness k_<b> [N] and reference
// strain epsr_<b> [1] of the Blankevoort law (Eq. 1–2, reused from
// builtin/models/ligament), then the attachment offsets Table 2 gives for
// it [mm]: xF_<b>, yF_<b> (femur) and xT_<b>, yT_<b> (tibia or fibula).
// deepMCL, supMCL, LCL and ALL have xF, yF, xT (their tibial attachments
// vary only antero-posteriorly, Sec. 2.3); PFL has xF, yF; the four cruciate
// bundles have all four; PC has none: 10 + 10 + 4·3 + 2 + 4·4 = 50. Bounds
// are Table 2's; every default is the middle of its range (offsets 0).
// An offset moves the attachment in the tangent plane of the bone surface
// (Sec. 2.3): x is the anterior direction projected on the plane, z the
// outward surface normal, y = z × x. The model keeps the point in that plane
// (the paper projects it back onto the bone mesh).
//
// The reference length L_r of Eq. 2 is each bundle's length, with its
// offsets applied, at the reference pose: full extension (0°) with all
// secondary DoF zero (the paper's reference position is full extension).
//
// # Conditions and outputs
//
// Condition flexion_deg ∈ [0°, 140°], one row per angle, any order (rows
// outside the range make the call Invalid). Outputs per row: ML_mm (+
// lateral), AP_mm (+ anterior), PD_mm (+ proximal, i.e. into the femur),
// VV_deg (+ varus), IE_deg (+ internal), then the strains (Eq. 2) of
// deepMCL, supMCL, LCL, ALL, PFL, ACL, PCL and PC; the ACL and PCL strains
// are the larger of their two bundles' strains, as the paper's strain
// constraint (Eq. 8) acts on the maximal strain.
//
// # Frames and kinematics
//
// Femur frame: origin at the middle of the flexion axis, x anterior, y
// proximal, z lateral (a right knee), millimetres. The flexion axis is the
// line through the two condyle-sphere centres, which stands in for the
// transepicondylar axis (Churchill et al. 1998) and the posterior-condyle
// "cylindrical" axis (Eckhoff et al.; Hollister et al. 1993). The tibia frame
// coincides with it at the reference pose. A pose is R = Rz(−φ)·Rx(VV)·Ry(IE)
// (flexion about the femoral z axis, varus about the floating axis, internal
// rotation about the tibial long axis: the joint coordinate system of Grood &
// Suntay 1983) and the tibial origin at t = ML·z + AP·x' + PD·y', with x', y'
// the flexed (not yet VV/IE-rotated) tibial axes. The equilibrium residual
// is the generalized force conjugate to (ML, AP, PD, VV, IE): the net force
// on the tibia along z, x', y' [N] and the net moment about the tibial origin
// along the floating axis x' and the tibial axis [N·mm]. The flexion moment
// is not balanced: flexion is prescribed, its driver takes that moment.
//
// # Geometry (representative, not from imaging)
//
//   - Femoral condyles: spheres centred on the flexion axis at z = ∓22 mm
//     (44 mm between compartment centres), radius 22 mm medial and 21 mm
//     lateral — the size of the posterior (flexion-facet) condyle circles of
//     about 20–23 mm reported by Kurosawa et al. 1985 and Iwaki et al. 2000.
//     This is a single-radius femur: the contact geometry does not change
//     with flexion.
//   - Tibial plateau: a concave spherical bowl per compartment whose lowest
//     point touches the condyle at the reference pose; radius 70 mm medial
//     (the concave medial plateau) and 150 mm lateral (the flatter lateral
//     plateau with its meniscus). The bowls give every sliding DoF a contact
//     restoring force, so an equilibrium exists even when all ligaments are
//     slack. No tibial slope, no menisci, no tibial eminence.
//   - Contact: the volumetric elastic foundation of Eq. 4, F = P·V with
//     P = 2.3e10 N/m³ = 23 N/mm³, V the exact volume of the condyle sphere
//     that lies outside its bowl sphere (a difference of two spherical caps,
//     V_cap = πh²(3ρ − h)/3), along the line of centres; the force passes
//     through the condyle centre, so contact has no flexion moment.
//   - Ligaments: straight lines between attachments, no wrapping, Blankevoort
//     law (Eq. 1–2, ε_l = 0.03). Attachments (femur frame / tibia frame, mm)
//     are representative positions placed after typical anatomical
//     descriptions — collaterals and PFL near the epicondyles and fibular
//     head (LaPrade et al. 2003, 2007), ALL from the lateral epicondyle region
//     to midway between Gerdy's tubercle and the fibular head (Claes et al.
//     2013), cruciates in the notch and on the tibial spine and posterior
//     fossa (Girgis et al. 1975; Amis & Dawkins 1991) — and then moved by a
//     few mm so that the Table 2 mid-range reference strains give strains
//     of a few percent along the squat (see geometry.go for every point and
//     surface normal). The posterior capsule is one midline strand; without
//     wrapping it goes far slack in flexion (strains of −10 % to −50 %), so
//     k_PC and epsr_PC hardly act on the squat. At the default θ the ALL,
//     the ACL1 bundle and the PC are slack over the whole 20°–120° squat,
//     so their parameters have no local effect there (they act elsewhere
//     in the Table 2 box); the other bundles are taut over part of it.
//
// # Loads (Sec. 2.1)
//
//   - Ankle: 111 N applied at the ankle, 400 mm distal to the flexion axis
//     on the tibial long axis, directed from the ankle to the hip (400 mm
//     proximal on the femoral axis): in the rig the leg is a two-force member
//     between a hip that slides vertically and an ankle that transmits no
//     moment, so its load is along the hip–ankle (vertical) line.
//   - Hamstrings: 50 N each, from insertions on the posteromedial tibia
//     (−20, −35, −28) and the fibular head (−15, −50, 38) toward fixed
//     femoral via points (−40, 250, ∓25) along the back of the thigh.
//   - Quadriceps: applied as the patellar-tendon force at the tibial
//     tuberosity (32, −50, 0), along the sagittal patellar-tendon angle
//     20° − 0.22·φ to the tibial axis (a linear fit to the trend reported by
//     van Eijden et al. 1985 and Nisell 1985; the patella is not modelled).
//     Its magnitude is the one whose flexion moment balances those of the
//     ankle load and the hamstrings at the nominal pose, as the rig varies
//     the quadriceps to hold the ankle load: about 250 N at 20° and 1570 N
//     at 120°. It depends on flexion only, never on θ.
//
// # Solver and failure
//
// At each angle a damped quasi-Newton method (Broyden updates of a
// forward-difference Jacobian, step limits of 2 mm and 3°, backtracking when
// a fresh Jacobian does not halve ‖r‖²) drives every residual component below
// ForceTol (1e-6 N) and MomentTol (1e-4 N·mm). The squat is always solved
// first at StartDeg = 20° from a cold start, the tibia pressed 0.3 mm into
// the condyles (falling back to a homotopy that ramps the ligament forces up
// from zero), then walked along the grid 20° ± k·GridStepDeg (5°) with a
// secant predictor, up for angles above 20° and down for angles below; each
// requested angle is solved from the grid point just before it. So a row's
// output depends on θ and its own angle only: not on the other rows, their
// order or the dataset (bit for bit). If the branch being followed ends at a
// grid point (a fold: the real knee would snap), the solve restarts there
// from the previous grid solution and then from the cold start; outputs may
// then jump between branches. A θ for which some angle still does not
// converge in MaxIter iterations, gives a singular Jacobian or non-finite
// values, or drives the joint beyond physical limits (|ML| > 20, |AP| > 30,
// |PD| > 8 mm, |VV| or |IE| > 45°, penetration > 8 mm) makes Eval return
// abi.Failed; iteration limits bound the time of every call. Over 2000
// uniform draws from the Table 2 box, 7 failed (0.35 %); at 300 random
// corners of the box, 10.
//
// One Eval over the 21 angles 20°, 25°, …, 120° takes about 0.22 ms on the
// development machine (BenchmarkEvalSquat; go test -bench .
// ./builtin/models/knee), about 10 residual evaluations per angle; the
// slowest Eval seen at the corners of the box took about 1 ms.
package knee
