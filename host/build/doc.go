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
//	      -ffile-prefix-map=<dir>=. -Wl,--strip-debug \
//	      -Wl,--stack-first -Wl,-z,stack-size=1048576 -o <wasm> *.c
//
// where <sdk/c> (kinfer.h) is found by walking up from the plugin
// directory, or given in Options.Include (a copy of kinfer.h next to the
// sources also works). --strip-debug drops the DWARF that wasi-libc's
// archive carries (about 100 KB), keeping the name section. The 1 MiB
// stack comes first in memory, so that an overflow traps instead of
// writing over the static data (wasm-ld's default: 64 KiB above it).
//
// A directory holding lib.rs (or src/lib.rs) is a Rust plugin, built with
// two rustc calls and no cargo (RustTarget, the standard library without
// WASI, so the module imports nothing but kinfer_v1):
//
//	rustc --crate-name kinfer --crate-type rlib --edition 2021 --target wasm32-unknown-unknown \
//	      -C opt-level=3 -C codegen-units=1 --remap-path-prefix ... -o <tmp>/libkinfer.rlib <sdk/rust>/src/lib.rs
//	rustc --crate-name <name> --crate-type cdylib (same flags) -C strip=debuginfo \
//	      --extern kinfer=<tmp>/libkinfer.rlib -o <wasm> lib.rs
//
// where <sdk/rust> is found by walking up from the plugin directory (a
// clone) or is the embedded crate written to a temporary directory; the
// --remap-path-prefix flags map the plugin's folder to ".", the SDK to
// sdk/rust and the temporary directory to kinfer-sdk, so the bytes do not
// depend on where either lives. The rustc used is the first with the
// wasm32-unknown-unknown standard library among Options.Rustc,
// $KINFER_RUSTC, rustc on PATH and /usr/bin/rustc (Debian's rustc and
// libstd-rust-dev-wasm32: rustup's rustc often lacks the target); its
// toolchain string is `rustc --version` plus a digest of the target's
// rlibs.
//
// A directory holding *.ts files (not *.d.ts) is an AssemblyScript plugin,
// built with
//
//	asc *.ts --config <tmp>/asconfig.json --path <tmp>/as -O3 --noAssert --runtime incremental \
//	    --exportStart _initialize --use abort=~lib/kinfer/index/kinferAbort -o <wasm>
//
// where <tmp>/asconfig.json is empty (the plugin folder's asconfig.json,
// whose "transform" would run JavaScript, is never read), <tmp>/as/kinfer holds the SDK package (sdk/assemblyscript, the
// clone's or the embedded one), so that `import ... from "kinfer"`
// resolves; the start function becomes _initialize (ABI.md §1) and aborts
// go to the plugin log before trapping, so the module imports only
// kinfer_v1.log. asc is found as Options.Asc, $KINFER_ASC, asc on PATH,
// or in kinfer/assemblyscript under the user cache directory (where
// AscInstall puts AscVersion), never in a node_modules of the plugin's
// folder or above it (a folder could ship a program of its own there); its
// toolchain string is "AssemblyScript <version>".
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
//     folder. Inside a go.work workspace that uses the plugin's module
//     (one that does not is left out: GOWORK=off, with a note), in
//     kinfer's own module (the
//     repository's plugins), or in a module none of whose non-test files
//     imports github.com/kinfer/kinfer (a plugin written from ABI.md alone),
//     nothing is overlaid: such a module is built exactly as `go build`
//     builds it, with its own go line. When the overlay raises the go line,
//     Result.Notes says so (the language version changes semantics).
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
// The module path (key wasm) must not name an input of the build (the
// manifest, a source file, go.mod, Cargo.toml…), and an existing file there
// is replaced only if it is a WebAssembly module (\0asm magic) or empty: a
// slip such as wasm = "spring.c" is refused before anything is compiled.
// A build writes the module to a .tmp file beside it and renames it over
// the old one (a symbolic link there is replaced, not written through).
//
// BuildContext and CheckContext stop when their context is done (kinfer
// build cancels it on SIGINT or SIGTERM): the compiler runs in a process
// group of its own (Unix), which is killed as a whole, so that clang -cc1,
// the linker or go's compile and link do not run on as orphans; the
// compilers' temporary files are kept below the build's temporary folder
// (TMPDIR, GOTMPDIR), which is removed with the partial module.
//
// Check rebuilds into a temporary directory and compares the bytes with the
// committed module. It does not build when the local toolchain differs from
// the recorded one (the bytes could not be expected to match) and returns
// an error wrapping ErrNoToolchain, naming the install command, when go,
// clang with the wasm32-wasi target, rustc with the wasm32 standard library
// or asc is absent.
package build
