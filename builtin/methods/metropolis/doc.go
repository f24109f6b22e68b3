// Package metropolis is adaptive random-walk Metropolis–Hastings, kinfer's
// reference implementation of the ask/tell method contract (abi.Method,
// abi.Checkpointer).
//
// # Algorithm
//
// C chains run in lock-step. The first Ask asks the host for C prior draws
// (abi.Batch.Draw); a chain whose draw has a non-finite log target (a model
// failure, or a point outside the prior's support) asks for another draw,
// up to MaxInitDraws per chain. Then every Ask holds one proposal per chain,
//
//	y = x + √λ · L·z,  z ~ N(0, I_d),  L·Lᵀ = Σ,
//
// and Tell accepts y when log u < log π(y) − log π(x), u ~ U(0, 1)
// (Metropolis et al. 1953; Hastings 1970: the proposal is symmetric, so the
// acceptance probability is min(1, π(y)/π(x))). A result whose status is not
// OK, or whose log target is not finite, is rejected; so is a proposal
// outside the parameter bounds, which the host marks out-of-support.
//
// Every chain draws from its own PCG stream (O'Neill 2014, math/rand/v2's
// DXSM variant) whose two seed words are outputs 2c+1 and 2c+2 of the
// SplitMix64 sequence started at the study seed (Steele, Lea & Flood 2014),
// c the chain index. Per step a chain takes d normal variates (proposal) and
// one uniform (acceptance), whatever happens, so results depend only on the
// seed and the settings: not on workers, on how often Ask is called, or on
// checkpoints (Ask is idempotent; the state after any Tell saves and
// restores exactly).
//
// # Adaptation (burn-in only)
//
// During the burn_in steps the proposal adapts; afterwards it is frozen, so
// the kept draws come from a time-homogeneous Markov chain with the target
// as its stationary law. The scheme combines the Adaptive Metropolis
// covariance of Haario, Saksman & Tamminen 2001 (Bernoulli 7:223, Sec. 2)
// with the global scale adaptation of Andrieu & Thoms 2008 (Stat. Comput.
// 18:343, Sec. 5, Algorithm 4, AM with global adaptive scaling):
//
//  1. Start: Σ = diag(s₀²), s₀ᵢ = init_scale·(upperᵢ − lowerᵢ) (the spread
//     of the chains' starting values when a bound is infinite), λ = 1.
//  2. Every burn-in step, after accept/reject, each chain's current state is
//     added (chain order) to a pooled running mean and covariance C (Welford
//     1962). Once it holds at least max(100, 10d) points, Σ becomes
//     s_d·(C + ε·diag(s₀²)) with s_d = 2.38²/d (Gelman, Roberts & Gilks
//     1996; Haario 2001's s_d) and ε = 1e-6: Haario's ε·I_d, written in units
//     of the initial scales so that it is invariant to the parameters' units.
//     At that first switch λ is reset to 1, since s_d·C is already the
//     asymptotically optimal scale for a Gaussian target.
//  3. Every burn-in step the global factor follows the Robbins–Monro
//     recursion of Andrieu & Thoms 2008, Algorithm 4:
//     log λ ← log λ + γₖ·(ᾱₖ − α*), γₖ = k^(−0.6), where ᾱₖ is the mean over
//     chains of the acceptance probabilities min(1, π(y)/π(x)) of step k,
//     α* = target_accept (0.234, Roberts, Gelman & Gilks 1997) and k counts
//     steps since the last reset of λ. log λ is kept in [−40, 40].
//  4. At the middle of burn-in the pooled covariance is restarted (the last
//     Σ is kept until the new one holds enough points again), so that the
//     transient from the prior draws to the posterior does not inflate the
//     frozen proposal (a two-window version of the windowed adaptation
//     used by Stan).
//
// The Cholesky factor L (row-by-row Cholesky–Banachiewicz order; Golub &
// Van Loan 2013, Sec. 4.2) is recomputed at every adaptive step. It, the
// streams, the random-walk proposal and the checkpoint header are shared
// with the tmcmc method through builtin/methods/internal/mcmc.
//
// # Output
//
// Report.Samples are the kept draws (every thin-th state after burn-in) in
// the order they are produced: the first kept step of chains 0, 1, ...,
// then the second, and so on (draw i is chain i mod chains). The method
// streams them (abi.SampleStream): TakeSamples hands out the draws of the
// kept steps since the previous call, and a saved state leaves those out,
// so that a checkpoint does not grow with the run. The draws grow in
// memory as they are produced; Init refuses settings whose draws would not
// fit in abi.Problem's memory budget. Report.Extra holds chains,
// samples_per_chain, burn_in, thin, acceptance_rate (all post-burn-in
// proposals), acceptance_per_chain, burn_in_acceptance_rate,
// proposal_scale (λ), proposal_sd (√(λΣᵢᵢ) per parameter), init_draws
// (prior draws used to start the chains), rejected_failures (proposals with
// a non-OK status), and per parameter rhat (split-R̂) and ess (effective
// sample size), BDA3 Sec. 11.4–11.5 via package stats (null when
// undefined).
//
// Bit-identity holds on one platform; math.Log and math.Exp have assembly
// versions on some architectures, so a native run and a WebAssembly run may
// differ in the last bits.
//
// The package is stdlib-only (plus abi and the stdlib-only builtin/stats
// and builtin/methods/internal/mcmc): it is also compiled to WebAssembly
// with GOOS=wasip1.
package metropolis
