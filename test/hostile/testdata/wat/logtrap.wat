;; logtrap: a model that logs its reason through kinfer_v1.log and then
;; traps (unreachable), as the AssemblyScript SDK's abort does: the trap's
;; message must quote the logged line without --verbose.
;; Build: wat2wasm logtrap.wat -o logtrap.wasm (see ../build.sh).
(module
  (import "kinfer_v1" "log" (func $log (param i32 i32)))
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))
  (data (i32.const 1024) "{\"kind\":\"model\",\"name\":\"logtrap\",\"version\":\"1.0.0\",\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}\00")
  (data (i32.const 4096) "abort: index 3 out of range at model.ts:12:7")
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
  (func (export "kinfer_model_eval") (param $b i32) (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $status i32) (result i32)
    (call $log (i32.const 4096) (i32.const 44))
    (unreachable))
)
