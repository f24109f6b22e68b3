// Package twin tests the nist-c plugin (../nist.c, built to ../nist.wasm) against
// the builtin nist model it twins: on every NIST StRD problem, at both
// certified starts and at the certified values, with the dataset's own
// conditions, its outputs and Jacobians must agree.
package twin

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/nist"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/wasm"
)

// relTol: the plugin computes the same formulas in the same order, but with
// wasi-libc's exp, pow, log, atan, sin and cos instead of Go's, which may
// differ in the last bit or two; 1e-12 relative to the row's scale allows
// for that and nothing more.
const relTol = 1e-12

func TestTwinOfBuiltin(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "nist.wasm")); err != nil {
		t.Skipf("nist.wasm not built: %v", err)
	}
	ctx := context.Background()
	rt, err := wasm.NewRuntime(ctx, wasm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mf, err := manifest.Load(filepath.Join("..", "plugin.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Load(ctx, mf)
	if err != nil {
		t.Fatal(err)
	}
	for i, pr := range nist.Problems {
		f, err := os.Open(filepath.Join("..", "..", "..", "..", "builtin", "models", "nist", "testdata", pr.Name+".dat"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := nist.ParseStRD(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		m, err := p.Model(ctx, []float64{float64(i)}, 1)
		if err != nil {
			t.Fatalf("%s: %v", pr.Name, err)
		}
		ref := nist.Model{Problem: pr}
		x := d.Conditions()
		n := len(d.Rows)
		for _, b := range [][]float64{d.Starts[0], d.Starts[1], d.Certified} {
			th := nist.Theta(b)
			y, yr := make([]float64, n), make([]float64, n)
			jac, jr := make([]float64, n*nist.MaxParams), make([]float64, n*nist.MaxParams)
			if st := m.(abi.Jacobian).Jacobian(th, x, y, jac); st != abi.OK {
				t.Fatalf("%s: Jacobian status %v", pr.Name, st)
			}
			ref.Jacobian(th, x, yr, jr)
			for k := range n {
				if !close2(y[k], yr[k], math.Abs(yr[k])) {
					t.Errorf("%s at %v row %d: plugin y %.17g, builtin %.17g", pr.Name, b, k, y[k], yr[k])
				}
				scale := 0.0
				for j := range nist.MaxParams {
					scale = math.Max(scale, math.Abs(jr[k*nist.MaxParams+j]))
				}
				for j := range nist.MaxParams {
					if g, w := jac[k*nist.MaxParams+j], jr[k*nist.MaxParams+j]; !close2(g, w, scale) {
						t.Errorf("%s at %v: ∂y%d/∂b%d plugin %.17g, builtin %.17g", pr.Name, b, k, j+1, g, w)
					}
				}
			}
			ye := make([]float64, n)
			if st := m.Eval(th, x, ye); st != abi.OK {
				t.Fatalf("%s: Eval status %v", pr.Name, st)
			}
			for k := range n {
				if !close2(ye[k], yr[k], math.Abs(yr[k])) {
					t.Errorf("%s: plugin Eval y%d %.17g, builtin %.17g", pr.Name, k, ye[k], yr[k])
				}
			}
		}
		m.(interface{ Close() error }).Close()
	}
	if _, err := p.Model(ctx, []float64{27}, 1); err == nil {
		t.Error("problem 27 accepted")
	}
}

func close2(a, b, scale float64) bool {
	return a == b || math.Abs(a-b) <= relTol*math.Max(scale, math.SmallestNonzeroFloat64)
}
