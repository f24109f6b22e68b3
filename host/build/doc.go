// Package build compiles a plugin directory into its WebAssembly module and
// pins the result in plugin.toml; it is what `kinfer build DIR` runs, and
// Check is what keeps committed modules honest.
//
// A directory holding Go files of package main is a Go plugin, built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -o <wasm> .
//
// in an environment with CGO_ENABLED=0, GOTOOLCHAIN=local and GOFLAGS,
// GOWASM and GOEXPERIMENT cleared, so that the bytes depend only on the
// sources and the Go version (-trimpath removes the checkout path,
// -buildvcs=false the commit; the name section is kept so that traps name
// functions). A directory holding *.c files is a C plugin, built with
//
//	clang --target=wasm32-wasi -O2 -mexec-model=reactor -I <sdk/c> \
//	      -ffile-prefix-map=<dir>=. -Wl,--strip-debug -o <wasm> *.c
//
// where <sdk/c> (kinfer.h) is found by walking up from the plugin
// directory, or given in Options.Include (a copy of kinfer.h next to the
// sources also works). --strip-debug drops the DWARF that wasi-libc's
// archive carries (about 100 KB), keeping the name section.
//
// Plugins outside the repository. The guest SDKs are carried in the
// binary (package github.com/kinfer/kinfer at the module root embeds
// go.mod, abi/*.go, sdk/go/*/*.go and sdk/c/kinfer.h), so that a plugin
// builds in any folder with nothing but kinfer and the compiler:
//
//   - A C plugin that finds no kinfer.h (next to its sources, in
//     Options.Include, or in an sdk/c above it) gets the embedded header,
//     written to a temporary directory added with -I and mapped to sdk/c by
//     -ffile-prefix-map: the bytes are those of a build against the
//     repository's sdk/c with the same header.
//   - A Go plugin whose module does not provide github.com/kinfer/kinfer —
//     no go.mod at all, or a go.mod (the folder's or an enclosing one)
//     that is not kinfer's own and has no replace of it with a directory
//     holding a go.mod or with another module version — is built with
//     `go build -overlay`: the overlay shows the go command a go.mod at the
//     module root (for a folder without one: module kinfer.local/plugin,
//     the go version of kinfer's go.mod, require github.com/kinfer/kinfer
//     v0.0.0; otherwise the user's go.mod as `go mod edit -print` rewrites
//     it, its go line raised to kinfer's if older, as the go command
//     requires) with `replace github.com/kinfer/kinfer => ./_kinfer_sdk`, and the
//     embedded module's files under <module root>/_kinfer_sdk. Nothing is
//     written to the plugin's folder but the module and plugin.toml. The
//     replacement is relative so that the build info inside the module
//     (which records a replacement's directory even with -trimpath) holds
//     no temporary path: the same plugin gives the same bytes in any
//     folder. Inside a go.work workspace, or in kinfer's own module (the
//     repository's plugins), nothing is overlaid.
//
// After a build, the module's sha256 and the toolchain that produced it are
// written into plugin.toml: the sha256 line and the [build] table's lang
// and toolchain lines are replaced or inserted, every other line (comments
// included) is left as it was. The toolchain string is `go env GOVERSION`
// for Go ("go1.26.8") and, for C, the first line of `clang --version` plus
// a digest of the wasi sysroot files that get linked (libc.a,
// crt1-reactor.o, compiler-rt builtins), because the same clang with a
// different wasi-libc gives different bytes.
//
// Check rebuilds into a temporary directory and compares the bytes with the
// committed module. It does not build when the local toolchain differs from
// the recorded one (the bytes could not be expected to match) and returns
// an error wrapping ErrNoToolchain when go or clang with the wasm32-wasi
// target is absent.
package build
