// Package stats holds the descriptive statistics and MCMC diagnostics that
// kinfer's methods and outputs report: mean, standard deviation, quantiles,
// the Summary of one parameter, split-R̂ and the effective sample size.
//
// Sources:
//   - Mean and Var: gonum's stat.Mean and stat.Variance (the corrected
//     two-pass algorithm, Chan, Golub & LeVeque 1983, Am. Stat. 37:242).
//   - Quantile: Hyndman & Fan 1996 (Am. Stat. 50:361), definition 7, linear
//     interpolation between order statistics; numpy.quantile's and R's
//     default.
//   - Split-R̂ and ESS: Gelman, Carlin, Stern, Dunson, Vehtari & Rubin,
//     Bayesian Data Analysis, 3rd ed. (BDA3), Sec. 11.4 (R̂, Eq. 11.3–11.4)
//     and 11.5 (n_eff, Eq. 11.7–11.8), with the autocorrelation sum
//     truncated by Geyer's initial monotone sequence estimator (Geyer 1992,
//     Stat. Sci. 7:473) as Stan does.
//
// Quantile and ECDF are written here, not taken from gonum: gonum's
// stat.Quantile has no definition 7 (its LinInterp is Hyndman & Fan's
// definition 4), and its stat.CDF scans the whole sample for every point
// where ECDF searches (RATIONALE.md, "Why are the sample quantile and the
// ECDF hand-written?").
//
// The package uses the standard library and gonum (pure Go): the
// metropolis method, which uses it, is also compiled to WebAssembly.
package stats
