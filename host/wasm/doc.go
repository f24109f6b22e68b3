// Package wasm runs kinfer plugins: WebAssembly modules that implement a
// model, a likelihood or a method through ABI v1 (abi/ABI.md), sandboxed by
// wazero.
//
// A Runtime loads a plugin from its manifest (host/manifest): it verifies
// the sha256 pin, refuses imports other than wasi_snapshot_preview1 and
// kinfer_v1, refuses a module whose minimum memory exceeds memory_mib,
// compiles it (with wazero's compilation cache on disk), instantiates it
// once to check kinfer_abi_version and read kinfer_describe (strict JSON),
// and checks every export its spec needs. The Plugin then builds components
// that implement the abi contracts:
//
//   - Model and Likelihood are backed by a pool of instances (created
//     lazily up to the worker count, configured with kinfer_configure) and
//     are safe for concurrent use; a model evaluates a whole batch of θ in
//     one kinfer_model_eval call (abi.BatchModel). A model with capability
//     pullback is also an abi.Pullbacker (pullback.go): its forward pass
//     hands the host a tape, which the host keeps and hands back to the
//     backward pass on any instance, so that a gradient takes one forward
//     pass and no instance is held between the two calls.
//   - Method is one instance driven by ask/tell.
//
// Every guest call runs under the manifest's timeout_ms. A call that times
// out, traps, calls proc_exit or returns a malformed result (an
// out-of-bounds span, a status other than 0, 1 or 2) is a fault: the
// instance is discarded, the evaluation gets status abi.Timeout or abi.Trap
// and the component's Fault method returns an *Error naming the plugin and
// the export. Non-finite model output is the per-point status
// abi.NonFinite. Outputs are pre-filled with a NaN pattern and read back
// in one pass that copies and checks them (f64.go; AVX2 on amd64).
//
// The sandbox (ABI.md §8) gives no files, environment, arguments or
// network, frozen clocks and a fixed random_get stream; see sandbox.go for
// how this maps onto wazero's configuration. Memory limits are enforced by
// wazero: one wazero runtime per distinct memory_mib (see Runtime).
package wasm
