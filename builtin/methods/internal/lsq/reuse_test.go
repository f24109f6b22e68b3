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

// refJacobi is the plain row-cyclic one-sided Jacobi SVD that jacobiSub
// computes (jacobiSub as it was before it skipped the zero rows and took
// the pairs by anti-diagonals): the reference for TestJacobiOrderIsExact.
func refJacobi(f *Factor, free []int) (sv, vv, bv []float64) {
	p, m := f.P, len(free)
	a, v := make([]float64, p*m), make([]float64, m*m)
	sq := make([]float64, m)
	for k, j := range free {
		for i := 0; i <= j && i < p; i++ {
			a[k*p+i] = f.R[i*p+j] / f.D[j]
		}
		v[k*m+k] = 1
	}
	const eps = 2.220446049250313e-16
	for sweep := 0; sweep < 60; sweep++ {
		for k := range m {
			sq[k] = dot(a[k*p:(k+1)*p], a[k*p:(k+1)*p])
		}
		rotated := false
		for j := 0; j < m-1; j++ {
			for k := j + 1; k < m; k++ {
				aj, ak := a[j*p:(j+1)*p], a[k*p:(k+1)*p]
				alpha, beta := sq[j], sq[k]
				gamma := dot(aj, ak)
				if gamma == 0 || math.Abs(gamma) <= eps*math.Sqrt(alpha*beta) {
					continue
				}
				rotated = true
				zeta := (beta - alpha) / (2 * gamma)
				t := math.Copysign(1, zeta) / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
				c := 1 / math.Sqrt(1+t*t)
				sn := c * t
				rot(aj, ak, c, sn)
				rot(v[j*m:(j+1)*m], v[k*m:(k+1)*m], c, sn)
				sq[j], sq[k] = alpha-t*gamma, beta+t*gamma
			}
		}
		if !rotated {
			break
		}
	}
	idx := make([]int, m)
	s := make([]float64, m)
	for k := range m {
		idx[k] = k
		s[k] = norm2(a[k*p : (k+1)*p])
	}
	for i := 1; i < m; i++ {
		for j := i; j > 0 && s[idx[j]] > s[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	sv, vv, bv = make([]float64, m), make([]float64, m*m), make([]float64, m)
	for out, k := range idx {
		sv[out] = s[k]
		if s[k] > 0 {
			bv[out] = dot(a[k*p:(k+1)*p], f.C) / s[k]
		}
		for i := range m {
			vv[i*m+out] = v[k*m+i]
		}
	}
	return
}

// jacobiSub skips the rows of R's triangle that are still zero and takes
// the pairs of a sweep by anti-diagonals; both are claimed to change no
// bit of the plain row-cyclic Jacobi SVD (refJacobi). Checked on random
// and graded (columns over 12 orders of magnitude) problems, all columns
// free and some, from 1 to 40 parameters (40: the columns long enough for
// floats.Dot).
func TestJacobiOrderIsExact(t *testing.T) {
	for _, graded := range []bool{false, true} {
		for _, p := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 17, 40} {
			n := 3*p + 5
			jac, r, _ := randProblem(n, p, uint64(100*p+n))
			if graded {
				for i := range n {
					for j := range p {
						jac[i*p+j] *= math.Pow(10, -12*float64(j)/float64(max(p-1, 1)))
					}
				}
			}
			f, err := Factorize(jac, r, p)
			if err != nil {
				t.Fatal(err)
			}
			frees := [][]int{allFree(p)}
			if p >= 3 {
				frees = append(frees, []int{0, p / 2, p - 1}, allFree(p)[1:])
			}
			for _, free := range frees {
				s := &Sub{Free: free}
				f.jacobiSub(s)
				ws, wv, wb := refJacobi(f, free)
				if !slices.Equal(s.S, ws) || !slices.Equal(s.V, wv) || !slices.Equal(s.B, wb) {
					t.Errorf("graded %v p=%d free %v: jacobiSub differs from the row-cyclic Jacobi SVD", graded, p, free)
				}
			}
		}
	}
}
