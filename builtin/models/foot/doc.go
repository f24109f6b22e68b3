// Package foot is the builtin model "foot": both feet of Jackson, Hass &
// Fregly (2016, "Development of a subject-specific foot-ground contact
// model for walking", J. Biomech. Eng. 138(9), 091002) over one walking
// trial, as a kinfer model y = f(θ, X).
//
// θ holds the contact parameters shared by both feet (Jackson 2016:
// "all model parameter values were identical between the two feet") — the
// 38 spring stiffnesses k_i and damping coefficients c_i of Eq. 1, the
// resting length y0, the friction coefficients μs, μd, μv of Eq. 2 — and,
// per foot and degree of freedom, the 25 coefficients of a cubic B-spline
// deviation curve added to the measured joint trajectory ("Instead of
// parameterizing joint position curves directly, we parameterized curves
// defining deviations away from the experimentally determined joint
// positions ... B-spline curves with 25 coefficients"): 80 + 2·7·25 = 430
// parameters.
//
// A row of X is one frame of the trial: its time, its normalised time τ ∈
// [0, 1] (the B-splines' domain), the trial's duration (to turn dτ into
// dt), and per foot the measured q (7 coordinates, footcontact.DoFNames)
// and q̇. A row of y holds, per foot, the six ground reaction quantities
// (forces, centre of pressure, free moment), the four foot markers and the
// seven deviations. The contact physics, the grid and the kinematics are
// package footcontact's.
//
// The centre of pressure and free moment outputs are M/Fy reductions
// wherever the model's vertical force is at least 1 N (below it the heel
// marker's position and 0, so that an output is always finite); Jackson
// 2016 leaves the CoP out below 100 N, which a dataset does by leaving
// those observations empty (NaN), as examples/foot-contact's tables do.
//
// Jacobian: exact in k_i, c_i, y0, μs, μd, μv (Eq. 1 is linear in k and
// c, Eq. 2 linear in the three μ); in the deviation coefficients it is the
// chain rule through the B-spline basis (exact) of derivatives with
// respect to q and q̇ taken by central differences per row.
package foot
