// Package anneal is generalised simulated annealing (GSA; Tsallis &
// Stariolo 1996, "Generalized simulated annealing", Physica A 233:395;
// Xiang, Sun, Fan & Gong 1997, Phys. Lett. A 233:216) in the form of
// scipy.optimize.dual_annealing (Xiang & Gong 2000, Phys. Rev. E 62:4473;
// Xiang et al. 2013, The R Journal 5/1, GenSA), which Zhou et al. used for
// their methods M1, M2 and M5 (Zhou (Diff-MSM), docs/REFERENCES.md,
// Sec. IV-A), as an ask/tell method (abi.Method, abi.Checkpointer). It
// minimises the energy E(θ) = −log target(θ) over the parameter box; with a
// uniform prior that is the loss up to a constant (e.g. L_FD, Eq. 4,
// through the nmse likelihood).
//
// # Algorithm (scipy's dual_annealing, re-derived and written anew)
//
// Start: the first Ask is Batch{Draw: 1}, the host's prior draw (scipy
// starts from x0 or a uniform point; a prior draw is kinfer's x0, and it
// makes a run start where the adam method's start 0 does with the same
// seed). A draw whose log target is not finite is replaced by another, up
// to MaxReinit = 1000 (scipy's MAX_REINIT_COUNT).
//
// Iteration i of an annealing (i = 0, 1, …; a run counts iterations over
// all annealings up to maxiter):
//
//  1. Visiting temperature T(i) = T₀·(2^(q_v−1) − 1)/((i+2)^(q_v−1) − 1)
//     (Tsallis & Stariolo 1996; scipy's schedule with t = i + 1), so
//     T(0) = T₀ = initial_temp. If T(i) < T₀·restart_temp_ratio the run
//     re-anneals: it moves to a point drawn uniformly in the box (redrawn,
//     up to MaxReinit, while its log target is not finite) and starts again
//     at i = 0, keeping the best point.
//  2. A strategy chain of 2d visits from the current point x: visits
//     j = 0 … d−1 move every coordinate, visits j = d … 2d−1 move
//     coordinate j − d only. A step is Δx = σ(T)·X/|Y|^((q_v−1)/(3−q_v)),
//     X, Y ~ N(0, 1), σ(T) = σ₀·T^(1/(3−q_v)) (Tsallis & Stariolo's
//     "Visita"; σ₀ in visit.go), steps beyond ±1e8 are replaced by ±1e8·u,
//     and the visited point is wrapped into the box periodically. A visit
//     with lower energy becomes the current point (and the best, if it is
//     lower than the best: the chain "improved"). Otherwise it is accepted
//     with the generalised Metropolis probability
//     p = [1 − (1 − q_a)·ΔE/T_qa]^(1/(1−q_a)) (0 when the bracket is ≤ 0),
//     T_qa = T(i)/(i + 1) (Tsallis & Stariolo 1996; scipy's accept_reject
//     and temperature_step).
//  3. Local search (local = adam; scipy's StrategyChain.local_search): if
//     the chain improved the best point, or it is the first chain of an
//     annealing, a local search from the best point; then, if the best
//     point has not improved for 1000 iterations (the first time) or d
//     iterations (afterwards), a local search from the chain's minimum
//     (scipy's xmin: the last accepted uphill visit, or, while the best
//     is not improving, the lowest current point of the chain's visits;
//     it becomes the search's result). A search result replaces the best
//     (and current) point when it is lower. scipy's third trigger, a
//     random search when K < 90·d, is dead code there (K = 100·d) and
//     omitted.
//
// The run stops after maxiter iterations, or as soon as maxfun evaluations
// are reached (a local search in progress is finished first, as in scipy;
// a chain stopped by maxfun is not counted as an iteration).
//
// The local search is Adam (package adam; Kingma & Ba 2015, Algorithm 1,
// β₁ = 0.9, β₂ = 0.999, ε = 1e-8) with step size local_lr, from the given
// point, asking the host for gradients (Want = WantGradient), projected
// onto the box and halving its step after failed evaluations as the adam
// method does. As in Zhou et al. (Sec. IV-A, M5) it makes at most
// local_iterations = 100 updates with lr = 0.001, and stops early when an
// iterate's loss exceeds the mean of the previous ten losses (read as: the
// ten iterates before it, once ten exist). Its result is its lowest-energy
// iterate if that is lower than the energy it started from, else its
// starting point (scipy's LocalSearchWrapper keeps a search's result only
// if it is valid and lower). scipy's default local search is L-BFGS-B; the
// paper replaced it with Adam, as here.
//
// Settings and sources. Defaults are scipy's: maxiter 1000,
// initial_temp 5230, restart_temp_ratio 2e-5, visit (q_v) 2.62, accept
// (q_a) −5, maxfun 1e7. Zhou et al. used restart_temp_ratio 2e-15,
// initial_temp 0.02 and visit 1.1 (Sec. IV-A), "to discourage exploration
// of the entire search space, as the initial guesses were relatively close
// to the ground truth"; with them σ(T₀) ≈ 0.035 (parameter units) and the
// visits are nearly Gaussian. q_v must be in (1, 3) and q_a < 1 (scipy
// documents the ranges (1, 3] and (−1e4, −5]; q_v = 3 divides by zero).
//
// Where this differs from scipy, besides the start and the local
// optimiser: (a) a point whose evaluation cannot be used (status not OK,
// log target not finite) has energy +∞ and is never accepted (scipy's
// r ≤ p could accept it when r = 0); (b) an accepted uphill visit sets the
// chain's minimum point and its energy together (scipy updates xmin there
// but not emin); (c) a restart point lower than the best becomes the best
// (scipy keeps ebest); (d) σ₀ uses Γ(1/(q_v−1) − ½), equal to scipy's
// constant where that is positive and defined for every q_v ∈ (1, 3)
// (scipy's steps are NaN for q_v ∈ (9/7, 7/5); see visit.go); (e) maxfun
// counts every point asked, including those the host finds outside the
// prior's support and does not evaluate.
//
// # Batches and randomness
//
// The algorithm is sequential — each visit starts from the point the
// previous one left — so every batch is one point: Want = WantLogTarget for
// the start, restarts and visits, WantGradient in a local search. The host
// therefore evaluates an annealing run on one worker; several independent
// runs (other seeds) are separate studies. All randomness comes from one
// PCG stream of the method, mcmc.Stream(seed, 0), drawn in a fixed order: per full visit 2d normals
// (X₀ Y₀ X₁ Y₁ …) and two uniforms; per one-coordinate visit two normals
// (and a uniform if the step is beyond ±1e8); per uphill visit one uniform
// for the acceptance; per restart point d uniforms. Results depend only on
// the seed and the settings. Ask is idempotent, and SaveState/LoadState
// (JSON with the PCG state) continue a run bit-identically from any point,
// also between an Ask and its Tell.
//
// # Output
//
// Report.Samples is the best point found, with its log prior and log
// likelihood. Report.Extra holds best_value (its energy, −log target),
// best_log_target, iterations (completed), restarts and restart_draws,
// evaluations (every point asked), local, local_searches,
// local_from_min (of those, searches from the chain's minimum),
// local_evaluations, local_improvements (searches that improved the best
// point), local_step_halvings, init_draws, failures, out_of_support, stop
// ("maxiter" or "maxfun"), final_temperature, the settings, and trajectory:
// the best log target and the evaluations used at iterations 0,
// trace_every, 2·trace_every, … and at the end (trace_every = 0 means
// ⌈maxiter/100⌉), with trace_theta = "yes" also the best point there
// (best_theta, in the method's own coordinates: x of a study's transform,
// before θ = T(x)).
//
// The package is stdlib-only (plus abi and the stdlib-only
// builtin/methods/internal/mcmc and builtin/methods/adam), so it can be
// compiled to WebAssembly.
package anneal
