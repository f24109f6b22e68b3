// Package surrogate makes a trained surrogate a model: y = f(θ, X) is the
// prediction of a neural-network ensemble (builtin/surrogate/nn; Bartsoen
// et al. 2023, "Bayesian parameter estimation of ligament properties based
// on tibio-femoral kinematics during squatting", Mech. Syst. Signal
// Process. 182, 109525, Sec. 2.3) whose inputs are the parameters θ of the
// model it was trained on followed by that model's conditions, one
// network input row [θ, x_k] per data row k, as the paper's 51-input
// network takes the 50 ligament parameters and the flexion angle.
//
// The model's spec is built from the file's provenance: the parameters
// (names, units, and as bounds the box the training design covered), the
// conditions and the outputs of the source model, so a study written for
// the source model runs on its surrogate by changing [model] only. A
// study's prior is truncated to the parameter bounds (docs/STUDY.md), so θ
// outside the training box is never evaluated (status out-of-support). A
// condition outside the range seen in training makes the evaluation
// Invalid by default (setting outside = "invalid"); outside =
// "extrapolate" predicts there anyway.
//
// Gradients are exact: Jacobian (∂y/∂θ, the θ columns of the network's
// input Jacobian at every row) and VJP (one batched backward pass of the
// ensemble, nn.Ensemble.VJP). The surrogate cannot fail where the source
// model failed (no equilibrium): it was trained on the successful
// evaluations only and predicts everywhere in the box.
//
// The same model is made from Kriging predictors (builtin/surrogate/kriging;
// Lophaven, Nielsen & Søndergaard 2002, DACE, Eq. 3.2), one per output,
// fitted on the same inputs [θ, x] and written with the same provenance
// (kriging.Write): y is the Kriging mean ŷ and the Jacobian and VJP use its
// exact gradient ∂ŷ/∂x (Eq. 3.8, kriging.Model.MeanGrad). The training box
// of the conditions is the box of the Kriging sites.
package surrogate
