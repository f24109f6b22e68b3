;; describe-2mb: a model whose description span is 2 MiB (the limit is 1 MiB), all
;; inside its memory.
;; Build: wat2wasm describe-2mb.wat -o describe-2mb.wasm (see ../build.sh).
(module
  (memory (export "memory") 40)
  (global $heap (mut i32) (i32.const 65536))
  (data (i32.const 1024) "{\"kind\":\"model\",\"name\":\"describe-2mb\",\"version\":\"1.0.0\",\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}\00")
  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))
  (func $loop (loop $forever (br $forever)))
  (func (export "kinfer_abi_version") (result i32) (i32.const 1))
  (func (export "kinfer_describe") (result i64)
    ;; 2 MiB at 0
    (i64.const 0x0020000000000000))
  (func (export "kinfer_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.get $p))
  (func (export "kinfer_free") (param i32 i32))
  ;; y = a·x for every point and condition, status 0.
  (func (export "kinfer_model_eval") (param $b i32) (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $status i32) (result i32)
    (local $i i32) (local $k i32)
    (block $pdone (loop $points
      (br_if $pdone (i32.ge_u (local.get $i) (local.get $b)))
      (local.set $k (i32.const 0))
      (block $kdone (loop $conds
        (br_if $kdone (i32.ge_u (local.get $k) (local.get $K)))
        (f64.store (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $K)) (local.get $k)) (i32.const 3)))
                   (f64.mul (f64.load (i32.add (local.get $theta) (i32.shl (local.get $i) (i32.const 3))))
                            (f64.load (i32.add (local.get $x) (i32.shl (local.get $k) (i32.const 3))))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $conds)))
      (i32.store (i32.add (local.get $status) (i32.shl (local.get $i) (i32.const 2))) (i32.const 0))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $points)))
    (i32.const 0))
)
