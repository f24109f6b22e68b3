// Package tmcmc is transitional Markov chain Monte Carlo (TMCMC; Ching &
// Chen 2007, J. Eng. Mech. 133:816) as an ask/tell method (abi.Method,
// abi.Checkpointer), with the variants compared by Bartsoen et al. 2023
// ("Bayesian parameter estimation of ligament properties based on
// tibio-femoral kinematics during squatting", Mech. Syst. Signal Process.;
// Sec. 2.4 and Appendices A and B). Equation numbers below are that paper's.
//
// TMCMC moves a population of N_s chains from the prior to the posterior
// through the tempered densities π_j ∝ prior·L^{q_j}, 0 = q_0 < q_1 < … <
// q_m = 1, and estimates the evidence Z = ∫ prior·L on the way.
//
// # Batches
//
// The first Ask is Batch{Draw: chains}: the host draws the prior population
// from its own stream and evaluates it. Every later Ask is one
// Metropolis–Hastings sub-step for every chain (Batch{Points: one proposal
// per chain}), so the host evaluates the chains in parallel. A stage takes
// N_a = substeps batches, a run chains·(1 + substeps·stages) evaluations.
// TMCMC uses the log prior and log likelihood of each Result separately
// (the tempered target is log prior + q·log L). A point whose status is not
// OK, or whose log prior or log likelihood is not finite, has likelihood 0:
// in the prior population it gets weight 0 and is never resampled; as a
// proposal it is rejected. Proposals outside the parameter bounds (the host
// marks them out of support) are rejected too.
//
// # One stage, j → j+1 (Appendix A)
//
//  1. Tempering exponent (Eq. 12): q_{j+1} = q_j + Δq with Δq ∈ (0, 1 − q_j]
//     such that the plausibility weights w_k = L(θ_k)^Δq have coefficient
//     of variation target_cov (v_t = 1 in the paper), found by bisection
//     (64 halvings); Δq = 1 − q_j when the CoV stays at or below the target
//     all the way. The CoV grows with Δq (log E[L^t] is convex in t), so
//     the crossing is unique. When it exceeds the target however small Δq
//     is — more than N/(1 + v_t²) of the prior draws failed — the step is
//     (1 − q_j)·2⁻⁶⁴: that stage only removes the failed points.
//  2. Weights (Eq. 13) and S_j (Eq. 14). All weights are handled as
//     logarithms, shifted by their maximum (log-sum-exp), so no likelihood
//     under- or overflows. In general log S_j = log Σ_k W̄_k·w_k with W̄ the
//     normalised weights the population enters the stage with: the plain
//     mean of Eq. 14 is right only for an equally weighted population
//     (Ching & Chen 2007, Eq. 14 with weights). Every variant here enters each stage
//     equally weighted (after a resampling and Metropolis moves, or as
//     prior draws), so the code passes W̄ = 1/N; the weighted form is
//     implemented and tested (stageWeights).
//  3. Proposal covariance Σ_j = β_j²·C_j (Eq. 15–16), C_j the covariance of
//     the population under the normalised weights, about the weighted mean.
//     If C_j is not numerically positive definite (fewer distinct points
//     than parameters), its diagonal is floored at (10⁻⁹ × the prior
//     population's spread)² and, if need be, a ridge ε·diag(C_j) is added.
//  4. Resampling (Eq. 17): N multinomial draws, chain l with probability
//     p_l = w_l/Σw. Where this happens is what the variants change (below).
//  5. N_a sub-steps. Each proposes u' = u + β_j·L_j·z, z ~ N(0, I),
//     L_j·L_jᵀ = C_j, for every chain and accepts with probability
//     min(1, π_u(u')/π_u(u)) (Metropolis et al. 1953; Hastings 1970),
//     where u are the proposal coordinates (below) and π_u the stage's
//     target π_{j+1} ∝ prior·L^{q_{j+1}} expressed in them. The paper's
//     step 5b prints a ratio of likelihoods at θ' only; the Metropolis
//     ratio compares θ' with the chain's current θ and includes the prior.
//  6. Proposal scale. Setting adapt = "stage" is the paper's Eq. 19
//     (variants betz and bartsoen): β_{j+1} = β_j·exp((p_acr −
//     t_acr)/√N_a), p_acr the acceptance rate of the stage's N·N_a
//     proposals, t_acr = target_accept; β₀ = 2.4/√d (Appendix A; the
//     Gelman–Roberts–Gilks scale for Gaussian targets). As printed, Eq. 19
//     changes β once per stage, by at most e^{1/√N_a} (×1.15 for N_a =
//     50), so a badly scaled β takes many stages to recover. The default,
//     adapt = "substep", moves log β by 2·(a − t_acr) after each of the
//     first ⌊N_a/2⌋ sub-steps of a stage (a the sub-step's acceptance
//     rate over the population) and keeps it fixed for the rest, so the
//     stage's last half uses one kernel; β carries over to the next
//     stage. Adapting from the population's acceptance is the usual
//     adaptive-SMC practice (Fearnhead & Taylor 2013, Bayesian Analysis
//     8:411); the evidence (step 2) does not depend on it. The original
//     variant keeps β = 0.2. |log β| ≤ 30 either way.
//  7. Stop after the stage that reached q = 1.
//
// # The three variants (setting variant)
//
// The paper describes its baseline as "the algorithm [Ching & Chen] with
// the modifications 1 and 3" of Betz et al. 2016 (J. Eng. Mech.
// 142:04016016), in which resampling is part of every sub-iteration, and
// its own change as "only performing re-sampling … in the main loop and
// not as part of a sub-iteration". Its Appendix A sub-iterations act on the
// whole set at once ("draw a new set of samples … centered at the
// currently re-sampled set"). This package reads that literally:
//
//   - original (Ching & Chen 2007, without the Betz modifications): every
//     sub-step starts with a resampling by the chains' weights; the weights
//     are those of Eq. 13 at the start of the stage and are not recomputed
//     when a chain moves, so a copy carries the weight of the sample it
//     was drawn from; β = 0.2 throughout (the value Ching & Chen suggest,
//     as quoted in Sec. 2.4).
//   - betz: as original, plus modification 1 — after every move a chain's
//     weight is recomputed at its new state, w = L(θ)^Δq (Eq. 18), and
//     the next sub-step resamples with those — and modification 3 — β₀ =
//     2.4/√d, adapted by Eq. 19.
//   - bartsoen (default): betz, but the population is resampled once per
//     stage (step 4, before the sub-steps) and never within them. This is
//     also the usual modern form of TMCMC (one resampling, then a fixed
//     number of Metropolis steps per chain).
//
// Resampling within the sub-steps compounds the weights: a chain that has
// not moved is selected in proportion to w, then w², …, so by the end of a
// stage the population is tilted as if by L^{s·Δq} instead of L^Δq, and
// copies of the few most likely chains displace the rest. That is the
// premature convergence of Appendix B ("all chains are concentrated around
// one solution"). The package's multimodal test shows it: two modes of
// equal posterior mass, one narrow and tall, one wide; original and betz
// end with every chain in the tall mode, bartsoen with about half in each.
// Only bartsoen's posterior and evidence converge to the right ones as
// the population grows; the other two are there to reproduce the paper's
// comparison. At a finite population bartsoen's log evidence is slightly
// low, as every adaptively tempered estimate is (the temperatures are
// chosen from the same weights; log of the weights' mean is low by
// Jensen's inequality): on a linear-Gaussian problem with an exact
// evidence, averaged over 30–60 seeds, −0.028 ± 0.010 nats at 1000 chains
// (0.4 of the reported standard error) and −0.010 ± 0.007 at 4000, with a
// seed-to-seed spread 4–20 % above the reported standard error (audit 21).
//
// # Proposal coordinates (setting proposal)
//
// With proposal = "reject" (the paper's algorithm) u = θ and a proposal
// outside the parameter bounds is rejected: on the knee, whose posterior
// presses against several Table 2 bounds, 61–66 % of the proposals were
// wasted that way. The default, proposal = "transform", proposes in
// unconstrained coordinates u = T(θ) and targets π(θ(u))·|dθ/du|, so the
// Metropolis ratio gains log|dθ/du'| − log|dθ/du|, the covariance C_j of
// step 3 is taken in u, and every proposal maps inside the bounds. This
// is exact: the random walk in u is symmetric and a change of variables
// leaves the evidence integral unchanged; the package's tests check the
// evidence and the moments against exact values on a posterior piled
// against a bound, a Gaussian and a two-mode mixture. The maps:
//
//   - both bounds finite, [a, b] with m = (b − a)/4: the box map, θ = u on
//     the middle half [a + m, b − m] and exponential margins θ = a +
//     m·e^{t}, t = (u − a − m)/m < 0, and θ = b − m·e^{−t}, t = (u − b +
//     m)/m > 0, which approach the bounds without reaching them. It is C¹
//     and monotone, log|dθ/du| = −|t| in a margin and 0 in the middle,
//     and a uniform θ has exponential tails in u (a random walk mixes
//     there). Only a coordinate in a margin costs an exponential; a logit
//     map, the textbook choice, costs one per coordinate and proposal,
//     half of TMCMC's own time at d = 50.
//   - one finite bound: u = log(θ − a) or log(b − θ); a parameter whose
//     population lies more than 10 population sds from that bound at a
//     stage's start is proposed in θ directly during that stage (leaving
//     the bound would take a > 5σ step; if it happens the proposal is
//     rejected, which is exact). The maps are chosen again at every stage
//     and each chain's u and log-Jacobian recomputed from its θ.
//   - no finite bound: u = θ.
//
// Reflection at the bounds, the other common fix, is not used: with a
// correlated proposal a reflected step's density is not symmetric (a
// reflection flips the sign of the correlation), so it would need a
// correction this one does not.
//
// # Settings
//
//   - chains (default 1000): N_s. Bartsoen et al. used 10 000 for 50
//     parameters; 1000 keeps a default run quick (a stage costs
//     chains·substeps evaluations) and gives an evidence standard error of
//     about 0.05–0.1 on the package's test problems. Raise it for many
//     parameters or several modes.
//   - substeps (default 50): N_a, the paper's value. Random-walk chains
//     need O(d) steps to decorrelate; fewer suffice in a few dimensions.
//   - target_cov (default 1): v_t of Eq. 12, i.e. each stage's weights
//     have an effective sample size of about N/2.
//   - target_accept (default 0.23): t_acr of Eq. 19 and of the sub-step
//     rule.
//   - max_stages (default 100): a guard; the test problems need 2–10.
//   - variant (default bartsoen): above. original and betz are biased:
//     their reports carry evidence_biased = true and a warning, which
//     kinfer run prints.
//   - proposal (default transform): above; reject reproduces the paper.
//   - adapt (default substep): step 6; stage reproduces the paper.
//
// The paper's algorithm exactly: variant = "bartsoen", proposal =
// "reject", adapt = "stage".
//
// # Evidence and its standard error
//
// log Ẑ = Σ_j log S_j. To first order its error is the sum over stages j
// and chains k of the influences ŵ_jk − W̄_jk (ŵ the normalised weights,
// W̄ the incoming ones; the delta-method variance of a weighted mean).
// Chains descended from one member of the prior population are correlated
// within a stage (identical while they have not moved) and from stage to
// stage (a copy carries its parent's state into the next stage), so the
// influences are summed per prior-population ancestor over all stages
// before squaring — the lineage estimate (after Chan & Lai 2013, Ann.
// Stat. 41:2877, and Lee & Whiteley 2018, Biometrika 105:609, for
// sequential Monte Carlo):
//
//	Var(log Ẑ) ≈ Σ_ancestors (Σ_{j, k descended from it} (ŵ_jk − W̄_jk))².
//
// The stagewise estimate sums, per stage, the squared sums over the
// chains of one resampled parent, taking the stages as independent. The
// reported log_evidence_se is the larger of the two (both are in the
// report): when few lineages survive the lineage estimate can fall below
// the stagewise one. Measured (TestEvidenceCoverage): over 20 seeds on
// four problems with known evidence, |log Ẑ − log Z| ≤ 4·SE in 20 of 20
// seeds each. The SE covers Monte Carlo error only: the bias of the
// original and betz variants, and that of chains that do not mix (a high
// dimension with few sub-steps: +1.2 nats at d = 50 with 1000 chains and
// 50 sub-steps on a Gaussian, 3.5 SE), are not in it.
//
// # Output
//
// Report.Samples is the final population, in chain order: equally weighted
// draws from the posterior (the last stage resampled before its Metropolis
// moves, so no further resampling is needed); copies of one point can
// remain where the chains did not move. Report.Extra holds log_evidence,
// log_evidence_se (with log_evidence_se_stagewise,
// log_evidence_se_lineage and lineages), stages (per stage: q = q_{j+1},
// acceptance_rate, in_support_fraction, beta = β_j at the stage's start
// and beta_end after its adaptation, ess = 1/Σŵ² of its weights, log_S,
// cdf_rmse: per parameter, the RMSE between the marginal ECDFs of the
// stage's start and end populations on 100 midpoints of the bounds cut to
// the prior population's mean ± 6 sd — the bounds themselves for a
// uniform prior, as in Bartsoen et al. 2023, Fig. 7), variant, proposal, adapt, chains, substeps, target_cov,
// final_q, acceptance_rate and in_support_fraction (all stages),
// distinct_samples (distinct points in the final population),
// init_failures (unusable prior draws), rejected_failures and
// rejected_out_of_support; for a biased variant evidence_biased and
// warnings.
// Non-finite numbers are null.
//
// If max_stages stages end before q reaches 1, the run is done and Report
// returns the samples of the last tempered density prior·L^q (final_q < 1,
// log_evidence null) together with an error; the host writes both.
//
// # Determinism and checkpoints
//
// All randomness comes from one PCG stream (O'Neill 2014, math/rand/v2)
// seeded with outputs 1 and 2 of SplitMix64 at the study seed (Steele, Lea
// & Flood 2014), drawn in a fixed order: per resampling N uniforms, per
// sub-step d normals per chain (proposals, chain order) and one uniform per
// chain (acceptance, drawn whatever the outcome). Results depend only on the
// seed and the settings, not on the number of workers or on how often Ask
// is called (it is idempotent). SaveState may be called between any two
// calls; the state restored into a fresh method after Init continues
// bit-identically. Float arrays are stored as base64 of their IEEE-754 bits
// (exact, and able to hold −∞).
//
// Bit-identity holds on one platform; math.Exp and math.Log have assembly
// versions on some architectures, so a native run and a WebAssembly run may
// differ in the last bits.
//
// The streams, the Cholesky factor, the random-walk proposal (its
// triangular product by gonum's floats.Dot) and the checkpoint header are
// shared with the metropolis method through builtin/methods/internal/mcmc.
// Besides abi, that package and builtin/stats, the package uses only the
// standard library and gonum (pure Go where no assembly exists), so it
// also compiles to WebAssembly with GOOS=wasip1.
package tmcmc
