// Package kinfer carries the guest SDKs inside the kinfer binary, so that
// `kinfer build` works in a folder of one's own with nothing but the
// binary: the C header sdk/c/kinfer.h, the Go packages a Go guest
// imports (abi/ and sdk/go/..., standard library only) with the module's
// go.mod, the Rust crate sdk/rust and the AssemblyScript package
// sdk/assemblyscript. go:embed only reaches files in the embedding package's directory
// and below, hence this package at the module root; it has no code a
// plugin or the host runs besides these files.
package kinfer

import "embed"

// SDK holds go.mod, abi/*.go, sdk/go/*/*.go, sdk/c/kinfer.h, the Rust
// crate sdk/rust and the AssemblyScript package sdk/assemblyscript, under
// their paths in the repository (test files included: users of SDK skip
// them).
//
//go:embed go.mod abi/*.go sdk/go/*/*.go sdk/c/kinfer.h sdk/rust/Cargo.toml sdk/rust/src/lib.rs
//go:embed sdk/assemblyscript/package.json sdk/assemblyscript/*.ts
var SDK embed.FS
