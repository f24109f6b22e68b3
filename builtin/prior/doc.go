// Package prior holds the per-parameter prior distributions of a study:
// uniform(lo, hi), normal(mu, sd), lognormal(mu, sigma) (mu and sigma of
// log x) and the truncated normal(mu, sd, lo, hi).
//
// Each Dist gives its normalised log density (−∞ outside the support), the
// derivative of the log density (for gradient methods) and its quantile
// function. The host draws from a prior by inverse transform sampling: one
// uniform u ∈ (0, 1) from its deterministic stream per parameter and draw,
// mapped through Quantile. That keeps draws reproducible and lets a space-
// filling design in (0, 1)ᵈ be pushed through the prior unchanged.
//
// A study writes a prior as `k = { uniform = [2000.0, 9000.0] }`; the host
// passes the key ("uniform") and the numbers to FromTOML.
//
// Sources:
//   - Densities and quantiles: Johnson, Kotz & Balakrishnan, Continuous
//     Univariate Distributions, Vol. 1, 2nd ed. (1994), ch. 13 (normal),
//     ch. 14 (lognormal), ch. 13's section on truncated normal
//     distributions (mean μ + σ(φ(α) − φ(β))/(Φ(β) − Φ(α))), and Vol. 2,
//     2nd ed. (1995), ch. 26 (uniform).
//   - Φ⁻¹: Wichura 1988, Algorithm AS 241 (Appl. Stat. 37:477), PPND16,
//     about 16 digits: gonum's distuv.UnitNormal.Quantile for p, and
//     kinfer's own AS 241 for log p (StdNormalQuantileLog), refined by
//     Newton's method on log Φ below log p = −676, where AS 241 ends.
//   - log Φ in the far lower tail: the asymptotic (Mills ratio) series,
//     Abramowitz & Stegun 1964, Eq. 26.2.12; narrow intervals by the
//     Taylor series of φ, whose derivatives are Hermite polynomials
//     (A&S ch. 22).
//   - Truncated-normal sampling by inversion, Φ⁻¹(Φ(α) + u(Φ(β) − Φ(α))),
//     evaluated in the lower tail (by the symmetry Φ(−z) = 1 − Φ(z)) and in
//     log space so that truncation far in either tail stays accurate; cf.
//     Chopin 2011 (Stat. Comput. 21:275) on why the naive formula fails
//     there.
//
// The package uses the standard library and gonum's distuv (pure Go).
package prior
