;; method: a hostile method plugin (ABI v1, §6.3). Its setting "mode" picks
;; the attack; mode "ok" is a valid method: three batches of four prior
;; draws, every point kept as a sample, with checkpoints. Attacks named
;; loopX loop forever in kinfer_method_X; XXXoob return spans or pointers
;; outside memory; the others are described where they act.
;; Build: wat2wasm method.wat -o method.wasm (see ../build.sh).
(module
  (memory (export "memory") 8)
  (global $heap (mut i32) (i32.const 65536)) ;; host buffers, up to 256 KiB
  (global $mode (mut i32) (i32.const 0))
  (global $d (mut i32) (i32.const 0))
  (global $batches (mut i32) (i32.const 0))
  (global $nsamples (mut i32) (i32.const 0))

  ;; 256: batch header; 512: report; 1024: description; 4096: last error;
  ;; 8192: state = batches, nsamples (i32 each), then the samples (d+2 f64
  ;; per row); 262144: scratch for the deep report.
  (data (i32.const 512) "{\"evil\":true}\00")
  (data (i32.const 1024) "{\"kind\":\"method\",\"name\":\"method\",\"version\":\"1.0.0\",\"doc\":\"hostile test method\",\"settings\":[{\"name\":\"mode\",\"choices\":[\"ok\",\"loopinit\",\"loopask\",\"looptell\",\"loopdone\",\"loopsamples\",\"loopreport\",\"loopsave\",\"headeroob\",\"pointsoob\",\"samplesoob\",\"reportoob\",\"saveoob\",\"reporthuge\",\"points2e25\",\"draw1e9\",\"draw16m\",\"empty\",\"neverdone\",\"tellerr\",\"savehuge\",\"savereal\",\"reportdeep\",\"wantbits\",\"badmode\",\"samplesbig\",\"samplesnan\",\"samplesout\",\"samplesinf\",\"neverdoneloopsamples\",\"done7\",\"reportbomb\",\"draw1m\",\"draw10k\",\"save65m\",\"neverdonesave65m\",\"loaddropsamples\",\"pointsnull\",\"save65msecond\",\"reporttrunc\"]}],\"capabilities\":[\"checkpoint\"]}\00")
  (data (i32.const 4096) "tell refused on purpose (mode tellerr)\00")

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))
  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $n)) (i64.const 32)) (i64.extend_i32_u (local.get $p))))
  (func $loop (loop $forever (br $forever)))
  (func $is (param $m i32) (result i32) (i32.eq (global.get $mode) (local.get $m)))
  (func $rowBytes (result i32) (i32.shl (i32.add (global.get $d) (i32.const 2)) (i32.const 3)))
  ;; $big grows the memory by the given pages (once) and returns where the
  ;; new pages start.
  (global $bigp (mut i32) (i32.const 0))
  (func $big (param $pages i32) (result i32)
    (local $old i32)
    (if (global.get $bigp) (then (return (global.get $bigp))))
    (local.set $old (memory.grow (local.get $pages)))
    (if (i32.eq (local.get $old) (i32.const -1)) (then unreachable))
    (global.set $bigp (i32.shl (local.get $old) (i32.const 16)))
    (global.get $bigp))

  (func (export "kinfer_abi_version") (result i32) (i32.const 1))
  (func (export "kinfer_describe") (result i64) (call $pack (i32.const 1024) (call $strlen (i32.const 1024))))
  (func (export "kinfer_last_error") (result i64) (call $pack (i32.const 4096) (call $strlen (i32.const 4096))))
  (func (export "kinfer_alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (if (i32.gt_u (i32.add (local.get $p) (local.get $n)) (i32.const 262144)) (then (return (i32.const 0))))
    (global.set $heap (i32.add (local.get $p) (local.get $n)))
    (local.get $p))
  (func (export "kinfer_free") (param i32 i32))
  (func (export "kinfer_configure") (param $v i32) (param $n i32) (result i32)
    (global.set $mode (i32.trunc_f64_s (f64.load (local.get $v))))
    (i32.const 0))

  (func (export "kinfer_method_init") (param $d i32) (param $seed i64) (param $lower i32) (param $upper i32) (result i32)
    (if (call $is (i32.const 1)) (then (call $loop)))
    (global.set $d (local.get $d))
    (i32.const 0))

  (func $header (param $n i32) (param $mode i32) (param $want i32) (param $points i32) (result i32)
    (i32.store (i32.const 256) (local.get $n))
    (i32.store (i32.const 260) (local.get $mode))
    (i32.store (i32.const 264) (local.get $want))
    (i32.store (i32.const 268) (local.get $points))
    (i32.const 256))
  (func (export "kinfer_method_ask") (result i32)
    (if (call $is (i32.const 2)) (then (call $loop)))
    (if (call $is (i32.const 8)) (then (return (i32.const 0xfffffff0))))
    (if (call $is (i32.const 9)) (then (return (call $header (i32.const 4) (i32.const 0) (i32.const 1) (i32.const 0xffff0000)))))
    ;; pointsnull: mode 0 with the points pointer never set (C's NULL).
    (if (call $is (i32.const 37)) (then (return (call $header (i32.const 4) (i32.const 0) (i32.const 1) (i32.const 0)))))
    (if (call $is (i32.const 14)) (then (return (call $header (i32.const 0x2000000) (i32.const 0) (i32.const 1) (i32.const 0)))))
    (if (call $is (i32.const 15)) (then (return (call $header (i32.const 1000000000) (i32.const 1) (i32.const 1) (i32.const 0)))))
    (if (call $is (i32.const 16)) (then (return (call $header (i32.const 0x1000000) (i32.const 1) (i32.const 1) (i32.const 0)))))
    (if (call $is (i32.const 17)) (then (return (call $header (i32.const 0) (i32.const 1) (i32.const 1) (i32.const 0)))))
    (if (call $is (i32.const 23)) (then (return (call $header (i32.const 4) (i32.const 1) (i32.const 5) (i32.const 0)))))
    (if (call $is (i32.const 24)) (then (return (call $header (i32.const 4) (i32.const 5) (i32.const 1) (i32.const 0)))))
    ;; draw1m: 2^20 prior draws, within the batch bound, whose tell cannot
    ;; fit a 16 MiB guest.
    (if (call $is (i32.const 32)) (then (return (call $header (i32.const 0x100000) (i32.const 1) (i32.const 1) (i32.const 0)))))
    ;; draw10k: 10 000 prior draws whose tell (280 000 bytes) fits the
    ;; memory but not kinfer_alloc's 256 KiB heap.
    (if (call $is (i32.const 33)) (then (return (call $header (i32.const 10000) (i32.const 1) (i32.const 1) (i32.const 0)))))
    (call $header (i32.const 4) (i32.const 1) (i32.const 1) (i32.const 0)))

  ;; Keeps every point told (θ, log prior, log likelihood) while there is room.
  (func (export "kinfer_method_tell") (param $n i32) (param $theta i32) (param $status i32) (param $lp i32) (param $ll i32) (param $grad i32) (result i32)
    (local $i i32) (local $row i32) (local $rb i32)
    (if (call $is (i32.const 3)) (then (call $loop)))
    (if (call $is (i32.const 19)) (then (return (i32.const 5))))
    (local.set $rb (call $rowBytes))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $row (i32.add (i32.const 8200) (i32.mul (global.get $nsamples) (local.get $rb))))
      (br_if $done (i32.gt_u (i32.add (local.get $row) (local.get $rb)) (i32.const 65536)))
      (memory.copy (local.get $row) (i32.add (local.get $theta) (i32.mul (local.get $i) (i32.shl (global.get $d) (i32.const 3))))
                   (i32.shl (global.get $d) (i32.const 3)))
      (f64.store (i32.add (local.get $row) (i32.shl (global.get $d) (i32.const 3)))
                 (f64.load (i32.add (local.get $lp) (i32.shl (local.get $i) (i32.const 3)))))
      (f64.store (i32.add (local.get $row) (i32.shl (i32.add (global.get $d) (i32.const 1)) (i32.const 3)))
                 (f64.load (i32.add (local.get $ll) (i32.shl (local.get $i) (i32.const 3)))))
      (global.set $nsamples (i32.add (global.get $nsamples) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (global.set $batches (i32.add (global.get $batches) (i32.const 1)))
    (i32.const 0))

  (func (export "kinfer_method_done") (result i32)
    (if (call $is (i32.const 4)) (then (call $loop)))
    (if (call $is (i32.const 18)) (then (return (i32.const 0))))
    (if (call $is (i32.const 29)) (then (return (i32.const 0))))
    (if (call $is (i32.const 35)) (then (return (i32.const 0)))) ;; neverdonesave65m
    (if (call $is (i32.const 30)) (then (return (i32.const 7)))) ;; C's "true", not 1
    (i32.ge_u (global.get $batches) (i32.const 3)))

  (func (export "kinfer_method_samples") (result i64)
    (local $p i32)
    (if (call $is (i32.const 5)) (then (call $loop)))
    (if (call $is (i32.const 29)) (then (call $loop))) ;; after a stop (never done)
    (if (call $is (i32.const 10)) (then (return (call $pack (i32.const 0xfffff000) (i32.const 100)))))
    (if (call $is (i32.const 25)) ;; 64 MiB of zero rows
      (then (local.set $p (call $big (i32.const 1024)))
            (return (call $pack (local.get $p) (i32.div_u (i32.const 0x4000000) (call $rowBytes))))))
;; Impossible rows (ABI.md §6.3): the second row's θ[0] NaN, θ[0] = 5
    ;; outside [0, 1], or its log prior +Inf.
    (if (i32.and (call $is (i32.const 26)) (i32.ge_u (global.get $nsamples) (i32.const 2)))
      (then (f64.store (i32.add (i32.const 8200) (call $rowBytes)) (f64.const nan))))
    (if (i32.and (call $is (i32.const 27)) (i32.ge_u (global.get $nsamples) (i32.const 2)))
      (then (f64.store (i32.add (i32.const 8200) (call $rowBytes)) (f64.const 5))))
    (if (i32.and (call $is (i32.const 28)) (i32.ge_u (global.get $nsamples) (i32.const 2)))
      (then (f64.store (i32.add (i32.add (i32.const 8200) (call $rowBytes)) (i32.shl (global.get $d) (i32.const 3))) (f64.const inf))))
    (call $pack (i32.const 8200) (global.get $nsamples)))

  (func (export "kinfer_method_report") (result i64)
    (local $i i32) (local $p i32)
    (if (call $is (i32.const 6)) (then (call $loop)))
    (if (call $is (i32.const 11)) (then (return (call $pack (i32.const 0xffffff00) (i32.const 1000)))))
    (if (call $is (i32.const 13)) (then (return (call $pack (i32.const 0) (i32.const 300000000)))))
    ;; reporttrunc: the first 8 bytes of {"evil":true}.
    (if (call $is (i32.const 39)) (then (return (call $pack (i32.const 512) (i32.const 8)))))
    (if (call $is (i32.const 22)) ;; {"a": then 100 000 '[' and 100 000 ']', then }
      (then
        (i32.store (i32.const 262144) (i32.const 0x3a22_6122)) ;; "a":  little-endian: " a " :
        (i32.store8 (i32.const 262143) (i32.const 0x7b))       ;; {
        (memory.fill (i32.const 262148) (i32.const 0x5b) (i32.const 100000))
        (memory.fill (i32.const 362148) (i32.const 0x5d) (i32.const 100000))
        (i32.store8 (i32.const 462148) (i32.const 0x7d))
        (return (call $pack (i32.const 262143) (i32.const 200006)))))
    (if (call $is (i32.const 31)) ;; {"x":[{},{},… 5 000 000 times …,0]}: 15 MB, 5 M values
      (then
        (local.set $p (call $big (i32.const 256)))
        (i32.store (local.get $p) (i32.const 0x2278_227b))                      ;; {"x"
        (i32.store16 (i32.add (local.get $p) (i32.const 4)) (i32.const 0x5b3a)) ;; :[
        (local.set $i (i32.const 0))
        (block $done
          (loop $next
            (br_if $done (i32.ge_u (local.get $i) (i32.const 5000000)))
            (i32.store16 (i32.add (local.get $p) (i32.add (i32.const 6) (i32.mul (local.get $i) (i32.const 3)))) (i32.const 0x7d7b)) ;; {}
            (i32.store8 (i32.add (local.get $p) (i32.add (i32.const 8) (i32.mul (local.get $i) (i32.const 3)))) (i32.const 0x2c))   ;; ,
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next)))
        (i32.store16 (i32.add (local.get $p) (i32.const 15000006)) (i32.const 0x5d30)) ;; 0]
        (i32.store8 (i32.add (local.get $p) (i32.const 15000008)) (i32.const 0x7d))    ;; }
        (return (call $pack (local.get $p) (i32.const 15000009)))))
    (call $pack (i32.const 512) (call $strlen (i32.const 512))))

  ;; The state is batches, nsamples and the samples, contiguous from 8192.
  (func (export "kinfer_method_save") (result i64)
    (if (call $is (i32.const 7)) (then (call $loop)))
    (if (call $is (i32.const 12)) (then (return (call $pack (i32.const 0xfffff000) (i32.const 64)))))
    (if (call $is (i32.const 20)) (then (return (call $pack (i32.const 0) (i32.const 300000000)))))
    (if (call $is (i32.const 21)) ;; 60 MiB, just under the 64 MiB the ABI allows
      (then (return (call $pack (call $big (i32.const 960)) (i32.const 62914560)))))
    ;; save65m: a state of 64 MiB + 8 bytes inside memory, after the
    ;; samples kept so far.
    (if (i32.or (call $is (i32.const 34)) (call $is (i32.const 35)))
      (then (return (call $pack (call $big (i32.const 1040)) (i32.const 67108872)))))
    ;; save65msecond: states fit until the second batch, then 64 MiB + 8.
    (if (i32.and (call $is (i32.const 38)) (i32.ge_u (global.get $batches) (i32.const 2)))
      (then (return (call $pack (call $big (i32.const 1040)) (i32.const 67108872)))))
    (i32.store (i32.const 8192) (global.get $batches))
    (i32.store (i32.const 8196) (global.get $nsamples))
    (call $pack (i32.const 8192) (i32.add (i32.const 8) (i32.mul (global.get $nsamples) (call $rowBytes)))))
  (func (export "kinfer_method_load") (param $p i32) (param $n i32) (result i32)
    (if (i32.or (i32.lt_u (local.get $n) (i32.const 8)) (i32.gt_u (local.get $n) (i32.const 57344))) (then (return (i32.const 1))))
    (memory.copy (i32.const 8192) (local.get $p) (local.get $n))
    (global.set $batches (i32.load (i32.const 8192)))
    (global.set $nsamples (i32.load (i32.const 8196)))
    ;; loaddropsamples: the samples are left out of what load restores.
    (if (call $is (i32.const 36)) (then (global.set $nsamples (i32.const 0))))
    (i32.const 0))
)
