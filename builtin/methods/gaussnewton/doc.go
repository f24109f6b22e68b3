// Package gaussnewton is the Gauss–Newton least-squares method (builtin
// "gaussnewton") as an ask/tell method (abi.Method, abi.Checkpointer),
// with the pseudo-inverse step of Gouveia et al. ("Flexible multibody
// identification", direct and indirect temporal identification, Eq. 13):
//
//	θ_{k+1} = θ_k − J⁺·r,
//
// J⁺ the Moore–Penrose pseudo-inverse of the Jacobian of the residuals r,
// which Gouveia et al. evaluate by central finite differences (here the
// host provides J: the model's analytic Jacobian or its finite
// differences). Like the levmar method it minimises ½‖r‖², r the
// concatenation of every likelihood term's residuals, over the box of the
// parameter bounds, and reads the prior only through its support and the
// starting points.
//
// The step. J⁺r is computed from the SVD (builtin/methods/internal/lsq:
// Householder QR of [J·D⁻¹ | r], then the SVD of R) with singular values
// below rcond·s₁ dropped — a truncated-SVD pseudo-inverse (Golub & Van Loan
// 2013, Matrix Computations, 4th ed., Sec. 5.5.4), so a rank-deficient
// Jacobian gives the minimum-norm step in the identifiable directions and
// leaves the others where they are. With scale = "jacobian" the columns are
// first scaled to unit norm, so that the cutoff compares directions, not
// units; scale = "none" is the plain J⁺ of Eq. 13.
//
// Step control. step_control = "none" takes every step (Eq. 13 as it
// stands; it can diverge far from the solution). "halving" (the default)
// accepts a step only if it lowers ½‖r‖², and otherwise halves it, up to
// MaxHalvings = 30 times (a backtracking line search with Armijo constant 0;
// Nocedal & Wright 2006, Numerical Optimization, Algorithm 3.1). Either way
// a failed evaluation (status not OK, non-finite residuals or Jacobian)
// halves the step, and counts as a failure.
//
// Bounds: the step is projected onto the box, Π(θ + t·Δθ), so nothing
// outside it is evaluated; a parameter on a bound whose gradient points out
// of the box is held for the step (as in levmar), so starts and optima on
// bounds are handled.
//
// Stopping (the report names the reason): exact_fit (r = 0); gtol (the
// largest cosine between r and a free column of J ≤ gtol, also when no
// parameter is free); xtol (a step, planned or taken, ≤ xtol·(‖θ‖ + xtol));
// ftol (the predicted decrease of ½‖r‖², or the actual one after a step, ≤
// ftol relative); max_iterations; max_evaluations; no_decrease (30
// halvings did not lower the cost); stalled (30 halvings after failures).
//
// Batches, checkpoints and the report are those of the levmar method:
// every batch asks WantResiduals|WantJacobian, the first Draw = starts
// points (the study's init points first); samples.csv holds the final
// iterate of every start; summary.json's method_report the per-start exit
// reasons, costs, iterations and evaluations, the cost traces, and the
// statistics of the best start — s² = 2·cost/(n − p), the covariance
// s²(JᵀJ)⁻¹, standard errors, correlations, rank, singular values and
// condition numbers (or the unidentifiable directions when J is
// rank-deficient).
//
// On the NIST StRD nonlinear regression problems the defaults solve 49 of
// the 54 runs to 6 digits (the levmar method: 54); docs/PERFORMANCE.md has
// the table.
package gaussnewton
