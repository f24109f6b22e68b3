// Package tkrcontact is the builtin model "tkrcontact": the
// elastic-foundation contact of a knee replacement (builtin/contact/efound;
// Lin et al. 2010, "Surrogate articular contact models for computationally
// efficient multibody dynamic simulations", Med. Eng. Phys. 32:584–594,
// Sec. 2.3, "original contact model") as a kinfer model: one pose per data
// row in, the medial and lateral contact loads, centre of pressure and
// contact area out.
//
// Conditions (one pose per row): x_mm, y_mm, z_mm, alpha_deg, beta_deg,
// gamma_deg — the pose of the femoral component relative to the tibial
// insert (Lin 2010, Fig. 1 axes: x anterior, y superior, z medial; α
// varus–valgus about x, β internal–external about y, γ flexion about z;
// R = R_y(β)·R_x(α)·R_z(γ)); y is measured from the lift-off pose, so y < 0
// loads the insert.
//
// Parameters: the insert's E_MPa (463), nu (0.46) and layer thickness h_mm
// (5), and six pose offsets x0_mm … gamma0_deg (default 0) added to every
// row's pose. The offsets let `kinfer design` sample poses — a design spans
// the study's free parameters, so a study with one all-zero row and priors
// on the offsets is a design over poses — and let a study identify a
// constant malalignment from measured loads.
//
// Outputs per row, medial (med_) then lateral (lat_): Fx_N, Fy_N, Fz_N (the
// force the insert applies to the femur, tibial axes), Talpha_Nm, Tbeta_Nm,
// Tgamma_Nm (torque on the femur about the femoral origin, tibial axes),
// copx_mm, copy_mm, copz_mm (centre of pressure, tibial frame; 0 out of
// contact) and area_mm2.
//
// Settings: foundation = "linear" (p = K·d/h, default) or "nonlinear"
// (p = −K·ln(1 − d/h)); cell_mm, the element size (default 0.5 mm: 80 × 56
// elements per side).
//
// Status: a non-finite pose or a material outside E > 0, 0 ≤ ν < 0.5,
// h > 0 is Invalid; a penetration reaching h in the nonlinear foundation or
// an element whose normal misses the condyle is Failed (counted by the
// host, not a crash).
package tkrcontact
