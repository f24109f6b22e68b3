// Package gaussian is the independent Gaussian likelihood of Bartsoen et al.
// 2023 (docs/REFERENCES.md), Eq. 7, summed
// over every value of a dataset:
//
//	log L = Σᵢ [ −log(σᵢ√(2π)) − (yᵢ − obsᵢ)²/(2σᵢ²) ]
//
// over all K×m model outputs yᵢ, observations obsᵢ and scales σᵢ (a
// dataset's σ columns or the per-output constants of the study; the paper
// uses 0.5 mm / 0.5° and 1.0 mm / 1.0° for the knee kinematics).
//
// Missing values: an observation that is NaN (an empty CSV cell) is skipped:
// it adds nothing to log L, its gradient and residual are 0, and its y and σ
// are not checked.
//
// Capabilities:
//   - grad_y: ∂log L/∂yᵢ = −(yᵢ − obsᵢ)/σᵢ²;
//   - residuals: rᵢ = (yᵢ − obsᵢ)/σᵢ, so that log L = C − ½‖r‖² with
//     C = −Σᵢ log(σᵢ√(2π)) (LogNormConst), the form least-squares methods
//     (Levenberg–Marquardt, Gauss–Newton) minimise;
//   - abi.ResidualSlopes (Go only): ∂rᵢ/∂yᵢ = 1/σᵢ, which the host chains
//     with a model's Jacobian into ∂r/∂θ.
//
// Statuses: a σᵢ that is not finite and > 0 gives abi.Invalid; a non-finite
// yᵢ gives abi.NonFinite (both only for values that are not missing); an m
// < 1, a length of y that is not a multiple of m, or obs, sigma (gy, r) of
// another length than y give abi.Invalid. The log-likelihood is then −∞.
//
// The package is stdlib-only.
package gaussian
