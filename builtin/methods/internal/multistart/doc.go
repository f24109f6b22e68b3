// Package multistart is the bookkeeping kinfer's multi-start optimisers
// (builtin/methods/adam, builtin/methods/levmar,
// builtin/methods/gaussnewton) share: every start first needs a usable
// starting point (a batch of host draws: the study's init points, then prior
// draws), then the started runs advance together, one evaluation each per
// batch, until every run is done.
//
//   - Schedule: which batch is pending (draws for the starts not yet
//     started, or iterates for the started runs not yet done) and for which
//     starts, and the batch that asks for it (Ask); it saves in a checkpoint
//     as the fields pending and pending_starts, and Check verifies a decoded
//     one; AllDone says whether every start has finished.
//   - Counts: the evaluations, failures and out-of-support results of a run,
//     saved as evaluations, failures and out_of_support.
//   - Save, Load: the checkpoint as the JSON of the method's state (floats
//     round-trip exactly through encoding/json), and its decoding with the
//     method's header and shape checks, both refused before Init.
//
// The algorithms themselves (the step of each run) stay in the methods. The
// package is stdlib-only (plus abi), so the methods that use it still
// compile to WebAssembly.
package multistart
