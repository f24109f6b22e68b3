// Package flexmb assembles planar flexible multibody systems as Gouveia,
// Lemosse, Pagnacco & Souza de Cursi describe them ("Temporal
// identification in a flexible multibody system: application to
// biomechanics", Sec. 2, Eq. 1): nodes with three coordinates (x, y, θ),
// co-rotational Euler–Bernoulli beams (package beam, after Crisfield 1991),
// massless co-rotational linear and torsional springs, point masses,
// gravity, constant nodal loads, and joints written as constraints
// Φ(q) = 0 with Lagrange multipliers: a fixed (clamped) node, a node pinned
// to the ground, two nodes pinned together. It implements hht.System, so
// the HHT-α integrator of package hht solves its index-3 DAE
//
//	M(q)q̈ + Ṁq̇ − ∂T/∂q + f_int(q) + Bᵀλ − f_ext − g = 0,  Φ(q) = 0,
//
// and Static solves the equilibrium f_int + Bᵀλ = f_ext + g by Newton with
// load increments.
//
// Spring element (Gouveia Sec. 2, "co-rotational linear and torsional
// spring"): axial force N = k(L − L₀) along the chord, f = N·r, tangent
// k·rrᵀ + N·zzᵀ/L (Crisfield's bar); torsional moment M = k_t(θ₂ − θ₁ − φ₀)
// on the nodal rotations, "not under influence of the rigid displacements".
//
// The Newton tangent is K = ∂f_int/∂q (exact, Crisfield); the derivatives
// of the inertial and gravity terms are left out, as Gouveia do (Sec. 3.1:
// "very costly to evaluate just for convergence"). Every joint of this
// package is linear in q, so B is constant.
//
// The tests check the known answers: a cantilever rolled into a circle by
// an end moment, the period of a rigid pendulum as the limit of a stiff
// beam carrying a point mass, energy conservation at α = 0 and its
// dissipation for α < 0.
package flexmb
