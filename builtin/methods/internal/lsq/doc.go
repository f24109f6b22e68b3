// Package lsq is the linear algebra and the multi-start driving kinfer's
// least-squares methods (builtin/methods/levmar, builtin/methods/gaussnewton)
// share.
//
//   - Factor: the Householder QR factorisation of the column-scaled
//     Jacobian with the residuals appended, [J·D⁻¹ | r] = Q·[R c; 0 ρ]
//     (Golub & Van Loan 2013, Matrix Computations, 4th ed., Sec. 5.2),
//     computed by a column-major Householder QR. Only the p×p R, Qᵀr's
//     first p entries, the gradient Jᵀr and the column norms are kept, so
//     a method holds O(p²) per point whatever the number of residuals.
//     Refactorize computes it into a Factor's existing storage (a method
//     keeps a spare per run), to the same bits as Factorize.
//   - Sub: the SVD of R's free columns (the parameters not held at a bound),
//     R_F = U·S·Vᵀ, which gives in closed form, for any damping λ, the
//     Levenberg–Marquardt step p̃(λ) = −V·S(S² + λI)⁻¹·Uᵀc (Moré 1978,
//     "The Levenberg–Marquardt algorithm: implementation and theory",
//     Lecture Notes in Mathematics 630, Eq. 2.2 in scaled variables), its
//     norm and derivative; SolveTrustRegion finds the λ whose step has a
//     given length (Moré 1978, Sec. 5; Hebden 1973), and λ = 0 with a
//     relative singular-value cutoff gives the pseudo-inverse Gauss–Newton
//     step −J⁺r (Gouveia et al., Eq. 13). A rank-deficient Jacobian is no
//     special case: the SVD reveals the rank. SubInto recomputes a Sub in
//     place, to the same bits as NewSub.
//   - AllFinite: whether a slice holds only finite values, branch-free.
//   - Stats: s² = RSS/(n − p), the covariance s²(JᵀJ)⁻¹ with standard
//     errors and correlations (Seber & Wild 1989, Nonlinear Regression,
//     Eq. 2.21), the rank, the singular values and condition numbers, and
//     the unidentifiable directions of a rank-deficient Jacobian.
//   - Starts, NewSetup, CheckResults, Report: the multi-start driving both
//     methods share around their own iteration. NewSetup checks the
//     parameter box, resolves the evaluation budget (MINPACK's default
//     100·(d + 1)) and checks the memory at Init; Starts (embedded in a
//     method's saved state) takes the results of a batch — the
//     refusal of a malformed batch of residuals and Jacobians
//     (CheckResults), the counters, the starts' draws — handing each result
//     to the method's own run through a function value, and checks the
//     shapes of a decoded checkpoint (Starts.Check); Report gives every
//     start's final iterate, its outcome and the statistics of the best
//     start. The batch schedule and the checkpoint's save and load are
//     builtin/methods/internal/multistart's.
//
// Why QR then an SVD of R rather than the normal equations: JᵀJ squares the
// condition number, which loses the digits the NIST StRD problems test
// (several have condition numbers of 1e8 and more); QR costs 2np² flops
// against np² but keeps them. The SVD of the p×p R (O(p³)) is small beside
// the QR when n ≫ p.
package lsq
