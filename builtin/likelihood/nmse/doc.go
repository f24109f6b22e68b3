// Package nmse is the loss of Diff-MSM (Zhou et al., docs/REFERENCES.md,
// Sec. III-C, Eq. 4), the normalised mean squared
// error of the joint accelerations, as a likelihood term:
//
//	L_FD = Σ_t ‖q̈_t − f_FD(q_t, q̇_t, a_t, π)‖² / (T · var(q̈)),
//	log L = −L_FD,
//
// with y the model's K×m predictions f_FD, obs the dataset's observed
// accelerations q̈ (K×m row-major), T = K the number of rows and m the
// number of outputs the term compares (5 for the arm), which the host
// passes.
//
// The variance. The paper says "var(q̈_t) denotes the variance of the joint
// accelerations in the dataset" — one number, not one per joint, so by
// default (normalise = "pooled") it is the variance of all K·m observed
// values together around their common mean, with divisor K·m (the
// population variance of the dataset; PyTorch's torch.var would divide by
// K·m − 1, a relative difference of 1/(K·m), 2e-5 for 10 000 rows of 5
// joints). With normalise = "per_dof" each column j is divided by its own
// variance instead, L = (1/T) Σ_t Σ_j (y_tj − obs_tj)²/var_j, which weighs
// the joints equally whatever their scale (not the paper's form). Either
// way the variance is a constant of the data: it is computed from obs on
// each call (obs does not change during a study), or taken from the
// setting variance when that is > 0 (pooled only; e.g. the variance of a
// whole training set when the term sees one batch of it). With
// normalise = "pooled" a model that predicts the mean acceleration for
// every row scores L_FD = m (not 1), as Eq. 4 is written.
//
// sigma is not used. Missing observations (NaN) are skipped, as the ABI
// requires: they add nothing, their gy and r are 0, the variance is that of
// the observed values, and the sum is normalised by the number N of
// observed values instead of T·m — pooled, L = m·Σ_obs e²/(N·var);
// per_dof, L = Σ_j Σ_obs e²/(N_j·var_j) — both equal to the forms above
// when nothing is missing (Weights).
//
// Capabilities:
//   - grad_y: ∂log L/∂y_tj = −2(y_tj − obs_tj)/(T·var) (var_j for
//     per_dof);
//   - residuals: r_tj = (y_tj − obs_tj)·√(2/(T·var)), so that
//     log L = 0 − ½‖r‖² exactly (the constant is 0).
//
// Statuses: a y, obs or gy of the wrong length (not a positive multiple of
// m), an infinite observation, no observed value (in a column, per_dof)
// or a zero variance gives abi.Invalid; a non-finite y where obs is
// observed gives abi.NonFinite. The log-likelihood is then −∞.
//
// The package is stdlib-only.
package nmse
