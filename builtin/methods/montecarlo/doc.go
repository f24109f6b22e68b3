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
// The quantity of interest is a model output, named by the setting
// quantity (an output name, which the study resolves to its index,
// abi.Setting.Output) and read at condition row `condition` (default 0)
// of the outputs the host evaluates for each draw (abi.WantOutputs: all
// outputs at every condition row, the rows of the study's [[data]] tables
// in order, or of its [conditions] table). Such a study needs neither data
// nor a likelihood (capability propagation, docs/STUDY.md); with a
// likelihood, samples.csv's log_likelihood is each draw's. The quantity
// is also a column of samples.csv (abi.Report.Columns).
//
// The old way, still accepted: without quantity, the quantity is entry
// `output` of a point's residual vector (abi.WantResiduals); with the
// Gaussian likelihood against an observation of 0 with σ = 1 that
// residual is the model output itself, bit for bit, so an old study and
// its quantity form give the same values with the same seed. samples.csv's
// log_likelihood is then −½·value², and it has no quantity column.
//
// Points whose evaluation fails (a model status, a non-finite output)
// are counted (summary: failed) and left out of the statistics.
//
// Ask/tell: each Ask is a batch of `batch` prior draws; Tell appends the
// quantities in draw order; Done after min_samples once the rule holds, or
// at max_samples (then converged is false). SaveState/LoadState keep the
// quantities and draws as JSON, so a run resumes exactly.
package montecarlo
