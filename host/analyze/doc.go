// Package analyze is `kinfer analyze DIR`: the posterior analysis of a
// finished run, after Bartsoen et al. 2023 Section 2.5. It reads the run's
// summary.json and samples.csv, reloads its study, and writes
// analysis.json next to them with:
//
//   - per parameter, the 5th–95th percentile spread, absolute and relative
//     to the prior range (the paper's Table 5);
//   - the posterior-predictive fit: the model evaluated at the posterior
//     samples, its mean per condition and output, and the mean absolute
//     error against the observations per dataset and output (Table 4);
//   - linear regressions between parameters of one ligament (Eq. 9–11,
//     Tables 6–7), for models whose parameters are named <kind>_<bundle>;
//   - for TMCMC runs, the RMSE between successive stages' marginal CDFs
//     (Fig. 7), when the run kept its stage populations;
//   - with --truth FILE (a JSON object of known true values, ReadTruth),
//     per parameter whether the truth lies in the central 90 % band and its
//     posterior percentile, and how many are inside (truth.go; the
//     statistics are builtin/analysis.CheckTruth); with a truth for every
//     free parameter, the log target at the truth ranked among the
//     samples' (a truth better than nearly every sample means the sampler
//     missed its region).
package analyze
