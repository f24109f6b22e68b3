// Command kinfer runs parameter-identification studies described in TOML,
// and inspects, validates, builds and scaffolds the WebAssembly plugins
// they use (Go, C, Rust or AssemblyScript).
//
//	kinfer run STUDY [-o DIR] [--seed N] [--workers N] [--verbose]
//	kinfer design STUDY [-o DIR] [--design sobol] [--n N] [--space box|prior] [--resume]
//	kinfer validate STUDY|PLUGIN.toml
//	kinfer inspect PLUGIN.toml|FILE.wasm
//	kinfer list
//	kinfer build DIR
//	kinfer new model|likelihood|method NAME [--lang go|c|rust|assemblyscript]
//	kinfer version
//
// A study file with stages = [...] is a multi-stage study: run runs its
// stage studies in order into DIR/stage<i>-<name>, each starting from the
// previous one's result, and running it again continues where it stopped
// (docs/STUDY.md, "Multi-stage studies").
//
// It is a thin layer over the host packages; see README.md.
package main
