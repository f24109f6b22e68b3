// Package model serves an abi.Model as a kinfer WebAssembly plugin (ABI.md
// §6.1). Importing it adds the model exports (kinfer_model_eval,
// kinfer_model_jacobian, kinfer_model_vjp, kinfer_model_forward,
// kinfer_model_pullback) and, through package guest, the exports every
// plugin has.
//
// A model without settings is a value and one call:
//
//	type spring struct{}
//
//	func (spring) Spec() abi.Spec                       { return spec }
//	func (spring) Eval(theta, x, y []float64) abi.Status { ...; return abi.OK }
//
//	func init() { model.Serve(spring{}) }
//	func main() {}
//
// Serve lists the capability "jacobian" if the value implements
// abi.Jacobian, "vjp" if it implements abi.VJP, and "pullback" if it
// implements abi.TapePullbacker: a forward pass that returns its tape and
// a backward pass from θ, x and that tape, so that a gradient takes one
// forward pass (the host keeps the tape between the two calls; the server
// keeps the last tape's storage until the next forward pass).
//
// A model with settings (a reference length, a variant) gives its spec and
// a constructor, which kinfer_configure calls with the study's values in
// the order of Spec.Settings; the builtin models are served that way:
//
//	func init() { model.ServeNew(ligament.Spec, ligament.New) }
//
// With ServeNew the spec's capability list is authoritative and configure
// fails if the constructed model does not implement a listed capability.
//
// kinfer_model_eval loops over the batch of b parameter vectors, calling
// Eval once per θ with all K conditions; y and the statuses are written in
// place in the host's buffers (no copies). A status other than OK, Failed or
// Invalid from Eval is reported as Failed (a guest returns only 0, 1 or 2).
// A non-zero return of the whole call happens only when the plugin is not
// configured or the host passed negative counts; kinfer_last_error says why.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath
// -buildvcs=false -o model.wasm . (or `kinfer build DIR`).
package model
