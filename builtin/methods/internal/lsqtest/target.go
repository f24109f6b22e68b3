package lsqtest

import (
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/conformance"
	"github.com/kinfer/kinfer/builtin/prior"
)

// Uniform is prior.NewUniform that panics on error (test support).
func Uniform(lo, hi float64) prior.Dist {
	d, err := prior.NewUniform(lo, hi)
	if err != nil {
		panic(err)
	}
	return d
}

// Target builds a conformance target from residuals and their Jacobian
// (n×d) with uniform priors over the box; log L = −½‖r‖².
func Target(params []abi.Param, res func([]float64) []float64, jac func([]float64) []float64) conformance.Target {
	t := conformance.Target{Params: params, Residuals: res, Jacobian: jac}
	for _, p := range params {
		t.Prior = append(t.Prior, Uniform(p.Lower, p.Upper))
	}
	t.LogLik = func(th []float64) (float64, abi.Status) {
		s := 0.0
		for _, v := range res(th) {
			s += v * v
		}
		return -0.5 * s, abi.OK
	}
	return t
}

// Box is d parameters a, b, c, … with bounds [lo, hi].
func Box(d int, lo, hi float64) []abi.Param {
	ps := make([]abi.Param, d)
	for i := range ps {
		ps[i] = abi.Param{Name: string(rune('a' + i)), Lower: lo, Upper: hi}
	}
	return ps
}

// Drive runs m on the host h, serving init points for the first draws as
// the kinfer host serves a study's init file, then the host's prior draws.
func Drive(tb testing.TB, m abi.Method, h *conformance.Host, init [][]float64) abi.Report {
	tb.Helper()
	if err := m.Init(h.Target.Problem(1)); err != nil {
		tb.Fatal(err)
	}
	for asks := 0; !m.Done(); asks++ {
		if asks > 100_000 {
			tb.Fatal("not done after 100000 asks")
		}
		b, err := m.Ask()
		if err != nil {
			tb.Fatal(err)
		}
		res := make([]abi.Result, b.Len())
		for i := range res {
			var pt []float64
			switch {
			case len(b.Points) > 0:
				pt = b.Points[i]
			case len(init) > 0:
				pt, init = init[0], init[1:]
			default:
				pt = h.Draw()
			}
			if res[i], err = h.Eval(pt, b.Want); err != nil {
				tb.Fatal(err)
			}
		}
		if err := m.Tell(res); err != nil {
			tb.Fatal(err)
		}
	}
	rep, err := m.Report()
	if err != nil {
		tb.Fatal(err)
	}
	return rep
}
