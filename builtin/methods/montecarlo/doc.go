// Package montecarlo is Monte Carlo propagation of uncertain inputs as a
// kinfer method: it draws the model's inputs from their distributions
// (the study's priors, drawn by the host from its seeded stream, so the
// draws do not depend on the number of workers), has the host evaluate
// them in parallel batches, reads one quantity of interest per draw, and
// stops by the rule of Lin, Haftka, Queipo & Fregly (2010, "Surrogate
// articular contact models for computationally efficient multibody dynamic
// simulations", Med. Eng. Phys. 32:584–594, Sec. 2.3.5, after their refs.
// 54–55): the analysis has converged when, over the last 10 % of the
// draws, the running mean and the running coefficient of variation
// (100·sd/mean) stay within 2 % of the final mean and coefficient of
// variation. It reports percentiles (5, 10, 25, 50, 75, 90, 95 — gonum
// stat.Quantile, empirical), the 10th–90th percentile span, mean, standard
// deviation and a histogram in summary.json.
//
// The quantity of interest is read from the residuals (abi.WantResiduals):
// entry `output` of a point's residual vector. With the Gaussian
// likelihood against an observation of 0 with σ = 1 the residual is the
// model output itself, which is how a propagation study is written
// (examples/wear-sim/mc-*.toml). Points whose evaluation fails are
// counted (summary: failed) and left out of the statistics.
//
// Ask/tell: each Ask is a batch of `batch` prior draws; Tell appends the
// quantities in draw order; Done after min_samples once the rule holds, or
// at max_samples (then converged is false). SaveState/LoadState keep the
// quantities and draws as JSON, so a run resumes exactly.
package montecarlo
