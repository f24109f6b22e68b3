// Package beam is the planar co-rotational Euler–Bernoulli beam element of
// Crisfield (1991, "Non-linear Finite Element Analysis of Solids and
// Structures", Vol. 1, ch. 7), as used by Gouveia, Lemosse,
// Pagnacco & Souza de Cursi ("Temporal identification in a flexible
// multibody system: application to biomechanics", Sec. 2) for flexible
// bones:
//
//   - the element's rigid motion is that of its chord: length L, angle β,
//     c = cos β, s = sin β, r = [−c, −s, 0, c, s, 0], z = [s, −c, 0, −s, c, 0]
//     (∂L/∂q = r, ∂β/∂q = z/L);
//   - local deformations u = L − L₀, θᵢ = θᵢ,global − (β − β₀), wrapped to
//     (−π, π] so that an element may turn any number of times;
//   - local forces N = EA·u/L₀, M₁ = (2EI/L₀)(2θ₁ + θ₂), M₂ = (2EI/L₀)(θ₁ + 2θ₂);
//   - internal force f = Bᵀ[N, M₁, M₂], B = [r; e₃ − z/L; e₆ − z/L];
//   - tangent stiffness K = BᵀK_l·B + N·zzᵀ/L + (M₁+M₂)(rzᵀ + zrᵀ)/L²
//     (Crisfield ch. 7; K_l = diag(EA/L₀, (2EI/L₀)[2 1; 1 2])).
//
// Inertia. The consistent mass matrix of the Hermite beam (Dhatt & Batoz
// 1990, Vol. 2) in the chord frame, M_l, is rotated to the global frame,
// M(q) = RᵀM_l R (Gouveia Sec. 2: "R is the rotation operator describing
// the orientation of the element"). The kinetic energy is T = ½q̇ᵀM(q)q̇ and
// the inertial force is Lagrange's, M q̈ + Ṁ q̇ − ∂T/∂q. Gouveia's Eq. (1)
// keeps M q̈ + Ṁ q̇ (Ṁ from their Eq. 2) and drops ∂T/∂q; keeping it makes the
// equations exactly conservative, which the energy tests of the hht
// package rely on.
//
// Gravity is the gradient of the potential of the co-rotational
// displacement field, −ρA∫g·x ds, x(s) = chord + Hermite transverse
// deflection of the local rotations: at an undeformed state it equals
// M(q)·g, so a beam in free fall stays straight.
//
// The tests check f against finite differences of the strain energy and K
// against finite differences of f, the gravity force against the
// potential's differences, the inertial force against Lagrange's equations
// by finite differences, and the rigid-body invariance of f.
package beam
