// Package hostile is a test suite that attacks the kinfer host through its
// command line, as a user running untrusted plugins, studies and data
// would: each case builds a folder (a study, data, a plugin manifest and a
// hostile WebAssembly module from testdata/), runs the kinfer binary on it
// as a subprocess and checks the outcome (exit code, the plugin, file, key
// or export named in the message), that it did not hang (a wall deadline),
// that the host did not crash (no Go panic or fatal error, no death by a
// signal) and that its peak memory stayed under 1 GB.
//
// surrogate_cases_test.go attacks the surrogate surfaces the same way:
// kinfer design with absurd sizes and --resume on a tampered run
// directory (records with impossible counts, named pipes, devices,
// sparse files and symbolic links in place of its files), kinfer train
// with settings that cannot work and damaged design runs, and kinfer
// combine with member files and reports that are not what train wrote.
//
// The hostile modules are written in WebAssembly text (testdata/wat, built
// with wabt's wat2wasm) and C (testdata/c, built by `kinfer build` with
// clang for wasm32-wasi); the compiled modules are committed next to their
// sources, and TestRebuild checks that they match (skipped without the
// tools). testdata/build.sh rebuilds them.
//
// The expected behaviour follows abi/ABI.md and docs/STUDY.md. Nothing
// imports this package: it holds tests only.
package hostile
