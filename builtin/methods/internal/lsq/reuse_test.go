package lsq

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Refactorize into a Factor that held a larger, then a smaller, problem
// gives the same Factor, to the bit, as a fresh Factorize: storage reuse
// must not leak a previous problem's values (R's lower triangle, the
// padding rows of the work matrix). Likewise SubInto into a reused Sub
// against NewSub, for all and for some free columns.
func TestReuseIsExact(t *testing.T) {
	f := new(Factor)
	var s *Sub
	for _, sz := range [][2]int{{250, 8}, {14, 2}, {3, 5}, {40, 40}, {60, 50}, {154, 3}, {6, 9}} {
		n, p := sz[0], sz[1]
		jac, r, _ := randProblem(n, p, uint64(7*n+p))
		want, err := Factorize(jac, r, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Refactorize(jac, r, p); err != nil {
			t.Fatal(err)
		}
		if f.P != want.P || f.N != want.N || f.RNorm != want.RNorm || !slices.Equal(f.R, want.R) ||
			!slices.Equal(f.C, want.C) || !slices.Equal(f.Grad, want.Grad) ||
			!slices.Equal(f.ColNorm, want.ColNorm) || !slices.Equal(f.D, want.D) {
			t.Fatalf("n=%d p=%d: Refactorize into a used Factor differs from Factorize", n, p)
		}
		d := make([]float64, p)
		for j := range d {
			d[j] = 1 + float64(j)
		}
		f.SetScale(d)
		want.SetScale(d)
		frees := [][]int{allFree(p)}
		if p > 2 {
			frees = append(frees, []int{0, p - 1})
		}
		for _, free := range frees {
			ws, err := want.NewSub(free)
			if err != nil {
				t.Fatal(err)
			}
			if s, err = f.SubInto(s, free); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Free, ws.Free) || !slices.Equal(s.S, ws.S) || !slices.Equal(s.V, ws.V) || !slices.Equal(s.B, ws.B) {
				t.Fatalf("n=%d p=%d free %v: SubInto into a used Sub differs from NewSub", n, p, free)
			}
		}
	}
}

// The finiteness of Factorize's input is read from its sums; a NaN or an
// infinity anywhere is still refused, named by row and column, and finite
// values whose squares overflow are not taken for infinities.
func TestFactorizeNonFinite(t *testing.T) {
	const n, p = 7, 3
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for i := range n {
			for k := -1; k < p; k++ { // k = −1: the residual
				jac, r, _ := randProblem(n, p, 3)
				want := "Jacobian entry (" + itoa(i) + ", " + itoa(k) + ")"
				if k < 0 {
					r[i] = bad
					want = "residual " + itoa(i) + " "
				} else {
					jac[i*p+k] = bad
				}
				_, err := Factorize(jac, r, p)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%v at row %d column %d: error %v, want one naming %q", bad, i, k, err, want)
				}
			}
		}
	}
	jac, r, _ := randProblem(n, p, 4)
	jac[5] = 1e200 // its square overflows; the value is finite
	f, err := Factorize(jac, r, p)
	if err != nil || !math.IsInf(f.ColNorm[2], 1) {
		t.Errorf("a column whose squares overflow: err %v, ColNorm %v (want +Inf, no error)", err, f.ColNorm)
	}
	r[0] = 1e200
	if _, err := Factorize(jac, r, p); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("residuals whose squares overflow: err %v, want the overflow named", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// AllFinite is false exactly when some value is NaN or ±Inf, wherever it
// is (each position in and after the four-wide blocks), and true for
// extreme finite values and the empty slice.
func TestAllFinite(t *testing.T) {
	if !AllFinite(nil) || !AllFinite([]float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0, -0.0, 1e-310, 3}) {
		t.Error("finite values reported non-finite")
	}
	for n := 1; n <= 9; n++ {
		for i := range n {
			for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
				x := make([]float64, n)
				for k := range x {
					x[k] = float64(k) - 4.5
				}
				x[i] = bad
				if AllFinite(x) {
					t.Errorf("n=%d: %v at %d not seen", n, bad, i)
				}
			}
		}
	}
}
