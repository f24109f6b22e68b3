// Command kinfer runs parameter-identification studies described in TOML,
// and inspects, validates and builds the WebAssembly plugins they use.
//
//	kinfer run STUDY [-o DIR] [--seed N] [--workers N] [--verbose]
//	kinfer design STUDY [-o DIR] [--design sobol] [--n N] [--space box|prior] [--resume]
//	kinfer validate STUDY|PLUGIN.toml
//	kinfer inspect PLUGIN.toml|FILE.wasm
//	kinfer list
//	kinfer build DIR
//	kinfer version
//
// It is a thin layer over the host packages; see README.md.
package main
