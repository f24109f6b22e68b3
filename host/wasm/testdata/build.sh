#!/bin/sh
# Rebuilds the test modules from testmod.c (clang 14 + lld + wasi-libc,
# Debian packages clang lld wasi-libc libclang-rt-14-dev-wasm32):
#   cd host/wasm/testdata && ./build.sh
set -eu
FREE="clang --target=wasm32 -O2 -nostdlib -mbulk-memory -Wl,--no-entry -Wl,--strip-all"
WASI="clang --target=wasm32-wasi -O2 -mexec-model=reactor -Wl,--strip-all"
$FREE -o model.wasm testmod.c
$FREE -DNOCAPS -o model_nocaps.wasm testmod.c
$FREE -DSTATEFUL -o stateful.wasm testmod.c
$FREE -DPULLBACK -o pullback.wasm testmod.c
$FREE -DPULLBACK_ONLY -o pullback_only.wasm testmod.c
$FREE -DPULLBACK -DPULLBACK_LIE=1 -o pullback_lie.wasm testmod.c
$FREE -DPULLBACK -DPULLBACK_LIE=2 -o pullback_liey.wasm testmod.c
$FREE -DPULLBACK -DPULLBACK_LIE=3 -o pullback_state.wasm testmod.c
$FREE -DVJP_LIE -o vjp_lie.wasm testmod.c
$FREE -DBATCH_NOWRITE -o batch_nowrite.wasm testmod.c
$FREE -DROWS_LIE -o rows_lie.wasm testmod.c
$FREE -DJAC_ROWS_LIE -o jac_rows_lie.wasm testmod.c
$FREE -DJAC_ROWS_TRAP -o jac_rows_trap.wasm testmod.c
$FREE -DNOCOND -o nocond_lie.wasm testmod.c
$FREE -DBLOCK_LIE -o block_lie.wasm testmod.c
$FREE -DOFFSET_LIE -o offset_lie.wasm testmod.c
$FREE -DKIND_LIK -o lik.wasm testmod.c
$FREE -DKIND_LIK -DLIK_BATCH -o lik_batch.wasm testmod.c
$FREE -DKIND_LIK -DRES_LIE -o lik_reslie.wasm testmod.c
$FREE -DKIND_LIK -DNO_SKIP -o lik_noskip.wasm testmod.c
$FREE -DKIND_LIK -DGY_NAN -o lik_gynan.wasm testmod.c
$FREE -DKIND_LIK -DLIK_POSITIVE -o lik_positive.wasm testmod.c
$FREE -DKIND_LIK -DNO_SKIP1 -o lik_noskip1.wasm testmod.c
$FREE -DKIND_METHOD -o method.wasm testmod.c
$WASI -DWASI -o wasi.wasm testmod.c
$FREE -DABI_VERSION=2 -o badversion.wasm testmod.c
$FREE -DBAD_IMPORT -o badimport.wasm testmod.c
$FREE -DDESCRIBE_VARIANT=1 -o badjson_unknown.wasm testmod.c
$FREE -DDESCRIBE_VARIANT=2 -o badjson_case.wasm testmod.c
$FREE -DDESCRIBE_VARIANT=3 -o badjson_trailing.wasm testmod.c
$FREE -DDESCRIBE_VARIANT=4 -o badspan.wasm testmod.c
$FREE -DDESCRIBE_VARIANT=5 -o emptydescribe.wasm testmod.c
$FREE -DNO_VJP_EXPORT -o nocapexport.wasm testmod.c
$FREE -DBAD_SIG -o badsig.wasm testmod.c
$FREE -Wl,--initial-memory=4194304 -o bigmem.wasm testmod.c
