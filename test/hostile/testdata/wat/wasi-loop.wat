;; wasi-loop: a model whose kinfer_model_eval loops for ever on one WASI
;; call that makes the host work: setting s = 1 random_get of 1 MiB, 2
;; fd_write of 1 MiB to stdout, 3 clock_time_get (a wait for time to pass).
;; Each iteration is a few instructions of guest code; the host charges
;; the call's work to the guest's fuel (ABI.md §8), which stops the loop.
;; Build: wat2wasm wasi-loop.wat -o wasi-loop.wasm (see ../build.sh).
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (memory (export "memory") 40)
  (global $heap (mut i32) (i32.const 2162688)) ;; after the 1 MiB buffer at 1 MiB
  (global $mode (mut i32) (i32.const 0))
  (data (i32.const 1024) "{\"kind\":\"model\",\"name\":\"wasi-loop\",\"version\":\"1.0.0\",\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}],\"settings\":[{\"name\":\"s\",\"default\":1}]}\00")
  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))
  (func (export "kinfer_abi_version") (result i32) (i32.const 1))
  (func (export "kinfer_describe") (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (call $strlen (i32.const 1024))) (i64.const 32)) (i64.const 1024)))
  (func (export "kinfer_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.get $p))
  (func (export "kinfer_free") (param i32 i32))
  (func (export "kinfer_configure") (param $v i32) (param $n i32) (result i32)
    (global.set $mode (i32.trunc_f64_s (f64.load (local.get $v))))
    (i32.const 0))
  (func (export "kinfer_model_eval") (param $b i32) (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $status i32) (result i32)
    ;; the iovec at 512: the 1 MiB buffer at 1 MiB
    (i32.store (i32.const 512) (i32.const 1048576))
    (i32.store (i32.const 516) (i32.const 1048576))
    (loop $forever
      (if (i32.eq (global.get $mode) (i32.const 1))
        (then (drop (call $random_get (i32.const 1048576) (i32.const 1048576)))))
      (if (i32.eq (global.get $mode) (i32.const 2))
        (then (drop (call $fd_write (i32.const 1) (i32.const 512) (i32.const 1) (i32.const 600)))))
      (if (i32.eq (global.get $mode) (i32.const 3))
        (then (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 608)))))
      (br $forever))
    (i32.const 0))
)
