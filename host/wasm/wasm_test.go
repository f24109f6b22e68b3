package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"

	"github.com/kinfer/kinfer/internal/syncbuf"
)

// The modules under testdata are built from testdata/testmod.c by
// testdata/build.sh; see the comment at the top of testmod.c for what each
// variant does.

func newRT(t testing.TB, log *syncbuf.Buffer) *Runtime {
	t.Helper()
	o := Options{CacheDir: "-"}
	if log != nil {
		o.Log = log
	}
	r, err := NewRuntime(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

// testManifest is the manifest of a test module (as manifest.Load would
// return it).
func testManifest(name, file string, kind abi.Kind, memMiB, timeoutMS int) *manifest.Manifest {
	return &manifest.Manifest{
		Name: name, Version: "1.0.0", Kind: kind, ABI: 1, Wasm: file,
		Limits: manifest.Limits{MemoryMiB: memMiB, TimeoutMS: timeoutMS},
		Path:   filepath.Join("testdata", name+".toml"), Dir: "testdata",
	}
}

func load(t testing.TB, r *Runtime, m *manifest.Manifest) *Plugin {
	t.Helper()
	p, err := r.Load(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func quad(t testing.TB, r *Runtime, name string, timeoutMS, workers int) abi.Model {
	t.Helper()
	p := load(t, r, testManifest(name, "model.wasm", abi.KindModel, 16, timeoutMS))
	m, err := p.Model(context.Background(), []float64{2}, workers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.(interface{ Close() error }).Close() })
	return m
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q\ndoes not contain %q", err, p)
		}
	}
}

func TestLoadModel(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("quad", "model.wasm", abi.KindModel, 0, 0))
	if p.Spec.Name != "quad" || len(p.Spec.Params) != 2 || len(p.Spec.Outputs) != 2 || !p.Spec.Has(abi.CapVJP) {
		t.Errorf("spec = %+v", p.Spec)
	}
	if got := strings.Join(p.Imports, " "); got != "kinfer_v1.log wasi_snapshot_preview1.proc_exit" {
		t.Errorf("imports = %s", got)
	}
	for _, e := range []string{"kinfer_abi_version", "kinfer_model_eval", "kinfer_model_vjp"} {
		found := false
		for _, x := range p.Exports {
			found = found || x == e
		}
		if !found {
			t.Errorf("exports %v lack %s", p.Exports, e)
		}
	}
}

func TestLoadRefusals(t *testing.T) {
	r := newRT(t, nil)
	for _, c := range []struct {
		file string
		kind abi.Kind
		mem  int
		want []string
	}{
		{"badversion.wasm", abi.KindModel, 0, []string{"plugin bad has ABI version 2; this kinfer supports ABI version 1"}},
		{"badimport.wasm", abi.KindModel, 0, []string{"plugin bad imports env.foo (function)", "only from wasi_snapshot_preview1 and kinfer_v1"}},
		{"badjson_unknown.wasm", abi.KindModel, 0, []string{"plugin bad: kinfer_describe", `unknown key "paramz"`}},
		{"badjson_case.wasm", abi.KindModel, 0, []string{"plugin bad: kinfer_describe", `unknown key "Kind"`}},
		{"badjson_trailing.wasm", abi.KindModel, 0, []string{"plugin bad: kinfer_describe", "invalid JSON"}},
		{"badspan.wasm", abi.KindModel, 0, []string{"plugin bad: kinfer_describe returned span", "outside memory"}},
		{"emptydescribe.wasm", abi.KindModel, 0, []string{"plugin bad: kinfer_describe returned an empty span: describe: out of memory (test)"}},
		{"nocapexport.wasm", abi.KindModel, 0, []string{`plugin bad lists capability "vjp" but does not export kinfer_model_vjp`}},
		{"badsig.wasm", abi.KindModel, 0, []string{"plugin bad exports kinfer_model_eval with signature (i32, i32, i32, i32, i32) -> i32; ABI v1 wants (i32, i32, i32, i32, i32, i32) -> i32"}},
		{"bigmem.wasm", abi.KindModel, 2, []string{`testdata/bad.toml: key "limits.memory_mib": plugin bad declares a minimum memory of 64 pages (4 MiB), more than its limit memory_mib=2: raise memory_mib to at least 4`}},
		{"model.wasm", abi.KindLikelihood, 0, []string{"plugin bad describes itself as a model", `kind = "likelihood"`}},
		{"testmod.c", abi.KindModel, 0, []string{"plugin bad: testmod.c: not a WebAssembly binary"}},
		{"missing.wasm", abi.KindModel, 0, []string{"plugin bad", "missing.wasm"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			_, err := r.Load(context.Background(), testManifest("bad", c.file, c.kind, c.mem, 0))
			wantErr(t, err, c.want...)
		})
	}
	// The same module loads when the limit allows its minimum memory.
	load(t, r, testManifest("big", "bigmem.wasm", abi.KindModel, 4, 0))
}

func TestManifestPin(t *testing.T) {
	b, err := os.ReadFile("testdata/model.wasm")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A module lives in its plugin's folder (ABI.md §9).
	if err := os.WriteFile(filepath.Join(dir, "model.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(sum string) *manifest.Manifest {
		path := filepath.Join(dir, "plugin.toml")
		text := fmt.Sprintf("name = \"quad\"\nversion = \"1.0.0\"\nkind = \"model\"\nabi = 1\nwasm = \"model.wasm\"\nsha256 = %q\n\n[limits]\nmemory_mib = 8\ntimeout_ms = 500\n", sum)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := manifest.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	r := newRT(t, nil)
	load(t, r, write(manifest.SHA256(b)))
	_, err = r.Load(context.Background(), write(strings.Repeat("0", 64)))
	wantErr(t, err, "plugin quad", "sha256 mismatch")
}

func TestModelEvalBatch(t *testing.T) {
	r := newRT(t, nil)
	m := quad(t, r, "quad", 0, 2)
	bm := m.(abi.BatchModel)
	x := []float64{0.5, 1, 2}
	K := len(x)
	thetas := [][]float64{{1, 2}, {-600, 0}, {3, 9.5}, {999, 0}, {-3, 0.25}}
	ys := make([][]float64, len(thetas))
	for i := range ys {
		ys[i] = make([]float64, 2*K)
	}
	st := make([]abi.Status, len(thetas))
	bm.EvalBatch(thetas, x, ys, st)
	want := []abi.Status{abi.OK, abi.Invalid, abi.Failed, abi.NonFinite, abi.OK}
	for i := range st {
		if st[i] != want[i] {
			t.Errorf("point %d: status %v, want %v", i, st[i], want[i])
		}
	}
	// The failed points are tallied with the guest's message (ABI.md §3),
	// and the non-finite one with its row, output and value, which the
	// run adds to its errors and summary.json.
	if n := m.(interface{ EvaluationFailures() string }).EvaluationFailures(); n != `kinfer_model_eval returned 1 (failed) at 1 and 2 (invalid) at 1 of 5; kinfer_last_error: "b above 9 (test)"; `+
		`kinfer_model_eval returned status 0 with non-finite outputs in 1 of 5 evaluations (a point, or with rows_independent a block of its rows, each; for example output y1 = NaN in row 0 of the 3 rows of its call)` {
		t.Errorf("evaluation failures: %q", n)
	}
	for _, i := range []int{0, 4} {
		a, b := thetas[i][0], thetas[i][1]
		for k, xk := range x {
			w1, w2 := 2*(a*xk+b), 2*a*xk*xk
			if ys[i][2*k] != w1 || ys[i][2*k+1] != w2 {
				t.Errorf("point %d, x=%g: y = %v, want %v %v", i, xk, ys[i][2*k:2*k+2], w1, w2)
			}
		}
	}
	// Eval is a batch of one and agrees with the batch.
	y := make([]float64, 2*K)
	if s := m.Eval(thetas[4], x, y); s != abi.OK || !equal(y, ys[4]) {
		t.Errorf("Eval = %v %v, want OK %v", s, y, ys[4])
	}
	// A larger batch grows the host buffer; results still agree.
	big := make([][]float64, 300)
	bys := make([][]float64, len(big))
	bst := make([]abi.Status, len(big))
	for i := range big {
		big[i] = []float64{float64(i) - 450, 0.5} // avoids the special values 111, 333, ...
		bys[i] = make([]float64, 2*K)
	}
	bm.EvalBatch(big, x, bys, bst)
	for i := range big {
		if bst[i] != abi.OK || bys[i][2*2+1] != 2*big[i][0]*4 {
			t.Fatalf("big batch point %d: %v %v", i, bst[i], bys[i])
		}
	}
	if f := m.(abi.Faulter).Fault(); f != nil {
		t.Errorf("Fault = %v", f)
	}
}

// A non-zero return of kinfer_model_eval is a failure of the whole call: a
// fault of the plugin (Trap) carrying the guest's kinfer_last_error message,
// not a verdict on the points (ABI.md §6.1).
func TestModelWholeCallFailure(t *testing.T) {
	r := newRT(t, nil)
	x := []float64{0.5, 1}
	ys := [][]float64{make([]float64, 4), make([]float64, 4)}
	st := make([]abi.Status, 2)
	for _, c := range []struct {
		a    float64
		want []string
	}{
		// The batch is then retried point by point (audit 10), which
		// names the point whose call fails.
		{111, []string{"plugin quad: kinfer_model_eval returned 1 for a call of one point (a failure of the whole call): batch refused (test); at θ = (a 111, b 0), point 1 (from 0) of a batch of 2"}},
		// A message over 4096 bytes is cut, on a rune boundary, not refused.
		{112, []string{"kinfer_model_eval returned 1 for a call of one point", ": x" + strings.Repeat("é", 2047) + " [truncated]"}},
	} {
		m := quad(t, r, "quad", 0, 1)
		m.(abi.BatchModel).EvalBatch([][]float64{{1, 0}, {c.a, 0}}, x, ys, st)
		if st[0] != abi.Trap || st[1] != abi.Trap {
			t.Errorf("a = %g: statuses %v, want trap", c.a, st)
		}
		f := m.(abi.Faulter).Fault()
		wantErr(t, f, c.want...)
		var e *Error
		if !errors.As(f, &e) || e.Status != abi.Trap || e.Export != "kinfer_model_eval" {
			t.Errorf("a = %g: fault %#v", c.a, f)
		}
		if f != nil && (strings.Contains(f.Error(), "\uFFFD") || len(f.Error()) > 4096+400) {
			t.Errorf("a = %g: message of %d bytes, or with a replacement character", c.a, len(f.Error()))
		}
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestConfigure(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("quad", "model.wasm", abi.KindModel, 0, 0))
	_, err := p.Model(context.Background(), []float64{-1}, 1)
	wantErr(t, err, "plugin quad: kinfer_configure returned 2: scale must be > 0")
	_, err = p.Model(context.Background(), nil, 1)
	wantErr(t, err, "plugin quad: 0 setting values given; its spec has 1 [scale]")
	_, err = p.Model(context.Background(), []float64{13}, 1)
	wantErr(t, err, "plugin quad: kinfer_configure trapped")
	_, err = p.Likelihood(context.Background(), []float64{1}, 1, 1)
	wantErr(t, err, "plugin quad is a model, not a likelihood")
	_, err = p.Method(context.Background(), []float64{1})
	wantErr(t, err, "plugin quad is a model, not a method")
}

func TestCapabilities(t *testing.T) {
	r := newRT(t, nil)
	m := quad(t, r, "quad", 0, 1)
	j, okJ := m.(abi.Jacobian)
	v, okV := m.(abi.VJP)
	if !okJ || !okV {
		t.Fatalf("model with jacobian, vjp: Jacobian %v, VJP %v", okJ, okV)
	}
	for _, c := range []string{"model_nocaps.wasm"} {
		p := load(t, r, testManifest("nocaps", c, abi.KindModel, 0, 0))
		nm, err := p.Model(context.Background(), []float64{1}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := nm.(abi.Jacobian); ok {
			t.Error("model without capabilities implements abi.Jacobian")
		}
		if _, ok := nm.(abi.VJP); ok {
			t.Error("model without capabilities implements abi.VJP")
		}
		for _, ok := range []bool{isBatch(nm), isFaulter(nm), isCloser(nm)} {
			if !ok {
				t.Error("model lacks BatchModel, Faulter or Closer")
			}
		}
	}

	x := []float64{0.5, 2}
	theta := []float64{1.5, -0.25}
	y := make([]float64, 4)
	jac := make([]float64, 8)
	if s := j.Jacobian(theta, x, y, jac); s != abi.OK {
		t.Fatalf("Jacobian status %v", s)
	}
	const s = 2.0 // scale
	for k, xk := range x {
		wantY := []float64{s * (theta[0]*xk + theta[1]), s * theta[0] * xk * xk}
		wantJ := []float64{s * xk, s, s * xk * xk, 0}
		if !equal(y[2*k:2*k+2], wantY) || !equal(jac[4*k:4*k+4], wantJ) {
			t.Errorf("x=%g: y %v jac %v, want %v %v", xk, y[2*k:2*k+2], jac[4*k:4*k+4], wantY, wantJ)
		}
	}
	vv := []float64{1, -1, 0.5, 2}
	g := make([]float64, 2)
	y2 := make([]float64, 4)
	if st := v.VJP(theta, x, vv, y2, g); st != abi.OK {
		t.Fatalf("VJP status %v", st)
	}
	var wantG [2]float64
	for r := 0; r < 4; r++ {
		for c := 0; c < 2; c++ {
			wantG[c] += vv[r] * jac[2*r+c]
		}
	}
	if !equal(g, wantG[:]) || !equal(y2, y) {
		t.Errorf("VJP g %v y %v, want %v %v", g, y2, wantG, y)
	}
	if st := j.Jacobian([]float64{999, 0}, x, y, jac); st != abi.NonFinite {
		t.Errorf("Jacobian with Inf: status %v, want non-finite", st)
	}
	// Named in derivative_failures, with the value (audit 5: a Jacobian
	// of NaN at status 0 was named nowhere).
	if got := j.(interface{ DerivativeFailures() string }).DerivativeFailures(); !strings.Contains(got, "kinfer_model_jacobian returned status 0 with non-finite outputs in 1 of") || !strings.Contains(got, "jac[0] = +Inf") {
		t.Errorf("derivative failures %q", got)
	}
	if st := j.Jacobian([]float64{-600, 0}, x, y, jac); st != abi.Invalid {
		t.Errorf("Jacobian invalid: status %v", st)
	}
	// Non-finite values (a·x overflows at x = 2), a finite Jacobian: the
	// point's value failed, not its derivative, so evaluation_failures
	// names it and derivative_failures does not (audit 7: under adam a
	// pullback model's NaN values read "0 Jacobians and 0 gradients could
	// not be computed … 405 of 902").
	if st := j.Jacobian([]float64{1e308, 0}, x, y, jac); st != abi.NonFinite {
		t.Errorf("Jacobian with overflowing values: status %v, want non-finite", st)
	}
	ev := j.(interface{ EvaluationFailures() string }).EvaluationFailures()
	if !strings.Contains(ev, "kinfer_model_jacobian returned status 0 with non-finite outputs in 1 of") || !strings.Contains(ev, "y[1] = +Inf") {
		t.Errorf("evaluation failures %q", ev)
	}
	if got := j.(interface{ DerivativeFailures() string }).DerivativeFailures(); !strings.Contains(got, "non-finite outputs in 1 of") || strings.Contains(got, "y[") {
		t.Errorf("derivative failures after a value failure: %q", got)
	}
}

func isBatch(m abi.Model) bool   { _, ok := m.(abi.BatchModel); return ok }
func isFaulter(m abi.Model) bool { _, ok := m.(abi.Faulter); return ok }
func isCloser(m abi.Model) bool  { _, ok := m.(interface{ Close() error }); return ok }

func TestTimeout(t *testing.T) {
	r := newRT(t, nil)
	m := quad(t, r, "spin", 100, 2)
	x := []float64{1}
	y := make([]float64, 2)
	start := time.Now()
	st := m.Eval([]float64{777, 0}, x, y)
	el := time.Since(start)
	if st != abi.Timeout {
		t.Fatalf("status %v, want timeout", st)
	}
	if el > 600*time.Millisecond {
		t.Errorf("timeout_ms=100 took %v", el)
	}
	err := m.(abi.Faulter).Fault()
	// The point of the faulting call is named (audit 4: a plugin crashing
	// in part of the parameter space is reproduced from it).
	if err == nil || err.Error() != "plugin spin: kinfer_model_eval exceeded timeout_ms=100 (wall clock); at θ = (a 777, b 0)" {
		t.Errorf("Fault() = %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != abi.Timeout || e.Plugin != "spin" || e.Export != "kinfer_model_eval" {
		t.Errorf("Fault() = %#v", err)
	}
	// The spinning instance was discarded; a new one evaluates.
	if st := m.Eval([]float64{1, 0}, x, y); st != abi.OK || y[0] != 2 {
		t.Errorf("after timeout: %v %v", st, y)
	}
}

func TestInterrupt(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("spin", "model.wasm", abi.KindModel, 0, 10000))
	ctx, cancel := context.WithCancel(context.Background())
	m, err := p.Model(ctx, []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	st := m.Eval([]float64{777, 0}, []float64{1}, make([]float64, 2))
	if st != abi.Trap || time.Since(start) > 2*time.Second {
		t.Errorf("interrupted eval: %v after %v", st, time.Since(start))
	}
	wantErr(t, m.(abi.Faulter).Fault(), "plugin spin: kinfer_model_eval interrupted: context canceled")
}

func TestFaults(t *testing.T) {
	for _, c := range []struct {
		a    float64
		want []string
	}{
		{666, []string{"plugin f: kinfer_model_eval trapped: wasm error: unreachable"}},
		{333, []string{"plugin f: kinfer_model_eval exited with proc_exit(3)"}},
		{888, []string{"plugin f: kinfer_model_eval returned status 9 for point 0 (a guest returns only 0, 1 or 2)"}},
		{889, []string{"plugin f: kinfer_model_eval returned 0 without writing the status of point 0"}},
		{556, []string{"plugin f: kinfer_model_eval trapped", "kinfer_v1.log: span [4294967280, +100) outside memory"}},
		// ABI.md §2: an output the guest did not write is caught, also when
		// the same instance wrote it in the previous call (the first point).
		{890, []string{"plugin f: kinfer_model_eval returned status 0 for point 0 without writing y[0] (row 0, output 0)"}},
		{891, []string{"plugin f: kinfer_model_eval returned status 0 for point 0 without writing y[1] (row 0, output 1)"}},
	} {
		t.Run(fmt.Sprint(c.a), func(t *testing.T) {
			r := newRT(t, nil)
			m := quad(t, r, "f", 0, 1)
			bm := m.(abi.BatchModel)
			ys := [][]float64{make([]float64, 2), make([]float64, 2)}
			st := make([]abi.Status, 2)
			bm.EvalBatch([][]float64{{1, 0}, {c.a, 0}}, []float64{1}, ys, st)
			if st[0] != abi.Trap || st[1] != abi.Trap {
				t.Errorf("statuses %v, want trap", st)
			}
			// The point that faults is named (the batch is retried point
			// by point after a deterministic fault; audit 10), with its
			// place in the batch.
			wantErr(t, m.(abi.Faulter).Fault(), append(c.want, fmt.Sprintf("; at θ = (a %g, b 0), point 1 (from 0) of a batch of 2 (the batch faulted; each point was then called alone)", c.a))...)
			// The pool recovers with a fresh instance; the first fault stays.
			if s := m.Eval([]float64{1, 0}, []float64{1}, ys[0]); s != abi.OK {
				t.Errorf("after fault: %v", s)
			}
			wantErr(t, m.(abi.Faulter).Fault(), c.want...)
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("mem", "model.wasm", abi.KindModel, 1, 0))
	m, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, 2)
	// a = 444 grows memory by b pages: y = previous size, or −1 on failure.
	if st := m.Eval([]float64{444, 4}, []float64{1}, y); st != abi.OK || y[0] < 1 {
		t.Fatalf("grow by 4 pages within 1 MiB: %v %v", st, y)
	}
	if st := m.Eval([]float64{444, 16}, []float64{1}, y); st != abi.Failed {
		t.Fatalf("grow by 16 pages beyond 1 MiB: %v (want failed)", st)
	}
	in, err := m.(modelJacVJP).pool.get()
	if err != nil {
		t.Fatal(err)
	}
	if sz := in.mem.Size(); sz > 1<<20 {
		t.Errorf("memory is %d bytes, over memory_mib=1", sz)
	}
	m.(modelJacVJP).pool.put(in)
	// A batch whose buffer does not fit is a trap naming kinfer_alloc.
	big := make([][]float64, 1)
	big[0] = []float64{1, 0}
	x := make([]float64, 70000) // 70000 conditions: 1.7 MB of buffers
	ys := [][]float64{make([]float64, 2*len(x))}
	st := make([]abi.Status, 1)
	m.(abi.BatchModel).EvalBatch(big, x, ys, st)
	if st[0] != abi.Trap {
		t.Errorf("oversized batch: %v", st[0])
	}
	wantErr(t, m.(abi.Faulter).Fault(), "plugin mem: kinfer_alloc returned 0 for", "memory_mib=1")
}

func TestConcurrency(t *testing.T) {
	r := newRT(t, nil)
	m := quad(t, r, "quad", 0, 4)
	x := []float64{0.5, 1, 1.5, 2}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			y := make([]float64, 2*len(x))
			ys := [][]float64{make([]float64, 2*len(x)), make([]float64, 2*len(x)), make([]float64, 2*len(x))}
			st := make([]abi.Status, 3)
			for it := 0; it < 100; it++ {
				a, b := rng.Float64()*8, rng.Float64()
				if s := m.Eval([]float64{a, b}, x, y); s != abi.OK || y[2] != 2*(a+b) {
					errs <- fmt.Errorf("goroutine %d: %v %v", g, s, y)
					return
				}
				th := [][]float64{{a, b}, {b, a}, {a + b, 0}}
				m.(abi.BatchModel).EvalBatch(th, x, ys, st)
				for i := range th {
					if st[i] != abi.OK || ys[i][3] != 2*th[i][0] {
						errs <- fmt.Errorf("goroutine %d batch %d: %v %v", g, i, st[i], ys[i])
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	pl := m.(modelJacVJP).pool
	if n := len(pl.idle); n < 1 || n > 4 {
		t.Errorf("%d idle instances after the run, want 1..4", n)
	}
}

func TestLikelihood(t *testing.T) {
	r := newRT(t, nil)
	p := load(t, r, testManifest("wgauss", "lik.wasm", abi.KindLikelihood, 0, 0))
	l, err := p.Likelihood(context.Background(), nil, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.(interface{ Close() error }).Close()
	g, okG := l.(abi.GradY)
	rs, okR := l.(abi.Residuals)
	if !okG || !okR {
		t.Fatalf("GradY %v Residuals %v", okG, okR)
	}
	y := []float64{1, 2, 3, 4, 5, 6}
	obs := []float64{1.5, 2, 2, 4.5, 5, 7}
	sig := []float64{1, 2, 0.5, 1, 1, 2}
	var want float64
	wantG := make([]float64, 6)
	wantR := make([]float64, 6)
	for i := range y {
		w := float64(i%2 + 1) // column weight j+1, m = 2
		rr := (y[i] - obs[i]) / sig[i]
		want -= 0.5 * w * rr * rr
		wantG[i] = -w * (y[i] - obs[i]) / (sig[i] * sig[i])
		wantR[i] = math.Sqrt(w) * rr
	}
	ll, st := l.LogLikelihood(2, y, obs, sig)
	if st != abi.OK || math.Abs(ll-want) > 1e-12 {
		t.Errorf("logL = %v %v, want %v", ll, st, want)
	}
	gy := make([]float64, 6)
	ll, st = g.LogLikelihoodGrad(2, y, obs, sig, gy)
	if st != abi.OK || math.Abs(ll-want) > 1e-12 || !equal(gy, wantG) {
		t.Errorf("grad = %v %v %v, want %v %v", ll, st, gy, want, wantG)
	}
	res := make([]float64, 6)
	if st := rs.Residuals(2, y, obs, sig, res); st != abi.OK || !equal(res, wantR) {
		t.Errorf("residuals = %v %v, want %v", st, res, wantR)
	}
	// m is the call's: a call with another m than the term's is a bug.
	func() {
		defer func() {
			if e := recover(); e == nil || !strings.Contains(fmt.Sprint(e), "called with m = 3; it was created for outputs = 2") {
				t.Errorf("m = 3: panic %v", e)
			}
		}()
		l.LogLikelihood(3, y, obs, sig)
	}()
	sig[2] = 0
	if ll, st := l.LogLikelihood(2, y, obs, sig); st != abi.Invalid || !math.IsInf(ll, -1) {
		t.Errorf("σ = 0: %v %v, want invalid −Inf", ll, st)
	}
	sig[2] = 1
	y[0] = 999
	if _, st := l.LogLikelihood(2, y, obs, sig); st != abi.NonFinite {
		t.Errorf("NaN: %v", st)
	}
	// Status 0 with −∞ is an evaluated point whose data are impossible
	// (ABI.md §6.2), for eval and grad; +∞ is non-finite.
	y[0] = 888
	if ll, st := l.LogLikelihood(2, y, obs, sig); st != abi.OK || !math.IsInf(ll, -1) {
		t.Errorf("−∞: %v %v, want ok −Inf", ll, st)
	}
	if g, ok := l.(abi.GradY); ok {
		if ll, st := g.LogLikelihoodGrad(2, y, obs, sig, make([]float64, len(y))); st != abi.OK || !math.IsInf(ll, -1) {
			t.Errorf("grad, −∞: %v %v, want ok −Inf", ll, st)
		}
	}
	y[0] = 889
	if _, st := l.LogLikelihood(2, y, obs, sig); st != abi.NonFinite {
		t.Errorf("+∞: %v", st)
	}
	y[0] = 666
	if _, st := l.LogLikelihood(2, y, obs, sig); st != abi.Trap {
		t.Errorf("trap: %v", st)
	}
	wantErr(t, l.(abi.Faulter).Fault(), "plugin wgauss: kinfer_likelihood_eval trapped")
}

// A likelihood with the "batch" capability evaluates several points in
// one kinfer_likelihood_eval_batch call; the values equal one call per
// point, per-point statuses pass through, an unwritten value and a failed
// call are faults. A likelihood without it answers LogLikelihoodBatch by
// single calls, with the same values.
func TestBatchLikelihood(t *testing.T) {
	r := newRT(t, nil)
	obs := []float64{1.5, 2, 2, 4.5}
	sig := []float64{1, 2, 0.5, 1}
	ys := [][]float64{{1, 2, 3, 4}, {0, 0, 0, 0}, {444, 1, 1, 1}, {2, 2, 2, 2}, {888, 1, 1, 1}, {889, 1, 1, 1}}
	for _, file := range []string{"lik_batch.wasm", "lik.wasm"} {
		p := load(t, r, testManifest("wgauss", file, abi.KindLikelihood, 0, 0))
		l, err := p.Likelihood(context.Background(), nil, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		bl := l.(abi.BatchLikelihood)
		ll := make([]float64, len(ys))
		st := make([]abi.Status, len(ys))
		bl.LogLikelihoodBatch(2, ys, obs, sig, ll, st)
		for i, y := range ys {
			want, wst := l.LogLikelihood(2, y, obs, sig)
			if y[0] == 444 && file == "lik_batch.wasm" {
				want, wst = math.Inf(-1), abi.Failed // the batch export's rule for 444
			}
			if st[i] != wst || ll[i] != want {
				t.Errorf("%s point %d: batch %v %v, single %v %v", file, i, ll[i], st[i], want, wst)
			}
			// −∞ (888) is ok, +∞ (889) non-finite, batched or not.
			if (y[0] == 888 && (st[i] != abi.OK || !math.IsInf(ll[i], -1))) || (y[0] == 889 && st[i] != abi.NonFinite) {
				t.Errorf("%s point %d (y0 = %g): %v %v", file, i, y[0], ll[i], st[i])
			}
		}
		l.(interface{ Close() error }).Close()
	}
	for _, c := range []struct {
		y0   float64
		want string
	}{{555, "returned status 0 for point 1 without writing out[1]"}, {777, "returned 1 for a batch of 2 points (a failure of the whole call)"}} {
		p := load(t, r, testManifest("wgauss", "lik_batch.wasm", abi.KindLikelihood, 0, 0))
		l, err := p.Likelihood(context.Background(), nil, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		st := make([]abi.Status, 2)
		l.(abi.BatchLikelihood).LogLikelihoodBatch(2, [][]float64{{1, 2, 3, 4}, {c.y0, 0, 0, 0}}, obs, sig, make([]float64, 2), st)
		if st[0] != abi.Trap || st[1] != abi.Trap {
			t.Errorf("y0 = %g: statuses %v, want trap", c.y0, st)
		}
		wantErr(t, l.(abi.Faulter).Fault(), "plugin wgauss: kinfer_likelihood_eval_batch "+c.want)
		l.(interface{ Close() error }).Close()
	}
}

// grid drives the test method "grid" through one Ask/Tell round.
func gridRound(t *testing.T, m abi.Method, round int) {
	t.Helper()
	b, err := m.Ask()
	if err != nil {
		t.Fatal(err)
	}
	if b.Len() != 4 {
		t.Fatalf("round %d: batch of %d", round, b.Len())
	}
	var pts [][]float64
	switch round {
	case 0:
		if b.Draw != 4 || b.Points != nil || b.Want != abi.WantLogTarget {
			t.Fatalf("round 0: %+v, want Draw 4", b)
		}
		for i := 0; i < 4; i++ {
			// Inside the bounds: the host refuses a sample outside them.
			pts = append(pts, []float64{float64(i), -float64(i) / 3})
		}
	default:
		if b.Draw != 0 || len(b.Points) != 4 {
			t.Fatalf("round %d: %+v", round, b)
		}
		wantWant := abi.WantLogTarget
		if round == 1 {
			wantWant |= abi.WantGradient
		}
		if b.Want != wantWant {
			t.Fatalf("round %d: want %b, want %b", round, b.Want, wantWant)
		}
		// Points: lo + (hi−lo)(j+1)/(batch+1)/round with bounds [0,10], [−1,1].
		for j, p := range b.Points {
			w0 := 0 + 10*float64(j+1)/5/float64(round)
			w1 := -1 + 2*float64(j+1)/5/float64(round)
			if math.Abs(p[0]-w0) > 1e-12 || math.Abs(p[1]-w1) > 1e-12 {
				t.Fatalf("round %d point %d = %v, want %v %v", round, j, p, w0, w1)
			}
		}
		pts = b.Points
	}
	res := make([]abi.Result, len(pts))
	for i, p := range pts {
		res[i] = abi.Result{Theta: p, Status: abi.OK, LogPrior: -1, LogLik: -p[0] * p[0]}
		if b.Want&abi.WantGradient != 0 {
			res[i].Grad = []float64{1, 2}
		}
	}
	res[3].Status = abi.Failed
	if err := m.Tell(res); err != nil {
		t.Fatal(err)
	}
}

func gridMethod(t *testing.T, r *Runtime, settings []float64) (*Plugin, abi.Method) {
	p := load(t, r, testManifest("grid", "method.wasm", abi.KindMethod, 0, 0))
	m, err := p.Method(context.Background(), settings)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.(interface{ Close() error }).Close() })
	return p, m
}

var gridProblem = abi.Problem{Params: []abi.Param{{Name: "a", Lower: 0, Upper: 10}, {Name: "b", Lower: -1, Upper: 1}}, Seed: 1<<63 + 42}

func TestMethod(t *testing.T) {
	r := newRT(t, nil)
	p, m := gridMethod(t, r, []float64{4, 3, 0})
	if _, ok := m.(abi.Checkpointer); !ok {
		t.Fatal("method with checkpoint is not an abi.Checkpointer")
	}
	if _, err := m.Ask(); err == nil {
		t.Error("Ask before Init: no error")
	}
	if err := m.Init(gridProblem); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		if m.Done() {
			t.Fatalf("done before round %d", round)
		}
		gridRound(t, m, round)
		if round == 1 {
			// Checkpoint after round 1, restore into a fresh method and
			// check it finishes identically.
			state, err := m.(abi.Checkpointer).SaveState()
			if err != nil {
				t.Fatal(err)
			}
			m2, err := p.Method(context.Background(), []float64{4, 3, 0})
			if err != nil {
				t.Fatal(err)
			}
			if err := m2.Init(gridProblem); err != nil {
				t.Fatal(err)
			}
			if err := m2.(abi.Checkpointer).LoadState(state); err != nil {
				t.Fatal(err)
			}
			gridRound(t, m2, 2)
			rep2, err := m2.Report()
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				rep, err := m.Report()
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(rep) != fmt.Sprint(rep2) {
					t.Errorf("restored run report %v\ndiffers from %v", rep2, rep)
				}
			}()
			if err := m2.(abi.Checkpointer).LoadState([]byte("short")); err == nil {
				t.Error("LoadState of a bad state: no error")
			} else {
				wantErr(t, err, "plugin grid: kinfer_method_load returned 6: state has the wrong size")
			}
		}
	}
	if !m.Done() {
		t.Fatal("not done after 3 rounds")
	}
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 9 { // 3 OK points per round
		t.Fatalf("%d samples, want 9", len(rep.Samples))
	}
	if s := rep.Samples[1]; !equal(s.Theta, []float64{1, -1.0 / 3}) || s.LogPrior != -1 || s.LogLik != -1 {
		t.Errorf("sample 1 = %+v", s)
	}
	want := map[string]any{"rounds": 3.0, "samples": 9.0, "seed": float64(int64(gridProblem.Seed)), "grads": 4.0, "gsum": 12.0}
	if fmt.Sprint(rep.Extra) != fmt.Sprint(want) {
		t.Errorf("report = %v, want %v", rep.Extra, want)
	}
	if _, err := m.Ask(); err == nil {
		t.Error("Ask after done: no error")
	} else {
		wantErr(t, err, "plugin grid: kinfer_method_ask returned 0: ask after done")
	}
}

func TestMethodErrors(t *testing.T) {
	r := newRT(t, nil)
	_, m := gridMethod(t, r, []float64{4, 3, 1})
	err := m.Init(abi.Problem{Params: make([]abi.Param, 9)})
	wantErr(t, err, "plugin grid: kinfer_method_init returned 3: grid supports 1 <= d <= 8")
	if err := m.Init(gridProblem); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ask(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, m.Tell(make([]abi.Result, 3)), "plugin grid: Tell with 3 results for a batch of 4")
	// bad_span = 1: the report is an out-of-bounds span, a trap.
	_, err = m.Report()
	wantErr(t, err, "plugin grid: kinfer_method_report returned span [2147483632, +4096) outside memory")
	wantErr(t, m.(abi.Faulter).Fault(), "kinfer_method_report")
	var e *Error
	if !errors.As(m.(abi.Faulter).Fault(), &e) || e.Status != abi.Trap {
		t.Errorf("fault %v, want a trap", e)
	}
	if !m.Done() {
		t.Error("a faulted method is not done")
	}
	_, err = m.Ask()
	wantErr(t, err, "kinfer_method_report")
	_, err = p(r).Method(context.Background(), []float64{100, 3, 0})
	wantErr(t, err, "plugin grid: kinfer_configure returned 1: batch must be in [1, 64]")
}

// An empty state from kinfer_method_save is an error with the guest's
// message (ABI.md §6.3), not a fault: the method goes on.
func TestMethodEmptySave(t *testing.T) {
	r := newRT(t, nil)
	_, m := gridMethod(t, r, []float64{4, 3, 2})
	if err := m.Init(gridProblem); err != nil {
		t.Fatal(err)
	}
	state, err := m.(abi.Checkpointer).SaveState()
	if state != nil {
		t.Errorf("state %q", state)
	}
	wantErr(t, err, "plugin grid: kinfer_method_save returned an empty state: state too large (test)")
	if f := m.(abi.Faulter).Fault(); f != nil {
		t.Errorf("fault %v", f)
	}
	gridRound(t, m, 0)
}

func p(r *Runtime) *Plugin {
	pl, err := r.Load(context.Background(), testManifest("grid", "method.wasm", abi.KindMethod, 0, 0))
	if err != nil {
		panic(err)
	}
	return pl
}

func TestSandbox(t *testing.T) {
	var log syncbuf.Buffer
	r := newRT(t, &log)
	pl := load(t, r, testManifest("wasi", "wasi.wasm", abi.KindModel, 0, 0))
	if !pl.initFn {
		t.Fatal("the reactor module's _initialize was not found")
	}
	ctx := withLog(context.Background(), pl.log)
	probe := func(in *instance, name string) int64 {
		t.Helper()
		res, err := in.mod.ExportedFunction(name).Call(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasPrefix(name, "probe_walltime") || strings.HasPrefix(name, "probe_monotonic") || strings.HasPrefix(name, "probe_random") {
			return int64(res[0])
		}
		return int64(int32(res[0])) // an i32 result
	}
	var first [2]int64
	for i := 0; i < 2; i++ {
		in, err := pl.newInstance(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 3; k++ {
			if got := probe(in, "probe_walltime"); got != fixedWalltime*1e9 {
				t.Errorf("walltime %d, want frozen %d", got, int64(fixedWalltime*1e9))
			}
			if got := probe(in, "probe_monotonic"); got != fixedNanotime {
				t.Errorf("monotonic %d, want frozen %d", got, fixedNanotime)
			}
		}
		r1, r2 := probe(in, "probe_random"), probe(in, "probe_random")
		if r1 == r2 {
			t.Error("random_get repeats itself")
		}
		if i == 0 {
			first = [2]int64{r1, r2}
		} else if first != [2]int64{r1, r2} {
			t.Errorf("random_get differs between instances: %v vs %v", first, [2]int64{r1, r2})
		}
		if n := probe(in, "probe_env"); n != 0 {
			t.Errorf("%d environment variables", n)
		}
		if n := probe(in, "probe_args"); n != 0 {
			t.Errorf("%d arguments", n)
		}
		if fd := probe(in, "probe_open"); fd >= 0 {
			t.Errorf("open succeeded: fd %d", fd)
		}
		if n := probe(in, "probe_stdin"); n != 0 {
			t.Errorf("stdin read %d", n)
		}
		in.close()
	}
	// The stream is ChaCha8 with the fixed key.
	var want [16]byte
	_, _ = rand.NewChaCha8(randKey).Read(want[:])
	if got := uint64(first[0]); got != leU64(want[:8]) {
		t.Errorf("random_get = %#x, want %#x", got, leU64(want[:8]))
	}

	m, err := pl.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Eval([]float64{555, 0}, []float64{1}, make([]float64, 2)); st != abi.OK {
		t.Fatalf("eval: %v", st)
	}
	_ = m.(interface{ Close() error }).Close()
	got := log.String()
	for _, line := range []string{"wasi: hello from guest\\nsecond line\n", // one log call is one line (ABI.md §7)
		"wasi: hello stdout\n", "wasi: hello stderr\n", "wasi: partial\n",
		"wasi: after flush\n"} { // unflushed: stdout is line buffered (fdFdstatGet)
		if !strings.Contains(got, line) {
			t.Errorf("log lacks %q:\n%s", line, got)
		}
	}
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func TestLogLines(t *testing.T) {
	var buf syncbuf.Buffer
	l := newPluginLog("p", &logMux{w: &buf})
	w := &lineWriter{log: l}
	long := strings.Repeat("x", 5000)
	fmt.Fprintf(w, "a\nb")
	fmt.Fprintf(w, "c\n%s\nd\n", long)
	w.Write([]byte(long[:3000]))
	w.Write([]byte(long[:3000] + "\ne"))
	w.flush()
	l.message([]byte("one\ntwo\n"))
	want := "p: a\np: bc\np: " + long[:4096] + "\np: d\np: " + long[:4096] + "\np: e\np: one\np: two\n"
	if got := buf.String(); got != want {
		t.Errorf("log =\n%.300q\nwant\n%.300q", got, want)
	}
	// A nil writer discards.
	(&lineWriter{log: newPluginLog("p", nil)}).Write([]byte("x\n"))

	// Guest control characters are escaped: a plugin's stdout cannot
	// colour the terminal or forge a kinfer line with CR (the audit's
	// "configured ESC[31mRED ESC[0m CR kinfer: fake line").
	var esc syncbuf.Buffer
	w = &lineWriter{log: newPluginLog("p", &logMux{w: &esc})}
	fmt.Fprintf(w, "configured \x1b[31mRED\x1b[0m \r kinfer: fake line\n")
	if got, want := esc.String(), "p: configured \\x1b[31mRED\\x1b[0m \\r kinfer: fake line\n"; got != want {
		t.Errorf("log = %q, want %q", got, want)
	}

	// Past maxLogBytes a plugin's lines are dropped, after one notice
	// (audit 5: 29 GB in 60 s with --verbose).
	var flood syncbuf.Buffer
	fl := newPluginLog("p", &logMux{w: &flood})
	line := []byte(strings.Repeat("A", 4000))
	for range maxLogBytes/4000 + 100 {
		fl.line(line)
	}
	if got := len(flood.String()); got > maxLogBytes+4096 {
		t.Errorf("%d bytes logged, bound %d", got, maxLogBytes)
	}
	if got := flood.String(); strings.Count(got, "further lines are not shown") != 1 || !strings.HasSuffix(got, "further lines are not shown)\n") {
		t.Errorf("the log does not end with one notice: %.200q", got[max(0, len(got)-200):])
	}
}

func TestScanModule(t *testing.T) {
	b, err := os.ReadFile("testdata/model.wasm")
	if err != nil {
		t.Fatal(err)
	}
	info, err := scanModule(b)
	if err != nil {
		t.Fatal(err)
	}
	if !info.HasMemory || info.MemMin < 1 || len(info.Imports) != 2 {
		t.Errorf("info = %+v", info)
	}
	// Every truncation is an error or a shorter valid module, never a panic;
	// a cut inside the import section is an error.
	for n := 0; n < len(b); n++ {
		_, _ = scanModule(b[:n])
	}
	_, err = scanModule(b[:14])
	wantErr(t, err, "unexpected end of module")
	_, err = scanModule([]byte("\x00asm\x0d\x00\x01\x00"))
	wantErr(t, err, "not a core WebAssembly module")
}

func FuzzScanModule(f *testing.F) {
	for _, name := range []string{"model.wasm", "badimport.wasm", "wasi.wasm"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = scanModule(b) })
}

func TestDiskCache(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRuntime(context.Background(), Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Load(context.Background(), testManifest("quad", "model.wasm", abi.KindModel, 0, 0)); err != nil {
		t.Fatal(err)
	}
	// Two limits: two wazero runtimes sharing the cache.
	if _, err := r.Load(context.Background(), testManifest("quad", "model.wasm", abi.KindModel, 8, 0)); err != nil {
		t.Fatal(err)
	}
	if n := len(r.byMem); n != 2 {
		t.Errorf("%d wazero runtimes, want 2", n)
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) == 0 {
		t.Error("the compilation cache directory is empty")
	}
	if _, err := r.Load(context.Background(), testManifest("quad", "model.wasm", abi.KindModel, 0, 0)); err == nil {
		t.Error("Load after Close: no error")
	}
}

func TestRuntimeClosed(t *testing.T) {
	r := newRT(t, nil)
	m := quad(t, r, "quad", 5000, 1)
	time.AfterFunc(50*time.Millisecond, func() { _ = r.Close(context.Background()) })
	if st := m.Eval([]float64{777, 0}, []float64{1}, make([]float64, 2)); st != abi.Trap {
		t.Errorf("eval while the runtime closes: %v", st)
	}
	wantErr(t, m.(abi.Faulter).Fault(), "plugin quad: kinfer_model_eval interrupted: the runtime was closed")
}

func TestClosed(t *testing.T) {
	r := newRT(t, nil)
	m := quad(t, r, "quad", 0, 1)
	_ = m.(interface{ Close() error }).Close()
	if st := m.Eval([]float64{1, 0}, []float64{1}, make([]float64, 2)); st != abi.Trap {
		t.Errorf("eval after Close: %v", st)
	}
	wantErr(t, m.(abi.Faulter).Fault(), "plugin quad", "after Close")
}

// BenchmarkF64IO compares ways of moving f64 slices across the boundary:
// one api.Memory.Read view reinterpreted in place (what the package does)
// against per-element api.Memory.WriteFloat64Le/ReadFloat64Le, and the
// host's pre-fill of output buffers with the unwritten pattern.
func BenchmarkF64IO(b *testing.B) {
	r := newRT(b, nil)
	p := load(b, r, testManifest("quad", "model.wasm", abi.KindModel, 0, 0))
	in, err := p.newInstance(withLog(context.Background(), p.log))
	if err != nil {
		b.Fatal(err)
	}
	defer in.close()
	const n = 6400
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i) * 1.25
	}
	off, err := in.buffer(exModelEval, n*8)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("write/view", func(b *testing.B) {
		for b.Loop() {
			if err := in.writeF64s(exModelEval, off, v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/f64")
	})
	b.Run("write/WriteFloat64Le", func(b *testing.B) {
		for b.Loop() {
			for i, x := range v {
				if !in.mem.WriteFloat64Le(off+uint32(8*i), x) {
					b.Fatal("out of range")
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/f64")
	})
	b.Run("read/view+check", func(b *testing.B) {
		for b.Loop() {
			if _, err := in.readOut(exModelEval, "v", off, v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/f64")
	})
	b.Run("read/view+check-portable", func(b *testing.B) {
		saved := useAVX2
		useAVX2 = false // the Go copy then check, as on a CPU without AVX2
		defer func() { useAVX2 = saved }()
		for b.Loop() {
			if _, err := in.readOut(exModelEval, "v", off, v); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/f64")
	})
	b.Run("read/ReadFloat64Le", func(b *testing.B) {
		for b.Loop() {
			for i := range v {
				x, ok := in.mem.ReadFloat64Le(off + uint32(8*i))
				if !ok || x-x != 0 {
					b.Fatal("out of range")
				}
				v[i] = x
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/f64")
	})
	// Last: it leaves the unwritten pattern in the buffer.
	b.Run("prefill", func(b *testing.B) {
		for b.Loop() {
			if err := in.prefill(exModelEval, off, n); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/f64")
	})
}

// BenchmarkEvalOne is the cost of one Eval (a batch of one θ at one
// condition): the boundary crossing with its timeout context.
// BenchmarkEvalOne is the fixed cost of one protected call: a model
// evaluation of one θ at one condition (the test module's quad: a few
// flops), through the pool, with the default fuel and timeout_ms.
func BenchmarkEvalOne(b *testing.B) {
	r := newRT(b, nil)
	man := testManifest("quad", "model.wasm", abi.KindModel, 16, manifest.DefaultTimeoutMS)
	man.Limits.Fuel = manifest.DefaultFuel
	p := load(b, r, man)
	m, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		b.Fatal(err)
	}
	th, x, y := []float64{1, 0.5}, []float64{1}, make([]float64, 2)
	b.ReportAllocs()
	cpuPer(b, 1, "ns/call", func() {
		if m.Eval(th, x, y) != abi.OK {
			b.Fatal("eval")
		}
	})
}

// A protected call of one point allocates nothing (PERFORMANCE.md: 0
// allocations; an errors.As target declared before the error check
// escaped and allocated 8 bytes a call, unnoticed for sessions).
func TestEvalOneAllocatesNothing(t *testing.T) {
	r := newRT(t, nil)
	man := testManifest("quad", "model.wasm", abi.KindModel, 16, manifest.DefaultTimeoutMS)
	man.Limits.Fuel = manifest.DefaultFuel
	p := load(t, r, man)
	m, err := p.Model(context.Background(), []float64{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	th, x, y := []float64{1, 0.5}, []float64{1}, make([]float64, 2)
	m.Eval(th, x, y) // the instance made and warm
	if n := testing.AllocsPerRun(200, func() { m.Eval(th, x, y) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}

func TestDecodeSpecRequiredBounds(t *testing.T) {
	good := `{"kind":"model","name":"q","params":[{"name":"a","lower":-1,"upper":1}],"outputs":[{"name":"y"}]}`
	if s, err := decodeSpec([]byte(good)); err != nil || s.Params[0].Upper != 1 {
		t.Fatalf("%+v %v", s, err)
	}
	for _, k := range []string{"lower", "upper"} {
		bad := strings.Replace(good, `"`+k+`":`, `"doc":`, 1)
		_, err := decodeSpec([]byte(bad))
		wantErr(t, err, `params[0]: missing key "`+k+`"`)
	}
}

// A plugin's setting cannot name a model output (abi.Setting.Output):
// ABI version 1 has no such key; it is for built-in methods.
func TestDecodeSpecRefusesOutputSetting(t *testing.T) {
	spec := `{"kind":"method","name":"m","settings":[{"name":"quantity","default":-1,"output":true}]}`
	_, err := decodeSpec([]byte(spec))
	wantErr(t, err, `setting "quantity": unknown key "output" (not part of ABI version 1)`)
	if _, err := decodeSpec([]byte(strings.Replace(spec, `,"output":true`, ``, 1))); err != nil {
		t.Fatal(err)
	}
}

// bigCodeModule is a module of n functions () -> () whose bodies hold
// pairs × (i32.const 0; drop), with a memory.
func bigCodeModule(n, pairs int) []byte {
	leb := func(b []byte, v uint64) []byte {
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if v == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	sec := func(out []byte, id byte, body []byte) []byte {
		return append(leb(append(out, id), uint64(len(body))), body...)
	}
	mod := []byte("\x00asm\x01\x00\x00\x00")
	mod = sec(mod, 1, []byte{1, 0x60, 0, 0})
	fn := leb(nil, uint64(n))
	for range n {
		fn = append(fn, 0)
	}
	mod = sec(mod, 3, fn)
	mod = sec(mod, 5, []byte{1, 0, 1})
	body := append([]byte{0}, bytes.Repeat([]byte{0x41, 0, 0x1a}, pairs)...)
	body = append(body, 0x0b)
	code := leb(nil, uint64(n))
	for range n {
		code = append(leb(code, uint64(len(body))), body...)
	}
	return sec(mod, 10, code)
}

// A module whose code would take the host gigabytes to compile is refused
// before compiling, by name (audit 5: a 60 MB module crashed the host;
// ~55 bytes of host memory per byte of code).
func TestCodeBoundRefused(t *testing.T) {
	dir := t.TempDir()
	r := newRT(t, nil)
	for _, c := range []struct {
		name     string
		n, pairs int
		want     string
	}{{"bigbody", 1, (MaxCodeBytes + 3) / 3, "MiB of code"}, {"manyfuncs", MaxFunctions + 1, 1, fmt.Sprintf("%d functions", MaxFunctions+1)}} {
		if err := os.WriteFile(filepath.Join(dir, c.name+".wasm"), bigCodeModule(c.n, c.pairs), 0o644); err != nil {
			t.Fatal(err)
		}
		m := testManifest(c.name, c.name+".wasm", abi.KindModel, 16, 0)
		m.Dir, m.Path = dir, filepath.Join(dir, c.name+".toml")
		_, err := r.Load(context.Background(), m)
		wantErr(t, err, "plugin "+c.name, c.want, "at most")
	}
}

// Trailing data after a self-description is refused with its offset, and
// a NUL byte there is named as a C terminator counted in the span's length
// (audit 6: `sizeof spec` gave only "data after the object").
func TestSpecTrailingData(t *testing.T) {
	const spec = `{"kind":"model","name":"m","version":"1","params":[{"name":"a","lower":0,"upper":1}],"outputs":[{"name":"y"}]}`
	if _, err := decodeSpec([]byte(spec + "\n")); err != nil {
		t.Errorf("a trailing newline: %v", err)
	}
	for _, c := range []struct{ tail, want string }{
		{"\x00", fmt.Sprintf("a NUL byte at offset %d, after the object (%d bytes): the span's length counts the C string's terminator", len(spec), len(spec)+1)},
		{" \x00", fmt.Sprintf("a NUL byte at offset %d", len(spec)+1)},
		{" {}", fmt.Sprintf(`data after the object at offset %d (of %d bytes): "{}"`, len(spec)+1, len(spec)+3)},
		{"x", fmt.Sprintf(`data after the object at offset %d`, len(spec))},
	} {
		_, err := decodeSpec([]byte(spec + c.tail))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tail %q: %v, want %q", c.tail, err, c.want)
		}
	}
}
