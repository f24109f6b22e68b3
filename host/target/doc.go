// Package target evaluates a study's log target, log prior(θ) + Σ over
// likelihood terms of log L(data | model(θ)), for batches of points, in
// parallel on a fixed number of workers.
//
// The determinism contract: each point's result depends only on
// the point, and batches are cut into chunks of a fixed size whatever the
// number of workers, so results are bit-identical for any worker count.
// Per-point sums (over datasets, terms, parameters) run in a fixed order.
//
// A model failure (Failed, Invalid, NonFinite) is a counted status with log
// likelihood −∞; a plugin fault (Timeout, Trap) stops the evaluation with
// the plugin's error. Gradients of the log target come from the model's
// Jacobian or VJP chained with the likelihood's ∂logL/∂y when both exist,
// else from central finite differences.
//
// Row blocks (rows.go). A model that declares its rows independent
// (abi.RowsIndependent) is evaluated by blocks of RowBlock rows with fixed
// boundaries; the worker that evaluates a point lends its blocks to the
// workers that are idle (a single start, the tail of a batch), and block
// gradients are summed in block order, so a single θ uses every worker and
// results stay bit-identical for any worker count.
//
// Fused gradients (fused.go). For a model that keeps what its VJP needs
// (abi.Pullbacker), a point with a gradient takes one forward pass:
// EvalPullback gives y and a pullback, the likelihood ∂logL/∂y, Pull the
// backward pass; its numbers equal the unfused path's (Eval, then VJP by
// blocks) when the model's Pull equals its VJP bit for bit, as the arm's.
//
// Least squares (lsq.go). With abi.WantResiduals a point's result carries
// its residual vector: every term's likelihood residuals (abi.Residuals),
// then the study's soft constraints ([[constraint]], study.Constraint),
// whose −½‖r‖² is in every point's log likelihood whatever the method
// asks. With abi.WantJacobian it also carries ∂r/∂θ: analytic (the
// model's Jacobian times the likelihoods' abi.ResidualSlopes, the
// constraints' exact derivatives), or forward or central differences with
// the step rule of Dennis & Schnabel (1996, Sec. 5.4), every difference
// point of the batch evaluated as one batch on the workers.
//
// Outputs. With abi.WantOutputs a point's result carries the model's
// outputs, copied from the buffers the likelihoods read (every dataset's
// K×m in study order), so they are the model's own evaluation bit for bit;
// such a batch never takes the fused path. Remote workers return them too
// (host/remote).
package target
