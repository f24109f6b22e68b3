#!/bin/sh
# Rebuilds the hostile test modules: the WebAssembly text files with wabt's
# wat2wasm (Debian package wabt) and the C plugins with `kinfer build`
# (clang, lld, wasi-libc, libclang-rt-14-dev-wasm32). Run from anywhere:
#   sh test/hostile/testdata/build.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for f in "$here"/wat/*.wat; do
  wat2wasm "$f" -o "${f%.wat}.wasm"
done
root=$(cd "$here/../../.." && pwd)
for d in "$here"/c/*/; do
  (cd "$root" && go run ./cmd/kinfer build "$d")
done
