// Package manifest reads a plugin's plugin.toml (abi/ABI.md §9): name,
// version, kind, abi, wasm path, optional sha256 pin and [limits] (memory,
// the wall-clock timeout and the fuel budget, with the defaults and the
// maxima an untrusted plugin may ask for). Decoding is strict and bounded
// (host/tomlx). ReadWasm reads the module only if it is a regular file
// inside the manifest's folder, symbolic links resolved, of at most
// MaxModuleBytes, starting with the WebAssembly header, and verifies the
// pin before any byte of it is compiled.
package manifest
