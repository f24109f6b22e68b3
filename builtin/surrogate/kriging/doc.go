// Package kriging is the DACE Kriging surrogate (Lophaven, Nielsen &
// Søndergaard 2002, "DACE — a Matlab Kriging toolbox", Technical Report
// IMM-TR-2002-12, Technical University of Denmark), the surrogate Lin et
// al. (2010, "Surrogate articular contact models for computationally
// efficient multibody dynamic simulations", Med. Eng. Phys. 32:584–594,
// Sec. 2.3) fit their knee contact loads with.
//
// The model (DACE Sec. 2) is y(x) = f(x)ᵀβ + z(x): a regression polynomial
// of order 0, 1 or 2 (regpoly0/1/2, Eqs. 2.21–2.23) plus a zero-mean
// process with variance σ² and correlation R(θ, w, x) = Π_j c(θ_j, w_j −
// x_j) (Eq. 2.15): Gaussian exp(−θd²), exponential exp(−θ|d|) (Table 2.1),
// and the Matérn ν = 3/2 and ν = 5/2 functions of t = θ|d| (Rasmussen &
// Williams 2006, "Gaussian Processes for Machine Learning", Eq. 4.17),
// also as a product over coordinates — so this Matérn is separable, unlike
// sklearn's, which takes the Euclidean distance. Inputs and the response
// are normalised to zero mean and unit variance before fitting (dacefit).
//
// Fitting (DACE Sec. 3): with R = CCᵀ (Cholesky) and C⁻¹F = QG (QR), β
// and σ² follow in closed form (Eqs. 2.24–2.25) and θ minimises the
// concentrated objective ψ(θ) = |R|^{1/n}σ² (Eq. 2.27), here ln ψ over
// ln θ with its analytic gradient (1/n)Σ_ij (R⁻¹ − γγᵀ/σ²)_ij ∂R_ij/∂ln θ_k.
// DACE searches with a pattern search (Hooke & Jeeves) from one start,
// which depends on the start; here the search is made independent of it:
// ln ψ is screened on a fixed Sobol design in the ln θ box (plus the box
// centre and the user's θ₀), BFGS runs from the best few, and when n is
// large this happens on a space-filling subset (greedy farthest points) and
// the best optimum is refined by a few BFGS iterations on all sites. An
// optional nugget λ (fixed, or estimated by maximum likelihood) is added to
// R's diagonal; without one, DACE's (10 + n)·ε keeps the factorisation
// stable and the predictor interpolates.
//
// Prediction (Eqs. 3.2–3.3, 3.8–3.9): ŷ(x) = f(x)ᵀβ + r(x)ᵀγ with the mean
// squared error φ(x) = σ²(1 + uᵀ(FᵀR⁻¹F)⁻¹u − rᵀR⁻¹r), u = FᵀR⁻¹r − f, and
// the gradients of both with respect to x. The mean costs O(n·d) per
// point, the MSE a triangular solve, O(n²).
//
// File format (file.go): Write/Save store predictors fitted on the same
// sites (one per output) as JSON with the provenance of the network
// ensembles (nn.Provenance): the sites and responses (exact), the
// regression order, correlation, θ and λ. Read/Load refit at exactly
// that θ and λ, so a loaded predictor is bit-identical to the written
// one; the stored β and σ² only check the file. Reading is bounded
// (MaxFileBytes, MaxSites, MaxDim, MaxOutputs, MaxCells).
//
// Everything is deterministic: no random numbers are drawn. A fitted Model
// is read-only: Predict and PredictGrad are safe for concurrent use.
package kriging
