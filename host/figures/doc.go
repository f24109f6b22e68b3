// Package figures draws kinfer's figures with gonum.org/v1/plot and
// renders them as SVG or PNG. It knows plots, not runs: histograms of a
// marginal with a density overlaid (Bartsoen et al. 2023, "Probabilistic
// knee ligament calibration", Fig. 5–6), a corner plot of pairwise
// scatter (the correlated parameters), line plots with shaded bands
// (loss curves, stage convergence, posterior-predictive bands; Zhou et
// al., Diff-MSM, Fig. 3, 5, 6), box plots (Fig. 4 of the same), traces,
// and grids of panels.
//
// host/report builds a run's figures from its files with this package;
// the examples (examples/arm/experiment, examples/flex-twobar/plot) draw
// their papers' figures with it. No plotting code is written by hand:
// axes, ticks, legends and rendering are gonum/plot's.
package figures
