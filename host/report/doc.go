// Package report builds the figures of a run directory (summary.json,
// samples.csv, analysis.json when present, and the run's study reloaded
// for the priors and the model fit) with host/figures, and writes them
// with the study, the provenance and a diagnostics table into one
// self-contained report.html: figures inline as data: URIs, no network,
// no external script or style sheet.
//
// Which figures a run gets depends on its method (docs/OUTPUTS.md,
// "report.html"):
//
//   - samplers (tmcmc, metropolis, any method writing many samples):
//     each free parameter's marginal histogram with its prior density
//     (truncated to the model's bounds, as the run samples it) overlaid (Bartsoen et al. 2023, "Probabilistic knee ligament
//     calibration", Fig. 5–6), and a corner plot;
//   - a propagation run (montecarlo, or a plugin method reporting a
//     montecarlo block): first its result, the quantity of interest — a
//     table of its statistics and its histogram from histogram_edges and
//     histogram_counts —, then the histograms of its prior draws, titled
//     as such;
//   - tmcmc: the stage convergence — the tempering exponent q per stage,
//     the acceptance rate, the log evidence accumulated over the stages
//     (Σ log S_j, Ching & Chen 2007, Eq. 21) and the per-parameter change
//     of the marginal CDFs per stage (Bartsoen et al. 2023, Fig. 7);
//   - metropolis: the traces of each parameter, per chain;
//   - optimisers (adam, anneal, levmar, gaussnewton): the loss curve of
//     every start;
//   - every run whose study still loads: the model's outputs against the
//     observed data, per dataset and observed output, with the
//     posterior-predictive median and 5–95 % band of a sampler (from at
//     most Options.MaxPredictive samples) or the best point's prediction.
//
// The report stays cheap: histograms, the corner plot and traces use at
// most Options.MaxSamples rows (evenly spaced), and the corner plot at
// most Options.MaxCorner parameters.
package report
