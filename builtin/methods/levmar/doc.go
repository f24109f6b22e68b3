// Package levmar is the Levenberg–Marquardt least-squares method (builtin
// "levmar") as an ask/tell method (abi.Method, abi.Checkpointer). It
// minimises the cost ½‖r(θ)‖², where r is the concatenation of every
// likelihood term's residuals (log L = const − ½‖r‖²: for a Gaussian term
// r = (y − y_obs)/σ), over the box of the parameters' bounds. It reads the
// prior only through its support and the starting points: with a
// non-uniform prior the result is the maximum-likelihood estimate inside
// the box, not the posterior mode.
//
// # The algorithm
//
// The trust-region form of Levenberg–Marquardt of Moré (1978, "The
// Levenberg–Marquardt algorithm: implementation and theory", Lecture Notes
// in Mathematics 630:105–116) as MINPACK's lmder implements it (Moré,
// Garbow & Hillstrom 1980, User guide for MINPACK-1, ANL-80-74): at the
// iterate x with residuals r and Jacobian J, the step p solves
//
//	min ‖r + J·p‖  subject to  ‖D·p‖ ≤ Δ,
//
// i.e. (JᵀJ + λ·DᵀD)·p = −Jᵀr with λ ≥ 0 chosen so that ‖D·p‖ ≈ Δ (within
// 10 %, Moré's Sec. 5), or λ = 0 when the Gauss–Newton step is shorter.
// D is MINPACK's scaling (mode 1: D_j is the largest norm of column j of J
// seen so far; setting scale = "none" gives D = I). The ratio ρ of the
// actual to the predicted reduction of ‖r‖² decides: ρ ≥ 1e-4 accepts the
// step; ρ ≤ 0.25 shrinks Δ (by MINPACK's factor between 0.1 and 0.5), and
// ρ ≥ 0.75 (or λ = 0) sets Δ = 2‖D·p‖ (Moré's Eqs. 4.2–4.6). The first
// Δ is factor·‖D·x₀‖.
//
// Linear algebra (builtin/methods/internal/lsq): Householder QR of
// [J·D⁻¹ | r], then the SVD of the p×p triangular factor's free columns;
// the step for any λ, its length and derivative are then closed-form sums,
// and the λ of a given Δ comes from Moré's safeguarded Newton iteration.
// The SVD handles a rank-deficient or badly scaled Jacobian without a
// special case: with λ > 0 every direction is damped, and the λ = 0 step is
// the pseudo-inverse step with singular values below rcond·s₁ dropped.
// MINPACK uses a pivoted QR and solves for λ by repeated Givens updates;
// the SVD does the same job on the p×p factor and makes rank explicit (see
// RATIONALE.md).
//
// Bounds. The step is projected onto the box, x₊ = Π(x + p), so no point
// outside the box is ever evaluated (projected Levenberg–Marquardt; Kanzow,
// Yamashita & Fukushima 2004, J. Comput. Appl. Math. 172:375–397). A
// parameter on a bound whose gradient points out of the box is held for
// that step (Bertsekas 1982's active set for projected Newton methods), so
// a start on a bound, or an optimum on one, is handled: the other
// parameters move. The predicted reduction is that of the projected step.
//
// Stopping (MINPACK's tests; the report names the reason): ftol — the
// actual and predicted relative reductions of ‖r‖² are both ≤ ftol; xtol —
// Δ ≤ xtol·‖D·x‖; gtol — the largest cosine between r and a free column of
// J is ≤ gtol (with no free parameter left the projected gradient is zero
// and this holds); max_evaluations — the budget (default 100·(d+1),
// MINPACK's) is spent; ftol_machine, xtol_machine, gtol_machine — no
// further progress is possible in floating point; exact_fit — r = 0;
// stalled — MaxFailures consecutive evaluations failed; no_step — the
// projected step is zero; blocked_by_failures — ftol or xtol held in a
// start that had failed evaluations, at a point whose largest cosine
// between r and a free column of J is above 1e-3: the failures shrank Δ,
// so the point may be the edge of the region where the model succeeds,
// not a minimum (a warning says so).
//
// Failures. An evaluation with status not OK, a non-finite residual or
// Jacobian entry, or no Jacobian is a counted failure, not an error: it is
// treated as a step that made ‖r‖ infinitely worse, so Δ shrinks tenfold
// and λ grows; after MaxFailures = 30 in a row the start stops as stalled
// at its last iterate. A malformed result (a Jacobian that is not
// len(r)×d, residuals whose number changes, status OK without residuals)
// is an error from Tell, before anything changes.
//
// # Batches
//
// Every batch asks Want = WantResiduals|WantJacobian. The first asks
// Draw = starts points: the host serves the study's init points first, then
// prior draws; a start whose point cannot be used asks again, up to
// MaxInitDraws. Then every batch holds the trial point of every start that
// is not finished, in start order, so the host evaluates the starts in
// parallel. Every trial is evaluated with its Jacobian, also those the
// ratio test then rejects: with an analytic Jacobian this costs little,
// and it saves a round trip per accepted step. The method draws no random
// numbers: a run is a deterministic function of the settings and the
// host's points, whatever the number of workers; SaveState/LoadState
// continue it bit-identically from any point. The schedule and the
// checkpoint's save and load are builtin/methods/internal/multistart's, the
// checks of the results and the report builtin/methods/internal/lsq's
// (shared with the gaussnewton method).
//
// # Output
//
// Report.Samples (samples.csv) holds the final iterate of every start, in
// start order — one row per start, not the iterates. Report.Extra
// (summary.json's method_report) holds the settings; per start exit_reason,
// cost (½‖r‖²), iterations (accepted steps), evaluations_per_start,
// failures_per_start and trace_cost (the cost of every iterate); best_start
// (the lowest cost) with its theta, exit reason and counts; statistics of
// the best start (lsq.Stats: n, p, dof, cost, residual sum of squares,
// residual variance s² = 2·cost/(n − p), covariance s²(JᵀJ)⁻¹, standard
// errors, correlations, rank, singular values, condition numbers of J and
// of J with unit columns, and for a rank-deficient J the unidentifiable
// directions instead of a covariance); and the counters evaluations,
// jacobian_evaluations (the same: every evaluation has its Jacobian),
// failures, out_of_support and init_draws.
//
// Accuracy: with its default settings (ftol = xtol = 1e-15, factor = 0.1)
// the method solves all 54 runs of the NIST StRD nonlinear regression
// datasets (27 problems from both certified starts) to 6 or more digits in
// every parameter; see docs/PERFORMANCE.md for the table and the
// comparison with scipy.
package levmar
