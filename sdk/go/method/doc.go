// Package method serves an abi.Method (a sampler or optimiser) as a kinfer
// WebAssembly plugin (ABI.md §6.3). Importing it adds kinfer_method_init,
// _ask, _tell, _done, _samples, _report, _save and _load and, through
// package guest, the exports every plugin has.
//
//	func init() { method.ServeNew(metropolis.Spec, metropolis.New) }
//	func main() {}
//
// or, for a method without settings, method.Serve(myMethod{}). Serve lists
// the capability "checkpoint" if the value implements abi.Checkpointer;
// with ServeNew the spec's list is authoritative and checked against the
// constructed method.
//
// How the exports map onto abi.Method:
//
//   - kinfer_method_init(d, seed, lower, upper) calls Init with an
//     abi.Problem of d parameters. The ABI passes only the bounds, so each
//     Param is named "theta0", "theta1", ... and its Default is the middle
//     of its bounds; a method must not rely on names, units or defaults.
//   - kinfer_method_ask calls Ask and returns the 16-byte batch header
//     (n, mode, want, points): mode 0 with the points flattened row-major
//     when Batch.Points is set, mode 1 (the host draws Batch.Draw points
//     from the prior) otherwise. want always has bit 0 set. An empty batch,
//     a point of the wrong length, a Want with residuals or Jacobian
//     without "least_squares" in the spec, or an error returns 0 with the
//     reason in kinfer_last_error.
//   - kinfer_method_tell copies the host's buffers into []abi.Result (the
//     method may keep them) and calls Tell. n must equal the asked batch's.
//   - kinfer_method_done is Done.
//   - kinfer_method_samples and kinfer_method_report call Report (once per
//     state: the result is cached until the next init, tell or load) and
//     return the samples as rows θ, log prior, log likelihood, and
//     json.Marshal(Report.Extra) (the empty span when Extra is nil).
//   - kinfer_method_save / kinfer_method_load are SaveState / LoadState.
//   - Least squares (ABI.md §6.4): a spec that lists "least_squares" (a
//     declaration Serve never adds) gets its Init only at
//     kinfer_method_problem, with the real parameter names, the defaults,
//     Problem.Residuals and Problem.Starts; its Ask may want residuals and
//     Jacobians, and kinfer_method_tell_lsq hands them to Tell in
//     Result.Residuals and Result.Jacobian (nil for a point whose rows the
//     host filled with NaN: a failed point, or no Jacobian).
//   - Propagation (ABI.md §6.5): a spec that lists "propagation" (a
//     declaration) gets its Init only once kinfer_method_outputs has come
//     (and kinfer_method_problem, for least squares too), with
//     Problem.OutputNames, OutputRows and Likelihoods; its Ask may want
//     abi.WantOutputs (not with residuals), and kinfer_method_tell_outputs
//     hands them to Tell in Result.Outputs (nil for a failed point).
//
// Every method export recovers a panic into an error (0 span, 0 pointer or
// status 1) with the panic message in kinfer_last_error.
package method
