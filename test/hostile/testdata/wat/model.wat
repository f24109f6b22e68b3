;; model: a hostile model plugin (ABI v1, §6.1). Its setting "mode" picks
;; the attack; mode "ok" is a valid model y = a·x (one parameter a in
;; [0, 1], one condition x, one output y) with a vector-Jacobian product.
;; Every attack happens in kinfer_model_eval unless its name says otherwise.
;; Build: wat2wasm model.wat -o model.wasm (see ../build.sh).
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536)) ;; bump allocator, page 1 on
  (global $mode (mut i32) (i32.const 0))
  (global $zero (mut i32) (i32.const 0))     ;; a divisor the compiler cannot see

  ;; The description, NUL-terminated (describe measures it).
  (data (i32.const 1024) "{\"kind\":\"model\",\"name\":\"model\",\"version\":\"1.0.0\",\"doc\":\"hostile test model\",\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}],\"settings\":[{\"name\":\"mode\",\"choices\":[\"ok\",\"loop\",\"fib\",\"deep\",\"grow\",\"unreachable\",\"div0\",\"exit\",\"nan\",\"status7\",\"nostatus\",\"noy\",\"retfail\",\"loopvjp\",\"failvjp\",\"failall\"]}],\"capabilities\":[\"vjp\"]}\00")
  (data (i32.const 4096) "model failed on purpose (mode retfail)\00")

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))
  (func $span (param $p i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (call $strlen (local.get $p))) (i64.const 32))
            (i64.extend_i32_u (local.get $p))))

  (func (export "kinfer_abi_version") (result i32) (i32.const 1))
  (func (export "kinfer_describe") (result i64) (call $span (i32.const 1024)))
  (func (export "kinfer_last_error") (result i64) (call $span (i32.const 4096)))
  (func (export "kinfer_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (if (i32.gt_u (local.get $end) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.mul (memory.size) (i32.const 65536))) (i32.const 16)) (i32.const 1)))
                    (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $heap (local.get $end))
    (local.get $p))
  (func (export "kinfer_free") (param i32 i32))
  (func (export "kinfer_configure") (param $v i32) (param $n i32) (result i32)
    (global.set $mode (i32.trunc_f64_s (f64.load (local.get $v))))
    (i32.const 0))

  (func $loop (loop $forever (br $forever)))
  (func $fib (param $n i64) (result i64) ;; exponential, without a loop
    (if (result i64) (i64.lt_u (local.get $n) (i64.const 2))
      (then (local.get $n))
      (else (i64.add (call $fib (i64.sub (local.get $n) (i64.const 1)))
                     (call $fib (i64.sub (local.get $n) (i64.const 2)))))))
  (func $deep (param $n i32) (result i32) ;; unbounded recursion
    (i32.add (call $deep (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))

  ;; y[i,k] = a_i·x_k for b points and K conditions; status[i] = 0.
  (func $eval (param $b i32) (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $status i32)
                (param $writeY i32) (param $writeStatus i32) (param $st i32)
    (local $i i32) (local $k i32) (local $a f64) (local $v f64)
    (block $pdone (loop $points
      (br_if $pdone (i32.ge_u (local.get $i) (local.get $b)))
      (local.set $a (f64.load (i32.add (local.get $theta) (i32.shl (local.get $i) (i32.const 3)))))
      (local.set $k (i32.const 0))
      (block $kdone (loop $conds
        (br_if $kdone (i32.ge_u (local.get $k) (local.get $K)))
        (local.set $v (f64.mul (local.get $a) (f64.load (i32.add (local.get $x) (i32.shl (local.get $k) (i32.const 3))))))
        (if (i32.and (i32.eq (global.get $mode) (i32.const 8)) (f64.gt (local.get $a) (f64.const 0.5)))
          (then (local.set $v (f64.const nan))))
        (if (local.get $writeY)
          (then (f64.store (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $K)) (local.get $k)) (i32.const 3)))
                           (local.get $v))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $conds)))
      (if (local.get $writeStatus)
        (then (i32.store (i32.add (local.get $status) (i32.shl (local.get $i) (i32.const 2))) (local.get $st))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $points))))

  (func (export "kinfer_model_eval") (param $b i32) (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $status i32) (result i32)
    (local $m i32)
    (local.set $m (global.get $mode))
    (if (i32.eq (local.get $m) (i32.const 1)) (then (call $loop)))
    (if (i32.eq (local.get $m) (i32.const 2)) (then (drop (call $fib (i64.const 60)))))
    (if (i32.eq (local.get $m) (i32.const 3)) (then (drop (call $deep (i32.const 0)))))
    (if (i32.eq (local.get $m) (i32.const 4)) ;; take every page the limit allows
      (then (loop $grow (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))))
    (if (i32.eq (local.get $m) (i32.const 5)) (then unreachable))
    (if (i32.eq (local.get $m) (i32.const 6)) (then (drop (i32.div_s (i32.const 1) (global.get $zero)))))
    (if (i32.eq (local.get $m) (i32.const 7)) (then (call $proc_exit (i32.const 3))))
    (if (i32.eq (local.get $m) (i32.const 9))
      (then (call $eval (local.get $b) (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (local.get $status) (i32.const 1) (i32.const 1) (i32.const 7))
            (return (i32.const 0))))
    (if (i32.eq (local.get $m) (i32.const 10))
      (then (call $eval (local.get $b) (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (local.get $status) (i32.const 1) (i32.const 0) (i32.const 0))
            (return (i32.const 0))))
    (if (i32.eq (local.get $m) (i32.const 11))
      (then (call $eval (local.get $b) (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (local.get $status) (i32.const 0) (i32.const 1) (i32.const 0))
            (return (i32.const 0))))
    (if (i32.eq (local.get $m) (i32.const 12)) (then (return (i32.const 1))))
    (if (i32.eq (local.get $m) (i32.const 15)) ;; failall: status 1 at every point
      (then (call $eval (local.get $b) (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (local.get $status) (i32.const 1) (i32.const 1) (i32.const 1))
            (return (i32.const 0))))
    (call $eval (local.get $b) (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (local.get $status) (i32.const 1) (i32.const 1) (i32.const 0))
    (i32.const 0))

  ;; y = a·x, g = Σ v_k·x_k.
  (func (export "kinfer_model_vjp") (param $theta i32) (param $K i32) (param $x i32) (param $v i32) (param $y i32) (param $g i32) (result i32)
    (local $k i32) (local $a f64) (local $xk f64) (local $s f64)
    (if (i32.or (i32.eq (global.get $mode) (i32.const 1)) (i32.eq (global.get $mode) (i32.const 13))) (then (call $loop)))
    (if (i32.eq (global.get $mode) (i32.const 14)) (then (return (i32.const 1)))) ;; failvjp
    (local.set $a (f64.load (local.get $theta)))
    (block $done (loop $conds
      (br_if $done (i32.ge_u (local.get $k) (local.get $K)))
      (local.set $xk (f64.load (i32.add (local.get $x) (i32.shl (local.get $k) (i32.const 3)))))
      (f64.store (i32.add (local.get $y) (i32.shl (local.get $k) (i32.const 3))) (f64.mul (local.get $a) (local.get $xk)))
      (local.set $s (f64.add (local.get $s) (f64.mul (local.get $xk) (f64.load (i32.add (local.get $v) (i32.shl (local.get $k) (i32.const 3)))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $conds)))
    (f64.store (local.get $g) (local.get $s))
    (i32.const 0))
)
