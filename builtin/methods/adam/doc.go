// Package adam is the Adam optimiser (Kingma & Ba 2015, "Adam: a method
// for stochastic optimization", ICLR, arXiv:1412.6980) as an ask/tell
// method (abi.Method, abi.Checkpointer): it maximises the log target
// log prior(θ) + log L(θ), i.e. minimises f(θ) = −log target. With a
// uniform prior this is the loss itself up to a constant, e.g. L_FD of
// Zhou et al. (docs/REFERENCES.md, Eq. 4) through the nmse
// likelihood (log L = −L_FD); with another prior it finds the posterior
// mode (MAP). It is the optimiser of the paper's M3 and M4 (Sec. IV-A) and
// the local search of the anneal method (M5).
//
// # Batches
//
// starts independent runs advance together. The first Ask is
// Batch{Draw: starts, Want: WantGradient}: the host draws the starting
// points from the prior (its own deterministic stream) and evaluates them
// with their gradients. A start whose draw cannot be used (status not OK, a
// non-finite log target, no gradient) asks for another draw, up to
// MaxInitDraws per start. Every later Ask holds the current point of every
// start that is not finished, in start order, with Want = WantGradient, so
// the host evaluates the starts in parallel. Result.Grad is ∇θ of the log
// target (analytic when the model and likelihoods provide it, else central
// finite differences; see host/target).
//
// # The update (Kingma & Ba 2015, Algorithm 1)
//
// With g_t = −∇θ log target(θ_{t−1}) (the gradient of f), t = 1, 2, …:
//
//	m_t = β₁·m_{t−1} + (1 − β₁)·g_t
//	v_t = β₂·v_{t−1} + (1 − β₂)·g_t²
//	m̂_t = m_t/(1 − β₁ᵗ),  v̂_t = v_t/(1 − β₂ᵗ)
//	θ_t = Π(θ_{t−1} − α·m̂_t/(√v̂_t + ε))
//
// with α = lr, the defaults β₁ = 0.9, β₂ = 0.999, ε = 1e-8 of Kingma & Ba
// (Sec. 2, Algorithm 1) and α = 0.001, the learning rate of Zhou et al.
// (Sec. IV-A; also Kingma & Ba's default). This is what PyTorch's
// torch.optim.Adam computes (without weight decay or amsgrad), the
// implementation the paper used. A run makes `iterations` updates and so
// `iterations` + 1 evaluations when nothing fails; the default 10 000 is
// the paper's run length (Sec. IV-D, "10K iterations"). The paper's Adam
// was stochastic (10 mini-batches of 1K points per epoch, Sec. IV-B); here
// every evaluation is of the whole target, so it is deterministic.
//
// Bounds. Π clamps every coordinate to its parameter's [lower, upper]: a
// step that leaves the box is projected back onto it (the gradient
// projection method; Bertsekas 1999, Nonlinear Programming, 2nd ed.,
// Sec. 2.3). The moment estimates are not changed by the projection, so a
// coordinate whose gradient keeps pointing out of the box stays on its
// bound. The paper instead reparameterises (Eq. 5–8) so that the
// optimisation is unconstrained; with such transforms the box is simply
// wide.
//
// Failures. An evaluation that cannot be an iterate — status not OK (a
// model failure, out of the prior's support), a non-finite log prior or
// log likelihood, a missing gradient (the host leaves Result.Grad nil when
// a finite-difference step fails) or one whose square overflows — is not
// used: the start keeps its last iterate θ_t, m, v and t, and retries from
// θ_t with half the previous step, Π(θ_t − α·2⁻ʰ·m̂/(√v̂+ε)), h = 1, 2, …
// the number of consecutive failures. A retry is not an iteration. After
// MaxHalvings = 30 failed retries (a step of 2⁻³⁰ ≈ 1e-9 of the Adam step)
// the start stops as stalled at θ_t. A start that runs into a region where
// the model fails therefore ends just inside it, flagged stalled.
//
// Accuracy. With a constant α Adam does not converge exactly: near a
// maximum its normalised step m̂/(√v̂ + ε) stays of order one while v̂
// decays, and the iterate hovers within a fraction of α of the optimum
// (in the tests on Gaussian targets, up to 0.37·α over 30 seeds; on the
// Rosenbrock function 0.3·α after 20 000 iterations at α = 1e-3). The
// accuracy of the result is therefore set by lr as much as by iterations.
//
// Adam draws no random numbers: given the host's prior draws, a run is a
// deterministic function of the settings, whatever the number of workers.
// Ask is idempotent, and SaveState/LoadState (JSON) continue a run
// bit-identically from any point, also between an Ask and its Tell.
//
// # Output
//
// Report.Samples holds the final iterate of every start, in start order
// (the last usable point: θ after `iterations` updates, or where a stalled
// start stopped), with its log prior and log likelihood. Report.Extra
// holds the settings, and per start final_log_target, iterations_done (the
// iteration of the final iterate), stalled and step_halvings;
// best_start (the start with the highest final log target, the lowest
// index on ties) and best_log_target; trajectory, per start the log
// target at iterations 0, trace_every, 2·trace_every, … and at its final
// iterate (with trace_theta = yes also the parameters there; trace_every =
// 0 means ⌈iterations/100⌉); and the counters init_draws, evaluations,
// failures and out_of_support.
//
// The batch schedule, the counters and the checkpoint's save and load are
// builtin/methods/internal/multistart's, shared with levmar and gaussnewton.
//
// The package is stdlib-only (plus abi and the stdlib-only
// builtin/methods/internal/mcmc and builtin/methods/internal/multistart),
// so it can be compiled to WebAssembly. Run
// and Observe are exported for the anneal method's local search.
package adam
