// Package train fits a surrogate to a design run (host/designrun, `kinfer
// design`) and writes it as one file with its provenance and a validation
// report: `kinfer train`. It is the training step of Bartsoen et al.
// (2023, "Bayesian parameter estimation of ligament properties based on
// tibio-femoral kinematics during squatting", Mech. Syst. Signal Process.
// 182, 109525, Sec. 2.3): a Sobol design over the model's prior box, the
// model's outputs at every condition, a neural-network ensemble
// (builtin/surrogate/nn) from the parameters and the conditions to the
// outputs, and its accuracy on separate validation samples as nMAE, MAE
// and 90 % AE per output (the paper's Table 3).
//
// Every data row of design.csv with status ok is one sample (inputs: the
// design point's parameters, then the row's conditions; outputs: the
// model's outputs); failed points are left out. Validation samples come
// from a second design run (Options.Validation; the paper uses 2 000) or,
// without one, from a share of the design points chosen with the seed
// (all rows of a point go to the same side, so validation points are
// unseen parameter vectors).
//
// The file's provenance pins the source model (name and version, and the
// sha256 of its plugin module when it is one), the design (kind, n, seed,
// space, the sha256 of design.json), the sha256 of the training and
// validation design.csv, the seed and kinfer's version; the surrogate
// model (builtin/models/surrogate) takes its parameters, conditions,
// outputs and the parameters' box from it.
//
// TrainKriging fits one Kriging predictor per output instead
// (builtin/surrogate/kriging; Lophaven, Nielsen & Søndergaard 2002, DACE)
// on the same samples, validates it the same way and WriteKriging writes
// it (kriging.Save) with the same provenance and report.
package train
