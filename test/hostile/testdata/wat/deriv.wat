;; deriv: a model plugin (ABI v1, §6.1) whose derivative exports fail. The
;; model is y = a·x (one parameter a in [0, 1], one condition x, one output
;; y) with capabilities jacobian and vjp; its setting "mode" picks the
;; failure, each with a kinfer_last_error message:
;;   ok      every export works;
;;   jacfail kinfer_model_jacobian returns 1 (failed);
;;   vjpfail kinfer_model_vjp returns 1 (failed);
;;   jac7    kinfer_model_jacobian returns 7 (not a status);
;;   alloc0  kinfer_alloc returns 0 once configured;
;;   escfail kinfer_model_eval fails as a whole with a message holding ESC,
;;           CR and newline (guest text the host must escape).
;; Build: wat2wasm deriv.wat -o deriv.wasm (see ../build.sh).
(module
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536)) ;; bump allocator, page 1 on
  (global $mode (mut i32) (i32.const 0))
  (global $configured (mut i32) (i32.const 0))

  (data (i32.const 1024) "{\"kind\":\"model\",\"name\":\"deriv\",\"version\":\"1.0.0\",\"doc\":\"derivative failures\",\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}],\"settings\":[{\"name\":\"mode\",\"choices\":[\"ok\",\"jacfail\",\"vjpfail\",\"jac7\",\"alloc0\",\"escfail\"]}],\"capabilities\":[\"jacobian\",\"vjp\"]}\00")
  ;; kinfer_last_error's message for each mode, 128 bytes apart from 4096.
  (data (i32.const 4224) "jacobian failed on purpose\00")
  (data (i32.const 4352) "vjp failed on purpose\00")
  (data (i32.const 4480) "status seven on purpose\00")
  (data (i32.const 4608) "alloc refused on purpose\00")
  (data (i32.const 4736) "bad \1b[31mred\1b[0m\0asecond line\0d kinfer: fake line\00")

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
  (func (export "kinfer_last_error") (result i64)
    (call $span (i32.add (i32.const 4096) (i32.mul (global.get $mode) (i32.const 128)))))
  (func (export "kinfer_alloc") (param $n i32) (result i32)
    (local $p i32) (local $end i32)
    (if (i32.and (global.get $configured) (i32.eq (global.get $mode) (i32.const 4))) (then (return (i32.const 0))))
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
    (global.set $configured (i32.const 1))
    (i32.const 0))

  ;; y[k] = a·x[k] for one θ at theta; with $jac non-zero also ∂y/∂a = x.
  (func $one (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $jac i32)
    (local $k i32) (local $a f64) (local $xk f64)
    (local.set $a (f64.load (local.get $theta)))
    (block $done (loop $conds
      (br_if $done (i32.ge_u (local.get $k) (local.get $K)))
      (local.set $xk (f64.load (i32.add (local.get $x) (i32.shl (local.get $k) (i32.const 3)))))
      (f64.store (i32.add (local.get $y) (i32.shl (local.get $k) (i32.const 3))) (f64.mul (local.get $a) (local.get $xk)))
      (if (local.get $jac)
        (then (f64.store (i32.add (local.get $jac) (i32.shl (local.get $k) (i32.const 3))) (local.get $xk))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $conds))))

  (func (export "kinfer_model_eval") (param $b i32) (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $status i32) (result i32)
    (local $i i32)
    (if (i32.eq (global.get $mode) (i32.const 5)) (then (return (i32.const 1))))
    (block $done (loop $points
      (br_if $done (i32.ge_u (local.get $i) (local.get $b)))
      (call $one (i32.add (local.get $theta) (i32.shl (local.get $i) (i32.const 3))) (local.get $K) (local.get $x)
                 (i32.add (local.get $y) (i32.shl (i32.mul (local.get $i) (local.get $K)) (i32.const 3))) (i32.const 0))
      (i32.store (i32.add (local.get $status) (i32.shl (local.get $i) (i32.const 2))) (i32.const 0))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $points)))
    (i32.const 0))

  (func (export "kinfer_model_jacobian") (param $theta i32) (param $K i32) (param $x i32) (param $y i32) (param $jac i32) (result i32)
    (if (i32.eq (global.get $mode) (i32.const 1)) (then (return (i32.const 1))))
    (if (i32.eq (global.get $mode) (i32.const 3)) (then (return (i32.const 7))))
    (call $one (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (local.get $jac))
    (i32.const 0))

  ;; y = a·x, g = Σ v_k·x_k.
  (func (export "kinfer_model_vjp") (param $theta i32) (param $K i32) (param $x i32) (param $v i32) (param $y i32) (param $g i32) (result i32)
    (local $k i32) (local $s f64) (local $xk f64)
    (if (i32.eq (global.get $mode) (i32.const 2)) (then (return (i32.const 1))))
    (call $one (local.get $theta) (local.get $K) (local.get $x) (local.get $y) (i32.const 0))
    (block $done (loop $conds
      (br_if $done (i32.ge_u (local.get $k) (local.get $K)))
      (local.set $xk (f64.load (i32.add (local.get $x) (i32.shl (local.get $k) (i32.const 3)))))
      (local.set $s (f64.add (local.get $s) (f64.mul (local.get $xk) (f64.load (i32.add (local.get $v) (i32.shl (local.get $k) (i32.const 3)))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $conds)))
    (f64.store (local.get $g) (local.get $s))
    (i32.const 0))
)
