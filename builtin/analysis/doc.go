// Package analysis is the posterior analysis of Bartsoen et al. 2023,
// "Bayesian parameter estimation of ligament properties based on
// tibio-femoral kinematics during squatting" (Mech. Syst. Signal Process.
// 182, 109525), Section 2.5, plus a check against known truths, as
// pure functions of posterior samples. Nothing here reads files or knows
// parameter names: the caller picks the columns (host/analyze does that
// for `kinfer analyze`).
//
// # Spread (Sec. 2.5 first paragraph, Table 5)
//
// PercentileSpread gives, for one parameter's samples, the 5th and 95th
// percentiles, the absolute variation P95 − P05 and the relative variation
// (P95 − P05)/(upper − lower), the spread as a fraction of the prior
// range (the paper's "ANN trained range"; its uniform prior covered exactly
// that range). The paper writes "subtracting the 95th percentile from the
// 5th percentile", which would be negative; Table 5's values are P95 − P05.
// Table 5 gives the relative variation in percent (100·Relative here).
// Percentiles are Hyndman & Fan 1996's definition 7 (builtin/stats.Quantile;
// numpy's default, so presumably the paper's Python pipeline).
//
// Table 5 has one "Attachments" column per ligament although each
// ligament has up to four attachment coordinates (x_F, y_F, x_T, y_T); the
// paper does not say how they were combined. Call PercentileSpread per
// coordinate and combine as needed.
//
// # Linear regression (Eq. 9–11, Tables 6–7)
//
// Regress fits y = Σⱼ aⱼ·xⱼ + e by ordinary least squares with an
// intercept, as scikit-learn's LinearRegression (the paper's tool) does, and
// returns the coefficients a, the intercept e and the coefficient of
// determination R² = 1 − SS_res/SS_tot (in sample, scikit-learn's r2_score):
//
//   - Eq. 9: ε_r = a·x_F + b·y_F + c·x_T + d·y_T + e, Regress(εr, xF, yF, xT, yT);
//   - Eq. 10: k = a·x_F + b·y_F + c·x_T + d·y_T + e, Regress(k, xF, yF, xT, yT);
//   - Eq. 11: k = a·ε_r + b, Regress(k, εr), where R² is the squared Pearson
//     correlation.
//
// Table 6 lists R² for the three, Table 7 the coefficients a–d and
// intercept e of Eq. 9 with ε_r in percent (scale the samples by 100 first
// if the model's reference strain is a fraction). Some ligaments in Table 7
// have fewer than four coordinates (those not estimated); pass only the
// free ones. The least-squares problem is solved by a QR factorisation
// (gonum/mat) of the centred design, each column scaled to unit norm, not
// by the normal equations, so that strongly correlated predictors lose
// fewer digits.
//
// # Convergence of TMCMC stages (Fig. 7)
//
// Fig. 7 plots "the root mean squared error between cumulative distribution
// functions of successive iterations" for each parameter. The paper does
// not state where the CDFs are compared; here it is defined as follows.
// For two samples a (size n_a) and b (size n_b) of one parameter, with
// empirical CDFs F_a(x) = #{i: aᵢ ≤ x}/n_a and F_b likewise, and a grid
// x₁ … x_G,
//
//	RMSE(a, b) = √( (1/G)·Σ_g (F_a(x_g) − F_b(x_g))² ).
//
// The grid is MidpointGrid(lower, upper, G): the G midpoints
// x_g = lower + (g − ½)·(upper − lower)/G, g = 1 … G, of G equal cells of
// the prior range [lower, upper], with G = DefaultGridPoints (100) unless
// the caller chooses otherwise. Using the prior range (not the samples'
// range) gives every stage pair of one parameter the same grid, so the
// curve over stages is comparable from stage to stage; and with midpoints
// the RMSE is the midpoint-rule value of the range-normalised L² distance
// (∫(F_a − F_b)² dx/(upper − lower))^½, which it approaches as G grows.
// SuccessiveCDFRMSE gives the RMSE of every pair of successive stages.
// For the attachment sites the paper plots the maximum over the four
// coordinates; take the maximum of their RMSEs.
//
// # Checking against a known truth
//
// For synthetic data (the knee specimens, the quickstart) the parameters
// that generated the data are known. CheckTruth compares one parameter's
// true value t with its posterior samples: the central 90 % band
// [P05, P95] (SpreadLow, SpreadHigh), whether P05 ≤ t ≤ P95, and t's
// posterior percentile, the probability of a sample below t,
//
//	percentile = (Σ_{x_i < t} w_i + ½·Σ_{x_i = t} w_i) / Σ_i w_i
//
// (samples equal to t count half, the mid-rank convention, so that t at
// the median of a symmetric sample gives ½). If the model and the sampler
// are right, the truth's percentile is uniform on [0, 1] over repeated
// data sets, so about 90 % of truths lie inside the band; many percentiles
// near 0 or 1 point to a biased or overconfident posterior. The band's
// edges decide "inside"; the percentile can differ from 0.05 or 0.95 at an
// edge by the interpolation between order statistics.
//
// Without weights (every method's samples.csv today) the band is
// definition 7, as PercentileSpread's and summary.json's p05 and p95, so
// the three agree. With weights w_i ≥ 0 (zero weights drop their samples),
// definition 7 has no standard weighted form: its rule, which puts the
// smallest sample at p = 0, ignores how much weight that sample carries.
// WeightedQuantile therefore uses the midpoint rule: with the samples
// sorted and the weights normalised to sum 1, sample k sits at the middle
// of its weight, c_k = Σ_{i<k} w_i + w_k/2, Q(p) interpolates linearly
// between the two samples whose c_k enclose p, and is the smallest
// (largest) sample for p ≤ c_1 (p ≥ c_n). For equal weights this is
// Hyndman & Fan 1996's definition 5 (c_k = (k − ½)/n), which differs from
// definition 7 by less than one gap between order statistics. It is
// symmetric: Q(x, p) = −Q(−x, 1 − p).
//
// The package uses gonum (mat) for the regression; the rest is stdlib and
// builtin/stats.
package analysis
