// Package hht integrates index-3 differential-algebraic equations of
// constrained mechanical systems,
//
//	M(q)q̈ + F(t, q, q̇) + B(q)ᵀλ = 0,   Φ(q) = 0,   B = ∂Φ/∂q,
//
// by the HHT-α method (Hilber, Hughes & Taylor 1977, "Improved numerical
// dissipation for time integration algorithms in structural dynamics",
// Earthquake Eng. Struct. Dyn. 5:283–292) in the form Gouveia et al.
// ("Temporal identification in a flexible multibody system", Sec. 3)
// apply to flexible multibody systems, after Negrut, Rampalli, Ottarsson &
// Sajdak (2007, "On an implementation of the HHT method in the context of
// index 3 differential algebraic equations of multibody dynamics", J.
// Comput. Nonlinear Dyn. 2:73–85):
//
//   - Newmark relations (Gouveia Eq. 6): q₁ = q₀ + h q̇₀ + h²[(½ − β)q̈₀ + βq̈₁],
//     q̇₁ = q̇₀ + h[(1 − γ)q̈₀ + γq̈₁], γ = (1 − 2α)/2, β = (1 − α)²/4, α ∈ [−1/3, 0];
//   - the α-weighted equilibrium (Gouveia Eq. 4): M(q₁)q̈₁ + (1 + α)(F₁ + B₁ᵀλ₁)
//     − α(F₀ + B₀ᵀλ₀) = 0, and the constraint at the new time Φ(q₁) = 0
//     (Eq. 5 with Φ(q₀) = 0);
//   - Newton–Raphson on that full residual (Eq. 8–10), unknowns Δq and Δλ,
//     iteration matrix [S (1+α)Bᵀ; B 0], S = M/(βh²) + (1+α)(K + γC/(βh))
//     with K ≈ ∂F/∂q, C ≈ ∂F/∂q̇ supplied by the system (Eq. 9; an
//     approximate tangent slows convergence but does not change the
//     answer), constraint rows and multipliers scaled by 1/(βh²) for
//     conditioning (Bottasso, Bauchau & Cardona 2007).
//
// Newton stops when the increment and the residual are small relative to
// the state and the forces; a step that does not converge within the
// iteration limit, a singular iteration matrix or a non-finite value is an
// error (ErrNewton, ErrSingular, ErrNonFinite), never a panic, so that a
// model can report it as a failed evaluation.
//
// At α = 0 the method is Newmark's trapezoidal rule (energy-conserving for
// linear systems); for α < 0 its spectral radius at infinite step is
// (1 + α)/(1 − α) (0.9048 at α = −0.05, ½ at −1/3), which the tests check.
package hht
