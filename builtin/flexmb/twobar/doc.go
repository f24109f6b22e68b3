// Package twobar is the two flexible bars of Gouveia, Lemosse, Pagnacco &
// Souza de Cursi ("Temporal identification in a flexible multibody system:
// application to biomechanics", Sec. 6, Fig. 1): a chain hanging from a
// fixed point, element 1 a massless co-rotational linear and torsional
// spring (k₁, k_t1), element 2 a flexible bar, element 3 a second spring
// (k₃, k_t3), element 4 a second bar; nodes 1 to 5 from the fixed point to
// the free end. The paper's data: E = 2.1e10 Pa, A = 25e-6 m², I = 52.1e-12
// m⁴, ρ = 7800 kg/m³, bar length 0.9 m, spring length 0.1 m (unstretched),
// p_sol = [k₁, k_t1, k₃, k_t3] = [700 N/m, 0.5 N m/rad, 400 N/m, 0.5 N m/rad];
// released from rest at π/6 from the vertical and integrated for 3 s by
// HHT-α; the identification times t₁ = 0.69 s and t₂ = 2.83 s, and the
// parameter sets p1 = [663, 0.49, 379, 0.49] and p2 = [757, 0.50, 465, 0.52]
// of Table 1 and Figs. 2–5.
//
// What the paper leaves open, and what this package takes (see RATIONALE.md,
// "Why this reading of Gouveia's two-bar system?"):
//   - each bar is one beam element (the paper numbers the springs elements
//     1 and 3, so the bars are elements 2 and 4; node 5 is the free end);
//   - node 1 is clamped (x, y, θ fixed: "attached to a fixed point"), the
//     stress-free configuration is the chain hanging straight down, and the
//     release is that configuration turned rigidly by π/6 about node 1, so
//     the first torsional spring starts twisted by π/6;
//   - gravity 9.81 m/s² downwards; α = −0.05, step h = 1 ms (settings);
//   - the data are sampled every 10 ms (100 Hz, a usual motion-capture rate),
//     and the "measured set" takes q̇ and q̈ from central differences of q at
//     that rate: q̇ₖ = (qₖ₊₁ − qₖ₋₁)/2Δ, q̈ₖ = (qₖ₊₁ − 2qₖ + qₖ₋₁)/Δ².
//
// Direct identification (Gouveia Eq. 11–12): at each chosen time, the
// equation-of-motion residual r(p) = M(q̄)q̄̈ + Ṁq̄̇ − ∂T/∂q + f_int(p, q̄) − g on
// the 12 free coordinates (nodes 2–5). The 3 equations of the fixed node
// hold exactly for λ = their value, so projecting λ out (the least-squares
// λ of Eq. 13) leaves those 12 rows. Indirect identification (Eq. 14–16):
// simulate with p and return the state at the chosen times.
package twobar
