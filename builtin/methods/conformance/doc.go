// Package conformance is test support for kinfer's methods: a serial Host
// that plays the kinfer host's part in the ask/tell contract (abi.Method),
// and a table of analytic problems with exact posterior moments and log
// evidence, so that every sampler and optimiser is checked over the same
// problems (kinfer's habit: one conformance test drives every
// method over the same problem table).
//
// The Host draws prior points by inverse transform, one uniform u ∈ (0, 1)
// per parameter from its own seeded stream mapped through prior.Dist's
// Quantile, as the real host does; it marks points outside the parameter
// bounds or the prior support abi.OutOfSupport without evaluating them,
// turns a NaN or +Inf log-likelihood into abi.NonFinite, gives every non-OK
// point a log-likelihood of −∞, and fills gradients, residuals and Jacobians
// when a batch wants them. It is not built into the binary; other packages'
// tests import it.
//
// Sources for the problem table: docs/REFERENCES.md, "Samplers" (analytic
// checks and the moment check for any MCMC sampler); the closed forms are
// the conjugate normal–normal model, e.g. Gelman et al., Bayesian Data
// Analysis, 3rd ed., Sec. 2.5 (posterior of a normal mean with known
// variance) and its marginal y ~ N(μ₀, τ₀² + σ²).
package conformance
