// The exports every plugin has (ABI.md §3), re-exported by model.ts and
// likelihood.ts under their ABI names.
import { abiVersion, alloc, configure, describe, free, lastError } from "./index";

export function kinfer_abi_version(): i32 { return abiVersion(); }
export function kinfer_describe(): i64 { return describe(); }
export function kinfer_alloc(nbytes: i32): usize { return alloc(nbytes); }
export function kinfer_free(ptr: usize, nbytes: i32): void { free(ptr, nbytes); }
export function kinfer_configure(values: usize, n: i32): i32 { return configure(values, n); }
export function kinfer_last_error(): i64 { return lastError(); }
