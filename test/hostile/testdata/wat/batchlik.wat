;; batchlik: a likelihood plugin (ABI v1, §6.2) with capability batch whose
;; kinfer_likelihood_eval_batch disagrees with kinfer_likelihood_eval in mode
;; "batchdiff" (it adds 1 to every logL), deterministically, and in mode
;; "batch3" only in batches of exactly 3 points; mode "ok" agrees. In mode
;; "batchnan" the batch export reads a missing observation (NaN) as 0; in
;; mode "batchtrap" it traps in a batch of more than 2 points. Both
;; are −½·Σ(y − obs)² over the non-NaN observations (σ = 1).
;; Build: wat2wasm batchlik.wat -o batchlik.wasm (see ../build.sh).
(module
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 65536))
  (global $mode (mut i32) (i32.const 0))

  (data (i32.const 1024) "{\"kind\":\"likelihood\",\"name\":\"batchlik\",\"version\":\"1.0.0\",\"doc\":\"eval_batch vs eval\",\"settings\":[{\"name\":\"mode\",\"choices\":[\"ok\",\"batchdiff\",\"batch3\",\"batchnan\",\"batchtrap\"]}],\"capabilities\":[\"batch\",\"sigma_free\"]}\00")

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

  ;; −½·Σ(y − obs)² over the n values with non-NaN obs.
  (func $gauss (param $n i32) (param $y i32) (param $obs i32) (result f64)
    (local $i i32) (local $r f64) (local $s f64) (local $o f64) (local $off i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $off (i32.shl (local.get $i) (i32.const 3)))
      (local.set $o (f64.load (i32.add (local.get $obs) (local.get $off))))
      (if (f64.eq (local.get $o) (local.get $o)) ;; not NaN
        (then
          (local.set $r (f64.sub (local.get $o) (f64.load (i32.add (local.get $y) (local.get $off)))))
          (local.set $s (f64.add (local.get $s) (f64.mul (local.get $r) (local.get $r))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (f64.mul (f64.const -0.5) (local.get $s)))

  ;; $gauss with a NaN observation read as 0 (mode batchnan's bug).
  (func $gauss0 (param $n i32) (param $y i32) (param $obs i32) (result f64)
    (local $i i32) (local $r f64) (local $s f64) (local $o f64) (local $off i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $off (i32.shl (local.get $i) (i32.const 3)))
      (local.set $o (f64.load (i32.add (local.get $obs) (local.get $off))))
      (if (f64.ne (local.get $o) (local.get $o)) (then (local.set $o (f64.const 0))))
      (local.set $r (f64.sub (local.get $o) (f64.load (i32.add (local.get $y) (local.get $off)))))
      (local.set $s (f64.add (local.get $s) (f64.mul (local.get $r) (local.get $r))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (f64.mul (f64.const -0.5) (local.get $s)))

  (func (export "kinfer_likelihood_eval") (param $K i32) (param $m i32) (param $y i32) (param $obs i32) (param $sigma i32) (param $out i32) (result i32)
    (f64.store (local.get $out) (call $gauss (i32.mul (local.get $K) (local.get $m)) (local.get $y) (local.get $obs)))
    (i32.const 0))

  (func (export "kinfer_likelihood_eval_batch") (param $b i32) (param $K i32) (param $m i32) (param $y i32) (param $obs i32) (param $sigma i32) (param $out i32) (param $status i32) (result i32)
    (local $i i32) (local $n i32) (local $l f64)
    (local.set $n (i32.mul (local.get $K) (local.get $m)))
    (if (i32.and (i32.eq (global.get $mode) (i32.const 4)) (i32.gt_u (local.get $b) (i32.const 2))) (then unreachable))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $b)))
      (local.set $l (call $gauss (local.get $n) (i32.add (local.get $y) (i32.shl (i32.mul (local.get $i) (local.get $n)) (i32.const 3))) (local.get $obs)))
      (if (i32.eq (global.get $mode) (i32.const 3))
        (then (local.set $l (call $gauss0 (local.get $n) (i32.add (local.get $y) (i32.shl (i32.mul (local.get $i) (local.get $n)) (i32.const 3))) (local.get $obs)))))
      (if (i32.or (i32.eq (global.get $mode) (i32.const 1))
                  (i32.and (i32.eq (global.get $mode) (i32.const 2)) (i32.eq (local.get $b) (i32.const 3))))
        (then (local.set $l (f64.add (local.get $l) (f64.const 1)))))
      (f64.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 3))) (local.get $l))
      (i32.store (i32.add (local.get $status) (i32.shl (local.get $i) (i32.const 2))) (i32.const 0))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 0))
)
