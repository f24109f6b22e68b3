// Package run drives a method over a study's target: the ask/tell loop
// (the ask/tell contract), progress on a terminal, and the outputs
// summary.json and samples.csv (docs/OUTPUTS.md).
//
// The host, not the method, owns evaluation: a method asks for a batch, the
// target evaluates it on the workers, the results go back in batch order.
// Prior draws asked for by a method (abi.Batch.Draw) come from a stream
// seeded by the study seed alone, so the run is bit-identical whatever the
// number of workers. An interrupted or failed run still writes what it has.
//
// The output directory is the run's: it is locked for the whole run
// (LockDir, flock(2) on kinfer.lock), every output is written to a
// temporary file and renamed (WriteAtomic), and run.json records whether
// the run is running, stopped or complete (RunState), so that --resume
// can say what happened to a run that left no checkpoint. A checkpoint
// (checkpoint.go) writes only what is new: a streaming method's samples
// (abi.SampleStream) are appended to a journal as they come, and the
// method's state goes to a content-named file written only when it
// changed. Methods plan their memory within a budget (abi.Problem.
// MemoryBudget; DefaultMemoryBudget), which the host also applies to its
// own batches. summary.json records the run's provenance (Provenance: the
// inputs by sha256, the seed, the program's version, VCS revision, Go and
// wazero versions), from which `kinfer run --verify` re-runs it.
package run
